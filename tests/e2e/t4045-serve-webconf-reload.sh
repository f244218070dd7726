#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4045-serve-webconf-reload.sh - issue 38, item 4: the web configuration
# and the files it names are read again when they change, as
# exporter-toolkit reads them on each request: new users, a renewed
# certificate (a Kubernetes Secret's link swapped, as cert-manager does),
# new headers take effect without a restart; a broken file keeps the last
# good configuration and is said in one line naming it.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# code_is WANT [curl options]: /metrics answers WANT
code_is() {
	local want=$1
	shift
	test "$(scrape /metrics -o /dev/null -w "%{http_code}" "$@")" = "$want"
}
# tls_is WANT CA [curl options]: /metrics over https trusting only CA's
# certificate answers WANT (000: no handshake)
tls_is() {
	local want=$1 ca=$2
	shift 2
	test "$(curl -sS --max-time 5 --cacert "$ca" -o /dev/null -w "%{http_code}" "$@" \
		"https://127.0.0.1:$PORT/metrics" 2>/dev/null)" = "$want"
}

expect_success 'users: one added and one removed take effect without a restart' '
	printf "basic_auth_users:\n  prom: $WEB_HASH\n" >web.yml &&
	serve_start serve.log --web-config web.yml && pid=$SERVE_PID &&
	wait_for code_is 200 -u prom:$WEB_PASS &&
	code_is 401 -u scraper:$WEB_PASS &&
	printf "basic_auth_users:\n  scraper: $WEB_HASH\n" >web.yml.new && mv web.yml.new web.yml &&
	wait_for code_is 200 -u scraper:$WEB_PASS &&
	code_is 401 -u prom:$WEB_PASS &&
	has "^vramz: serve: web.yml changed: its new settings are in force \(1 user\)$" serve.log &&
	test "$SERVE_PID" = "$pid" && kill -0 "$pid" && serve_stop
'

expect_success 'a broken file: one line naming FILE:LINE, the last good configuration stays' '
	printf "basic_auth_users:\n  scraper: $WEB_HASH\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for code_is 200 -u scraper:$WEB_PASS &&
	printf "basic_auth_users:\n  scraper: $WEB_HASH\n  bad: not-a-hash\n" >web.yml &&
	wait_for has "web.yml:3: the password must be a bcrypt hash" serve.log &&
	sleep 2.5 && cat serve.log &&
	test "$(grep -c "web.yml:3:" serve.log)" = 1 &&
	has "^vramz: serve: web.yml:3: the password must be a bcrypt hash .*; keeping the configuration in force$" serve.log &&
	code_is 200 -u scraper:$WEB_PASS && code_is 401 &&
	printf "basic_auth_users:\n\tx\n" >web.yml &&
	wait_for has "web.yml:2: not YAML" serve.log &&
	code_is 200 -u scraper:$WEB_PASS &&
	rm web.yml && wait_for has "^vramz: serve: web.yml: No such file or directory; keeping" serve.log &&
	printf "basic_auth_users:\n  scraper: $WEB_HASH\n" >web.yml &&
	code_is 200 -u scraper:$WEB_PASS &&
	printf "# no users: no authentication, as exporter-toolkit\n" >web.yml &&
	wait_for code_is 200 &&
	serve_stop
'

expect_success 'TLS: a renewed certificate (a Secret'"'"'s ..data link swapped) served without a restart; a wrong key, TLS off: said, kept' '
	mkdir -p secret/v1 secret/v2 && make_cert secret/v1 && make_cert secret/v2 &&
	ln -sfn v1 secret/..data &&
	ln -sfn ..data/tls.pem secret/tls.crt && ln -sfn ..data/tls.key secret/tls.key &&
	printf "tls_server_config:\n  cert_file: secret/tls.crt\n  key_file: secret/tls.key\n" >web.yml &&
	serve_start serve.log --web-config web.yml && pid=$SERVE_PID &&
	wait_for tls_is 200 secret/v1/tls.pem &&
	tls_is 000 secret/v2/tls.pem &&
	ln -sfn v2 secret/..data.tmp && mv -T secret/..data.tmp secret/..data &&
	wait_for tls_is 200 secret/v2/tls.pem &&
	tls_is 000 secret/v1/tls.pem &&
	test "$SERVE_PID" = "$pid" && has "web.yml changed" serve.log &&
	make_cert . other &&
	cp other.key secret/v2/tls.key &&
	wait_for has "^vramz: serve: web.yml: cannot serve TLS with its cert_file and key_file \(GnuTLS: .*\); keeping the configuration in force$" serve.log &&
	tls_is 200 secret/v2/tls.pem &&
	printf "basic_auth_users:\n  prom: $WEB_HASH\n" >web.yml &&
	wait_for has "^vramz: serve: web.yml: turning TLS off needs a restart; keeping the configuration in force$" serve.log &&
	tls_is 200 secret/v2/tls.pem &&
	serve_stop
'

expect_success 'headers and client certificates change with the file' '
	make_cert . && make_clients &&
	printf "tls_server_config: {cert_file: tls.pem, key_file: tls.key}\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	wait_for scrape_tls /metrics -f -o /dev/null &&
	scrape_tls /nope -D a.h -o /dev/null && hasnt "^X-Frame-Options" a.h &&
	printf "tls_server_config: {cert_file: tls.pem, key_file: tls.key, client_auth_type: RequireAndVerifyClientCert, client_ca_file: ca.pem}\nhttp_server_config: {headers: {X-Frame-Options: deny}}\n" >web.yml &&
	wait_for tls_is 403 tls.pem &&
	tls_is 200 tls.pem --cert client.pem --key client.key &&
	scrape_tls /nope -D b.h -o /dev/null --cert client.pem --key client.key &&
	has "^X-Frame-Options: deny" b.h &&
	sleep 1.2 && scrape_tls /metrics -D m.h -o /dev/null --cert client.pem --key client.key &&
	has "^X-Frame-Options: deny" m.h && serve_stop
'

serve_cleanup
finish
