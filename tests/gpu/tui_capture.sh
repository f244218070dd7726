#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tui_capture.sh - on a machine with NVIDIA GPUs: start a PyTorch process
# that holds memory, capture `vramz top` at 200x60 in tmux as text, and
# check its numbers against nvidia-smi.  Writes into OUT_DIR (default
# ./tui-capture): top-200x60.txt, top-80x24.txt, nvidia-smi.txt, check.txt.
#
#   tests/gpu/tui_capture.sh BUILD_DIR [OUT_DIR]
#
# Exit 0 when every GPU's used memory on the screen matches nvidia-smi's
# memory.used within 1 % (they are read a moment apart).
set -u
build=${1:?usage: tui_capture.sh BUILD_DIR [OUT_DIR]}
out=${2:-tui-capture}
mkdir -p "$out"
sock=vramz-capture-$$
holder=
trap 'tmux -L $sock kill-server 2>/dev/null; [ -n "$holder" ] && kill $holder 2>/dev/null' EXIT

# a process holding ~8 GiB on GPU 0 (PyTorch if present, else none)
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
	python3 -c "
import torch, time
x = torch.empty(8 << 30, dtype=torch.uint8, device='cuda:0')
y = torch.randn(4096, 4096, device='cuda:0')
t = time.time()
while time.time() - t < 600:
    y = y @ y; y /= y.norm(); torch.cuda.synchronize(); time.sleep(0.05)
" & holder=$!
	sleep 8
else
	echo "no PyTorch with CUDA: capturing without a holder process" | tee "$out/check.txt"
fi

for size in 200x60 80x24; do
	tmux -L $sock kill-server 2>/dev/null
	sleep 0.3
	tmux -L $sock new-session -d -x "${size%x*}" -y "${size#*x}" "LANG=C.UTF-8 $build/vramz top"
	sleep 6 # a few ticks of history
	tmux -L $sock capture-pane -p >"$out/top-$size.txt"
done
nvidia-smi --query-gpu=index,memory.used,memory.reserved,memory.total,utilization.gpu,temperature.gpu,power.draw,pcie.link.gen.current,pcie.link.width.current \
	--format=csv,noheader,nounits >"$out/nvidia-smi.txt"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >>"$out/nvidia-smi.txt"
"$build/vramz" status --json >"$out/status.json" 2>&1

# compare used MiB per GPU: screen "used  8.50 GiB" vs nvidia-smi memory.used
python3 - "$out" <<'PY' | tee -a "$out/check.txt"
import re, sys
out = sys.argv[1]
screen = open(f"{out}/top-200x60.txt").read()
units = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 2**20}
shown = {}
for m in re.finditer(r"GPU (\d+)!? .*?\n.*?used +([0-9.]+) (B|KiB|MiB|GiB|TiB)", screen):
    shown[int(m.group(1))] = float(m.group(2)) * units[m.group(3)]
# two GPUs side by side on one line at 200 columns: pick up the second block too
for line_hdr, line_bar in zip(screen.splitlines(), screen.splitlines()[1:]):
    ids = [int(i) for i in re.findall(r"GPU (\d+)!? ", line_hdr)]
    used = re.findall(r"used +([0-9.]+) (B|KiB|MiB|GiB|TiB)", line_bar)
    for i, (v, u) in zip(ids, used):
        shown[i] = float(v) * units[u]
ok = True
for line in open(f"{out}/nvidia-smi.txt"):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 9:
        continue
    i, smi = int(f[0]), float(f[1])
    v = shown.get(i)
    good = v is not None and abs(v - smi) <= max(0.01 * max(smi, 1), 64)
    ok &= good
    print(f"GPU {i}: vramz top used {v} MiB, nvidia-smi memory.used {smi} MiB: {'ok' if good else 'MISMATCH'}")
sys.exit(0 if ok and shown else 1)
PY
