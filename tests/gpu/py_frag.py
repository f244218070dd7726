"""py_frag.py - a workload that fragments PyTorch's caching allocator, for
tests/gpu/py_check.sh: tensors of many odd sizes are allocated and every
other one freed, so large blocks are split and their free pieces cannot
serve the larger requests that follow; with a per-process memory fraction
the allocator must free its cache and retry (num_alloc_retries climbs).
Prints JSON lines with torch's own figures, then holds for --hold s."""
import argparse
import json
import random
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, default=24, help="memory fraction cap, GiB")
ap.add_argument("--seconds", type=float, default=40)
a = ap.parse_args()

dev = torch.device("cuda:0")
total = torch.cuda.get_device_properties(0).total_memory
torch.cuda.set_per_process_memory_fraction(min(1.0, a.gib * (1 << 30) / total), 0)
rng = random.Random(1)
live = []
end = time.time() + a.seconds
rounds = 0
while time.time() < end:
    rounds += 1
    try:
        for _ in range(64):
            mib = rng.choice([3, 5, 7, 11, 13, 17, 19, 23, 29, 31]) + rng.random()
            live.append(torch.empty(int(mib * (1 << 20)), dtype=torch.uint8, device=dev))
        del live[::2]  # free every other: split blocks with holes
        big = torch.empty(int(rng.choice([96, 160, 224]) * (1 << 20)), dtype=torch.uint8, device=dev)
        del big
        if sum(t.numel() for t in live) > a.gib * 0.6 * (1 << 30):
            live = live[len(live) // 2:]
    except torch.cuda.OutOfMemoryError:
        live = live[len(live) // 2:]
    if rounds % 20 == 0:
        s = torch.cuda.memory_stats(0)
        print(json.dumps({"t": time.time(), "reserved": s["reserved_bytes.all.current"],
                          "allocated": s["allocated_bytes.all.current"],
                          "inactive_split": s["inactive_split_bytes.all.current"],
                          "retries": s["num_alloc_retries"], "ooms": s["num_ooms"]}), flush=True)
    time.sleep(0.01)
s = torch.cuda.memory_stats(0)
print(json.dumps({"final": True, "reserved": s["reserved_bytes.all.current"],
                  "inactive_split": s["inactive_split_bytes.all.current"],
                  "retries": s["num_alloc_retries"], "ooms": s["num_ooms"]}), flush=True)
