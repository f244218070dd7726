#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3120-diag-imbalance.sh - `vramz watch` on four ranks (diag-imbalance.scn:
# 60 GiB on GPU 0, 12 GiB on GPUs 1-3).  Real processes stand in for the
# ranks: with torchrun's variables in their environment they are one job
# and the imbalance is reported once, named by the run id, never cleared
# and raised again; the same four processes without them are four
# unrelated programs this shell started, and nothing is reported.
. "$TESTS_SRC/e2e/lib.sh"

pids=""
for r in 0 1 2 3; do
	TORCHELASTIC_RUN_ID=e2e-run RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 \
		MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 sleep 120 &
	pids="$pids $!"
	eval "RANK${r}_RUN=$!"
	sleep 120 &
	pids="$pids $!"
	eval "RANK${r}_PLAIN=$!"
done
trap 'kill $pids 2>/dev/null; rm -rf "$T"' EXIT
# each rank exec'd: until then /proc shows the forked shell, without the
# rank variables (bash sets them in the child just before exec), and a
# loaded run's first ticks saw four unrelated programs, not one job
for p in $pids; do
	for _ in $(seq 100); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	[ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ] || { echo "pid $p never became sleep"; exit 1; }
done
export XDG_CONFIG_HOME="$T/cfg"
scenario diag-imbalance.scn
# warm-up 2 s and report-after 1 s leave 5 s and 4 s of slack: a loaded
# (ASan, parallel) run once reached the end of a 4 s watch first
FAST="-i 100ms --window 200ms --job-warmup 2s --report-after 1s"

# the three watches run side by side from here (each step checks its own,
# bg_wait): 8 s for the file instead of 19, and the plain processes are
# watched 8 s too, not 4, for the same slack as the ranks
RANKS="RANK0_PID=$RANK0_RUN RANK1_PID=$RANK1_RUN RANK2_PID=$RANK2_RUN RANK3_PID=$RANK3_RUN"
PLAIN="RANK0_PID=$RANK0_PLAIN RANK1_PID=$RANK1_PLAIN RANK2_PID=$RANK2_PLAIN RANK3_PID=$RANK3_PLAIN"
bg_run json env $RANKS "$VRAMZ_BIN" watch $FAST -d 8s --json
bg_run text env $RANKS "$VRAMZ_BIN" watch $FAST -d 7s
bg_run plain env $PLAIN "$VRAMZ_BIN" watch $FAST -d 8s --json

expect_success 'four torchrun ranks, one 5x heavier: one imbalance for the run' '
	bg_wait json && cp json.out out.json &&
	python3 - out.json <<PY
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
imb = [e for e in ev if e["finding"]["kind"] == "imbalance"]
assert [e["event"] for e in imb] == ["new"], ev
f = imb[0]["finding"]
assert f["job"] == "torchrun:e2e-run", f
assert f["gpu"] == 0 and f["count"] == 4, f
assert abs(f["share"] - 5.0) < 0.01, f
assert f["bytes"] == 60 * 2**30 and f["ref_bytes"] == 12 * 2**30, f
# nothing announced and then taken back
assert not [e for e in ev if e["event"] == "cleared"], ev
PY
'

expect_success 'the text line names the job and the heavy GPU' '
	bg_wait text && cp text.out out &&
	test "$(grep -c " imbalance " out)" = 1 &&
	has "new +WARNING +imbalance .*torchrun:e2e-run" out
'

expect_success 'the same processes without rank variables: no job, no imbalance' '
	bg_wait plain && cp plain.out out.json &&
	hasnt "imbalance|stray_context" out.json
'

finish
