# SPDX-License-Identifier: Apache-2.0
"""busy.py - keeps every GPU computing (a matmul loop) and holding MIB of
memory, so per-process utilization has samples to report.  usage: busy.py MIB"""
import sys, time, torch
mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
xs = []
for i in range(torch.cuda.device_count()):
    torch.cuda.set_device(i)
    xs.append((torch.empty(mib << 20, dtype=torch.uint8, device=i), torch.randn(4096, 4096, device=i)))
print("ready", flush=True)
while True:
    for i, (_, a) in enumerate(xs):
        with torch.cuda.device(i):
            for _ in range(20):
                a = a @ a
                a = a / a.norm()
    time.sleep(0.005)
