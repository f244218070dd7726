# SPDX-License-Identifier: Apache-2.0
"""torch.distributed of the stub (see distributed_c10d.py): the names torch
re-exports from distributed_c10d, the same function objects, so a wrapper
put in one module must be put in both."""
from .distributed_c10d import (  # noqa: F401
    COMM_BYTES, ProcessGroup, all_gather, all_reduce, barrier, broadcast,
    destroy_process_group, get_backend, get_process_group_ranks, get_rank, get_world_size,
    group, init_process_group, is_available, is_initialized, new_group)
