#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4044-serve-process-metrics.sh - issue 38, item 4: the process_* series
# every Prometheus exporter carries (client_golang's names, HELP and
# TYPE), so dashboards of an exporter's own health work on vramz: each
# agrees with what /proc and the shell say of the exporter's process, and
# promtool finds the body clean.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

expect_success 'the six series, client_golang'"'"'s HELP and TYPE, lint-clean' '
	(ulimit -n 1234 && serve_start serve.log --interval 200ms && echo "$SERVE_PID $PORT" >pid) &&
	read -r SERVE_PID PORT <pid && echo "$SERVE_PID" >>"$T/.serve-pids" &&
	wait_for scrape /metrics -f -o m.txt && sleep 0.5 && scrape /metrics -o m.txt &&
	ls /proc/$SERVE_PID/fd | wc -l >fds.txt && rss_kib $SERVE_PID >rss.txt &&
	cut -d" " -f22 /proc/$SERVE_PID/stat >start.txt && awk "/^btime/ {print \$2}" /proc/stat >btime.txt &&
	kill "$SERVE_PID" && wait_for test ! -e /proc/$SERVE_PID &&
	while IFS="|" read -r n h t; do
		has "^# HELP $n $h\$" m.txt && has "^# TYPE $n $t\$" m.txt && has "^$n [0-9.e+]*\$" m.txt || exit 1
	done <<-EOF &&
	process_cpu_seconds_total|Total user and system CPU time spent in seconds.|counter
	process_open_fds|Number of open file descriptors.|gauge
	process_max_fds|Maximum number of open file descriptors.|gauge
	process_virtual_memory_bytes|Virtual memory size in bytes.|gauge
	process_resident_memory_bytes|Resident memory size in bytes.|gauge
	process_start_time_seconds|Start time of the process since unix epoch in seconds.|gauge
	EOF
	has "^process_max_fds 1234$" m.txt &&
	promtool check metrics <m.txt &&
	python3 - "$(getconf CLK_TCK)" <<-EOF
	import time
	m = {l.split()[0]: float(l.split()[1]) for l in open("m.txt") if l.startswith("process_")}
	fds, rss = int(open("fds.txt").read()), int(open("rss.txt").read()) * 1024
	start = int(open("btime.txt").read()) + int(open("start.txt").read()) / $(getconf CLK_TCK)
	print(m, fds, rss, start)
	# the body is a tick old and a scrape connection may come and go
	assert abs(m["process_open_fds"] - fds) <= 4, (m["process_open_fds"], fds)
	assert 0.5 * rss < m["process_resident_memory_bytes"] < 2 * rss
	assert m["process_virtual_memory_bytes"] >= m["process_resident_memory_bytes"]
	assert abs(m["process_start_time_seconds"] - start) < 0.02
	assert abs(m["process_start_time_seconds"] - time.time()) < 60
	assert 0 <= m["process_cpu_seconds_total"] < 30
	EOF
'

expect_success 'the CPU seconds are a counter that grows as the exporter works' '
	serve_start serve.log --interval 10ms --procs &&
	wait_for scrape /metrics -f -o a.txt &&
	for i in $(seq 200); do scrape /metrics -o /dev/null; done && sleep 0.1 &&
	scrape /metrics -o b.txt && serve_stop &&
	a=$(awk "/^process_cpu_seconds_total/ {print \$2}" a.txt) &&
	b=$(awk "/^process_cpu_seconds_total/ {print \$2}" b.txt) && echo "$a -> $b" &&
	python3 -c "import sys; assert float(sys.argv[2]) > float(sys.argv[1])" "$a" "$b"
'

expect_success 'serve --once prints them too (one body, the same names)' '
	vramz serve --once >o.txt && test "$(grep -c "^process_" o.txt)" = 6 && promtool check metrics <o.txt
'

serve_cleanup
finish
