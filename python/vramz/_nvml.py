# SPDX-License-Identifier: Apache-2.0
"""A snapshot straight from NVML through ctypes: the package's last
source, so `pip install vramz` works on a machine with the NVIDIA driver
and nothing else of vramz.

It reads what one cheap pass of NVML answers - identity, memory
(reserved apart where the driver has the v2 call), utilization,
temperature, power and its limit, SM and memory clocks, the compute and
graphics process lists - and fills the same document as the library
(`vramz status --json`'s keys, docs/json.md) with "source": "nvml".  What
this pass does not read (PCIe, energy, fans, VRAM health, MIG instances,
the PyTorch agents' figures, containers) is None, as an unknown value is
everywhere in vramz; libvramz or a daemon give the rest.  Each value out
of its plausible range is None too (lib/internal/fields.h's rule: a driver's
sentinel is no reading).  The structs are NVML's (lib/backend/nvml_abi.h
declares the same subset for C).
"""
import ctypes
import os
import time
from typing import Any, Dict, List, Optional, Tuple

from ._fields import GPU_FIELDS

c_uint, c_ulonglong = ctypes.c_uint, ctypes.c_ulonglong
NOT_AVAILABLE = (1 << 64) - 1
SUCCESS, INSUFFICIENT_SIZE = 0, 7
CLOCK_SM, CLOCK_MEM = 1, 2
MAX_TEMP_C, MAX_POWER_MW, MAX_CLOCK_MHZ = 200, 10_000_000, 100_000


class NvmlError(RuntimeError):
    """NVML could not be loaded or initialised; the message says why."""


class _Memory(ctypes.Structure):
    _fields_ = [("total", c_ulonglong), ("free", c_ulonglong), ("used", c_ulonglong)]


class _MemoryV2(ctypes.Structure):
    _fields_ = [("version", c_uint), ("total", c_ulonglong), ("reserved", c_ulonglong),
                ("free", c_ulonglong), ("used", c_ulonglong)]


MEMORY_V2 = ctypes.sizeof(_MemoryV2) | 2 << 24  # NVML_STRUCT_VERSION(Memory, 2)


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", c_uint), ("memory", c_uint)]


class _PciInfo(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", c_uint), ("bus", c_uint),
                ("device", c_uint), ("pciDeviceId", c_uint), ("pciSubSystemId", c_uint),
                ("busId", ctypes.c_char * 32)]


class _ProcessInfo(ctypes.Structure):  # the _v2 and _v3 calls' record
    _fields_ = [("pid", c_uint), ("usedGpuMemory", c_ulonglong), ("gpuInstanceId", c_uint),
                ("computeInstanceId", c_uint)]


class _ProcessInfoV1(ctypes.Structure):
    _fields_ = [("pid", c_uint), ("usedGpuMemory", c_ulonglong)]


def load() -> ctypes.CDLL:
    """VRAMZ_NVML_LIBRARY when set (a path; one that does not load turns
    this source off), else libnvidia-ml.so.1 (the driver's), else
    libnvidia-ml.so; raises NvmlError saying what was tried."""
    why = []
    path = os.environ.get("VRAMZ_NVML_LIBRARY")
    for name in [path] if path else ["libnvidia-ml.so.1", "libnvidia-ml.so"]:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            why.append(str(e))
    reasons = "; ".join(why)
    raise NvmlError(f"NVML could not be loaded ({reasons})")


def _fn(lib: ctypes.CDLL, *names: str):
    """The first of names the library exports, or None."""
    for n in names:
        f = getattr(lib, n, None)
        if f is not None:
            f.restype = ctypes.c_int
            return f
    return None


def _text(buf: bytes) -> Optional[str]:
    from . import _text as t
    s = t.sanitize(buf.split(b"\0", 1)[0][:255])
    return s or None


def _string(lib: ctypes.CDLL, name: str, h: ctypes.c_void_p, size: int = 96) -> Optional[str]:
    f = _fn(lib, name)
    buf = ctypes.create_string_buffer(size)
    if f is None or f(h, buf, c_uint(size)) != SUCCESS:
        return None
    return _text(buf.raw)


def _uint(f, *args) -> Optional[int]:
    v = c_uint()
    if f is None or f(*args, ctypes.byref(v)) != SUCCESS:
        return None
    return v.value


def _ranged(v: Optional[int], hi: int) -> Optional[int]:
    return v if v is not None and 0 <= v <= hi else None


def _memory(lib: ctypes.CDLL, h: ctypes.c_void_p) -> Dict[str, Optional[int]]:
    out: Dict[str, Optional[int]] = {"mem_total_bytes": None, "mem_reserved_bytes": None,
                                     "mem_used_bytes": None, "mem_free_bytes": None}
    v2 = _fn(lib, "nvmlDeviceGetMemoryInfo_v2")
    m2 = _MemoryV2(version=MEMORY_V2)
    if v2 is not None and v2(h, ctypes.byref(m2)) == SUCCESS and m2.total and \
            m2.reserved + m2.used <= m2.total:
        out.update(mem_total_bytes=m2.total, mem_reserved_bytes=m2.reserved,
                   mem_used_bytes=m2.used, mem_free_bytes=m2.free)
        return out
    v1 = _fn(lib, "nvmlDeviceGetMemoryInfo")
    m1 = _Memory()
    if v1 is not None and v1(h, ctypes.byref(m1)) == SUCCESS and m1.total and m1.used <= m1.total:
        # v1's used holds the reserved memory too (drivers since R510)
        out.update(mem_total_bytes=m1.total, mem_used_bytes=m1.used, mem_free_bytes=m1.free)
    return out


def _gpu(lib: ctypes.CDLL, i: int, h: ctypes.c_void_p) -> Dict[str, Any]:
    pci = _PciInfo()
    f = _fn(lib, "nvmlDeviceGetPciInfo_v3")
    bus = _text(pci.busId) if f is not None and f(h, ctypes.byref(pci)) == SUCCESS else None
    d: Dict[str, Any] = {"index": i, "uuid": _string(lib, "nvmlDeviceGetUUID", h),
                         "name": _string(lib, "nvmlDeviceGetName", h),
                         "pci_bus_id": bus, "vendor": "nvidia", "lost": False}
    d.update({name: None for name, _, _ in GPU_FIELDS})
    d.update(_memory(lib, h))
    u = _Utilization()
    f = _fn(lib, "nvmlDeviceGetUtilizationRates")
    if f is not None and f(h, ctypes.byref(u)) == SUCCESS and u.gpu <= 100 and u.memory <= 100:
        d["util_gpu_pct"], d["util_mem_pct"] = u.gpu, u.memory
    t = _uint(_fn(lib, "nvmlDeviceGetTemperature"), h, c_uint(0))
    d["temp_c"] = _ranged(t, MAX_TEMP_C)
    d["power_mw"] = _ranged(_uint(_fn(lib, "nvmlDeviceGetPowerUsage"), h), MAX_POWER_MW)
    d["power_limit_mw"] = _ranged(_uint(_fn(lib, "nvmlDeviceGetEnforcedPowerLimit"), h), MAX_POWER_MW)
    clock = _fn(lib, "nvmlDeviceGetClockInfo")
    d["clock_sm_mhz"] = _ranged(_uint(clock, h, c_uint(CLOCK_SM)), MAX_CLOCK_MHZ)
    d["clock_mem_mhz"] = _ranged(_uint(clock, h, c_uint(CLOCK_MEM)), MAX_CLOCK_MHZ)
    total, used = d["mem_total_bytes"], d["mem_used_bytes"]
    d["mem_used_pct"] = float("%.1f" % (100.0 * used / total)) if total and used is not None else None
    return d


def _plist(lib: ctypes.CDLL, h: ctypes.c_void_p, kind: str) -> Optional[List[Tuple[int, Optional[int]]]]:
    """(pid, used bytes or None) of one of the process lists, newest call
    first; None when the driver answers none of them."""
    base = f"nvmlDeviceGet{kind}RunningProcesses"
    for name, rec in ((base + "_v3", _ProcessInfo), (base + "_v2", _ProcessInfo), (base, _ProcessInfoV1)):
        f = _fn(lib, name)
        if f is None:
            continue
        n = c_uint(0)
        rc = f(h, ctypes.byref(n), None)
        for _ in range(4):  # the list may grow between the count and the read
            if rc != INSUFFICIENT_SIZE:
                break
            arr = (rec * (n.value + 8))()
            n = c_uint(len(arr))
            rc = f(h, ctypes.byref(n), arr)
            if rc == SUCCESS:
                return [(p.pid, None if p.usedGpuMemory == NOT_AVAILABLE else p.usedGpuMemory)
                        for p in arr[:n.value]]
        if rc == SUCCESS:
            return []
        return None
    return None


def _procs(lib: ctypes.CDLL, gpus: List[Dict[str, Any]], handles: List[ctypes.c_void_p]) -> List[Dict[str, Any]]:
    from . import _proc
    out: List[Dict[str, Any]] = []
    for g, h in zip(gpus, handles):
        seen: Dict[int, Dict[str, Any]] = {}
        answered = False
        for kind, label in (("Compute", "compute"), ("Graphics", "graphics")):
            lst = _plist(lib, h, kind)
            if lst is None:
                continue
            answered = True
            for pid, used in lst:
                p = seen.get(pid)
                if p is None:
                    seen[pid] = {"pid": pid, "used": used, "type": [label]}
                elif label not in p["type"]:
                    p["type"].append(label)
        g["process_count"] = len(seen) if answered else None
        for pid in sorted(seen):
            p = seen[pid]
            a = _proc.attribute(pid)
            vis = a is not None
            out.append({
                "gpu": g["index"], "gpu_uuid": g["uuid"], "pid": pid, "visible": vis,
                "type": p["type"], "used_bytes": p["used"], "sm_pct": None, "mem_util_pct": None,
                "user": a["user"] if vis else None, "uid": a["uid"] if vis else None,
                "command": a["cmdline"] if vis else None, "comm": a["comm"] if vis else None,
                "ppid": a["ppid"] if vis else None, "pgid": a["pgid"] if vis else None,
                "ns_pid": a["ns_pid"] if vis else None,
                "start_time_ticks": a["start_time_ticks"] if vis else None,
                "container": None, "pod_uid": None, "slurm_job": None,
                "pod": None, "namespace": None, "container_name": None,
                "outside_allocator_bytes": None, "torch": None})
    return out


def snapshot(procs: bool = True, lib: Optional[ctypes.CDLL] = None) -> Dict[str, Any]:
    """One pass over every GPU NVML sees, as a dict shaped like `vramz
    status --json` with "source": "nvml".  Raises NvmlError when NVML
    cannot be loaded or initialised."""
    from . import __version__
    lib = lib or load()
    init = _fn(lib, "nvmlInit_v2", "nvmlInit")
    if init is None:
        raise NvmlError("NVML has no nvmlInit_v2")
    rc = init()
    if rc != SUCCESS:
        err = _fn(lib, "nvmlErrorString")
        msg = None
        if err is not None:
            err.restype = ctypes.c_char_p
            msg = err(rc)
        detail = msg.decode("utf-8", "replace") if msg else f"error {rc}"
        raise NvmlError(f"NVML could not be initialised: {detail}")
    try:
        now_ms = int(time.time() * 1000)
        doc: Dict[str, Any] = {
            "schema": 1, "vramz_version": __version__, "kind": "status",
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now_ms // 1000)) + f".{now_ms % 1000:03d}Z",
            "time_ms": now_ms,
            "system": {"backend": "nvml", "driver_version": None, "nvml_version": None,
                       "cuda_driver_version": None},
        }
        sysinfo = doc["system"]
        for key, name in (("driver_version", "nvmlSystemGetDriverVersion"),
                          ("nvml_version", "nvmlSystemGetNVMLVersion")):
            f = _fn(lib, name)
            buf = ctypes.create_string_buffer(80)
            if f is not None and f(buf, c_uint(80)) == SUCCESS:
                sysinfo[key] = _text(buf.raw)
        cuda = ctypes.c_int()
        f = _fn(lib, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion")
        if f is not None and f(ctypes.byref(cuda)) == SUCCESS and cuda.value > 0:
            sysinfo["cuda_driver_version"] = f"{cuda.value // 1000}.{cuda.value % 1000 // 10}"
        count = _uint(_fn(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"))
        if count is None:
            raise NvmlError("NVML could not count the GPUs")
        by_index = _fn(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")
        gpus, handles = [], []
        for i in range(min(count, 64)):
            h = ctypes.c_void_p()
            if by_index is None or by_index(c_uint(i), ctypes.byref(h)) != SUCCESS:
                continue
            gpus.append(_gpu(lib, i, h))
            handles.append(h)
        doc["gpus"] = gpus
        if procs:
            doc["processes"] = _procs(lib, gpus, handles)
            doc["ended"] = []
        else:
            for g in gpus:
                g["process_count"] = None
        return doc
    finally:
        shut = _fn(lib, "nvmlShutdown")
        if shut is not None:
            shut()

