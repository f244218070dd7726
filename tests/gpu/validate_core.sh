#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_core.sh - issue 2's real-GPU check, in one call on a lent GPU
# machine: vramz against nvidia-smi while PyTorch holds known amounts on
# each GPU, then the speed benchmarks beside bench-ref's floors.
#   tests/gpu/validate_core.sh CARRY_DIR OUTDIR
# CARRY_DIR holds vramz, bench_tick, oneshot_ref (built elsewhere) and
# bench-ref/ (shared/bench-ref).
set -u
C=$1 OUT=$2
VZ=$C/vramz BT=$C/bench_tick REF=$C/bench-ref
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$OUT/gpus.csv"
n=$(nvidia-smi -L | wc -l)
gcc -O2 -I/usr/local/cuda/include "$REF/nvml_floor.c" -o /tmp/floor -lnvidia-ml 2>&1 ||
	gcc -O2 -I/usr/local/cuda/include "$REF/nvml_floor.c" -o /tmp/floor -L/usr/lib/x86_64-linux-gnu -l:libnvidia-ml.so.1
gcc -O2 "$REF/nvml_phases.c" -o /tmp/phases -ldl
echo "== idle: speed before any process"
/tmp/floor 2000 | tee "$OUT/floor-idle.txt"
"$BT" 400 9 | tee "$OUT/tick-idle.txt"
amounts="10240"; [ "$n" -ge 2 ] && amounts="10240 20480"
python3 "$(dirname "$0")/hold.py" $amounts > /tmp/hold.out 2>&1 &
HOLD=$!
for _ in $(seq 120); do grep -q ready /tmp/hold.out && break; sleep 0.5; done
cat /tmp/hold.out
sleep 1
echo "== agreement with nvidia-smi (holder pid $HOLD, MiB: $amounts)"
python3 "$(dirname "$0")/compare_core.py" "$VZ" | tee "$OUT/compare.txt"
for c in status ps info topo; do "$VZ" $c --json > "$OUT/$c.json"; done
"$VZ" > "$OUT/status.txt"; "$VZ" info > "$OUT/info.txt"; "$VZ" topo > "$OUT/topo.txt"
nvidia-smi > "$OUT/nvidia-smi.txt"; nvidia-smi topo -m >> "$OUT/nvidia-smi.txt"
echo "== steady tick with a process on each GPU"
/tmp/floor 2000 | tee "$OUT/floor.txt"
"$BT" 400 9 | tee "$OUT/tick.txt"
echo "== one-shot wall time (exec included), 30 runs each"
python3 "$(dirname "$0")/../../bench/oneshot.py" 30 "same_fields_ref=$C/oneshot_ref" \
	"vramz_status_json=$VZ status --json" "vramz_status=$VZ" "vramz_ps_json=$VZ ps --json" \
	"nvml_phases=/tmp/phases" \
	"nvidia-smi_query=nvidia-smi --query-gpu=memory.used --format=csv" \
	"nvidia-smi_same_fields=nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.reserved,memory.used,memory.free,utilization.gpu,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.mem,clocks_event_reasons.active --format=csv" \
	"nvidia-smi_apps=nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv" | tee "$OUT/oneshot.txt"
SKIP_SHUTDOWN=1 /tmp/phases | tee -a "$OUT/oneshot.txt"
/tmp/phases | tee -a "$OUT/oneshot.txt"
kill $HOLD; wait $HOLD 2>/dev/null
echo "== steady tick while every GPU computes (per-process utilization has samples)"
python3 "$(dirname "$0")/busy.py" 1024 > /tmp/busy.out 2>&1 &
BUSY=$!
for _ in $(seq 120); do grep -q ready /tmp/busy.out && break; sleep 0.5; done
sleep 2
/tmp/floor 2000 | tee "$OUT/floor-busy.txt"
"$BT" 400 9 | tee "$OUT/tick-busy.txt"
"$VZ" ps > "$OUT/ps-busy.txt"; cat "$OUT/ps-busy.txt"
kill $BUSY; wait $BUSY 2>/dev/null
echo "== summary"
tail -1 "$OUT/compare.txt"
grep -H wall_us "$OUT"/floor*.txt
grep -H "ratio" "$OUT"/tick*.txt
head -10 "$OUT/oneshot.txt"
