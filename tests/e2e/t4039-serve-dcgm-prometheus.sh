#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4039-serve-dcgm-prometheus.sh - one source of each DCGM series: a real
# Prometheus loads packaging/prometheus-recording.yml and scrapes two
# exporters of one job, one run with --dcgm-names (it serves the DCGM
# names itself) and one without (the rules make them).  A dashboard's
# sum(DCGM_FI_DEV_POWER_USAGE) must then be the true total of the four
# GPUs, each GPU's series there once, with the labels of its one source.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
. "$TESTS_SRC/e2e/prom-lib.sh"
PROMQL_DROP=job # the two exporters are told apart by their instance

# The rules' own expression for DCGM_FI_DEV_POWER_USAGE without its last
# line (the `unless`): what a Prometheus would record without the marker.
rule_without_unless() {
	python3 - "$TESTS_SRC/../packaging/prometheus-recording.yml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"- record: DCGM_FI_DEV_POWER_USAGE\n\s+expr: \|\n((?:\s{10}.*\n)+)", text)
lines = m.group(1).splitlines()
assert lines[-1].strip().startswith("unless on (instance, job)"), lines[-1]
print("\n".join(lines[:-1]))
PY
}

check_queries() {
	local ok=0 i
	# both targets up and the rules evaluated over target b's samples
	for i in $(seq 1 300); do
		if promql 'count(DCGM_FI_DEV_POWER_USAGE{Hostname="127.0.0.1"})' 2>/dev/null | grep -q " [2-9]$" &&
			promql 'count(vramz_dcgm_names)' 2>/dev/null | grep -q " 2$"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ $ok = 1 ] || { echo "the rules never recorded target b's series:"; tail -20 prom.log; return 1; }
	sleep 2 # more evaluations: a doubled series would be there by now
	promql 'vramz_dcgm_names' >marker.txt && cat marker.txt &&
	has "instance=127.0.0.1:$PORT_A 1$" marker.txt && has "instance=127.0.0.1:$PORT_B 0$" marker.txt &&
	# 318 W + 455 W (2gpu-h200.scn) + 2 x 300 W (the fleet)
	promql 'sum(DCGM_FI_DEV_POWER_USAGE)' >sum.txt && cat sum.txt && has "^ 1373$" sum.txt &&
	promql 'count(DCGM_FI_DEV_POWER_USAGE)' >n.txt && has "^ 4$" n.txt &&
	promql 'count by (instance, gpu) (DCGM_FI_DEV_FB_USED) > 1' >twice.txt &&
	{ ! test -s twice.txt || { echo "doubled:"; cat twice.txt; false; }; } &&
	# target a's series are its own (NODE_NAME, device, driver), b's the rules'
	promql "DCGM_FI_DEV_POWER_USAGE{instance=\"127.0.0.1:$PORT_A\"}" >a.txt && cat a.txt &&
	test "$(wc -l <a.txt)" = 2 && has "Hostname=gpu-node-7,.*gpu=0,.* 318$" a.txt &&
	has "DCGM_FI_DRIVER_VERSION=580.159.04" a.txt &&
	promql "DCGM_FI_DEV_POWER_USAGE{instance=\"127.0.0.1:$PORT_B\"}" >b.txt && cat b.txt &&
	test "$(wc -l <b.txt)" = 2 && has "Hostname=127.0.0.1,.*gpu=1,.* 300$" b.txt &&
	hasnt "gpu-node-7" b.txt &&
	# the guard is the unless: the rule without it would add a's GPUs again
	promql "count($(rule_without_unless))" >without.txt && cat without.txt && has "^ 4$" without.txt
}

expect_success 'Prometheus with the recording rules and a --dcgm-names target: each DCGM series once, the true power total' '
	scenario_fleet fleet.scn 2 0 &&
	NODE_NAME=gpu-node-7 FAKE_NVML_SCENARIO=$SCENARIOS/2gpu-h200.scn serve_start a.log --dcgm-names &&
	PORT_A=$PORT && PID_A=$SERVE_PID &&
	FAKE_NVML_SCENARIO=$T/fleet.scn serve_start b.log &&
	PORT_B=$PORT &&
	PPORT=$(free_port) &&
	cp "$TESTS_SRC/../packaging/prometheus-recording.yml" rules.yml &&
	printf "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nrule_files: [rules.yml]\nscrape_configs:\n  - job_name: vramz\n    static_configs:\n      - targets: [\"127.0.0.1:%s\", \"127.0.0.1:%s\"]\n" "$PORT_A" "$PORT_B" >prom.yml &&
	promtool check config prom.yml
	rc=0
	prom_check tsdb check_queries || rc=1
	serve_stop
	kill $PID_A 2>/dev/null; wait $PID_A 2>/dev/null
	exit $rc
'

serve_cleanup
finish
