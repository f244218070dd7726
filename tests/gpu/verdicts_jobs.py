# SPDX-License-Identifier: Apache-2.0
"""verdicts_jobs.py - the workloads of tests/gpu/verdicts_check.sh (issue
27), run under the agent (python -m vramz.torch ... verdicts_jobs.py MODE).
Each prints JSON lines: its pid, the lines that matter (file, line, func),
and when its events happened (wall time, s), so the check can compare what
vramz said with what happened.  GPU 0 only; bounded in time and memory.

  uncaught  under set_per_process_memory_fraction(--cap-gib), load() keeps
            --hold-gib, then after --wait s forward() asks --ask-gib more
            than fits: an uncaught torch.OutOfMemoryError with most of the
            GPU free (the process dies of it)
  fill      holds --hold-gib (uncapped) for --wait s: one of two processes
            filling the GPU
  greedy    after --wait s asks for --ask-gib, more than the GPU has left
            beside `fill`: an OOM between two processes, uncaught
  caught    under a cap, probe() asks too much, catches the OOM, works on
            for --wait s and exits with status 0
  leak      steady for --steady s (past vramz's warm-up), then leaks
            --rate-mib MiB/s for --seconds s, then exits
"""
import argparse
import json
import os
import sys
import time

import torch

MiB = 1 << 20
GiB = 1 << 30
ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["uncaught", "fill", "greedy", "caught", "leak"])
ap.add_argument("--cap-gib", type=float, default=8)
ap.add_argument("--hold-gib", type=float, default=5)
ap.add_argument("--ask-gib", type=float, default=6)
ap.add_argument("--wait", type=float, default=12)
ap.add_argument("--steady", type=float, default=45)
ap.add_argument("--rate-mib", type=float, default=20)
ap.add_argument("--seconds", type=float, default=80)
a = ap.parse_args()
dev = torch.device("cuda:0")
kept = []


def say(**kw):
    kw.setdefault("pid", os.getpid())
    kw.setdefault("t", time.time())
    print(json.dumps(kw), flush=True)


def where(fn, marker):
    src = open(__file__).read().splitlines()
    line = next(i for i, l in enumerate(src, 1) if marker in l)
    return {"file": os.path.basename(__file__), "line": line, "func": fn}


def cap(gib):
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, gib * GiB / total), 0)


def load(gib):
    kept.append(torch.empty(int(gib * GiB), dtype=torch.uint8, device=dev))  # HOLDER-LINE


def forward(gib):
    return torch.empty(int(gib * GiB), dtype=torch.uint8, device=dev)  # OOM-LINE


def probe(gib):
    return torch.empty(int(gib * GiB), dtype=torch.uint8, device=dev)  # PROBE-LINE


def step(mib):
    kept.append(torch.empty(int(mib * MiB), dtype=torch.uint8, device=dev))  # LEAK-LINE


if a.mode in ("uncaught", "caught"):
    cap(a.cap_gib)
if a.mode in ("uncaught", "fill", "caught"):
    load(a.hold_gib)
else:
    load(0.25)
say(mode=a.mode, event="ready", oom_at=where("forward", "OOM-LINE"),
    holder_at=where("load", "HOLDER-LINE"), probe_at=where("probe", "PROBE-LINE"),
    leak_at=where("step", "LEAK-LINE"), ask_bytes=int(a.ask_gib * GiB))
if a.mode == "uncaught" or a.mode == "greedy":
    time.sleep(a.wait)
    say(event="asking")
    forward(a.ask_gib)  # dies here: uncaught OutOfMemoryError
elif a.mode == "fill":
    time.sleep(a.wait)
elif a.mode == "caught":
    time.sleep(3)
    try:
        probe(a.cap_gib * 2)
    except torch.OutOfMemoryError:
        say(event="caught", ooms=torch.cuda.memory_stats(0).get("num_ooms"))
    x = torch.randn(1024, 1024, device=dev)
    end = time.time() + a.wait
    while time.time() < end:
        x = (x @ x).tanh()
        torch.cuda.synchronize()
        time.sleep(0.05)
    say(event="exit", status=0)
    sys.exit(0)
elif a.mode == "leak":
    time.sleep(a.steady)
    say(event="leak_start", rate_bytes_per_s=a.rate_mib * MiB)
    t0 = time.time()
    while time.time() - t0 < a.seconds:
        step(a.rate_mib / 4)
        time.sleep(0.25 - (time.time() - t0) % 0.25)
    say(event="leak_end")
