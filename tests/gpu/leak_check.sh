#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# leak_check.sh - issue 36 on a real GPU (about 4 min): leaks begun at the
# process's first step, smooth and behind 512 MiB allocator steps, with
# and without the PyTorch agent, at two rates, beside growth that stops
# and a steady job (tests/gpu/leak_jobs.py), watched live by `vramz watch
# -i 500ms --json` and recorded by `log --procs -i 1s` for `analyze`.
# Prints, per job, the seconds from its leak's onset to watch's first leak
# line and whether analyze reports it; any leak on a job that does not
# leak is a false report.  From the repository root with .carry/ built;
# logs in $OUT/leaks.tgz.
set -u
ROOT=$PWD; C=$ROOT/.carry; export LD_LIBRARY_PATH=$C; VZ=${VRAMZ:-$C/vramz}
OUT=${1:-/tmp/leaks}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/leaks.XXXXXX)
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1 VRAMZ_RUNTIME_DIR=$W/run
mkdir -p "$VRAMZ_RUNTIME_DIR"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
DUR=${DUR:-170}
"$VZ" log -g 0 --procs -i 1s -o "$W/leaks.csv" 2> "$W/log.err" & PIDS+=($!)
"$VZ" watch -g 0 -i 500ms --json > "$W/watch.jsonl" 2> "$W/watch.err" & PIDS+=($!)
sleep 3
job() { # NAME AGENT(0/1) KIND RATE
	local name=$1 agent=$2; shift 2
	if [ "$agent" = 1 ]; then
		timeout $((DUR + 30)) python3 -m vramz.torch "$ROOT/tests/gpu/leak_jobs.py" "$@" "$DUR" \
			> "$W/$name.json" 2> "$W/$name.err" &
	else
		timeout $((DUR + 30)) python3 "$ROOT/tests/gpu/leak_jobs.py" "$@" "$DUR" \
			> "$W/$name.json" 2> "$W/$name.err" &
	fi
	PIDS+=($!)
}
job agent_stairs20 1 stairs 20
job nvml_stairs20 0 stairs 20
job agent_smooth20 1 smooth 20
job nvml_smooth20 0 smooth 20
job agent_smooth60 1 smooth 60
job nvml_smooth60 0 smooth 60
job plateau 0 plateau 0
job steady 1 steady 0
sleep $((DUR + 15))
kill "${PIDS[0]}" "${PIDS[1]}" 2>/dev/null; sleep 2
"$VZ" analyze --json "$W/leaks.csv" > "$W/analyze.json" 2> "$W/analyze.err"
"$VZ" analyze "$W/leaks.csv" > "$W/analyze.txt" 2>> "$W/analyze.err"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt"
tar -C "$W" -czf "$OUT/leaks.tgz" --exclude=run . 2>/dev/null
python3 - "$W" <<'PYEOF'
import glob, json, os, sys, datetime
w = sys.argv[1]
def iso(s):
    return datetime.datetime.strptime(s.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
jobs = {}
for f in sorted(glob.glob(os.path.join(w, "*.json"))):
    if os.path.basename(f) == "analyze.json":
        continue
    for l in open(f):
        if l.startswith("{") and json.loads(l).get("event") == "ready":
            jobs[os.path.basename(f)[:-5]] = json.loads(l)
first, rises, said = {}, {}, {}
for l in open(os.path.join(w, "watch.jsonl")):
    try:
        e = json.loads(l)
    except ValueError:
        continue
    f = e.get("finding") or {}
    if e.get("event") != "new" and e.get("event") != "changed":
        continue
    pid = f.get("pid")
    t = iso(f["last_update"])
    if f.get("kind") == "leak" and pid not in first:
        first[pid] = t
        said[pid] = f.get("summary")
    if f.get("kind") == "rise" and pid not in rises:
        rises[pid] = t
try:
    an = json.load(open(os.path.join(w, "analyze.json")))["findings"]
except (OSError, ValueError, KeyError):
    an = []
print("%-16s %-8s %-22s %-10s %-8s %s" % ("job", "pid", "watch: leak after", "analyze", "rise", "ok"))
bad = 0
for name, j in sorted(jobs.items()):
    pid, tl = j["pid"], j.get("t_leak")
    leak = tl is not None
    lat = first[pid] - tl if (pid in first and leak) else None
    a = [f for f in an if f.get("kind") == "leak" and f.get("pid") == pid]
    ok = (pid in first and bool(a)) if leak else (pid not in first and not a)
    bad += not ok
    print("%-16s %-8s %-22s %-10s %-8s %s" % (name, pid,
          ("%.1f s" % lat) if lat is not None else ("FALSE" if pid in first else "-"),
          "leak" if a else "-", ("%.0f s" % (rises[pid] - (tl or jobs[name].get("t0", rises[pid])))) if pid in rises and tl else ("yes" if pid in rises else "-"),
          "ok" if ok else "WRONG"))
    if pid in said:
        print("    ", said[pid])
print("%d wrong" % bad)
PYEOF
rm -rf "$W"
