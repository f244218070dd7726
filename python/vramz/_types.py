# SPDX-License-Identifier: Apache-2.0
"""The shapes of what vramz.snapshot() returns, for type checkers: the
documents are plain dicts at run time (the keys of `vramz status --json`,
docs/json.md), so these TypedDicts cost nothing and change nothing; they
let mypy or an editor know the common keys and their types.  A value a
GPU does not report is None, never 0.  total=False: a source may lack a
key (the NVML source has no "age_ms"), and the per-GPU sample fields of
lib/fields.c (vramz/_gpufields.py's GPU_FIELDS) are all Optional[int]."""
import sys
from typing import Any, Dict, List, Optional

if sys.version_info >= (3, 8):
    from typing import TypedDict
else:  # pragma: no cover - the package needs 3.9
    TypedDict = dict


class System(TypedDict, total=False):
    backend: str
    driver_version: Optional[str]
    nvml_version: Optional[str]
    cuda_driver_version: Optional[str]


class Gpu(TypedDict, total=False):
    index: int
    uuid: Optional[str]
    name: Optional[str]
    pci_bus_id: Optional[str]
    vendor: Optional[str]
    lost: bool
    mem_total_bytes: Optional[int]
    mem_reserved_bytes: Optional[int]
    mem_used_bytes: Optional[int]
    mem_free_bytes: Optional[int]
    mem_used_pct: Optional[float]
    util_gpu_pct: Optional[int]
    util_mem_pct: Optional[int]
    temp_c: Optional[int]
    power_mw: Optional[int]
    power_limit_mw: Optional[int]
    clock_sm_mhz: Optional[int]
    clock_mem_mhz: Optional[int]
    process_count: Optional[int]
    mig: List[Dict[str, Any]]


class Process(TypedDict, total=False):
    gpu: int
    gpu_uuid: Optional[str]
    pid: int
    visible: bool
    type: List[str]
    used_bytes: Optional[int]
    sm_pct: Optional[int]
    mem_util_pct: Optional[int]
    user: Optional[str]
    uid: Optional[int]
    command: Optional[str]
    comm: Optional[str]
    ppid: Optional[int]
    pgid: Optional[int]
    ns_pid: Optional[int]
    start_time_ticks: Optional[int]
    container: Optional[str]
    pod_uid: Optional[str]
    slurm_job: Optional[str]
    pod: Optional[str]
    namespace: Optional[str]
    container_name: Optional[str]
    outside_allocator_bytes: Optional[int]
    torch: Optional[Dict[str, Any]]


class Snapshot(TypedDict, total=False):
    schema: int
    vramz_version: str
    kind: str
    source: str            # "daemon", "library" or "nvml"
    time: str
    time_ms: int
    age_ms: int            # "daemon" only
    daemon_pid: int        # "daemon" only
    system: System
    gpus: List[Gpu]
    processes: List[Process]
    ended: List[Dict[str, Any]]
