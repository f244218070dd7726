#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4035-serve-webconf.sh - a web configuration vramz cannot honour exactly
# is refused before anything listens or any GPU is read: exit 2 and one
# line naming FILE:LINE and what is wrong there (a typo, a setting of the
# format vramz does not implement, a password that is not a bcrypt hash).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# refused TEXT PATTERN: a web config of TEXT makes serve exit 2 with one
# stderr line matching PATTERN, and without starting a server
refused() {
	printf "$1" >web.yml &&
	{ timeout 20 "$VRAMZ_BIN" serve --listen 127.0.0.1:0 --web-config web.yml 2>err; echo $? >rc; } &&
	cat err && test "$(cat rc)" = 2 && test "$(wc -l <err)" = 1 &&
	has "^vramz: serve: $2" err && hasnt "listening" err
}

expect_success 'a misspelt key: its line, its name, what is expected' '
	make_cert . &&
	refused "# TLS for scrapes\ntls_server_config:\n  cert_file: tls.pem\n  keyfile: tls.key\n" \
		"web.yml:4: unknown key .keyfile. in tls_server_config \(expected cert_file, key_file, client_auth_type, client_ca_file, min_version, max_version, ...\)$"
'

expect_success 'a setting vramz cannot honour, or one that would go unused, is refused with why' '
	make_cert . &&
	refused "ip_socket_config:\n  ipv4_ttl: 5\n" \
		"web.yml:1: ip_socket_config is not supported by vramz: libmicrohttpd creates the server socket itself" &&
	refused "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n" \
		"web.yml:4: cipher_suites lists TLS 1.3 suites only: add TLS 1.2 ones or set min_version TLS13$" &&
	refused "rate_limit:\n  burst: 3\n" "web.yml:1: rate_limit has burst but no interval: no limit would apply$" &&
	refused "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n" \
		"web.yml:4: client_auth_type RequireAndVerifyClientCert needs client_ca_file$"
'

expect_success 'a password that is not a bcrypt hash; a bad min_version; a tab' '
	refused "basic_auth_users:\n  prom: s3cret\n" "web.yml:2: the password must be a bcrypt hash" &&
	refused "tls_server_config:\n  cert_file: a.pem\n  key_file: b.key\n  min_version: TLS11\n" \
		"web.yml:4: min_version .TLS11.: vramz serves TLS12 or TLS13 only$" &&
	refused "basic_auth_users:\n\tprom: x\n" "web.yml:2: not YAML: found character that cannot start any token"
'

expect_success 'half a TLS setting, a missing file, bad YAML, a list' '
	make_cert . &&
	refused "tls_server_config:\n  cert_file: tls.pem\n" "web.yml:1: tls_server_config has cert_file but no key_file$" &&
	refused "tls_server_config:\n  cert_file: nope.pem\n  key_file: tls.key\n" \
		"web.yml:2: cert_file .nope.pem.: No such file or directory$" &&
	refused "basic_auth_users:\n  prom: $WEB_HASH\n    cost: 10\n" "web.yml:3: not YAML: " &&
	refused "basic_auth_users:\n  - prom\n" "web.yml:2: basic_auth_users must be a mapping of keys$"
'

expect_success 'no such web config file: one line, exit 2' '
	{ "$VRAMZ_BIN" serve --web-config nothere.yml 2>err; echo $? >rc; } &&
	test "$(cat rc)" = 2 && has "^vramz: serve: nothere.yml: No such file or directory$" err
'

expect_success 'an empty file, or comments only, is plain HTTP without auth (as exporter-toolkit)' '
	printf "# nothing configured yet\n\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape /metrics -f -o m.txt && serve_stop &&
	has "listening on http://" serve.log && has "^vramz_up 1$" m.txt
'

serve_cleanup
finish
