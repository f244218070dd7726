#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4046-serve-tls-keys.sh - issue 38, item 4: the keys of exporter-
# toolkit's web configuration vramz refused before, now honoured:
# cipher_suites (Go's names; exactly the suites listed that fit the
# certificate's key), curve_preferences, client_allowed_sans (the
# client's certificate must name one) and rate_limit (429 beyond it).
# Checked from the client side with openssl s_client and curl.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# handshake ARGS...: the cipher openssl s_client negotiates with ARGS
# ("(NONE)" or nothing when the server refuses)
handshake() {
	openssl s_client -connect "127.0.0.1:$PORT" "$@" </dev/null 2>/dev/null |
		sed -n "s/^ *Cipher *: *//p;s/^New, .*, Cipher is //p" | head -1
}

expect_success 'cipher_suites: the listed TLS 1.2 suite is served, an unlisted one refused' '
	make_cert . &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n    - TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\n    - TLS_AES_256_GCM_SHA384\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	handshake -tls1_2 >a.txt && handshake -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 >b.txt &&
	handshake -tls1_3 >c.txt && handshake -tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256 >d.txt &&
	handshake -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305 >e.txt &&
	serve_stop && cat a.txt b.txt c.txt d.txt e.txt &&
	test "$(cat a.txt)" = ECDHE-RSA-AES256-GCM-SHA384 &&
	test "$(cat c.txt)" = TLS_AES_256_GCM_SHA384 &&
	for f in b.txt d.txt e.txt; do
		test ! -s $f || test "$(cat $f)" = "(NONE)" || exit 1
	done
'

expect_success 'without cipher_suites GnuTLS'"'"'s defaults stay (AES-128 and ChaCha20 served)' '
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	handshake -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 >b.txt &&
	handshake -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305 >e.txt &&
	serve_stop && test "$(cat b.txt)" = ECDHE-RSA-AES128-GCM-SHA256 &&
	test "$(cat e.txt)" = ECDHE-RSA-CHACHA20-POLY1305
'

expect_success 'cipher_suites with no suite for the RSA key; an unknown name; TLS 1.2 suites only: refused' '
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n" >web.yml &&
	{ timeout 20 "$VRAMZ_BIN" serve --listen 127.0.0.1:0 --web-config web.yml 2>err; echo $? >rc; } &&
	cat err && test "$(cat rc)" = 1 && test "$(wc -l <err)" = 1 &&
	has "^vramz: serve: --web-config: cipher_suites: none of its TLS 1.2 suites fits the certificate.s RSA key \(TLS_ECDHE_RSA_\* ones would\)$" err &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:4: cipher_suites .TLS_RSA_WITH_RC4_128_SHA.: not one of Go.s secure suites" err &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA]\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:4: cipher_suites: none serves TLS 1.3" err
'

expect_success 'curve_preferences: a listed group is used, an unlisted one refused' '
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  curve_preferences: [CurveP384]\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	handshake -tls1_3 -groups P-384 >a.txt && handshake -tls1_3 -groups X25519 >b.txt &&
	handshake -tls1_2 -groups X25519:P-256 >c.txt &&
	serve_stop && cat a.txt b.txt c.txt &&
	test -n "$(cat a.txt)" && test "$(cat a.txt)" != "(NONE)" &&
	for f in b.txt c.txt; do
		test ! -s $f || test "$(cat $f)" = "(NONE)" || exit 1
	done &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  curve_preferences: [P256]\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:4: curve_preferences .P256.: expected CurveP256" err
'

# sans_client NAME SAN: a client certificate of ca.pem for SAN
sans_client() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
		-keyout "$1.key" -out "$1.csr" 2>/dev/null &&
	printf "subjectAltName=%s\n" "$2" >"$1.ext" &&
	openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-extfile "$1.ext" -out "$1.pem" 2>/dev/null
}

expect_success 'client_allowed_sans: a certificate naming one 200, one naming another 403, none 403' '
	make_clients && sans_client prom "DNS:prom.example,IP:10.0.0.7" &&
	sans_client other "DNS:other.example,email:ops@example.org" &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n  client_allowed_sans: [prom.example, ops@example.com]\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null --cert prom.pem --key prom.key &&
	echo "$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert other.pem --key other.key)" \
		"$(scrape_tls /metrics -o /dev/null -w "%{http_code}")" \
		"$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert client.pem --key client.key)" >c.txt &&
	serve_stop && cat c.txt && test "$(cat c.txt)" = "403 403 403" &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n  client_allowed_sans: [10.0.0.7]\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null --cert prom.pem --key prom.key &&
	test "$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert other.pem --key other.key)" = 403 &&
	serve_stop &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_allowed_sans: [prom.example]\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:4: client_allowed_sans without a client_auth_type that asks for a certificate: it would not be used$" err
'

expect_success 'rate_limit: the burst at once, then one an interval, beyond 429' '
	printf "rate_limit:\n  interval: 1s\n  burst: 3\n" >web.yml &&
	serve_start serve.log --web-config web.yml && sleep 1.2 &&
	for i in 1 2 3 4 5; do scrape /health -o /dev/null -w "%{http_code}\n"; done >codes.txt &&
	sleep 1.1 && scrape /metrics -o /dev/null -w "%{http_code}\n" >>codes.txt &&
	scrape /metrics -D h.txt -o body.txt; serve_stop && cat codes.txt &&
	test "$(tr "\n" " " <codes.txt)" = "200 200 200 429 429 200 " &&
	has "^HTTP/1.1 429" h.txt && has "Too Many Requests" body.txt &&
	printf "rate_limit: {interval: 100ms, burst: 0}\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:1: rate_limit with burst 0 would refuse every request$" err
'

serve_cleanup
finish
