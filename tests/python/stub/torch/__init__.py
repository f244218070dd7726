# SPDX-License-Identifier: Apache-2.0
"""A stub of the parts of PyTorch the vramz agent touches, so the agent's
tests run in CI with no GPU and no torch installed.

It models what matters to the agent's rules: CUDA is initialised only by
an allocation or torch.cuda.init(); memory_stats() of a device on an
uninitialised CUDA creates a context (counted in cuda._stub.contexts, as
the real call would cost ~500 MiB); the caching allocator's figures
(allocated, reserved, active, inactive split, peaks, retries, OOMs,
allocation counts); _record_memory_history and memory._snapshot() with
the Python stack of each live block, innermost frame first, captured at
allocation as torch does; out-of-memory errors raised the way PyTorch
raises them (num_ooms counted, then each observer attached with
torch._C._cuda_attach_out_of_memory_observer called in the allocating
thread as observer(device, size, limit, free), then OutOfMemoryError),
with set_per_process_memory_fraction's cap; torch.cuda._lazy_call; the
memory outside the allocator (a context at the first allocation,
cuda._stub.outside_add for libraries) and torch.distributed's process
groups, whose NCCL communicators add to it as NCCL's do (distributed/).

Tests drive it through torch.cuda._stub (see cuda/__init__.py).
VRAMZ_STUB_CPU_ONLY=1 makes it a CPU-only build (version.cuda None).
"""
import os
import types

__version__ = "2.11.0+stub"

version = types.SimpleNamespace(
    cuda=None if os.environ.get("VRAMZ_STUB_CPU_ONLY") == "1" else "12.8", hip=None)



class device:
    def __init__(self, type, index=None):
        if isinstance(type, str) and ":" in type:
            type, index = type.split(":")[0], int(type.split(":")[1])
        self.type, self.index = type, index


from ._errors import OutOfMemoryError  # noqa: E402
from . import cuda  # noqa: E402
from . import _C  # noqa: E402,F401
from . import distributed  # noqa: E402,F401  (torch imports it too)
