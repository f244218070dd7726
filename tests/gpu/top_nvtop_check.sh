#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# top_nvtop_check.sh - issue 29's H200 evidence: `vramz top` and nvtop at
# 200x60 side by side at the same moment (two windows of one tmux, both
# captured within a second), with nvidia-smi read then, while a trainer
# with the PyTorch agent leaks on GPU 0 and a burner holds 8 GiB; then
# each one's CPU at 1 Hz (bench/bench_top.sh, BENCH_REAL=1).
#
#   tests/gpu/top_nvtop_check.sh CARRY_DIR OUT_DIR
#
# CARRY_DIR holds vramz (built with the dashboard) and nvtop
# (tools/carry-build.sh with NVTOP=...).  Writes OUT_DIR/top-h200.txt,
# nvtop-h200.txt, nvidia-smi.txt, page-h200.txt, cost.txt.
set -u
carry=$(cd "${1:?usage: top_nvtop_check.sh CARRY_DIR OUT_DIR}" && pwd)
out=${2:?usage: top_nvtop_check.sh CARRY_DIR OUT_DIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
export PATH=$carry:$PATH PYTHONPATH=$here/python VRAMZ_RUNTIME_DIR=/tmp/vramz-run-$$
sock=vramz-cap-$$
kids=
trap 'tmux -L $sock kill-server 2>/dev/null; [ -n "$kids" ] && kill $kids 2>/dev/null' EXIT

python3 - <<'PY' &
import time, torch, vramz.torch
vramz.torch.attach(interval=1.0)
x = torch.empty(8 << 30, dtype=torch.uint8, device="cuda:0")
y = torch.randn(4096, 4096, device="cuda:0")
t = time.time()
while time.time() - t < 300:
    y = y @ y; y /= y.norm(); torch.cuda.synchronize(); time.sleep(0.02)
PY
kids="$kids $!"
python3 "$here/tests/gpu/py_leak_train.py" --seconds 300 --leak-mib 32 --steps-per-s 2 >/dev/null &
kids="$kids $!"
sleep 12

tmux -L $sock new-session -d -s cap -n top -x 200 -y 60 "LANG=C.UTF-8 vramz top -i 1s"
tmux -L $sock new-window -d -t cap -n nvtop "LANG=C.UTF-8 nvtop -d 10"
tmux -L $sock resize-window -t cap:nvtop -x 200 -y 60 2>/dev/null
sleep 40 # the charts fill for 40 s
date -u +%FT%TZ >"$out/when.txt"
tmux -L $sock capture-pane -p -t cap:top >"$out/top-h200.txt"
tmux -L $sock capture-pane -p -t cap:nvtop >"$out/nvtop-h200.txt"
nvidia-smi --query-gpu=index,memory.used,memory.reserved,memory.total,utilization.gpu,temperature.gpu,power.draw,pcie.link.gen.current,pcie.link.width.current \
	--format=csv >"$out/nvidia-smi.txt"
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >>"$out/nvidia-smi.txt"
# the trainer's process page: select the first row, Enter
tmux -L $sock send-keys -t cap:top Down Enter
sleep 2
tmux -L $sock capture-pane -p -t cap:top >"$out/page-h200.txt"
tmux -L $sock kill-server

BENCH_REAL=1 bash "$here/bench/bench_top.sh" "$carry" 60 >"$out/cost.txt" 2>&1
kill $kids 2>/dev/null
wait 2>/dev/null
echo "== cost"; cat "$out/cost.txt"
echo "== nvidia-smi"; head -3 "$out/nvidia-smi.txt"
echo "== top (first 12 lines)"; head -12 "$out/top-h200.txt"
