# SPDX-License-Identifier: Apache-2.0
"""diag_fill.py STEADY_S RATE_GIB_S - a training job that leaks until CUDA
runs out of memory: holds 2 GiB and computes for STEADY_S seconds, then
keeps every 256 MiB chunk it allocates (RATE_GIB_S GiB/s) while still
computing, and dies of the uncaught torch.cuda.OutOfMemoryError, as such a
job does.  Prints "ready", "leak T" and "oom T" (epoch seconds) on stdout."""
import sys, time, torch
steady_s, rate = float(sys.argv[1]), float(sys.argv[2])
dev = "cuda:0"
base = torch.empty(2 << 30, dtype=torch.uint8, device=dev)
a = torch.randn(2048, 2048, device=dev)
torch.cuda.synchronize()
print("ready", flush=True)
t_end = time.time() + steady_s
while time.time() < t_end:
    for _ in range(4):
        a = (a @ a) / a.norm()
    torch.cuda.synchronize()
    time.sleep(0.01)
kept, chunk = [], 256 << 20
period = chunk / (rate * 2**30)
print("leak %.3f" % time.time(), flush=True)
nxt = time.time()
try:
    while True:
        kept.append(torch.empty(chunk, dtype=torch.uint8, device=dev))
        a = (a @ a) / a.norm()
        torch.cuda.synchronize()
        nxt += period
        time.sleep(max(0.0, nxt - time.time()))
except torch.cuda.OutOfMemoryError:
    print("oom %.3f held %.1f GiB" % (time.time(), len(kept) * chunk / 2**30), flush=True)
    raise
