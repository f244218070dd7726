# SPDX-License-Identifier: Apache-2.0
"""py_frag.py - a workload that fragments PyTorch's caching allocator and
makes it retry, deterministically, for tests/gpu/py_check.sh (issue 15's
`fragmentation` finding on a real GPU).

How (PyTorch's CUDACachingAllocator, default settings):
  1. the pool is capped with torch.cuda.set_per_process_memory_fraction
     (--gib, 5 GiB): past the cap alloc_block fails as cudaMalloc would;
  2. blocks of mixed sizes between 2 and 9.5 MiB fill it to ~85 % of the
     cap: the allocator carves them out of 20 MiB segments (kLargeBuffer);
     every other block is then freed, so each segment keeps live blocks
     with free holes between them: inactive_split_bytes, which no
     empty_cache() can give back (~2 GiB, about half of reserved);
  3. after --warmup s (vramz must see the process before its retries rise),
     every 0.5 s for --retry-seconds: a block A (0.4 of the headroom) is
     allocated and freed, so the cache holds it whole; then a block B (0.8
     of the headroom) larger than A and than any hole: reserved + B passes
     the cap, no free block fits, so the allocator frees its cache
     (release_cached_blocks: A goes) and retries: num_alloc_retries + 1,
     and B then fits.  Should a torch count differently (the retry not
     counted), a request above the cap whatever is freed follows, whose
     failed retry is counted for sure (and raises OutOfMemoryError,
     caught: num_ooms + 1);
  4. then it holds still for --hold s ({"phase": "steady"} printed first):
     the figures do not change, so py_check.sh compares vramz ps --json
     with torch's own.
Prints one JSON line per phase with torch.cuda.memory_stats()'s figures;
the last has "final": true.  Bounded: ~5 + warmup + retry-seconds + hold s
(45 s by default), --gib of GPU memory at most.  GPU 0 only."""
import argparse
import json
import os
import random
import time

import torch

MiB = 1 << 20
ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, default=5, help="the pool's cap (memory fraction), GiB")
ap.add_argument("--warmup", type=float, default=6, help="fragmented, before retries start, s")
ap.add_argument("--retry-seconds", type=float, default=18, help="retrying every 0.5 s, s")
ap.add_argument("--hold", type=float, default=15, help="holding still at the end, s")
a = ap.parse_args()

dev = torch.device("cuda:0")
total = torch.cuda.get_device_properties(0).total_memory
frac = min(1.0, a.gib * (1 << 30) / total)
torch.cuda.set_per_process_memory_fraction(frac, 0)
cap = int(frac * total)  # the allocator's allowed_memory_maximum
t0 = time.time()


def stats(**extra):
    s = torch.cuda.memory_stats(0)
    d = {"pid": os.getpid(), "t": round(time.time() - t0, 2), "cap": cap,
         "reserved": s["reserved_bytes.all.current"],
         "allocated": s["allocated_bytes.all.current"],
         "inactive_split": s["inactive_split_bytes.all.current"],
         "retries": s["num_alloc_retries"], "ooms": s["num_ooms"]}
    d.update(extra)
    print(json.dumps(d), flush=True)
    return d


def round2(n):  # the allocator rounds large blocks to 2 MiB
    return max(32 * MiB, n // (2 * MiB) * (2 * MiB))


# 2. fill to ~85 % of the cap with mixed sizes, then free every other one
rng = random.Random(15)
live = []
try:
    while torch.cuda.memory_reserved(0) < 0.85 * cap:
        n = int((2 + 7.5 * rng.random()) * MiB) // 512 * 512
        live.append(torch.empty(n, dtype=torch.uint8, device=dev))
except torch.cuda.OutOfMemoryError:
    pass
del live[::2]
torch.cuda.empty_cache()  # whole free segments go; split ones cannot
stats(phase="fragmented", blocks=len(live))

# 3. warm-up, then retries
time.sleep(a.warmup)
cycles = fallback = 0
end = time.time() + a.retry_seconds
while time.time() < end:
    before = torch.cuda.memory_stats(0)["num_alloc_retries"]
    head = cap - torch.cuda.memory_reserved(0)
    A, B = round2(int(head * 0.4)), round2(int(head * 0.8))
    try:
        x = torch.empty(A, dtype=torch.uint8, device=dev)
        del x  # cached whole: the retry's release_cached_blocks frees it
        y = torch.empty(B, dtype=torch.uint8, device=dev)
        del y
    except torch.cuda.OutOfMemoryError:
        pass
    if torch.cuda.memory_stats(0)["num_alloc_retries"] == before:
        fallback += 1
        try:
            z = torch.empty(round2(cap + 64 * MiB), dtype=torch.uint8, device=dev)
            del z
        except torch.cuda.OutOfMemoryError:
            pass
    torch.cuda.empty_cache()
    cycles += 1
    time.sleep(0.5)
stats(phase="retried", cycles=cycles, fallback_cycles=fallback)

# 4. still: figures that vramz must show as they are
torch.cuda.synchronize()
stats(phase="steady")
time.sleep(a.hold)
stats(phase="end", final=True, cycles=cycles, fallback_cycles=fallback)
