#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4031-serve-tls.sh - `vramz serve --web-config` with a tls_server_config
# serves HTTPS with the certificate it names (a self-signed one made here
# with openssl), keeps to its min_version, and refuses keys and
# certificates that cannot work with one clear line before listening.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# web_tls MIN: a web config of tls.pem and tls.key with that min_version
web_tls() {
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  min_version: %s\n" "$1" >web.yml
}

expect_success 'HTTPS with the configured certificate; plain HTTP on the port gets nothing' '
	make_cert . && web_tls TLS12 &&
	serve_start serve.log --web-config web.yml &&
	has "listening on https://127.0.0.1:" serve.log &&
	wait_for scrape_tls /metrics -f -o m.txt &&
	scrape_tls /metrics -o m.txt -w "%{http_code} %{ssl_verify_result}\n" >code &&
	{ scrape /metrics -o plain.txt 2>/dev/null; true; } &&
	serve_stop &&
	has "^200 0$" code && has "^vramz_up 1$" m.txt && promtool check metrics <m.txt &&
	hasnt "vramz_up" plain.txt
'

expect_success 'the certificate served is the configured one (its fingerprint)' '
	make_cert . && web_tls TLS12 &&
	serve_start serve.log --web-config web.yml &&
	openssl s_client -connect 127.0.0.1:$PORT -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 >served &&
	serve_stop &&
	openssl x509 -in tls.pem -noout -fingerprint -sha256 >expected &&
	cat served && cmp served expected
'

expect_success 'min_version TLS13: TLS 1.2 is refused, 1.3 is served' '
	make_cert . && web_tls TLS13 &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	{ scrape_tls /metrics --tls-max 1.2 -o /dev/null 2>err12; echo "rc $?" >rc12; } &&
	scrape_tls /metrics --tlsv1.3 -o m.txt -w "%{http_code}\n" >code13 &&
	serve_stop &&
	cat rc12 err12 && hasnt "^rc 0$" rc12 && has "^200$" code13 && has "^vramz_up 1$" m.txt
'

# (TLS 1.1 and older cannot be offered by this curl / OpenSSL at all, so
# that the server refuses them is GnuTLS's priority string, not tested here)
expect_success 'without min_version (TLS12): TLS 1.2 and 1.3 are both served' '
	make_cert . && printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	scrape_tls /metrics --tls-max 1.2 -o /dev/null -w "%{http_code}\n" >code12 &&
	scrape_tls /metrics --tlsv1.3 -o /dev/null -w "%{http_code}\n" >code13 &&
	serve_stop &&
	has "^200$" code12 && has "^200$" code13
'

expect_success 'a client that never starts the handshake is closed at the request deadline' '
	make_cert . && web_tls TLS12 &&
	serve_start serve.log --web-config web.yml &&
	python3 - "$PORT" >out <<-"PY" &&
	import socket, sys, time
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	s.settimeout(30)
	t = time.time()
	data = s.recv(10)
	print("closed after %.1f s, %d bytes" % (time.time() - t, len(data)))
	PY
	scrape_tls /metrics -f -o m.txt && serve_stop &&
	cat out && has "^closed after [4-9]\.[0-9] s, 0 bytes$" out && has "^vramz_up 1$" m.txt
'

expect_success 'a key that is not the certificate'"'"'s: one line, exit 1, nothing listens' '
	make_cert . && make_cert . other &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: other.key\n" >web.yml &&
	{ timeout 20 "$VRAMZ_BIN" serve --listen 127.0.0.1:0 --web-config web.yml 2>err; echo $? >rc; } &&
	cat err && test "$(cat rc)" = 1 && test "$(wc -l <err)" = 1 &&
	has "^vramz: serve: --web-config: cannot serve TLS with its cert_file and key_file" err
'

expect_success 'cert_file and key_file swapped: refused at the line that names the wrong file' '
	make_cert . &&
	printf "tls_server_config:\n  cert_file: tls.key\n  key_file: tls.pem\n" >web.yml &&
	{ vramz serve --web-config web.yml --once >/dev/null 2>err; echo $? >rc; } &&
	cat err && test "$(cat rc)" = 2 && test "$(wc -l <err)" = 1 &&
	has "^vramz: serve: web.yml:2: cert_file .*tls.key.*: its first PEM block is not a certificate$" err
'

expect_success 'relative cert_file / key_file are read from the web config'"'"'s directory' '
	mkdir -p conf elsewhere && make_cert conf && (cd conf && web_tls TLS12) &&
	cd elsewhere && cp ../conf/tls.pem "$T/tls.pem" &&
	serve_start serve.log --web-config ../conf/web.yml &&
	wait_for scrape_tls /metrics -f -o m.txt &&
	serve_stop && has "^vramz_up 1$" m.txt
'

serve_cleanup
finish
