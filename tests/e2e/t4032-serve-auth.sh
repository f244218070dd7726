#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4032-serve-auth.sh - basic_auth_users in --web-config: the right
# password gets the metrics, a wrong one, an unknown user or none gets 401
# with WWW-Authenticate, on every path; no user name reaches the log; and
# a flood of wrong passwords (each a bcrypt) cannot hold up the scrapes of
# a client whose password is known.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# web_users HASH: a web config with the user prom (and a $2y$ one, as
# htpasswd writes them), no TLS
web_users() {
	printf "basic_auth_users:\n  prom: %s\n  \"ops team\": '%s'\n" "$1" "\$2y\$${OTHER_HASH#\$2b\$}" >web.yml
}

code() { scrape "$@" -o /dev/null -w "%{http_code}\n"; }
# wait_code CODE PATH [curl options]: until PATH answers CODE (10 s), the
# request made again each time
wait_code() {
	local want=$1 i
	shift
	for i in $(seq 1 100); do
		[ "$(code "$@")" = "$want" ] && return 0
		sleep 0.1
	done
	echo "$1 never answered $want (last: $(code "$@"))"
	return 1
}

expect_success 'right password 200; wrong, unknown user, none, malformed: 401 with WWW-Authenticate' '
	web_users "$WEB_HASH" && cat web.yml &&
	serve_start serve.log --web-config web.yml &&
	has "listening on http://127.0.0.1:[0-9]*/metrics .*basic auth" serve.log &&
	wait_code 200 /metrics -u prom:$WEB_PASS &&
	scrape /metrics -u prom:$WEB_PASS -o m.txt &&
	code /metrics -u prom:wrong >wrong && code /metrics -u nobody:$WEB_PASS >unknown &&
	code /metrics >none && code /metrics -H "Authorization: Basic !!!" >malformed &&
	code /metrics -H "Authorization: Bearer abc" >bearer &&
	code /metrics -u "ops team:other-pass" >ops &&
	scrape /metrics -u prom:wrong -D h -o body &&
	serve_stop &&
	has "^vramz_up 1$" m.txt &&
	has "^401$" wrong && has "^401$" unknown && has "^401$" none && has "^401$" malformed &&
	has "^401$" bearer && has "^200$" ops &&
	has "^WWW-Authenticate: Basic realm=\"vramz\", charset=\"UTF-8\"" h && hasnt "vramz_" body
'

expect_success 'every path asks for credentials: /, /health, /metrics, an unknown one' '
	web_users "$WEB_HASH" &&
	serve_start serve.log --web-config web.yml &&
	for p in / /health /metrics /nope; do echo "$p $(code $p)"; done >anon &&
	wait_code 200 /health -u prom:$WEB_PASS &&
	for p in / /health /metrics /nope; do echo "$p $(code $p -u prom:$WEB_PASS)"; done >authed &&
	serve_stop && cat anon authed &&
	test "$(grep -c " 401$" anon)" = 4 &&
	has "^/ 200$" authed && has "^/health 200$" authed && has "^/metrics 200$" authed &&
	has "^/nope 404$" authed
'

expect_success 'no user name or password in the log, whatever is tried' '
	web_users "$WEB_HASH" &&
	serve_start serve.log --web-config web.yml &&
	code /metrics -u prom:$WEB_PASS >/dev/null && code /metrics -u eve-the-user:guessing >/dev/null &&
	code /metrics -u prom:wrong-password >/dev/null &&
	serve_stop && cat serve.log &&
	hasnt "eve-the-user|guessing|wrong-password|prom:|s3cret" serve.log
'

# bcrypt at cost 10 takes ~0.3 s here: checked on the HTTP threads, 16
# clients sending new wrong passwords would keep both threads busy and a
# scrape would wait seconds.  Known credentials must stay fast (2 s is
# room for a loaded machine; a scrape takes milliseconds).
expect_success 'a flood of wrong passwords does not hold up a known client'"'"'s scrapes' '
	web_users "$WEB_HASH10" &&
	serve_start serve.log --web-config web.yml &&
	wait_code 200 /metrics -u prom:$WEB_PASS &&
	{ seq 1 160 | xargs -P 16 -I{} curl -s -o /dev/null -w "%{http_code}\n" --max-time 30 \
		-u "prom:wrong{}" "http://127.0.0.1:$PORT/metrics" >flood.txt & fpid=$!; } &&
	sleep 1 &&
	for i in $(seq 1 10); do
		curl -sS -o /dev/null --max-time 10 -w "%{http_code} %{time_total}\n" \
			-u prom:$WEB_PASS "http://127.0.0.1:$PORT/metrics"
		sleep 0.2
	done >scrapes.txt &&
	wait $fpid && serve_stop &&
	cat scrapes.txt && sort flood.txt | uniq -c &&
	test "$(grep -c "^200 " scrapes.txt)" = 10 &&
	awk "\$2 > 2.0 { slow++ } END { exit slow > 0 }" scrapes.txt &&
	test "$(wc -l <flood.txt)" = 160 && hasnt "^200$" flood.txt &&
	has "^401$" flood.txt && has "^503$" flood.txt
'

# at cost 12 (~1 s a check here) ten checks would take 10 s or more
expect_success 'the same wrong password repeated is checked once (remembered), still 401' '
	web_users "$WEB_HASH12" &&
	serve_start serve.log --web-config web.yml &&
	wait_code 200 /health -u prom:$WEB_PASS &&
	code /metrics -u prom:nope >first &&
	s=$(date +%s%N) &&
	for i in $(seq 1 10); do code /metrics -u prom:nope; done >again &&
	e=$(date +%s%N) && serve_stop &&
	echo "10 repeats in $(((e - s) / 1000000)) ms" &&
	has "^401$" first && test "$(grep -c "^401$" again)" = 10 &&
	test $(((e - s) / 1000000)) -lt 7000
'

serve_cleanup
finish
