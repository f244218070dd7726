# SPDX-License-Identifier: Apache-2.0
"""torch.OutOfMemoryError of the stub (torch.cuda.OutOfMemoryError is the
same class, as in PyTorch 2.x)."""


class OutOfMemoryError(RuntimeError):
    pass


OutOfMemoryError.__module__ = "torch"
