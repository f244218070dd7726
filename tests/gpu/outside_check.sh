#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# outside_check.sh - issue 37 on a real GPU (about 30 s): the memory
# outside PyTorch's allocator in parts, as the vramz.torch agent measures
# them, next to NVML's per-process figure (nvidia-smi): the CUDA context,
# a cuBLAS matmul, a cuDNN conv, init_process_group("nccl", world_size=1,
# device_id=...), three new_group calls with a collective on each, a
# 256 MiB all_reduce (tests/gpu/outside_steps.py).  Then what `vramz ps
# --json` and `vramz status` say of the process.  From the repository
# root with .carry/ built:  bash tests/gpu/outside_check.sh $OUT
# Writes $OUT/outside.jsonl and $OUT/outside.txt; a table last.
set -u
ROOT=$PWD
C=$ROOT/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0
VZ=${VRAMZ:-$C/vramz}; H=$ROOT/tests/gpu
OUT=${1:-${OUT:-/tmp/outside}}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/outside.XXXXXX)
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1
export VRAMZ_RUNTIME_DIR=$W/run; mkdir -p "$VRAMZ_RUNTIME_DIR"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
echo "== the steps (NCCL_NVLS_ENABLE=0)"
VRAMZ=$VZ timeout 300 python3 -m vramz.torch -i 0.5 "$H/outside_steps.py" \
	> "$OUT/outside.jsonl" 2> "$W/steps.err" &
JOB=$!
# while it holds its groups (after the last step): vramz's own view
for _ in $(seq 600); do grep -q '"vramz ps --json"' "$OUT/outside.jsonl" 2>/dev/null && break; sleep 0.1; done
wait $JOB; echo "steps rc=$?"
tail -5 "$W/steps.err"
python3 - "$OUT/outside.jsonl" <<'PYEOF' | tee "$OUT/outside.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(f'{"step":<52} {"NVML":>6} {"rsv":>6} {"outside":>7} | {"ctx":>5} {"libs":>5} {"nccl":>5} {"other":>5} comms')
for r in rows:
    if r["step"] == "vramz ps --json":
        continue
    p = r.get("parts_mib") or {}
    print(f'{r["step"][:52]:<52} {r["nvml_mib"]!s:>6} {r["reserved_mib"]!s:>6} {r["outside_mib"]!s:>7} | '
          f'{p.get("context")!s:>5} {p.get("libraries")!s:>5} {p.get("nccl")!s:>5} {p.get("other")!s:>5} {r.get("comms")}')
for r in rows:
    if r["step"] == "vramz ps --json":
        print("vramz ps --json:", json.dumps(r))
last = [r for r in rows if r["step"] != "vramz ps --json"]
if last:
    print("records:")
    for rec in last[-1]["records"]:
        print("  ", rec)
# checks: the parts sum to the outside figure; 1 + 3 communicators
ok = True
for r in last:
    p = r.get("parts_mib")
    if p is None or r["outside_mib"] is None:
        ok = False
        continue
    s = sum(p.values())
    if abs(s - r["outside_mib"]) > 2:
        print(f'FAIL {r["step"]}: parts sum {s} MiB, outside {r["outside_mib"]} MiB'); ok = False
if last and last[-1].get("comms") != 4:
    print(f'FAIL communicators: {last[-1].get("comms")}, want 4'); ok = False
print("PASS" if ok else "FAIL")
PYEOF
rm -rf "$W"
