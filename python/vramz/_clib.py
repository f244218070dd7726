# SPDX-License-Identifier: Apache-2.0
"""A snapshot through libvramz with ctypes: the structs of
include/vramz/vramz.h laid out here, and the dict `vramz status --json`
prints built from them (src/format/jsondoc.c is the model; a ctest compares the two).

Only the leading fields of each record are declared; the library hands
its arrays out at strides it states (0.2+: vramz_snapshot.gpu_size etc.,
with vramz_open_abi and no caller sizes), so records that grew in a newer
library still read right.  A 0.1 library has neither: its records are
these exact structs.
"""
import ctypes
import ctypes.util
import os
import sys
import time
from typing import Any, Dict, Optional

from ._fields import GPU_FIELDS, OUTSIDE_PARTS, TORCH_FIGURES
from ._gpufields import F_MEM, F_PROCS, GPU_SAMPLE_MEMBERS

c_uint, c_int, u32, u64, i64 = ctypes.c_uint, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64


class GpuInfo(ctypes.Structure):
    _fields_ = [("index", c_uint), ("valid", u32), ("name", ctypes.c_char * 96),
                ("uuid", ctypes.c_char * 96), ("pci_bus_id", ctypes.c_char * 32)]


class GpuInfo02(ctypes.Structure):
    # the whole 0.1 struct, then what 0.2 appended (vendor, backend)
    _fields_ = GpuInfo._fields_ + [
        ("serial", ctypes.c_char * 32), ("vbios", ctypes.c_char * 32), ("arch", ctypes.c_char * 16),
        ("mem_type", ctypes.c_char * 16), ("cc_major", c_uint), ("cc_minor", c_uint),
        ("mem_total_bytes", u64), ("bar1_total_bytes", u64), ("mem_bus_width_bits", c_uint),
        ("max_mem_clock_mhz", c_uint), ("max_sm_clock_mhz", c_uint), ("bandwidth_bytes_per_s", u64),
        ("pcie_max_gen", c_uint), ("pcie_max_width", c_uint), ("nvlink_count", c_uint),
        ("mig_current", c_uint), ("mig_pending", c_uint), ("ecc_current", c_uint),
        ("ecc_pending", c_uint), ("persistence", c_uint), ("power_default_limit_mw", c_uint),
        ("power_min_limit_mw", c_uint), ("power_max_limit_mw", c_uint), ("temp_shutdown_c", c_int),
        ("temp_slowdown_c", c_int), ("temp_mem_max_c", c_int), ("temp_gpu_max_c", c_int),
        ("vendor", ctypes.c_char * 16), ("backend", ctypes.c_char * 16)]


class SystemInfo(ctypes.Structure):
    # 0.2 nests nvml_version and cuda_driver_version in a struct at the
    # same offsets
    _fields_ = [("driver_version", ctypes.c_char * 80), ("nvml_version", ctypes.c_char * 80),
                ("cuda_driver_version", c_int), ("backend", ctypes.c_char * 16)]


class GpuSample(ctypes.Structure):
    """vramz_gpu_sample, member for member as lib/fields.c's table says
    (_gpufields.py is generated from it)."""
    _fields_ = [(m, {"I": c_uint, "i": c_int, "Q": u64}[fmt]) for m, fmt, _, _ in GPU_SAMPLE_MEMBERS]


class ProcSample(ctypes.Structure):
    _fields_ = [("gpu_index", c_uint), ("pid", u32), ("valid", u32), ("type", c_uint),
                ("used_bytes", u64), ("sm_pct", c_uint), ("mem_util_pct", c_uint),
                ("gi_id", c_uint), ("ci_id", c_uint), ("uid", u32), ("ppid", u32), ("pgid", u32),
                ("ns_pid", u32), ("start_time_ticks", u64), ("user", ctypes.c_char * 33),
                ("comm", ctypes.c_char * 16), ("cmdline", ctypes.c_char * 256),
                ("container", ctypes.c_char * 72), ("pod_uid", ctypes.c_char * 40),
                ("slurm_job", ctypes.c_char * 24),
                # 0.2: the PyTorch agent's figures (docs/python.md)
                ("torch_valid", u32), ("torch_allocated_bytes", u64), ("torch_reserved_bytes", u64),
                ("torch_active_bytes", u64), ("torch_inactive_split_bytes", u64),
                ("torch_peak_allocated_bytes", u64), ("torch_alloc_retries", u64),
                ("torch_ooms", u64), ("torch_allocations", u64), ("torch_time_ms", i64),
                ("outside_allocator_bytes", u64),
                # 0.2: Kubernetes names (docs/attribution.md, "Kubernetes names")
                ("pod", ctypes.c_char * 254), ("pod_namespace", ctypes.c_char * 64),
                ("container_name", ctypes.c_char * 64),
                # 0.2 (issue 37): its parts
                ("outside_context_bytes", u64), ("outside_libraries_bytes", u64),
                ("outside_nccl_bytes", u64), ("outside_other_bytes", u64),
                ("outside_nccl_comms", c_uint)]

# (JSON key under "torch", VRAMZ_T_* bit, member), from the one list
TORCH_FIELDS = tuple((k, bit, "torch_" + k) for k, bit, _ in TORCH_FIGURES)
T_HISTORY = 1 << 8


class MigSample(ctypes.Structure):
    _fields_ = [("parent_index", c_uint), ("mig_index", c_uint), ("gi_id", c_uint),
                ("ci_id", c_uint), ("valid", u32), ("uuid", ctypes.c_char * 96),
                ("mem_total_bytes", u64), ("mem_used_bytes", u64), ("mem_free_bytes", u64)]


class Snapshot(ctypes.Structure):
    _fields_ = [("time_ms", i64), ("mono_ns", i64), ("gpu_count", c_uint), ("gpus", ctypes.c_void_p),
                ("proc_count", c_uint), ("procs", ctypes.c_void_p), ("mig_count", c_uint),
                ("migs", ctypes.c_void_p)]


class Snapshot02(ctypes.Structure):
    _fields_ = Snapshot._fields_ + [("gpu_size", ctypes.c_size_t), ("proc_size", ctypes.c_size_t),
                                    ("mig_size", ctypes.c_size_t)]


P_USED, P_SM, P_MEMUTIL, P_VISIBLE, P_MIG, P_TORCH, P_OUTSIDE = 1, 2, 4, 8, 16, 32, 64
P_OUTSIDE_PARTS = 128
SAMPLE_DEFAULT = 1 | 2 | 8  # processes, their utilization, MIG
SAMPLE_HEALTH = 1 << 9      # VRAM health, as `vramz status` reads it


class LibError(RuntimeError):
    pass


def load(path: Optional[str] = None) -> ctypes.CDLL:
    """The library: VRAMZ_LIBRARY, else libvramz.so.0 on the loader's
    path, else where `cmake --install` puts it when ldconfig has not run
    (/usr/local/lib, /usr/local/lib64) or beside this Python (a venv's or
    conda's prefix).  Raises LibError saying what was tried."""
    path = path or os.environ.get("VRAMZ_LIBRARY")
    if path:
        names = [path]
    else:
        names = ["libvramz.so.0", ctypes.util.find_library("vramz")]
        for d in ("/usr/local/lib", "/usr/local/lib64", os.path.join(sys.prefix, "lib")):
            full = os.path.join(d, "libvramz.so.0")
            if os.path.exists(full):
                names.append(full)
    why = []
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n)
        except OSError as e:
            why.append(str(e))
    reasons = "; ".join(why) or "libvramz.so.0 not found"
    raise LibError(f"libvramz could not be loaded ({reasons})")


def _s(b):
    return b.decode("utf-8", "replace")


def _iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _array(base, i, size, cls):
    return cls.from_address(base + i * size)


def snapshot(procs: bool = True, lib: Optional[ctypes.CDLL] = None) -> Dict[str, Any]:
    """One sample of every GPU through the library, as a dict shaped like
    `vramz status --json`."""
    lib = lib or load()
    vp = ctypes.c_void_p
    lib.vramz_strerror.restype = ctypes.c_char_p
    lib.vramz_last_error.restype = ctypes.c_char_p
    lib.vramz_last_error.argtypes = [vp]
    lib.vramz_version.restype = ctypes.c_char_p
    lib.vramz_system.restype = ctypes.POINTER(SystemInfo)
    lib.vramz_system.argtypes = [vp]
    lib.vramz_gpu.argtypes = [vp, c_uint]
    lib.vramz_sample.argtypes = [vp, c_uint, ctypes.POINTER(vp)]
    lib.vramz_close.argtypes = [vp]
    ctx = vp()
    strided = hasattr(lib, "vramz_open_abi")
    lib.vramz_gpu.restype = ctypes.POINTER(GpuInfo02 if strided else GpuInfo)
    if strided:  # 0.2+: no caller sizes, so the library's own, which the snapshot states
        lib.vramz_open_abi.argtypes = [ctypes.POINTER(vp), vp, vp]
        rc = lib.vramz_open_abi(ctypes.byref(ctx), None, None)
    else:
        lib.vramz_open.argtypes = [ctypes.POINTER(vp), vp]
        rc = lib.vramz_open(ctypes.byref(ctx), None)
    try:
        if rc < 0:
            detail = lib.vramz_last_error(ctx) if ctx else b""
            raise LibError(_s(lib.vramz_strerror(rc)) + (": " + _s(detail) if detail else ""))
        out = vp()
        flags = (SAMPLE_DEFAULT if procs else 0) | SAMPLE_HEALTH
        rc = lib.vramz_sample(ctx, flags, ctypes.byref(out))
        if rc < 0 and not out:
            raise LibError("sampling failed: " + _s(lib.vramz_strerror(rc)))
        snap = (Snapshot02 if strided else Snapshot).from_address(out.value)
        sizes = ((snap.gpu_size or ctypes.sizeof(GpuSample), snap.proc_size or ctypes.sizeof(ProcSample),
                  snap.mig_size or ctypes.sizeof(MigSample)) if strided else
                 (ctypes.sizeof(GpuSample), ctypes.sizeof(ProcSample), ctypes.sizeof(MigSample)))
        return _document(lib, ctx, snap, sizes, procs)
    finally:
        if ctx:
            lib.vramz_close(ctx)


def _document(lib, ctx, snap, sizes, procs):
    si = lib.vramz_system(ctx).contents
    cuda = si.cuda_driver_version
    doc = {
        "schema": 1,
        "vramz_version": _s(lib.vramz_version()),
        "kind": "status",
        "time": _iso(snap.time_ms),
        "time_ms": snap.time_ms,
        "system": {
            "backend": _s(si.backend),
            "driver_version": _s(si.driver_version) or None,
            "nvml_version": _s(si.nvml_version) or None,
            "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}" if cuda else None,
        },
    }
    migs = [_array(snap.migs, i, sizes[2], MigSample) for i in range(snap.mig_count)]
    doc["gpus"] = [_gpu(lib, ctx, _array(snap.gpus, i, sizes[0], GpuSample), migs, sizes[0])
                   for i in range(snap.gpu_count)]
    if procs:
        has_torch = sizes[1] >= ProcSample.outside_allocator_bytes.offset + 8
        has_kube = sizes[1] >= ProcSample.container_name.offset + 64  # a library with the pod names
        if has_torch and sizes[1] >= ProcSample.outside_nccl_comms.offset + 4:
            has_torch = 2  # and the outside parts
        doc["processes"] = [_proc(lib, ctx, _array(snap.procs, i, sizes[1], ProcSample), has_torch, has_kube)
                            for i in range(snap.proc_count)]
        from . import _agentjoin
        doc["ended"] = _agentjoin.ended(doc["processes"])
    return doc


def _gpu(lib, ctx, g, migs, gpu_size=ctypes.sizeof(GpuSample)):
    """gpu_size: the library's record (its snapshot's gpu_size); a field
    appended after that library was built lies past it and is unknown."""
    gi = lib.vramz_gpu(ctx, g.index)
    gi = gi.contents if gi else None
    d = {"index": g.index,
         "uuid": (_s(gi.uuid) or None) if gi else None,
         "name": (_s(gi.name) or None) if gi else None,
         "pci_bus_id": (_s(gi.pci_bus_id) or None) if gi else None}
    if hasattr(gi, "vendor"):  # 0.2+
        d["vendor"] = _s(gi.vendor) or None
    d["lost"] = bool(g.lost)
    for name, bit, member in GPU_FIELDS:
        m = getattr(GpuSample, member)
        ok = not g.lost and (g.valid & bit) == bit and m.offset + m.size <= gpu_size
        d[name] = getattr(g, member) if ok else None
    memok = not g.lost and (g.valid & F_MEM) and g.mem_total_bytes
    d["mem_used_pct"] = float("%.1f" % (100.0 * g.mem_used_bytes / g.mem_total_bytes)) if memok else None
    d["process_count"] = g.proc_count if not g.lost and (g.valid & F_PROCS) else None
    if migs:
        d["mig"] = [{"mig_index": m.mig_index, "gpu_instance_id": m.gi_id,
                     "compute_instance_id": m.ci_id, "uuid": _s(m.uuid) or None,
                     "mem_total_bytes": m.mem_total_bytes if m.valid & F_MEM else None,
                     "mem_used_bytes": m.mem_used_bytes if m.valid & F_MEM else None,
                     "mem_free_bytes": m.mem_free_bytes if m.valid & F_MEM else None}
                    for m in migs if m.parent_index == g.index]
    return d


def _proc(lib, ctx, p, has_torch, has_kube=False):
    gi = lib.vramz_gpu(ctx, p.gpu_index)
    vis = bool(p.valid & P_VISIBLE)
    d = {"gpu": p.gpu_index,
         "gpu_uuid": (_s(gi.contents.uuid) or None) if gi else None,
         "pid": p.pid, "visible": vis,
         "type": [n for bit, n in ((1, "compute"), (2, "graphics"), (4, "mps")) if p.type & bit],
         "used_bytes": p.used_bytes if p.valid & P_USED else None,
         "sm_pct": p.sm_pct if p.valid & P_SM else None,
         "mem_util_pct": p.mem_util_pct if p.valid & P_MEMUTIL else None}
    if p.valid & P_MIG:
        d["gpu_instance_id"] = p.gi_id
        d["compute_instance_id"] = p.ci_id
    d.update({"user": _s(p.user) if vis else None,
              "uid": p.uid if vis else None,
              "command": _s(p.cmdline) if vis else None,
              "comm": _s(p.comm) if vis else None,
              "ppid": p.ppid if vis else None,
              "pgid": p.pgid if vis else None,
              "ns_pid": p.ns_pid if vis else None,
              "start_time_ticks": p.start_time_ticks if vis else None,
              "container": (_s(p.container) or None) if vis else None,
              "pod_uid": (_s(p.pod_uid) or None) if vis else None,
              "slurm_job": (_s(p.slurm_job) or None) if vis else None})
    if has_kube:
        d.update({"pod": (_s(p.pod) or None) if vis else None,
                  "namespace": (_s(p.pod_namespace) or None) if vis else None,
                  "container_name": (_s(p.container_name) or None) if vis else None})
    torch = has_torch and p.valid & P_TORCH
    d["outside_allocator_bytes"] = p.outside_allocator_bytes if has_torch and p.valid & P_OUTSIDE else None
    d["outside_parts"] = None
    if has_torch > 1 and p.valid & P_OUTSIDE_PARTS:
        d["outside_parts"] = {k: getattr(p, f"outside_{k}_bytes") for k in OUTSIDE_PARTS}
        d["outside_parts"]["nccl_communicators"] = p.outside_nccl_comms
    d["torch"] = None
    if torch:
        d["torch"] = {k: getattr(p, m) if p.torch_valid & bit else None for k, bit, m in TORCH_FIELDS}
        d["torch"]["history"] = bool(p.torch_valid & T_HISTORY)
        d["torch"]["time_ms"] = p.torch_time_ms or None
    return d
