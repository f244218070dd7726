#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6040-top-findings: the findings panel of `vramz top` is the diagnosis
# engine's (the one `vramz watch` and `analyze` use).  A replayed log in
# which a job allocates its 8 GiB in its first seconds and then holds it
# steady - the case the dashboard's old stand-in called "memory growing,
# full in 2h30m" - raises nothing on its GPU, while a process in the same
# log growing 64 MiB/s is named with its rate, its row and GPU marked '!'.
# Live, the engine's leak finding shows up the same way.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
WAIT_FOR_TENTHS=150
top() { top_session "$@"; }
export XDG_CONFIG_HOME=$T/cfg # no thresholds from the machine's config

# A 150 s log at 1 Hz, written from the rows `vramz log` records for two
# GPUs: pid 4200201 ramps to 8 GiB on GPU 1 in 8 s and stays; pid 4200102
# on GPU 0 starts at 2 GiB and grows 64 MiB/s throughout.
cat >"$T/two.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000
gpu 1 name="NVIDIA H200" uuid=GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000
proc gpu=0 pid=4200102 used=2GiB type=compute sm=50
proc gpu=1 pid=4200201 used=8GiB type=compute sm=50
SCN
FAKE_NVML_SCENARIO=$T/two.scn vramz log -o "$T/tpl.csv" --procs -i 50ms --duration 100ms 2>/dev/null
python3 - "$T" <<'PY'
import csv, datetime, sys
d = sys.argv[1]
def rows(p):
    r = list(csv.DictReader(open(p, newline="")))
    return r, list(r[0].keys())
g, gcols = rows(d + "/tpl.csv")
p, pcols = rows(d + "/tpl.procs.csv")
t0 = g[0]["time"]
gt = {r["gpu"]: r for r in g if r["time"] == t0}
pt = {r["pid"]: r for r in p if r["time"] == t0}
base = datetime.datetime(2026, 11, 30, 1, 0, 0)
GiB, MiB = 1 << 30, 1 << 20
with open(d + "/job.csv", "w", newline="") as gf, open(d + "/job.procs.csv", "w", newline="") as pf:
    gw = csv.DictWriter(gf, gcols, lineterminator="\n"); gw.writeheader()
    pw = csv.DictWriter(pf, pcols, lineterminator="\n"); pw.writeheader()
    for s in range(150):
        t = (base + datetime.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        used = {"4200102": 2 * GiB + s * 64 * MiB, "4200201": min(8, s + 1) * GiB}
        for pid, gpu in (("4200102", "0"), ("4200201", "1")):
            r = dict(pt[pid]); r["time"] = t; r["used_bytes"] = str(used[pid]); pw.writerow(r)
            r = dict(gt[gpu]); r["time"] = t
            r["mem_used_bytes"] = str(used[pid])
            r["mem_free_bytes"] = str(int(r["mem_total_bytes"]) - int(r["mem_reserved_bytes"]) - used[pid])
            gw.writerow(r)
PY

expect_success 'replay: the start-up allocation raises nothing, the 64 MiB/s grower is named' '
	top 200 40 --replay "$T/job.csv" --speed 64 &&
	wait_for "\[end\]" &&
	wait_for "(CRIT|WARN) (out of memory in about [^:]+: )?pid 4200102 .*on GPU 0 grows 64\.0 MiB/s|(CRIT|WARN) (out of memory in about [^:]+: )?pid 4200102 .*on GPU 0 grows 3840\.0 MiB/min" &&
	has "^!4200102 " screen &&
	has "GPU 0! H200" screen &&
	hasnt "4200201 .*grow|GPU 1 .*grow|memory growing" screen &&
	has "^ 4200201 .* 8\.00 GiB" screen &&
	has "GPU 1 H200" screen
'

# real processes for the live scenario's pids, so /proc attributes them
sleep 120 & STEADY_PID=$!
sleep 120 & LEAK_PID=$!
export STEADY_PID LEAK_PID
trap 'kill $STEADY_PID $LEAK_PID 2>/dev/null; rm -rf "$T"' EXIT

expect_success 'live: the engine flags the leaker (thresholds from the config file), not the steady job' '
	mkdir -p cfg/vramz &&
	printf "window = 200ms\nleak-warmup = 1s\nleak-min-span = 3s\n" >cfg/vramz/config &&
	export FAKE_NVML_SCENARIO=$SCENARIOS/diag-leak.scn &&
	top 200 30 -i 100ms &&
	wait_for "(CRIT|WARN) (out of memory in about [^:]+: )?pid $LEAK_PID \(sleep\) on GPU 0 grows" &&
	has "^! +$LEAK_PID " screen &&
	has "^ +$STEADY_PID " screen &&
	hasnt "pid $STEADY_PID" screen &&
	has "driver 580\.159\.04" screen
'
finish
