#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3130-diag-oom.sh - the diagnoses that must come sooner (issue 16), on
# the fake NVML: a job filling its GPU in ~40 s is reported as a leak well
# before it dies, then gets its oom finding (watch live; analyze on the log
# recorded beside it, with the "what grew" table naming its command line);
# a log too short for the leak rule says so; a log whose clock steps back
# an hour is analysed (and replayed), with the line of the step noted; a
# loader growing at 0 % SM is never an idle holder, a still one is.
. "$TESTS_SRC/e2e/lib.sh"

sleep 300 & STEADY_PID=$!
export STEADY_PID
trap 'kill $STEADY_PID $OOM_PID $IDLE_PID $LOADER_PID 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg"
L="$T/logs"
mkdir -p "$L"

# the leaker: a real process that ends when its GPU is full (24 GiB - 0.5
# reserved - 2 steady - 1 at start, at 512 MiB/s: 41 s).  Its 42 s run on
# the real clock, so the fake's growth must too: FAKE_NVML_EPOCH starts
# both vramz processes' fake clocks at the sleep's start, not each at its
# own nvmlInit (a loaded machine started them a second or more later, and
# the job ended before its GPU was full: no oom)
# the idle step's 6 s watch runs beside the 47 s ones (its own scenario)
sleep 120 & IDLE_PID=$!
sleep 120 & LOADER_PID=$!
export IDLE_PID LOADER_PID
FAKE_NVML_SCENARIO="$SCENARIOS/diag-idle-loader.scn" bg_run idle \
	vramz watch -i 200ms -d 6s --idle-time 2s --report-after 1s --json

scenario diag-oom.scn
EPOCH=$(date +%s.%N)
sleep 42 & OOM_PID=$!
export OOM_PID
FAKE_NVML_EPOCH=$EPOCH vramz log -o "$L/oom.csv" --procs -i 200ms --duration 47s 2>/dev/null & LOGGER=$!
FAKE_NVML_EPOCH=$EPOCH vramz watch -i 200ms -d 47s --report-after 1s --json >"$T/watch.json" 2>"$T/watch.err"
WATCH_RC=$?
wait $LOGGER

expect_success 'watch: the filling job is a leak long before it dies, then an oom' '
	test $WATCH_RC = 0 &&
	python3 - "$T/watch.json" <<PY
import json, sys, datetime
ev = [json.loads(l) for l in open(sys.argv[1])]
def t(e): return datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
leak = [e for e in ev if e["event"] == "new" and e["finding"]["kind"] == "leak"
        and e["finding"]["pid"] == $OOM_PID]
oom = [e for e in ev if e["event"] == "new" and e["finding"]["kind"] == "oom"]
assert leak, ev
assert len(oom) == 1, ev
f, o = leak[0]["finding"], oom[0]["finding"]
# 512 MiB/s, within 15 %, and a time to OOM
assert abs(f["rate_bytes_per_s"] - 512 * 2**20) < 0.15 * 512 * 2**20, f
assert f["time_to_oom_s"] is not None and f["time_to_oom_s"] < 60, f
assert f["severity"] == "critical", f
ahead = t(oom[0]) - t(leak[0])
print("leak reported %.1f s before the oom" % ahead)
assert ahead >= 8, (ahead, leak[0], oom[0])
assert o["pid"] == $OOM_PID and o["gpu"] == 0 and o["ended"], o
assert "low_free" in o["evidence"], o
assert "probably ended out of memory on GPU 0: " in o["summary"], o
assert " free at its last sample; it held " in o["summary"], o
# the steady job is neither
assert not [e for e in ev if e["finding"].get("pid") == $STEADY_PID], ev
PY
'

expect_success 'analyze on the log: the oom, the leak it died of, what grew by command line' '
	{ vramz analyze "$L/oom.csv" >out; test $? = 3; } &&
	has "WARNING +oom +pid $OOM_PID \(sleep\) probably ended out of memory on GPU 0: [0-9.]+ (B|KiB|MiB|GiB) free at its last sample; it held [0-9.]+ GiB, \+[0-9.]+ [MG]iB in its last 10 s" out &&
	has "leak +pid $OOM_PID \(sleep\) on GPU 0 grew" out &&
	has "command: sleep 42" out &&
	has "^what grew" out &&
	has "^ *$OOM_PID +0 +[0-9.]+ GiB +[0-9.]+ GiB +[0-9.]+ GiB +\+[0-9.]+ GiB .* sleep 42$" out &&
	has "^ *$STEADY_PID +0 +2.00 GiB +2.00 GiB +2.00 GiB +0 B .* sleep 300$" out &&
	{ vramz analyze --json "$L/oom.csv" >out.json; test $? = 3; } &&
	python3 - out.json <<PY
import json, sys
r = json.load(open(sys.argv[1]))
o = [f for f in r["findings"] if f["kind"] == "oom"]
assert len(o) == 1 and o[0]["pid"] == $OOM_PID, r["findings"]
p = {x["pid"]: x for x in r["processes"]}
assert p[$OOM_PID]["cmdline"] == "sleep 42" and p[$OOM_PID]["growth_bytes"] > 15 * 2**30, p
# FIRST is the logger's first sample: 1 GiB at the sleep's start, grown
# by 512 MiB/s for however long the logger took to start (the shared clock)
first = p[$OOM_PID]["first_bytes"]
assert 2**30 <= first < 2**30 + 10 * 2**29 and first < p[$OOM_PID]["peak_bytes"], p
assert p[$STEADY_PID]["growth_bytes"] == 0, p
PY
'

expect_success 'a log too short for the leak rule says so' '
	head -n 40 "$L/oom.csv" >"$L/short.csv" &&
	vramz analyze "$L/short.csv" >out &&
	has "^note: too short for leaks: they need 1m after the warm-up of 30s .*; this log covers [0-9]s$" out &&
	has "^note: too short for idle holders: they need 30m; this log covers" out &&
	vramz analyze --json "$L/short.csv" >out.json &&
	json out.json "[x[\"rule\"] for x in d[\"too_short\"]]" >rules && has "leak" rules &&
	{ vramz analyze --idle-time 1s --leak-warmup 1s --leak-min-span 2s "$L/oom.csv" >out; test $? = 3; } &&
	hasnt "too short for (leaks|idle)" out
'

expect_success 'a log whose clock steps back an hour: analyzed and replayed, the step noted with its line' '
	python3 - "$L/oom.csv" "$L/step.csv" <<PY &&
import csv, datetime, sys
src, dst = sys.argv[1], sys.argv[2]
def shift(path, out, cut):
    rows = list(csv.reader(open(path)))
    times = sorted({r[0] for r in rows[1:]})
    cut = cut or times[len(times) // 2]
    for r in rows[1:]:
        if r[0] >= cut:
            t = datetime.datetime.fromisoformat(r[0].replace("Z", "+00:00")) - datetime.timedelta(hours=1)
            r[0] = t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    w = csv.writer(open(out, "w", newline=""), lineterminator="\n")
    w.writerows(rows)
    return cut, next(i for i, r in enumerate(rows) if i > 1 and r[0] < rows[i - 1][0]) + 1
cut, line = shift(src, dst, None)
shift(src.replace(".csv", ".procs.csv"), dst.replace(".csv", ".procs.csv"), cut)
open(dst + ".line", "w").write(str(line))
PY
	LINE=$(cat "$L/step.csv.line") && echo "step at line $LINE" &&
	{ vramz analyze "$L/step.csv" >out; test $? = 3; } &&
	has "^note: .*step.csv:$LINE: the clock steps back 1h" out &&
	has "oom +pid $OOM_PID" out &&
	has "leak +pid $OOM_PID" out &&
	{ vramz analyze --json "$L/step.csv" >out.json; test $? = 3; } &&
	json out.json "d[\"clock_steps\"][0][\"line\"], d[\"clock_step_count\"], d[\"clock_steps\"][0][\"step_ms\"] < -3500000" >st &&
	has "^\($LINE, 1, True\)$" st &&
	{ vramz replay --speed 1000 "$L/step.csv" >/dev/null 2>err || { cat err; false; }; } &&
	has "^vramz: note: .*step.csv: the recorded clock steps back (59m|1h00m) at tick [0-9]+; played at the log.s cadence$" err
'

expect_success 'idle means idle: a loader growing at 0 % SM is never an idle holder' '
	bg_wait idle && cp idle.out idle.json &&
	kill $IDLE_PID $LOADER_PID &&
	python3 - idle.json <<PY
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
idle = {e["finding"]["pid"] for e in ev if e["finding"]["kind"] == "idle_holder"}
assert idle == {$IDLE_PID}, (idle, ev)
PY
'

finish
