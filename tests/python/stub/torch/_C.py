# SPDX-License-Identifier: Apache-2.0
"""torch._C: only the out-of-memory observer hook."""
from . import cuda as _cuda


def _cuda_attach_out_of_memory_observer(fn):
    _cuda._stub.oom_observers.append(fn)
