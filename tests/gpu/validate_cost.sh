#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_cost.sh - where the CPU of the long-running commands goes on a
# lent GPU machine: each slow NVML call's wall and CPU time, and `log` at
# 10 Hz and `serve` at 1 s with and without the slow readings, side by side
# (run at the same time, each its own process) while a process holds
# memory on every GPU.   tests/gpu/validate_cost.sh CARRY_DIR OUT_DIR
set -u
C=$1 OUT=$2
H=$(dirname "$0")
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
VZ=$C/vramz
mkdir -p "$OUT"
timeout 60 "$C/callcost" 20 > "$OUT/callcost.txt" 2>&1
grep -E "Pcie|Energy" "$OUT/callcost.txt"
python3 "$H/hold.py" 4096 4096 > /tmp/hold.out 2>&1 &
HOLD=$!
for _ in $(seq 120); do grep -q ready /tmp/hold.out && break; sleep 0.5; done
# BUSY=1: also a process computing on every GPU (a training job's load:
# per-process utilization is then read, every 5 s a GPU)
BUSYPID=
if [ "${BUSY:-0}" = 1 ]; then
	python3 "$H/busy.py" 2048 > /tmp/busy.out 2>&1 &
	BUSYPID=$!
	for _ in $(seq 120); do grep -q ready /tmp/busy.out && break; sleep 0.5; done
	sleep 2
fi
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
pids=""
python3 "$H/cpu_of.py" log_10hz_procs_slow10 65 "$VZ" log --procs -i 100ms -o /tmp/a.csv > "$OUT/c1.txt" 2>&1 & pids="$pids $!"
python3 "$H/cpu_of.py" log_10hz_procs_noslow 65 "$VZ" log --procs -i 100ms --slow-interval 0 -o /tmp/b.csv > "$OUT/c2.txt" 2>&1 & pids="$pids $!"
python3 "$H/cpu_of.py" log_10hz_gpus_noslow 65 "$VZ" log -i 100ms --slow-interval 0 -o /tmp/c.csv > "$OUT/c3.txt" 2>&1 & pids="$pids $!"
python3 "$H/cpu_of.py" serve_1s_procs_slow10s 65 "$VZ" serve --procs --listen 127.0.0.1:9971 > "$OUT/c4.txt" 2>&1 & pids="$pids $!"
python3 "$H/cpu_of.py" serve_1s_procs_noslow 65 "$VZ" serve --procs --slow-interval 0 --listen 127.0.0.1:9972 > "$OUT/c5.txt" 2>&1 & pids="$pids $!"
python3 "$H/cpu_of.py" watch_1s 65 "$VZ" watch -i 1s > "$OUT/c6.txt" 2>&1 & pids="$pids $!"
# where a 10 Hz log's CPU goes, call by call (not one of the measured runs)
VRAMZ_PROFILE_NVML=1 timeout 70 "$VZ" log --procs -i 100ms --duration 65s -o /tmp/p.csv 2> "$OUT/profile-log-10hz-procs.txt" &
pids="$pids $!"
tmux -L vzcost new-session -d -x 200 -y 60 "sh -c 'echo \$\$ > /tmp/top.pid; exec env LANG=C.UTF-8 $VZ top'"
# not a bare `wait`: the holder runs until killed
wait $pids
python3 "$H/proc_cpu.py" top_1s_200x60 "$(cat /tmp/top.pid)" > "$OUT/c7.txt"
tmux -L vzcost capture-pane -p > "$OUT/top-200x60.txt"
tmux -L vzcost kill-server
kill $HOLD $BUSYPID; wait $HOLD $BUSYPID 2>/dev/null
cat "$OUT"/c*.txt | grep core_pct
