# SPDX-License-Identifier: Apache-2.0
"""The process's own GPU memory as NVML counts it, through ctypes: what the
agent measures the memory outside PyTorch's allocator with (_outside.py).

Optional and cheap: libnvidia-ml.so.1 is loaded, and nvmlInit_v2 called
(12-16 ms on an H200), only the first time a figure is asked, never on
import; each figure after is one process-list call on one GPU (10-80 us).
Nothing here touches CUDA, so asking never creates a context.  When NVML
is absent, refuses, or does not list this pid (a container's PID
namespace: NVML reports the host's pids), every answer is None and the
agent falls back to the device's figure (torch.cuda.mem_get_info).

VRAMZ_TORCH_NVML=0 turns it off (the device's figure is used).
"""
import ctypes
import os
import threading

NVML_SUCCESS = 0
NVML_ERROR_INSUFFICIENT_SIZE = 7
NOT_AVAILABLE = (1 << 64) - 1


class _ProcV2(ctypes.Structure):  # nvmlProcessInfo_t of _v2 and _v3
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class _ProcV1(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]


class Nvml:
    def __init__(self):
        self._lock = threading.Lock()
        self._lib = None
        self._tried = False
        self._handles = {}  # uuid -> handle
        self._list = None   # (function, struct) of the newest list call

    def _load(self):
        if self._tried:
            return self._lib
        self._tried = True
        if os.environ.get("VRAMZ_TORCH_NVML") == "0":
            return None
        for name in ("libnvidia-ml.so.1", "libnvidia-ml.so"):
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            return None
        try:
            if lib.nvmlInit_v2() != NVML_SUCCESS:
                return None
        except AttributeError:
            return None
        for fn, st in (("nvmlDeviceGetComputeRunningProcesses_v3", _ProcV2),
                       ("nvmlDeviceGetComputeRunningProcesses_v2", _ProcV2),
                       ("nvmlDeviceGetComputeRunningProcesses", _ProcV1)):
            f = getattr(lib, fn, None)
            if f is not None:
                self._list = (f, st)
                break
        if self._list is None:
            return None
        self._lib = lib
        return lib

    def _handle(self, lib, uuid):
        if uuid in self._handles:
            return self._handles[uuid]
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != NVML_SUCCESS:
            return None
        buf = ctypes.create_string_buffer(96)
        for i in range(count.value):
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) != NVML_SUCCESS:
                continue
            if lib.nvmlDeviceGetUUID(h, buf, 96) == NVML_SUCCESS:
                self._handles[buf.value.decode("ascii", "replace")] = h
        return self._handles.get(uuid)

    def process_bytes(self, uuid, pid):
        """What NVML says pid holds on the GPU of uuid ("GPU-..."), or None
        (no NVML, no such GPU, the pid not listed there)."""
        if not uuid:
            return None
        with self._lock:
            try:
                lib = self._load()
                if lib is None:
                    return None
                h = self._handle(lib, uuid)
                if h is None:
                    return None
                fn, st = self._list
                for _ in range(3):  # the list may grow between the two calls
                    n = ctypes.c_uint(0)
                    rc = fn(h, ctypes.byref(n), None)
                    if rc == NVML_SUCCESS and n.value == 0:
                        return None
                    arr = (st * (n.value + 4))()
                    n = ctypes.c_uint(len(arr))
                    rc = fn(h, ctypes.byref(n), arr)
                    if rc == NVML_ERROR_INSUFFICIENT_SIZE:
                        continue
                    if rc != NVML_SUCCESS:
                        return None
                    for p in arr[:n.value]:
                        if p.pid == pid:
                            v = p.usedGpuMemory
                            return None if v == NOT_AVAILABLE else int(v)
                    return None
            except (OSError, ValueError, ctypes.ArgumentError):
                return None
        return None
