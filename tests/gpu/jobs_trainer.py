# SPDX-License-Identifier: Apache-2.0
"""jobs_trainer.py BATCH - a small real trainer for `vramz fit`: an MLP with
wide activations, a few AdamW steps at BATCH, then exit 0; CUDA OOM exits 1
with PyTorch's message.  Activations dominate, so memory is ~linear."""
import sys, torch
batch = int(sys.argv[1])
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(4096, 16384), torch.nn.GELU(),
                                                  torch.nn.Linear(16384, 4096)) for _ in range(4)]).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for _ in range(3):
    x = torch.randn(batch, 128, 4096, device="cuda")
    loss = model(x).float().pow(2).mean()
    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
print(f"batch {batch} ok, max_memory_reserved {torch.cuda.max_memory_reserved()}")
