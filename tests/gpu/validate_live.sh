#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_live.sh - issues 3, 4, 5 and 6 on a lent 2-GPU machine, in one
# call of about four minutes: a PyTorch job leaking 64 MiB/s on GPU 0 (with
# a steady sawtooth job beside it) and a steady computing job on GPU 1,
# while vramz records it (the committed example), logs at 10 Hz (CPU cost),
# watches (the leak must be flagged within 2 minutes, the steady jobs
# never), serves metrics (CPU cost at 1 s) and runs the dashboard (capture
# and CPU cost).  Then `analyze` reads the recording back.
#   tests/gpu/validate_live.sh CARRY_DIR OUT_DIR
set -u
C=$1 OUT=$2
H=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
VZ=$C/vramz
mkdir -p "$OUT"
T0=$(date +%s.%N)
since() { python3 -c "import time; print(f'{time.time() - $T0:.1f}')"; }

python3 "$H/leak_and_steady.py" --gpu 0 --duration 200 --rate 64 > "$OUT/leak.json" 2> "$OUT/leak.err" &
LEAK=$!
CUDA_VISIBLE_DEVICES=1 python3 "$H/busy.py" 8192 > "$OUT/steady1.out" 2>&1 &
STEADY1=$!
"$VZ" log --procs -i 1s --duration 195s -o "$OUT/h200-leak.csv" 2> "$OUT/rec.err" &
REC=$!
"$VZ" watch -i 500ms -d 190s --json > "$OUT/watch.jsonl" 2> "$OUT/watch.err" &
WATCH=$!
sleep 5
echo "== [$(since)s] 10 Hz logging with processes, 60 s"
python3 "$H/cpu_of.py" log_10hz_procs 60 "$VZ" log --procs -i 100ms -o /tmp/fast.csv > "$OUT/cpu-log.txt" 2>&1 &
CPULOG=$!
echo "== [$(since)s] exporter at 1 s with --procs, scraped every second, 60 s"
python3 "$H/cpu_of.py" serve_1s_procs 60 "$VZ" serve --procs --listen 127.0.0.1:9963 > "$OUT/cpu-serve.txt" 2>&1 &
CPUSERVE=$!
( sleep 3; for i in $(seq 55); do curl -s -o /dev/null -w "%{time_total}\n" http://127.0.0.1:9963/metrics; sleep 1; done > "$OUT/scrape-times.txt"
  curl -s http://127.0.0.1:9963/metrics > "$OUT/metrics.txt" ) &
echo "== [$(since)s] dashboard in tmux at 200x60, 60 s"
tmux -L vzlive new-session -d -x 200 -y 60 "sh -c 'echo \$\$ > /tmp/top.pid; exec env LANG=C.UTF-8 $VZ top'"
sleep 60
python3 "$H/proc_cpu.py" top_1s "$(cat /tmp/top.pid)" > "$OUT/cpu-top.txt"
tmux -L vzlive capture-pane -p > "$OUT/top-200x60.txt"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader > "$OUT/top-nvidia-smi.txt"
tmux -L vzlive kill-server
wait $CPULOG $CPUSERVE
echo "== [$(since)s] waiting for the leak run to end"
wait $LEAK; kill $STEADY1; wait $REC $WATCH
"$VZ" analyze "$OUT/h200-leak.csv" > "$OUT/analyze.txt" 2>&1; echo "analyze exit $?" >> "$OUT/analyze.txt"
"$VZ" analyze --json "$OUT/h200-leak.csv" > "$OUT/analyze.json" 2>&1
"$VZ" replay --fast "$OUT/h200-leak.csv" 2>&1 | tail -20 > "$OUT/replay-tail.txt"
echo "== summary"
cat "$OUT"/cpu-*.txt
python3 - "$OUT" "$T0" <<'PY'
import json, sys, os
out, t0 = sys.argv[1], float(sys.argv[2])
truth = json.loads(open(f"{out}/leak.json").readline())
print("truth:", truth)
first = {}
for line in open(f"{out}/watch.jsonl"):
    try: e = json.loads(line)
    except Exception: continue
    f = e.get("finding", e)
    key = (f.get("kind"), f.get("pid"), f.get("gpu"))
    first.setdefault(key, e)
for k, e in first.items():
    print("first", k, json.dumps(e)[:400])
t = sorted(float(x) for x in open(f"{out}/scrape-times.txt") if x.strip())
if t: print(f"scrape latency over loopback: median {t[len(t)//2]*1e3:.2f} ms, max {t[-1]*1e3:.2f} ms, n={len(t)}")
PY
head -12 "$OUT/analyze.txt"
grep -c . "$OUT/h200-leak.csv" "$OUT/h200-leak.procs.csv"
head -30 "$OUT/top-200x60.txt"; cat "$OUT/top-nvidia-smi.txt"
