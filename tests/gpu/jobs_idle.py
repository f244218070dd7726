# SPDX-License-Identifier: Apache-2.0
"""jobs_idle.py MIB - holds MIB of VRAM on GPU 0 and does nothing: what
`vramz kill --idle` should clear.  Prints "ready PID" when allocated."""
import os, sys, time, torch
buf = torch.empty(int(sys.argv[1]) * 2**20, dtype=torch.uint8, device="cuda:0")
torch.cuda.synchronize()
print("ready", os.getpid(), flush=True)
while True:
    time.sleep(1)
