#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3100-diag-watch.sh - `vramz watch` against the fake NVML: a leaker is
# flagged with its rate and a time to OOM, the steady job beside it never
# is; --json lines; --exec runs a command with the finding in its
# environment; bad options and config lines are usage errors.
. "$TESTS_SRC/e2e/lib.sh"

# real processes for the scenario's pids, so /proc attributes them
sleep 120 & STEADY_PID=$!
sleep 120 & LEAK_PID=$!
export STEADY_PID LEAK_PID
trap 'kill $STEADY_PID $LEAK_PID 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg"
FAST="-i 100ms --window 200ms --leak-warmup 1s --leak-min-span 3s --report-after 1s"

# the five fixed-length watches run side by side from here (each step
# checks its own, bg_wait), each with a config directory of its own: 6 s
# for the file instead of 29
scenario diag-leak.scn
XDG_CONFIG_HOME=$T/cfg.text bg_run text vramz watch $FAST -d 6s
XDG_CONFIG_HOME=$T/cfg.json bg_run json vramz watch $FAST -d 6s --json
XDG_CONFIG_HOME=$T/cfg.exec bg_run exec vramz watch $FAST -d 6s --min-severity warning \
	--exec sh -c "env | grep ^VRAMZ_FINDING_ | sort > \"$T/ev.\$\$\""
XDG_CONFIG_HOME=$T/cfg.hung bg_run hung sh -c 'start=$(date +%s) &&
	"$VRAMZ_BIN" watch '"$FAST"' -d 6s --exec-timeout 1s --exec sleep 100 &&
	echo "took $(($(date +%s) - start)) s" >&2'
mkdir -p "$T/cfg.quiet/vramz" && printf "leak-min-rate = 1TiB\n" >"$T/cfg.quiet/vramz/config"
XDG_CONFIG_HOME=$T/cfg.quiet bg_run quiet vramz watch $FAST -d 5s

expect_success 'watch flags the 64 MiB/s leaker, not the steady job' '
	bg_wait text && cp text.out out &&
	has "new +(CRITICAL|WARNING) +leak +pid $LEAK_PID \(sleep\) on GPU 0 grows" out &&
	hasnt "pid $STEADY_PID" out &&
	python3 - out <<PY
import re, sys
line = [l for l in open(sys.argv[1]) if " leak " in l][0]
rate = float(re.search(r"grows ([0-9.]+) MiB/min", line).group(1))
assert abs(rate - 64 * 60) <= 0.1 * 64 * 60, rate
assert "out of memory in about" in line, line
PY
'

expect_success 'watch --json prints one object per event' '
	bg_wait json && cp json.out out.json &&
	python3 - out.json <<PY
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
leaks = [e for e in ev if e["finding"]["kind"] == "leak"]
assert leaks and leaks[0]["event"] == "new", ev
f = leaks[0]["finding"]
assert f["pid"] == int("$LEAK_PID") and f["gpu"] == 0, f
assert abs(f["rate_bytes_per_s"] - 64 * 2**20) < 0.1 * 64 * 2**20, f
# sleeps this script started: siblings under a shell are no job
assert f["time_to_oom_s"] > 0 and f["job"] is None, f
PY
'

expect_success '--exec runs a command per event with the finding in its environment' '
	bg_wait exec &&
	cat "$T"/ev.* >env.txt &&
	has "^VRAMZ_FINDING_EVENT=new" env.txt &&
	has "^VRAMZ_FINDING_KIND=leak" env.txt &&
	has "^VRAMZ_FINDING_PID=$LEAK_PID" env.txt &&
	has "^VRAMZ_FINDING_RATE_BYTES_PER_S=[0-9]+" env.txt &&
	has "^VRAMZ_FINDING_TTO_S=[0-9]+" env.txt
'

expect_success 'a hung --exec command does not stop sampling' '
	bg_wait hung && cp hung.out out && cp hung.err err &&
	took=$(sed -n "s/^took \([0-9]*\) s$/\1/p" err) && echo "took $took s" &&
	[ "$took" -lt 15 ] &&
	has "new .* leak" out && has "killed" err
'

expect_success 'bad options and config lines are usage errors naming the input' '
	scenario diag-leak.scn &&
	[ "$(rc vramz watch --idle-time soon)" = 2 ] &&
	[ "$(rc vramz watch --min-severity loud -d 1s)" = 2 ] &&
	mkdir -p "$XDG_CONFIG_HOME/vramz" &&
	printf "# thresholds\nidle-time = 10min\nleak-p = often\n" >"$XDG_CONFIG_HOME/vramz/config" &&
	{ vramz watch -d 1s 2>err; test $? = 2; } &&
	has "config:3: bad value .often. for leak-p" err &&
	printf "idle-tim = 10min\n" >"$XDG_CONFIG_HOME/vramz/config" &&
	{ vramz watch -d 1s 2>err; test $? = 2; } &&
	has "config:1: unknown key .idle-tim." err &&
	rm "$XDG_CONFIG_HOME/vramz/config"
'

expect_success 'thresholds from the config file apply (a huge minimum rate silences the leak)' '
	bg_wait quiet && cp quiet.out out &&
	hasnt " leak " out && has "leak-min-rate = 1TiB" "$T/cfg.quiet/vramz/config"
'

finish
