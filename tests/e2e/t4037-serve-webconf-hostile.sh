#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4037-serve-webconf-hostile.sh - issue 35, items 2-5: web configurations
# that dropped authentication, spun a core, blocked or made a scrape
# never return.  A file is read whole or refused (exit 2, one line naming
# it); a valid CRLF file parses; a FIFO as web.yml or as cert_file is
# refused at once; a bcrypt cost beyond 14 is refused with the user.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# refused PATTERN: serve with web.yml exits 2 within 20 s (a spin or a
# block is 124), with one stderr line matching PATTERN, without listening
refused() {
	{ timeout 20 "$VRAMZ_BIN" serve --listen 127.0.0.1:0 --web-config web.yml 2>err; echo $? >rc; } &&
	cat err && test "$(cat rc)" = 2 && test "$(wc -l <err)" = 1 &&
	has "^vramz: serve: $1" err && hasnt "listening" err
}

expect_success 'a NUL byte before basic_auth_users: refused with its offset, not served without auth' '
	printf "# users below\0\nbasic_auth_users:\n  prom: $WEB_HASH\n" >web.yml &&
	refused "web.yml: a NUL byte at offset 13: not a text file$"
'

expect_success 'CRLF without a final LF, or a comment ending in CR: parsed, served (no spin)' '
	printf "basic_auth_users:\r\n  prom: $WEB_HASH\r" >web.yml &&
	SERVE_WRAP="timeout 60" serve_start serve.log --web-config web.yml &&
	test "$(scrape /metrics -o /dev/null -w "%{http_code}")" = 401 &&
	wait_for scrape /metrics -f -u "prom:$WEB_PASS" -o m.txt && has "^vramz_up 1$" m.txt && serve_stop &&
	printf "# comment\r" >web.yml &&
	SERVE_WRAP="timeout 60" serve_start serve.log --web-config web.yml &&
	wait_for scrape /metrics -f -o m.txt && serve_stop
'

expect_success 'a FIFO as web.yml, as cert_file or as key_file: refused at once' '
	make_cert . && mkfifo fifo &&
	rm -f web.yml && ln -s fifo web.yml && refused "web.yml: not a regular file \(a FIFO\)$" && rm web.yml &&
	printf "tls_server_config:\n  cert_file: fifo\n  key_file: tls.key\n" >web.yml &&
	refused "web.yml:2: cert_file .(.*/)?fifo.: not a regular file \(a FIFO\)$" &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: fifo\n" >web.yml &&
	refused "web.yml:3: key_file .(.*/)?fifo.: not a regular file \(a FIFO\)$"
'

expect_success 'a web.yml larger than 1 MiB is refused; one that is a link to a file is read' '
	head -c 1100000 /dev/zero | tr "\0" "#" >web.yml && refused "web.yml: larger than 1024 KiB$" &&
	mkdir -p secret/..data && make_cert secret/..data &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n" >secret/..data/web.yml &&
	for f in web.yml tls.pem tls.key; do ln -s "..data/$f" "secret/$f"; done &&
	cp secret/..data/tls.pem tls.pem &&
	serve_start serve.log --web-config secret/web.yml &&
	wait_for scrape_tls /metrics -f -o m.txt && has "^vramz_up 1$" m.txt && serve_stop
'

expect_success 'a bcrypt cost beyond 14 is refused with the user it belongs to' '
	printf "basic_auth_users:\n  prom: \$2b\$31\$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O\n" >web.yml &&
	refused "web.yml:2: user .prom.: bcrypt cost 31 is out of range \(vramz takes 4 to 14" &&
	printf "basic_auth_users:\n  ops: \$2y\$15\$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O\n" >web.yml &&
	refused "web.yml:2: user .ops.: bcrypt cost 15 is out of range"
'

serve_cleanup
finish
