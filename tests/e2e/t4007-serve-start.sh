#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4007-serve-start.sh - `vramz serve` at its edges (issue 12 item 9): it
# listens before its first sample, answering 503 until it has one, so a
# slow driver does not look like a dead exporter; `serve --once` exits 1
# when no GPU can be read, so a check that runs it sees the failure.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

expect_success 'a driver slow to answer: the port is open at once, 503 until the first sample' '
	scenario_fleet slow.scn 1 1 &&
	printf "latency nvmlDeviceGetMemoryInfo_v2 8s\nlatency nvmlDeviceGetMemoryInfo 8s\n" >>slow.scn &&
	export FAKE_NVML_SCENARIO=$T/slow.scn &&
	serve_start serve.log &&
	scrape /metrics -o early.txt -w "%{http_code}" >code.txt &&
	test "$(cat code.txt)" = 503 &&
	has "no sample yet" early.txt &&
	scrape /health -w "%{http_code}" -o /dev/null >hcode.txt &&
	test "$(cat hcode.txt)" = 503 &&
	for i in $(seq 150); do
		scrape /metrics -o late.txt -w "%{http_code}" >code.txt || true
		[ "$(cat code.txt)" = 200 ] && break
		sleep 0.1
	done &&
	test "$(cat code.txt)" = 200 &&
	has "^vramz_up 1$" late.txt &&
	serve_stop
'

expect_success 'serve --once with every GPU lost: the body says so, exit 1' '
	scenario_fleet lost.scn 2 2 &&
	printf "lost gpu=0 after=0\nlost gpu=1 after=0\n" >>lost.scn &&
	{ FAKE_NVML_SCENARIO=$T/lost.scn vramz serve --once >m.txt 2>err && r=0 || r=$?; } &&
	cat err &&
	test "$r" = 1 &&
	has "^vramz_up 0$" m.txt &&
	has "lost" err
'

expect_success 'serve --once with one GPU of two lost: exit 0, that GPU marked lost' '
	scenario_fleet half.scn 2 2 &&
	printf "lost gpu=1 after=0\n" >>half.scn &&
	FAKE_NVML_SCENARIO=$T/half.scn vramz serve --once >m.txt &&
	has "^vramz_up 1$" m.txt &&
	has "^vramz_gpu_lost\{gpu=\"1\"[^}]*\} 1$" m.txt
'

serve_cleanup
finish
