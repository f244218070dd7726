# SPDX-License-Identifier: Apache-2.0
"""py_leak_train.py - a small training loop that leaks at a known line, for
tests/gpu/py_check.sh: each step keeps a 32 MiB activation alive (the
classic `history.append(loss_tensor_with_graph)` bug, made explicit).
Prints one JSON line with the file and line of the leak, then trains for
--seconds.  Run under `python -m vramz.torch --history`."""
import argparse
import json
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--leak-mib", type=float, default=32)
ap.add_argument("--steps-per-s", type=float, default=20)
a = ap.parse_args()

dev = torch.device("cuda:0")
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)]).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
kept = []
LEAK_LINE = None


def step(x):
    global LEAK_LINE
    y = model(x).square().mean()
    opt.zero_grad(set_to_none=True)
    y.backward()
    opt.step()
    n = int(a.leak_mib * (1 << 20) / 4)
    kept.append(torch.empty(n, device=dev))  # LEAK: the line vramz must name
    return y


with open(__file__) as f:
    LEAK_LINE = next(i for i, line in enumerate(f, 1) if "# LEAK:" in line and "kept.append" in line)
print(json.dumps({"pid": __import__("os").getpid(), "file": __file__, "line": LEAK_LINE,
                  "func": "step"}), flush=True)
x = torch.randn(256, 2048, device=dev)
end = time.time() + a.seconds
while time.time() < end:
    t0 = time.time()
    step(x)
    torch.cuda.synchronize()
    time.sleep(max(0.0, 1 / a.steps_per_s - (time.time() - t0)))
print(json.dumps({"done": True, "kept_mib": len(kept) * a.leak_mib}), flush=True)
