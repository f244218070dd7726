#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4010-serve-findings.sh - the exporter serves the diagnosis engine's
# findings: a 64 MiB/s leaker gets vramz_leak_rate_bytes_per_second and
# vramz_time_to_oom_seconds series with its pid (the figures the alert rules
# use), the steady job beside it gets none, and --no-diagnose turns them off.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

sleep 120 & STEADY_PID=$!
sleep 120 & LEAK_PID=$!
export STEADY_PID LEAK_PID
trap 'kill $STEADY_PID $LEAK_PID 2>/dev/null; rm -rf "$T"' EXIT
# thresholds for a test's seconds rather than a job's minutes, through the
# config file that serve shares with watch and analyze
export XDG_CONFIG_HOME="$T/cfg"
mkdir -p "$XDG_CONFIG_HOME/vramz"
printf "window = 200ms\nleak-warmup = 1s\nleak-min-span = 3s\nreport-after = 1s\n" \
	>"$XDG_CONFIG_HOME/vramz/config"

expect_success 'a leaker has leak-rate and time-to-OOM series; the steady job none' '
	scenario diag-leak.scn &&
	serve_start serve.log --interval 100ms &&
	wait_for sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q \"^vramz_time_to_oom_seconds{\"" &&
	scrape /metrics >m.txt &&
	serve_stop &&
	promtool check metrics <m.txt &&
	has "^vramz_leak_rate_bytes_per_second\{gpu=\"0\",[^}]*pid=\"$LEAK_PID\"[^}]*\} " m.txt &&
	hasnt "pid=\"$STEADY_PID\"[^}]*\} [0-9]" m.txt &&
	python3 - m.txt "$LEAK_PID" <<PY
import re, sys
body = open(sys.argv[1]).read()
rate = float(re.search(r"^vramz_leak_rate_bytes_per_second\{[^}]*pid=\"%s\"[^}]*\} (\S+)$" % sys.argv[2], body, re.M).group(1))
assert abs(rate - 64 * 2**20) <= 0.1 * 64 * 2**20, rate
tto = float(re.search(r"^vramz_time_to_oom_seconds\{[^}]*pid=\"%s\"[^}]*\} (\S+)$" % sys.argv[2], body, re.M).group(1))
assert 0 < tto < 81559 * 2**20 / (64 * 2**20), tto
PY
'

expect_success '--no-diagnose serves no finding series' '
	scenario diag-leak.scn &&
	FAKE_NVML_SCENARIO=$SCENARIOS/diag-leak.scn vramz serve --once --no-diagnose >m.txt &&
	promtool check metrics <m.txt && hasnt "^vramz_leak_rate_bytes_per_second" m.txt &&
	hasnt "^# TYPE vramz_time_to_oom_seconds" m.txt
'
finish
