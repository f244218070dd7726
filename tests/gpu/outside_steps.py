# SPDX-License-Identifier: Apache-2.0
"""outside_steps.py - issue 37's table on a real GPU, run under the agent
(python -m vramz.torch): the CUDA context, a cuBLAS matmul, a cuDNN conv,
init_process_group("nccl", world_size=1, device_id=...), three new_group
calls with a collective on each, a 256 MiB all_reduce.  After each step
(and a pause for the agent's tick) one JSON line: NVML's figure for this
process (nvidia-smi, independent of the agent), the allocator's reserved
bytes, the outside figure, and the parts the agent's file gives.  The last
line holds `vramz ps --json`'s outside_parts when VRAMZ is set."""
import json
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import vramz.torch
from vramz import agentfile

PAUSE_S = float(os.environ.get("PAUSE_S", "2.0"))
MiB = 1 << 20


def nvml_mib():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, used = [x.strip() for x in line.split(",")]
        if int(pid) == os.getpid():
            return int(used)
    return None


def agent_parts(uuid, outside):
    a = vramz.torch.agent()
    if a is None:
        return None, []
    a._wake.set()
    time.sleep(0.3)
    with open(a.path) as f:
        d = agentfile.parse(f.read())
    return agentfile.outside_parts(d, uuid, outside), d.get("outside", [])


def step(name):
    torch.cuda.synchronize()
    time.sleep(PAUSE_S)
    used = nvml_mib()
    reserved = torch.cuda.memory_reserved(0)
    outside = used * MiB - reserved if used is not None else None
    uuid = vramz.torch.agent()._uuid(torch, 0) if vramz.torch.agent() else None
    parts, recs = agent_parts(uuid, outside if outside is not None else 0)
    print(json.dumps({"step": name, "nvml_mib": used, "reserved_mib": reserved // MiB,
                      "outside_mib": None if outside is None else outside // MiB,
                      "parts_mib": None if parts is None else
                      {k: v // MiB for k, v in parts.items() if k != "nccl_communicators"},
                      "comms": None if parts is None else parts["nccl_communicators"],
                      "records": [{k: r.get(k) for k in ("part", "bytes", "how", "group", "at")}
                                  for r in recs]}), flush=True)


def main():
    if vramz.torch.agent() is None:
        vramz.torch.attach(interval=0.5)
    torch.cuda.set_device(0)
    x = torch.zeros(1, device="cuda")
    step("context (a 1-byte tensor)")
    a = torch.randn(4096, 4096, device="cuda")
    b = a @ a
    step("a 4096x4096 matmul (cuBLAS)")
    c = torch.nn.functional.conv2d(torch.randn(8, 64, 128, 128, device="cuda"),
                                   torch.randn(64, 64, 3, 3, device="cuda"), padding=1)
    step("a conv2d (cuDNN)")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    dist.init_process_group("nccl", world_size=1, rank=0, device_id=torch.device("cuda", 0))
    step("init_process_group(nccl, world_size=1, device_id)")
    groups = []
    for i in range(3):
        g = dist.new_group([0])
        t = torch.ones(1024, device="cuda")
        dist.all_reduce(t, group=g)
        groups.append(g)
        step(f"new_group #{i + 1} + all_reduce on it")
    big = torch.ones(256 * MiB // 4, device="cuda")
    dist.all_reduce(big)
    step("an all_reduce of 256 MiB")
    vz = os.environ.get("VRAMZ")
    if vz:
        out = subprocess.run([vz, "ps", "--json"], capture_output=True, text=True).stdout
        try:
            procs = json.loads(out)["processes"]
            me = [p for p in procs if p["pid"] == os.getpid()]
            print(json.dumps({"step": "vramz ps --json", "outside_allocator_bytes":
                              me[0]["outside_allocator_bytes"] if me else None,
                              "outside_parts": me[0].get("outside_parts") if me else None}),
                  flush=True)
        except (ValueError, KeyError, IndexError) as e:
            print(json.dumps({"step": "vramz ps --json", "error": str(e)}), flush=True)
    del x, b, c, big
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
