# SPDX-License-Identifier: Apache-2.0
"""diag_alloc.py MIB_PER_S - a data loader filling device buffers at 0 %
SM: allocates MIB_PER_S MiB a second (64 MiB chunks) and computes nothing.
Not idle: its memory grows.  Stops growing at 12 GiB.  Prints "ready"."""
import sys, time, torch
rate = float(sys.argv[1])
kept = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")]
torch.cuda.synchronize()
print("ready", flush=True)
period = 64 / rate
while len(kept) < 12 * 16:
    kept.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda:0"))
    time.sleep(period)
while True:
    time.sleep(1)
