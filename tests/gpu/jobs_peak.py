# SPDX-License-Identifier: Apache-2.0
"""jobs_peak.py - a PyTorch job with a known peak for `vramz run`: allocates
in steps (with a short spike), then prints torch's own figures as JSON on
its last line: max_memory_reserved per GPU, the figure vramz's peak should
match plus the CUDA context.  usage: jobs_peak.py [GPUS] [PEAK_MIB]"""
import json, sys, time, torch
ngpu = int(sys.argv[1]) if len(sys.argv) > 1 else 1
peak_mib = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
out = {}
for d in range(ngpu):
    torch.cuda.set_device(d)
    keep = []
    for step in range(4):                      # grow in steps of peak/4
        keep.append(torch.empty(peak_mib // 4 * 2**20, dtype=torch.uint8, device=d))
        torch.cuda.synchronize(d); time.sleep(0.2)
    spike = torch.empty(256 * 2**20, dtype=torch.uint8, device=d)   # 50 ms spike
    torch.cuda.synchronize(d); time.sleep(0.05)
    del spike
    x = torch.randn(4096, 4096, device=d)      # some SM work
    for _ in range(50):
        x = x @ x; x = x / x.norm()
    torch.cuda.synchronize(d)
    out[d] = torch.cuda.max_memory_reserved(d)
print(json.dumps({"max_memory_reserved": out}), flush=True)
