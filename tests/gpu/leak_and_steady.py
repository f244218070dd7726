#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""leak_and_steady.py - GPU validation of the leak detector (issue 4).

Starts two processes on one GPU: a leaker that keeps every tensor it
allocates (RATE MiB/s, in chunks every CHUNK_S) and a steady job that
allocates and frees the same working set each iteration (a sawtooth, the
caching allocator holds it).  Run `vramz watch` beside it: the leaker must
be flagged within 2 minutes with a rate near RATE*60 MiB/min, the steady
job never.

    python3 tests/gpu/leak_and_steady.py --gpu 0 --duration 180 --rate 64 &
    ./build/vramz watch -i 500ms -d 170s --json > watch.jsonl

Prints the two pids and the true rate as JSON on stdout first, so a
script can compare (one line: {"leaker": PID, "steady": PID, ...}).
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time


def leaker(gpu, rate_mib_s, chunk_s, duration, ready):
    import torch
    torch.cuda.set_device(gpu)
    keep = []
    torch.empty(1, device="cuda")  # context first, outside the timed growth
    ready.set()
    t0 = time.time()
    n = 0
    chunk = int(rate_mib_s * chunk_s * 2**20)
    while time.time() - t0 < duration:
        keep.append(torch.empty(chunk, dtype=torch.uint8, device="cuda").fill_(1))
        n += 1
        nxt = t0 + n * chunk_s
        time.sleep(max(0.0, nxt - time.time()))


def steady(gpu, work_mib, duration, ready):
    import torch
    torch.cuda.set_device(gpu)
    x = torch.randn(1024, 1024, device="cuda")
    ready.set()
    t0 = time.time()
    while time.time() - t0 < duration:
        # alloc/free the same working set every iteration
        tmp = [torch.empty(work_mib * 2**20 // 8, dtype=torch.uint8, device="cuda") for _ in range(8)]
        y = x @ x
        del tmp, y
        torch.cuda.synchronize()
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--duration", type=float, default=180, help="seconds")
    ap.add_argument("--rate", type=float, default=64, help="leak in MiB/s")
    ap.add_argument("--chunk", type=float, default=0.25, help="seconds between leaked chunks")
    ap.add_argument("--steady-mib", type=int, default=2048, help="steady job's working set")
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    r1, r2 = ctx.Event(), ctx.Event()
    pl = ctx.Process(target=leaker, args=(a.gpu, a.rate, a.chunk, a.duration, r1))
    ps = ctx.Process(target=steady, args=(a.gpu, a.steady_mib, a.duration, r2))
    ps.start()
    pl.start()
    r1.wait(120)
    r2.wait(120)
    print(json.dumps({"leaker": pl.pid, "steady": ps.pid, "gpu": a.gpu,
                      "rate_bytes_per_s": a.rate * 2**20, "start": time.time()}), flush=True)
    pl.join()
    ps.join()
    return 0 if pl.exitcode == 0 and ps.exitcode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
