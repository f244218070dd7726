# SPDX-License-Identifier: Apache-2.0
"""py_hold.py - holds known tensors and prints torch's own figures (and its
pid), for the NVML-vs-torch comparison of tests/gpu/py_check.sh; runs
under the agent and waits for --seconds."""
import argparse
import json
import os
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--gib", type=float, default=10)
ap.add_argument("--seconds", type=float, default=20)
ap.add_argument("--gpu", type=int, default=0)
a = ap.parse_args()
dev = torch.device(f"cuda:{a.gpu}")
x = torch.empty(int(a.gib * (1 << 30)), dtype=torch.uint8, device=dev)
y = torch.randn(4096, 4096, device=dev) @ torch.randn(4096, 4096, device=dev)  # cuBLAS workspace
torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "allocated": torch.cuda.memory_allocated(dev),
                  "reserved": torch.cuda.memory_reserved(dev),
                  "uuid": "GPU-" + str(torch.cuda.get_device_properties(dev).uuid).removeprefix("GPU-")}),
      flush=True)
time.sleep(a.seconds)
