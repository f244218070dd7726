# SPDX-License-Identifier: Apache-2.0
"""hold.py - holds known amounts of VRAM on each GPU until killed, so vramz's
figures can be compared with nvidia-smi's.  usage: hold.py MIB_GPU0 [MIB_GPU1 ...]"""
import sys, time, torch
bufs = []
for i, mib in enumerate(int(a) for a in sys.argv[1:]):
    if i >= torch.cuda.device_count():
        break  # a figure for a GPU this machine lacks (scripts written for two)
    bufs.append(torch.empty(mib * 1024 * 1024, dtype=torch.uint8, device=f"cuda:{i}"))
    torch.cuda.synchronize(i)
print("ready", flush=True)
while True:
    time.sleep(1)
