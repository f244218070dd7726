#!/bin/bash
# validate_core.sh - issue 2's real-GPU check, in one call on a lent GPU
# machine: vramz against nvidia-smi while PyTorch holds known amounts on
# each GPU, then the speed benchmarks beside bench-ref's floors.
#   tests/gpu/validate_core.sh VRAMZ_BIN BENCH_TICK BENCH_REF_DIR OUTDIR
set -u
VZ=$1 BT=$2 REF=$3 OUT=$4
export NCCL_NVLS_ENABLE=0
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$OUT/gpus.csv"
n=$(nvidia-smi -L | wc -l)
gcc -O2 -I/usr/local/cuda/include "$REF/nvml_floor.c" -o /tmp/floor -lnvidia-ml 2>&1 ||
	gcc -O2 -I/usr/local/cuda/include "$REF/nvml_floor.c" -o /tmp/floor -L/usr/lib/x86_64-linux-gnu -l:libnvidia-ml.so.1
gcc -O2 "$REF/nvml_phases.c" -o /tmp/phases -ldl
echo "== idle: speed before any process"
/tmp/floor 2000 | tee "$OUT/floor-idle.txt"
"$BT" 2000 | tee "$OUT/tick-idle.txt"
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
"$BT" 2000 | tee "$OUT/tick.txt"
echo "== one-shot wall time (exec included), 30 runs each"
python3 "$(dirname "$0")/../../bench/oneshot.py" 30 "nvml_phases=/tmp/phases" \
	"vramz_status_json=$VZ status --json" "vramz_status=$VZ" "vramz_ps_json=$VZ ps --json" \
	"nvidia-smi_query=nvidia-smi --query-gpu=memory.used --format=csv" | tee "$OUT/oneshot.txt"
SKIP_SHUTDOWN=1 /tmp/phases | tee -a "$OUT/oneshot.txt"
/tmp/phases | tee -a "$OUT/oneshot.txt"
kill $HOLD; wait $HOLD 2>/dev/null
echo "== summary"
tail -1 "$OUT/compare.txt"
grep -h wall_us "$OUT/floor.txt"; grep -h "default " "$OUT/tick.txt"; grep -h "procs " "$OUT/tick.txt"
cat "$OUT/oneshot.txt" | head -7
