#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""two_ranks_imbalance.py - GPU validation of the imbalance detector.

Two ranks of one job (children of this script, an mp.spawn-like launcher), one
per GPU; rank 0 holds --heavy GiB, rank 1 --light GiB, both busy.  With
--stray, rank 1 also touches GPU 0 first (the classic stray context).
Run `vramz watch` (or `vramz analyze` on a log) beside it: an imbalance
finding for the job "parent:PID (python3)" (PID: this script), heavy GPU
0, ratio ~heavy/light, once both ranks are past job-warmup (30 s).

    python3 tests/gpu/two_ranks_imbalance.py --duration 60 --heavy 60 --light 12 &
    ./build/vramz watch -i 500ms -d 50s --json > watch.jsonl
"""
import argparse
import json
import multiprocessing as mp
import sys
import time


def rank(r, gpu, gib, duration, stray, ready):
    import torch
    if stray and gpu != 0:
        torch.empty(1, device="cuda:0")  # context on GPU 0 before set_device
    torch.cuda.set_device(gpu)
    hold = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
    x = torch.randn(2048, 2048, device="cuda")
    ready.set()
    t0 = time.time()
    while time.time() - t0 < duration:
        x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
        time.sleep(0.01)
    del hold


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--heavy", type=float, default=60, help="GiB on rank 0 (GPU 0)")
    ap.add_argument("--light", type=float, default=12, help="GiB on rank 1 (GPU 1)")
    ap.add_argument("--stray", action="store_true", help="rank 1 also opens a context on GPU 0")
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    ev = [ctx.Event(), ctx.Event()]
    ps = [ctx.Process(target=rank, args=(r, r, g, a.duration, a.stray, ev[r]))
          for r, g in enumerate((a.heavy, a.light))]
    for p in ps:
        p.start()
    for e in ev:
        e.wait(120)
    import os
    print(json.dumps({"ranks": [p.pid for p in ps], "pgid": os.getpgid(0),
                      "heavy_gib": a.heavy, "light_gib": a.light}), flush=True)
    for p in ps:
        p.join()
    return 0 if all(p.exitcode == 0 for p in ps) else 1


if __name__ == "__main__":
    sys.exit(main())
