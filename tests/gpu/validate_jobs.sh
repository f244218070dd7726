#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_jobs.sh - issue 7's real-GPU checks, in one call on a lent GPU
# machine:  tests/gpu/validate_jobs.sh VRAMZ_BIN OUTDIR
#   1. run: vramz's peak vs torch.cuda.max_memory_reserved() + context, 10 ms
#   2. fit: a batch that runs and the next step OOMs (or budget-bound)
#   3. kill --idle: clears an idle holder this script started; memory returns
set -u
VZ=$1 OUT=$2
H=$(dirname "$0")
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
n=$(nvidia-smi -L | wc -l)
g=1; [ "$n" -ge 2 ] && g=2
echo "== 1. run: peak vs torch (GPUs: $g)"
timeout 90 "$VZ" run -i 10ms --json --report "$OUT/run.json" -- python3 "$H/jobs_peak.py" $g 8192 | tee "$OUT/run-torch.txt"
timeout 90 "$VZ" run -i 10ms -- python3 "$H/jobs_peak.py" $g 8192 2>&1 | tail -8 | tee "$OUT/run-table.txt"
python3 - "$OUT/run.json" "$OUT/run-torch.txt" <<'PY' | tee "$OUT/run-compare.txt"
import json, sys
rep = json.load(open(sys.argv[1]))
torch_ = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["max_memory_reserved"]
for gpu in rep["gpus"]:
    t = torch_.get(str(gpu["index"]))
    if t is None: continue
    ctx = gpu["peak_bytes"] - t
    print(f"GPU {gpu['index']}: vramz peak {gpu['peak_bytes']/2**20:.0f} MiB, torch reserved {t/2**20:.0f} MiB, "
          f"difference (the CUDA context) {ctx/2**20:.0f} MiB = {100*ctx/gpu['peak_bytes']:.1f}% of the peak; "
          f"samples {rep['samples']}, late {rep['late_samples']}")
PY
echo "== 2. fit on GPU 0 (CUDA pointed at the same GPU by UUID, via pick)"
eval "export $("$VZ" pick -g 0)"; echo "$CUDA_VISIBLE_DEVICES"
# Fill GPU 0 but ~16 GiB, as a shared GPU would be: the largest batch is
# then small enough that each trial runs in seconds, not minutes.
total=$(nvidia-smi -i 0 --query-gpu=memory.free --format=csv,noheader,nounits)
python3 "$H/hold.py" $((total - 16384)) > /tmp/fill.out 2>&1 &
FILL=$!
for _ in $(seq 120); do grep -q ready /tmp/fill.out && break; sleep 0.5; done
timeout 240 "$VZ" fit -g 0 --sizes 1,2,4,8 --json -- python3 "$H/jobs_trainer.py" {} > "$OUT/fit.json"; echo "fit exit $?"
b=$(python3 -c "import json;print(json.load(open('$OUT/fit.json'))['batch'])")
echo "answer $b"; python3 -c "import json;[print(t) for t in json.load(open('$OUT/fit.json'))['trials']]"
timeout 60 python3 "$H/jobs_trainer.py" "$b"; echo "batch $b: exit $?"
timeout 60 python3 "$H/jobs_trainer.py" $((b + 1)) 2>&1 | tail -1; echo "batch $((b + 1)): exit ${PIPESTATUS[0]} (1 = OOM; 0 = the answer was bound by the 10% margin)"
kill $FILL; wait $FILL 2>/dev/null
echo "== 3. kill --idle"
python3 "$H/jobs_idle.py" 4096 > /tmp/idle.out 2>&1 &
IDLE=$!
for _ in $(seq 120); do grep -q ready /tmp/idle.out && break; sleep 0.5; done
sleep 2
timeout 60 "$VZ" kill --idle 5s -i 500ms --min 1GiB -g 0 | tee "$OUT/kill-dry.txt"
grep -q "^$IDLE .*would terminate" "$OUT/kill-dry.txt" && echo "idle holder $IDLE found idle" || echo "FAIL: $IDLE not listed idle"
# act, with --idle, only on the process this script started (PIDs + --idle)
timeout 60 "$VZ" kill --idle 5s -i 500ms --min 1GiB -g 0 --yes $IDLE | tee "$OUT/kill.txt"
echo "kill exit ${PIPESTATUS[0]}"
sleep 0.5
kill -0 $IDLE 2>/dev/null && { echo "FAIL: idle holder $IDLE still alive"; kill $IDLE; } || echo "idle holder $IDLE ended"
