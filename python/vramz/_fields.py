# SPDX-License-Identifier: Apache-2.0
"""The package's lists of figures.  The per-GPU sample fields (GPU_FIELDS:
JSON key, validity bit, struct member, in lib/fields.c's order: what
`vramz status --json` prints for each GPU) are generated from the C table
into _gpufields.py, with the bits and the struct and segment layouts; a
ctest (python.fields) fails when that copy is stale.  TORCH_FIGURES, below,
is the PyTorch agent's figures."""
from ._gpufields import GPU_FIELDS  # noqa: F401  (re-exported: the one list)

# The PyTorch agent's figures of a process, in the order of lib/torchfigs.h
# (the one list in C): (key under "torch", VRAMZ_T_* bit, a column of the
# log's process file).  tests/python/test_fields.py reads lib/torchfigs.h
# and checks this list equal to it.
TORCH_FIGURES = (
    ("allocated_bytes", 1 << 0, True),
    ("reserved_bytes", 1 << 1, True),
    ("active_bytes", 1 << 2, False),
    ("inactive_split_bytes", 1 << 3, True),
    ("peak_allocated_bytes", 1 << 4, False),
    ("alloc_retries", 1 << 5, True),
    ("ooms", 1 << 6, True),
    ("allocations", 1 << 7, False),
)

# The parts of the memory outside the allocator (issue 37), in the order of
# lib/procfields.c's outside_PART_bytes rows (JSON's "outside_parts", the
# exporter's part label); "other" is the rest, never measured as such.
OUTSIDE_PARTS = ("context", "libraries", "nccl", "other")
