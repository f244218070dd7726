# SPDX-License-Identifier: Apache-2.0
"""leak_jobs.py - the leak shapes of issue 36 on a real GPU, one per
process: KIND RATE_MIB_S SECONDS.

  smooth   a 2 GiB model at once, then from the first step keeps RATE MiB/s
           in 2 MiB pieces (a list of losses kept with their graphs)
  stairs   the same behind a 512 MiB scratch tensor allocated and freed
           every step: NVML's figure rises in 512 MiB segments
  plateau  +1 GiB every 8 s for 40 s, then holds (growth that stops)
  steady   holds 4 GiB and computes

Prints one JSON line {"event": "ready", "pid", "t_leak"} when the loop
starts (t_leak: the wall time the leak began, or null) and exits after
SECONDS."""
import json
import os
import sys
import time

import torch

kind, rate, dur = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dev = torch.device("cuda")
MiB = 1 << 20
model = torch.empty((4 if kind == "steady" else 2) << 30, dtype=torch.uint8, device=dev)
torch.cuda.synchronize()
kept = []
step = 0.1
piece = 2 * MiB
per_step = max(1, int(round(rate * step / 2))) if kind in ("smooth", "stairs") else 0
t0 = time.time()
print(json.dumps({"event": "ready", "pid": os.getpid(), "kind": kind, "rate_mib_s": rate,
                  "t_leak": t0 if per_step else None}), flush=True)
a = torch.randn(2048, 2048, device=dev)
while time.time() - t0 < dur:
    if kind == "stairs":
        # the scratch is freed before the step keeps its pieces, so they are
        # carved from its cached 512 MiB block, and the next scratch needs a
        # new segment once they have used it up: NVML's staircase
        scratch = torch.empty(512 * MiB, dtype=torch.uint8, device=dev)
        scratch.fill_(1)
        del scratch
    scratch = None
    for _ in range(per_step):
        kept.append(torch.empty(piece, dtype=torch.uint8, device=dev))
    if kind == "plateau":
        el = time.time() - t0
        while el < 40 and len(kept) < int(el / 8) + 1:
            kept.append(torch.empty(1 << 30, dtype=torch.uint8, device=dev))
    if kind == "steady":
        a = (a @ a).clamp_(-1, 1)
    del scratch
    torch.cuda.synchronize()
    time.sleep(step)
print(json.dumps({"event": "done", "pid": os.getpid()}), flush=True)
