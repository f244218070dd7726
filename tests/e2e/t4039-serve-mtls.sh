#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4039-serve-mtls.sh - issue 38, item 4: exporter-toolkit's web
# configuration whole, read by libyaml: client certificates
# (client_auth_type with client_ca_file, as Go's TLS server judges them),
# http_server_config.headers on every answer, flow-style YAML, the
# min/max versions.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# codes: /metrics with the trusted client, with none, with the stranger
codes() {
	echo "$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert client.pem --key client.key)" \
		"$(scrape_tls /metrics -o /dev/null -w "%{http_code}")" \
		"$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert stranger.pem --key stranger.key)"
}

# mtls TYPE: serve with client_auth_type TYPE, flow style, client_ca_file
mtls() {
	printf "{tls_server_config: {cert_file: tls.pem, key_file: tls.key, client_auth_type: %s%s}}\n" \
		"$1" "${2:-, client_ca_file: ca.pem}" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f --cert client.pem --key client.key
}

expect_success 'RequireAndVerifyClientCert: the CA'"'"'s client 200, none and a stranger 403' '
	make_cert . && make_clients &&
	mtls RequireAndVerifyClientCert && codes >c.txt && serve_stop && cat c.txt serve.log &&
	has "listening on https://.*client certificates" serve.log && test "$(cat c.txt)" = "200 403 403"
'

expect_success 'VerifyClientCertIfGiven: none 200, a stranger 403; RequireAnyClientCert: none 403, a stranger 200' '
	mtls VerifyClientCertIfGiven && codes >c.txt && serve_stop && test "$(cat c.txt)" = "200 200 403" &&
	mtls RequireAnyClientCert "" && codes >c.txt && serve_stop && test "$(cat c.txt)" = "200 403 200" &&
	mtls RequestClientCert "" && codes >c.txt && serve_stop && test "$(cat c.txt)" = "200 200 200"
'

expect_success 'basic auth behind client certificates: both are needed' '
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\nbasic_auth_users:\n  prom: $WEB_HASH\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f --cert client.pem --key client.key -u prom:$WEB_PASS &&
	test "$(scrape_tls /metrics -o /dev/null -w "%{http_code}" -u prom:$WEB_PASS)" = 403 &&
	test "$(scrape_tls /metrics -o /dev/null -w "%{http_code}" --cert client.pem --key client.key)" = 401 &&
	serve_stop
'

expect_success 'http_server_config.headers on every answer; max_version TLS12 is 1.2 only' '
	printf "tls_server_config: {cert_file: tls.pem, key_file: tls.key, max_version: TLS12}\nhttp_server_config:\n  http2: true\n  headers:\n    Strict-Transport-Security: max-age=31536000\n    x-frame-options: deny\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	scrape_tls /metrics -D m.h -o /dev/null && scrape_tls /nope -D n.h -o /dev/null &&
	scrape_tls / -D p.h -o /dev/null &&
	! scrape_tls /metrics --tlsv1.3 -o /dev/null 2>/dev/null &&
	serve_stop && cat m.h &&
	for f in m.h n.h p.h; do
		has "^Strict-Transport-Security: max-age=31536000" $f && test "$(grep -ci "^X-Frame-Options:" $f)" = 1 || exit 1
	done &&
	has "^X-Frame-Options: deny" m.h && has "^X-Frame-Options: DENY" p.h
'

expect_success 'a header exporter-toolkit does not allow, TLS10, a misspelt client_auth_type: refused' '
	printf "http_server_config: {headers: {Server: x}}\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: web.yml:1: header .Server. cannot be set" err &&
	printf "tls_server_config: {cert_file: tls.pem, key_file: tls.key, client_auth_type: RequireClientCert}\n" >web.yml &&
	{ "$VRAMZ_BIN" serve --web-config web.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "client_auth_type .RequireClientCert.: expected NoClientCert" err
'

serve_cleanup
finish
