#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# report_check.sh - `vramz report` of a real recording (issue 17): a
# 64 MiB/s leak beside a steady job on GPU 0 (leak_and_steady.py), logged
# with --procs at 5 Hz for 80 s on every GPU, then the page: one plot per
# GPU nvidia-smi lists, the leaker in GPU 0's key and a leak marker at the
# first-seen time `analyze --json` gives, the page's size and the time to
# write it.  Only the two processes it starts are ever ended.
#   bash tests/gpu/report_check.sh [OUT]          (about 100 s)
set -u
C=$PWD/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=$C/vramz; H=tests/gpu
OUT=${1:-/tmp/report_check}; mkdir -p "$OUT"; rm -f "$OUT"/gpu*.csv "$OUT"/gpu.html
TH="--leak-warmup 5s --leak-min-span 30s"
timeout 100 python3 $H/leak_and_steady.py --gpu 0 --duration 85 --rate 64 >"$OUT/pids.json" 2>"$OUT/leak.err" & JOB=$!
for _ in $(seq 120); do [ -s "$OUT/pids.json" ] && break; sleep 0.5; done
timeout 90 $VZ log --procs -i 200ms --duration 80s -o "$OUT/gpu.csv" 2>"$OUT/log.err"; echo "log exit $?"
wait $JOB 2>/dev/null
t0=$(date +%s.%N)
timeout 60 $VZ report $TH "$OUT/gpu.csv" -o "$OUT/gpu.html"; rrc=$?
t1=$(date +%s.%N)
timeout 60 $VZ analyze --json $TH "$OUT/gpu.csv" >"$OUT/analyze.json"
ngpu=$(nvidia-smi -L | grep -c '^GPU')
python3 - "$OUT" "$rrc" "$t0" "$t1" "$ngpu" <<'PY'
import json, os, re, sys
out, rrc, t0, t1, ngpu = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
pids = json.load(open(os.path.join(out, "pids.json")))
page = open(os.path.join(out, "gpu.html")).read() if rrc == 0 else ""
an = json.load(open(os.path.join(out, "analyze.json")))
plots = sorted(set(re.findall(r'<svg class="plot" data-gpu="(\d+)"', page)))
leaks = [f for f in an["findings"] + an["cleared"] if f["kind"] == "leak" and f.get("pid") == pids["leaker"]]
marks = re.findall(r'data-kind="leak" data-t-ms="(\d+)"', page)
from datetime import datetime, timezone
want = [str(round(datetime.strptime(f["first_seen"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp() * 1000)) for f in leaks]
rows = [
    ("report exit 0", rrc == 0, rrc),
    ("a plot per GPU", len(plots) == ngpu, "%d plots, %d GPUs" % (len(plots), ngpu)),
    ("leaker in GPU 0's key", ("pid %d " % pids["leaker"]) in page, pids["leaker"]),
    ("analyze finds the leak", bool(leaks), ["%.0f MiB/min" % (f["rate_bytes_per_s"] * 60 / 2**20) for f in leaks]),
    ("its marker at first_seen", bool(want) and all(w in marks for w in want), "%s vs %s" % (want, marks)),
    ("page under 3 MB", 0 < len(page) < 3e6, "%d bytes" % len(page)),
    ("written in", True, "%.2f s wall" % (t1 - t0)),
]
print("\n%-28s %-5s %s" % ("report_check", "ok", "figure"))
for name, ok, fig in rows:
    print("%-28s %-5s %s" % (name, "yes" if ok else "NO", fig))
PY
