#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4047-serve-tls-warnings.sh - issue 35 (minor): serve says at its start,
# one stderr line each and without stopping, what an operator must fix
# before clients notice: a certificate expired or not yet valid, one that
# expires within 14 days, a private key other users can read.  A
# certificate renewed while serving is checked again.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# dated_cert NAME START END: a self-signed certificate valid from START
# to END (YYYYMMDDhhmmssZ), NAME.pem and NAME.key
dated_cert() {
	mkdir -p ca && touch ca/index.txt && { [ -f ca/serial ] || echo 01 >ca/serial; } &&
	printf "[ca]\ndefault_ca = d\n[d]\ndatabase = ca/index.txt\nserial = ca/serial\nnew_certs_dir = ca\ndefault_md = sha256\npolicy = p\nunique_subject = no\n[p]\ncommonName = supplied\n" >ca.cnf &&
	openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$1.key" -out "$1.csr" 2>/dev/null &&
	openssl ca -batch -config ca.cnf -selfsign -keyfile "$1.key" -in "$1.csr" \
		-startdate "$2" -enddate "$3" -out "$1.pem" >/dev/null 2>&1
}

# warned NAME: serve with NAME.pem / NAME.key; its stderr in serve.log
warned() {
	printf "tls_server_config:\n  cert_file: $1.pem\n  key_file: $1.key\n" >web.yml &&
	serve_start serve.log --web-config web.yml && serve_stop && cat serve.log
}

expect_success 'an expired certificate: one line with its date, and serve still serves' '
	dated_cert old 20200101000000Z 20200201000000Z &&
	warned old &&
	has "^vramz: serve: warning: web.yml: cert_file .old.pem. expired on 2020-02-01 00:00 UTC: clients will refuse it$" serve.log &&
	has "listening on https://" serve.log && test "$(grep -c warning serve.log)" = 1
'

expect_success 'not yet valid; expiring within 14 days (with the days left); 30 days: nothing' '
	dated_cert future 20400101000000Z 20410101000000Z && warned future &&
	has "^vramz: serve: warning: web.yml: cert_file .future.pem. is not valid before 2040-01-01 00:00 UTC" serve.log &&
	start=$(date -u -d "-1 day" +%Y%m%d%H%M%SZ) && end=$(date -u -d "+5 days +1 hour" +%Y%m%d%H%M%SZ) &&
	dated_cert soon "$start" "$end" && warned soon &&
	has "^vramz: serve: warning: web.yml: cert_file .soon.pem. expires on .* UTC, in 5 days$" serve.log &&
	make_cert . && warned tls && hasnt "warning" serve.log
'

expect_success 'a key readable by group or others: one line with its mode; 0600 and 0400 quiet' '
	make_cert . && chmod 644 tls.key && warned tls &&
	has "^vramz: serve: warning: web.yml: key_file .tls.key. can be read by every user \(mode 0644\): chmod 600 it$" serve.log &&
	chmod 640 tls.key && warned tls &&
	has "key_file .tls.key. can be read by its group \(mode 0640\)" serve.log &&
	chmod 600 tls.key && warned tls && hasnt "warning" serve.log &&
	chmod 400 tls.key && warned tls && hasnt "warning" serve.log
'

expect_success 'a key inline in a configuration others can read: the configuration is named' '
	make_cert . && {
		printf "tls_server_config:\n  cert_file: tls.pem\n  key: |\n"
		sed "s/^/    /" tls.key
	} >web.yml && chmod 644 web.yml &&
	serve_start serve.log --web-config web.yml && serve_stop &&
	has "^vramz: serve: warning: web.yml: the configuration holding the key, .web.yml. can be read by every user \(mode 0644\)" serve.log
'

expect_success 'a certificate renewed while serving is checked again' '
	make_cert . && printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n" >web.yml &&
	serve_start serve.log --web-config web.yml && hasnt warning serve.log &&
	dated_cert old 20200101000000Z 20200201000000Z && cp old.pem tls.pem && cp old.key tls.key &&
	wait_for has "warning: web.yml: cert_file .*tls.pem. expired on 2020-02-01" serve.log &&
	serve_stop
'

serve_cleanup
finish
