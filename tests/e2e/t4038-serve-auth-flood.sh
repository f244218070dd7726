#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4038-serve-auth-flood.sh - issue 35, items 5 and 6: a flood of wrong
# passwords from 8 addresses kept the queue of new credentials full, and a
# correct scraper not yet known got 503 on every try (146 of 146); a check
# of a costly hash held SIGTERM up for as long as it ran.  Now each
# address has a budget of checks and the address that has spent least is
# checked first, so a new scraper from an address of its own is let in
# at once; and stopping does not wait for bcrypt.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

code_from() { # ADDR USER:PASS: the status of /metrics from ADDR
	curl -s -o /dev/null --max-time 10 -w "%{http_code}" --interface "$1" -u "$2" \
		"http://127.0.0.1:$PORT/metrics"
}

# login USER ADDR: up to 5 tries a second apart, until 200; prints the codes
login() {
	local i c codes=""
	for i in 1 2 3 4 5; do
		c=$(code_from "$2" "$1:$WEB_PASS")
		codes="$codes $c"
		[ "$c" = 200 ] && break
		sleep 1
	done
	echo "$1$codes"
}

# Three users with one password: each is new credentials, checked once.
# A try may meet the flood's own first checks (as new as its own) and get
# 503; before, every try did (146 of 146 in the audit), so a few tries
# tell the two apart without depending on this machine's speed.
expect_success 'a flood of new wrong passwords from 8 addresses: new scrapers from 3 others get in' '
	printf "basic_auth_users:\n  a: %s\n  b: %s\n  c: %s\n" "$WEB_HASH10" "$WEB_HASH10" "$WEB_HASH10" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	{ timeout 60 python3 "$TESTS_SRC/helpers/auth_flood.py" "$PORT" 8 2 16 >flood.txt & fpid=$!; } &&
	sleep 3 &&
	login a 127.0.0.110 >scrapers.txt && login b 127.0.0.111 >>scrapers.txt &&
	login c 127.0.0.112 >>scrapers.txt &&
	wait $fpid && kill -0 "$SERVE_PID" && serve_stop &&
	cat scrapers.txt flood.txt &&
	test "$(grep -c " 200$" scrapers.txt)" = 3 &&
	has "401 [0-9]+" flood.txt && has "503 [0-9]+" flood.txt && hasnt "200" flood.txt
'

# SIGTERM while a cost-14 check runs: the exporter used to finish the check
# first.  Measured against the check's own time on this machine, so load
# slows both alike: stopping takes less than half a check.
expect_success 'SIGTERM while a costly password is checked: serve stops without waiting for it' '
	printf "basic_auth_users:\n  prom: %s\n" "$WEB_HASH14" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	s=$(date +%s%N) && c=$(code_from 127.0.0.2 prom:wrong-1) && e=$(date +%s%N) &&
	check_ms=$(((e - s) / 1000000)) && echo "first: $c in $check_ms ms" && test "$c" = 401 &&
	{ code_from 127.0.0.3 prom:wrong-2 >during & cpid=$!; } &&
	sleep 0.2 &&
	s=$(date +%s%N) && kill "$SERVE_PID" && rc=0 && { wait "$SERVE_PID" || rc=$?; } &&
	e=$(date +%s%N) && stop_ms=$(((e - s) / 1000000)) && { wait $cpid || true; } &&
	echo "a check: $check_ms ms; stopping during one: $stop_ms ms (exit $rc), that request: $(cat during)" &&
	test "$rc" = 0 && test $((stop_ms * 2)) -lt "$check_ms"
'

serve_cleanup
finish
