#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_final.sh - the remaining real-GPU checks in one bounded call:
# issue 4's imbalance (two ranks, one heavier, a stray context), the CPU
# cost breakdown of log / serve / watch, and issue 7's job tools.  Every
# step has its own time limit so the call always reaches its end.
#   tests/gpu/validate_final.sh CARRY_DIR OUT_DIR
set -u
C=$1 OUT=$2
H=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
VZ=$C/vramz
mkdir -p "$OUT/imb" "$OUT/cost" "$OUT/jobs" "$OUT/units"
# issue 5: vramz top and nvtop (when carried) side by side for 150 s at
# 1 Hz, through whatever runs below
PATH=$C:$PATH BENCH_REAL=1 timeout 200 bash "$H/../../bench/bench_top.sh" "$C" 150 > "$OUT/bench_top.txt" 2>&1 &
BTOP=$!
echo "== imbalance: rank 0 60 GiB on GPU 0, rank 1 12 GiB on GPU 1 and a stray context on GPU 0"
timeout 90 python3 "$H/two_ranks_imbalance.py" --duration 60 --heavy 60 --light 12 --stray > "$OUT/imb/ranks.out" 2>&1 &
RANKS=$!
timeout 80 "$VZ" watch -i 500ms -d 66s --json > "$OUT/imb/watch.jsonl" 2> "$OUT/imb/watch.err"
wait $RANKS
python3 - "$OUT/imb/watch.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l); f = e["finding"]
    print(e["event"], e["time"][11:19], f["kind"], f["severity"], "gpu", f.get("gpu"), "pid", f.get("pid"), "job", f.get("job"))
PY
echo "== CPU cost breakdown"
timeout 150 bash "$H/validate_cost.sh" "$C" "$OUT/cost" 2>&1 | tail -20
echo "== systemd units in their sandboxes"
timeout 60 bash "$H/validate_units.sh" "$C" "$OUT/units" 2>&1 | tail -20
echo "== job tools"
timeout 300 bash "$H/validate_jobs.sh" "$VZ" "$OUT/jobs" 2>&1 | tail -40
wait $BTOP
echo "== top vs nvtop (bench/bench_top.sh, real NVML)"
cat "$OUT/bench_top.txt"
