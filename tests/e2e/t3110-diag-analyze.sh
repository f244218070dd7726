#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3110-diag-analyze.sh - `vramz analyze` on logs that `vramz log` recorded
# from the fake NVML: a leak (rate and pid), an idle holder (only with a
# short --idle-time), orphaned memory, a lost GPU; exit 0 when clean, 3
# when a finding reaches --fail-on, 1 when the log cannot be read.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/diag-lib.sh"

# record each scenario once; the steps below analyze the files
rec diag-leak.scn leak 6s & a=$!
rec diag-idle.scn idle 3s & b=$!
rec diag-orphan.scn orphan 3s & c=$!
rec diag-lost.scn lost 2s & e=$!
wait $a $b $c $e

expect_success 'a leak in a log: the leaker, its rate, exit 3' '
	{ vramz analyze --window 200ms --leak-warmup 1s --leak-min-span 3s "$L/leak.csv" >out; test $? = 3; } &&
	has "(CRITICAL|WARNING) +leak +pid $LEAK_PID \(sleep\) on GPU 0 grows" out &&
	hasnt "pid $STEADY_PID" out &&
	{ vramz analyze --json --window 200ms --leak-warmup 1s --leak-min-span 3s "$L/leak.csv" >out.json; test $? = 3; } &&
	python3 - out.json <<PY
import json, sys
r = json.load(open(sys.argv[1]))
leaks = [f for f in r["findings"] if f["kind"] == "leak"]
assert len(leaks) == 1, r
f = leaks[0]
assert f["pid"] == int("$LEAK_PID") and f["gpu"] == 0, f
assert abs(f["rate_bytes_per_s"] - 64 * 2**20) < 0.1 * 64 * 2**20, f
# two sleeps this script started are no job
assert f["job"] is None, f
assert r["ticks"] >= 40, r
PY
'

expect_success 'an idle holder only past --idle-time; clean is exit 0' '
	vramz analyze "$L/idle.csv" >out &&
	has "^no findings" out &&
	{ vramz analyze --idle-time 2s "$L/idle.csv" >out; test $? = 3; } &&
	has "WARNING +idle_holder +pid $IDLE_PID \(sleep\) on GPU 0 holds 6.0 GiB at 0% SM" out &&
	hasnt "pid $BUSY_PID" out &&
	vramz analyze --idle-time 2s --fail-on critical "$L/idle.csv" >out &&
	has "idle_holder" out
'

expect_success 'orphaned memory: the amount no process accounts for' '
	vramz analyze "$L/orphan.csv" >out &&
	hasnt "^[A-Z]+ +orphaned" out &&
	{ vramz analyze --orphan-time 1s --json "$L/orphan.csv" >out.json; test $? = 3; } &&
	python3 - out.json <<PY
import json, sys
r = json.load(open(sys.argv[1]))
o = [f for f in r["findings"] if f["kind"] == "orphaned"]
assert len(o) == 1 and o[0]["gpu"] == 0 and o[0]["pid"] is None, r
assert o[0]["bytes"] == 3 * 2**30 and o[0]["severity"] == "warning", o
PY
'

expect_success 'a lost GPU is critical: exit 3 even with --fail-on critical' '
	{ vramz analyze --fail-on critical "$L/lost.csv" >out; test $? = 3; } &&
	has "CRITICAL +gpu_lost +GPU 1 fell off the bus" out &&
	hasnt "GPU 0 fell" out
'

expect_success 'a log that cannot be read is exit 1 naming the file' '
	{ vramz analyze "$L/missing.csv" 2>err; test $? = 1; } &&
	has "missing.csv" err &&
	printf "not,a,vramz\nlog,at,all\n" >bad.csv &&
	{ vramz analyze bad.csv 2>err; test $? = 1; } &&
	has "bad.csv" err &&
	{ vramz analyze 2>err; test $? = 2; } &&
	{ vramz analyze --fail-on loud "$L/idle.csv" 2>err; test $? = 2; }
'

finish
