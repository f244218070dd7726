#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# diag_check.sh - issue 16's diagnoses on a real GPU (GPU 0), about 2.5 min:
#  1. idle means idle: a truly idle holder (jobs_idle.py, 4 GiB) and a
#     loader allocating 256 MiB/s at 0 % SM (diag_alloc.py) are watched
#     for 25 s: kill --idle (dry run, both named) takes the holder and
#     refuses the loader "its memory grew ..."; watch --idle-time 15s calls
#     the holder an idle_holder, never the loader;
#  2. a fast leak and its oom: diag_fill.py computes for 10 s at 2 GiB, then
#     leaks 2 GiB/s until CUDA runs out of memory (~70 s on an H200):
#     watch must report the leak at least 30 s before the job dies, then its
#     oom finding; analyze of the log recorded beside it finds both.
# Kills only the processes it started.  From the repository root with
# .carry/ built (tools/carry-build.sh):   bash tests/gpu/diag_check.sh
set -u
C=$PWD/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=$C/vramz; H=tests/gpu
O=$(mktemp -d /tmp/diag_check.XXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
ready() { for _ in $(seq 120); do grep -q ready "$1" && return 0; sleep 0.25; done; return 1; }

echo "== 1. idle means idle (25 s)"
timeout 60 python3 $H/jobs_idle.py 4096 >$O/idle.out 2>&1 & IDLE=$!; PIDS+=($IDLE)
timeout 60 python3 $H/diag_alloc.py 256 >$O/alloc.out 2>&1 & ALLOC=$!; PIDS+=($ALLOC)
ready $O/idle.out && ready $O/alloc.out || echo "helpers not ready: $(cat $O/idle.out $O/alloc.out)"
# $! is timeout's pid: the GPU process is its child
IDLE=$(pgrep -P $IDLE -n || echo $IDLE); ALLOC=$(pgrep -P $ALLOC -n || echo $ALLOC)
timeout 40 $VZ watch -g 0 -i 1s -d 25s --idle-time 15s --report-after 2s --json >$O/idle_watch.json 2>$O/idle_watch.err &
W=$!
timeout 40 $VZ kill --idle 20s -i 1s -g 0 $IDLE $ALLOC >$O/kill.out 2>&1; echo "kill --idle exit $? (1: a refusal)"
cat $O/kill.out
wait $W
kill $IDLE $ALLOC 2>/dev/null; wait $IDLE $ALLOC 2>/dev/null
sleep 2

echo "== 2. a 2 GiB/s leak until out of memory (~85 s)"
timeout 130 $VZ log -g 0 --procs -i 500ms -o $O/fill.csv --duration 120s 2>$O/log.err & LOG=$!; PIDS+=($LOG)
timeout 130 $VZ watch -g 0 -i 500ms -d 120s --json >$O/fill_watch.json 2>$O/fill_watch.err & W=$!; PIDS+=($W)
sleep 1
timeout 110 python3 $H/diag_fill.py 10 2 >$O/fill.out 2>$O/fill.err & F=$!; PIDS+=($F)
sleep 0.5; FT=$F; F=$(pgrep -P $FT -n || echo $FT)
wait $FT; echo "fill job exit $? ($(grep -E '^(leak|oom)' $O/fill.out | tr '\n' ' '))"
sleep 12   # the oom finding, then stop watch and log
kill -INT $W $LOG 2>/dev/null; wait $W $LOG 2>/dev/null
timeout 60 $VZ analyze $O/fill.csv >$O/analyze.out 2>&1; echo "analyze exit $?"
grep -E "oom|leak|^note|command:" $O/analyze.out | head -12
sed -n '/^what grew/,$p' $O/analyze.out | head -6

echo "== results"
python3 - "$O" "$IDLE" "$ALLOC" "$F" <<'PY'
import json, re, sys, datetime
o, idle, alloc, fill = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def events(p):
    ev = []
    for l in open(p):
        try: ev.append(json.loads(l))
        except ValueError: pass
    return ev
def ts(e): return datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
rows = []
def row(name, ok, detail): rows.append((name, "PASS" if ok else "FAIL", detail))
k = open(o + "/kill.out").read()
row("kill --idle takes the idle holder", re.search(r"^%d .*would terminate" % idle, k, re.M) is not None, "pid %d" % idle)
m = re.search(r"refused: not idle: (.*)", k)
row("kill --idle refuses the allocating loader", re.search(r"^%d .*refused" % alloc, k, re.M) is not None and m is not None and "memory grew" in m.group(1), m.group(1) if m else "no reason")
iw = events(o + "/idle_watch.json")
ih = [e["finding"]["pid"] for e in iw if e["event"] == "new" and e["finding"]["kind"] == "idle_holder"]
row("watch: idle holder is idle_holder", idle in ih, "idle_holder pids %s" % ih)
row("watch: loader never idle_holder", alloc not in ih, "")
fo = open(o + "/fill.out").read()
lk = re.search(r"^leak ([0-9.]+)", fo, re.M); dd = re.search(r"^oom ([0-9.]+) held ([0-9.]+)", fo, re.M)
fw = events(o + "/fill_watch.json")
leak = [e for e in fw if e["event"] == "new" and e["finding"]["kind"] == "leak" and e["finding"].get("pid") == fill]
oom = [e for e in fw if e["event"] == "new" and e["finding"]["kind"] == "oom" and e["finding"].get("pid") == fill]
if leak and dd and lk:
    f = leak[0]["finding"]
    ahead = float(dd.group(1)) - ts(leak[0])
    row("leak reported >= 30 s before the job died", ahead >= 30,
        "%.1f s into the leak, %.1f s before OOM; %.2f GiB/s, tto %s s" % (ts(leak[0]) - float(lk.group(1)), ahead,
        f["rate_bytes_per_s"] / 2**30, f.get("time_to_oom_s")))
else:
    row("leak reported >= 30 s before the job died", False, "leak events %d, job %s" % (len(leak), fo.strip()[-120:]))
row("oom finding after it died", bool(oom), oom[0]["finding"]["summary"] if oom else "none")
a = open(o + "/analyze.out").read()
row("analyze: oom and leak in the log", re.search(r"oom +pid %d" % fill, a) is not None and re.search(r"leak +pid %d" % fill, a) is not None, "")
w = max(len(r[0]) for r in rows)
for r in rows: print("%-*s  %s  %s" % (w, r[0], r[1], r[2]))
PY
echo "outputs in $O"
