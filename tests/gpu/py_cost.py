# SPDX-License-Identifier: Apache-2.0
"""py_cost.py - the agent's cost on a real training step, as a ratio: an
8-layer MLP's step time in alternating blocks without and with
vramz.torch attached at 1 Hz (and once with history=True), median of
each.  Prints one JSON line."""
import json
import statistics
import time

import torch
import vramz.torch

dev = torch.device("cuda:0")
model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(1024, 4096, device=dev)


def block(n=150):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


block(50)  # warm-up
off, on, hist = [], [], []
for _ in range(3):
    off.append(block())
    a = vramz.torch.attach(interval=1.0)
    on.append(block())
    vramz.torch.detach()
    a = vramz.torch.attach(interval=1.0, history=True)
    hist.append(block())
    tick_ms = 1000 * a.tick_s / max(1, a.seq)
    vramz.torch.detach()
o, n, h = statistics.median(off), statistics.median(on), statistics.median(hist)
print(json.dumps({"step_ms_off": round(o * 1e3, 3), "step_ms_on": round(n * 1e3, 3),
                  "step_ms_history": round(h * 1e3, 3), "ratio_on": round(n / o, 4),
                  "ratio_history": round(h / o, 4), "agent_tick_ms": round(tick_ms, 3)}), flush=True)
