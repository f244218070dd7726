#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4001-serve-prometheus.sh - a real Prometheus server on loopback scrapes
# `vramz serve` (fake NVML) every second; its HTTP API must then return the
# series and values the scenario holds, as a user's PromQL would see them.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
. "$TESTS_SRC/e2e/prom-lib.sh"

# The queries, run while both servers are up.
check_queries() {
	local ok=0 i
	for i in $(seq 1 300); do
		if promql "vramz_up" 2>/dev/null | grep -q " 1$"; then ok=1; break; fi
		sleep 0.1
	done
	[ $ok = 1 ] || { echo "Prometheus never saw vramz_up 1:"; tail -20 prom.log; return 1; }
	promql "up{job=\"vramz\"}" >up.txt && has "^__name__=up 1$" up.txt &&
	promql "vramz_memory_total_bytes" >total.txt &&
	has "^__name__=vramz_memory_total_bytes,gpu=0,uuid=GPU-10000000-1c35-4f8a-b6d2-7e90a15c3f48 150754820096$" total.txt &&
	test "$(wc -l <total.txt)" = 2 &&
	promql "vramz_power_watts{gpu=\"1\"}" >pw.txt && has " 300$" pw.txt &&
	promql "vramz_utilization_gpu_ratio{gpu=\"1\"}" >u.txt && has " 0.1$" u.txt &&
	promql "vramz_clock_throttle_reason{reason=\"sw_power_cap\"} == 1" >thr.txt &&
	test "$(wc -l <thr.txt)" = 2 &&
	promql "count(vramz_process_memory_used_bytes)" >np.txt && has "^ 3$" np.txt &&
	promql "vramz_process_memory_used_bytes{pid=\"4000002\"}" >p.txt &&
	has "^__name__=vramz_process_memory_used_bytes,gpu=0,pid=4000002,uuid=GPU-10000000-[-0-9a-f]* 106954752$" p.txt &&
	promql "vramz_memory_used_bytes * on(gpu, uuid) group_left(name) vramz_gpu_info" >join.txt &&
	has "name=NVIDIA H200" join.txt &&
	promql "scrape_samples_scraped{job=\"vramz\"}" >n.txt && has " [0-9]{2,}$" n.txt
}

expect_success 'Prometheus scrapes vramz serve and answers queries with the scenario values' '
	scenario_fleet fleet.scn 2 3 &&
	export FAKE_NVML_SCENARIO=$T/fleet.scn &&
	serve_start serve.log --procs &&
	PPORT=$(free_port) &&
	printf "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: vramz\n    static_configs:\n      - targets: [\"127.0.0.1:%s\"]\n" "$PORT" >prom.yml &&
	promtool check config prom.yml
	rc=0
	prom_check tsdb check_queries || rc=1
	serve_stop
	exit $rc
'

serve_cleanup
finish
