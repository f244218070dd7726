# SPDX-License-Identifier: Apache-2.0
"""torch.cuda of the stub: state in _stub, a Stub (see the package doc)."""
import os
import threading
import traceback
import types

from . import memory  # noqa: F401
from .._errors import OutOfMemoryError  # noqa: F401

TOTAL_BYTES = 150754820096
# memory outside the allocator, as measured on an H100 (docs/DESIGN facts,
# issue 37): the CUDA context, one single-rank NCCL communicator
CONTEXT_BYTES = 610 << 20
COMM_BYTES = 564 << 20


class Stub:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self, devices=2):
        self.devices = devices
        self.initialized = False
        self.contexts = 0          # contexts the agent would have created
        self.stats_calls = 0
        self.history = None        # the kwargs of _record_memory_history
        self.snapshot_calls = 0
        self.oom_observers = []
        self.queued = []           # torch.cuda._lazy_call's, run at initialisation
        self.fraction = [None] * devices  # set_per_process_memory_fraction
        self.next_handle = 1
        self.live = {}             # handle -> (device, size, frames)
        self.dev = [dict(reserved=0, inactive_split=0, peak_alloc=0, peak_reserved=0,
                         retries=0, ooms=0, allocs_total=0, device_mallocs=0)
                    for _ in range(devices)]
        # outside the allocator, per device: the context (made at the first
        # allocation or memory query there, as CUDA's primary context is),
        # then libraries and NCCL's communicators (outside_add)
        self.context = [False] * devices
        self.outside = [0] * devices
        self.others_bytes = [0] * devices  # other processes on the device
        self.current = 0
        self.nvml_calls = 0

    # ---- what tests call -------------------------------------------------
    def _init(self):
        # as torch.cuda._lazy_init: the queued calls run before
        # is_initialized() turns true
        if not self.initialized:
            calls, self.queued = self.queued, []
            for fn in calls:
                fn()
            self.initialized = True

    def make_context(self, device):
        self._init()
        if not self.context[device]:
            self.context[device] = True
            self.outside[device] += CONTEXT_BYTES

    def outside_add(self, device, nbytes):
        """Memory outside the allocator appears on device (a library's
        kernels, a communicator): what NVML counts and the allocator not."""
        self.make_context(device)
        self.outside[device] += nbytes

    def process_bytes(self, device):
        """NVML's figure for this process on device: None while it holds
        no context there (not listed)."""
        if not self.context[device]:
            return None
        return self.outside[device] + self.dev[device]["reserved"]

    def nvml(self):
        """A stand-in for the agent's NVML reader (vramz/torch/_nvml.py)
        answering with process_bytes: tests set agent.outside.nvml to it."""
        stub = self

        class FakeNvml:
            def process_bytes(self, uuid, pid):
                stub.nvml_calls += 1
                i = int(uuid[4:12]) if uuid and uuid.startswith("GPU-") else None
                return None if i is None or pid != os.getpid() else stub.process_bytes(i)
        return FakeNvml()

    def limit(self, device):
        f = self.fraction[device]
        return TOTAL_BYTES if f is None else int(f * TOTAL_BYTES)

    def alloc(self, size, device=0, reserve=None, skip=1):
        """Allocates size bytes on device (initialising CUDA), reserving
        `reserve` more bytes from the driver (default: all of size).  The
        stack of the caller is recorded when history is on.  More than the
        allocator's limit (the device, or the process's fraction of it)
        raises OutOfMemoryError as PyTorch does."""
        self.make_context(device)
        need = size if reserve is None else reserve
        if self.dev[device]["reserved"] + need > self.limit(device):
            self.oom(device, size)
            raise OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {size / (1 << 20):.2f} MiB. GPU {device} "
                f"has a total capacity of {TOTAL_BYTES / (1 << 30):.2f} GiB")
        with self.lock:
            frames = None
            if self.history and self.history.get("enabled") not in (None, False):
                st = traceback.extract_stack()[:-skip]
                frames = [{"filename": f.filename, "line": f.lineno, "name": f.name}
                          for f in reversed(st)]
            h = self.next_handle
            self.next_handle += 1
            self.live[h] = (device, size, frames)
            d = self.dev[device]
            d["reserved"] += size if reserve is None else reserve
            d["allocs_total"] += 1
            d["device_mallocs"] += 1
            d["peak_reserved"] = max(d["peak_reserved"], d["reserved"])
            d["peak_alloc"] = max(d["peak_alloc"], self.allocated(device))
            return h

    def free(self, handle):
        with self.lock:
            del self.live[handle]

    def allocated(self, device):
        return sum(s for d, s, _ in self.live.values() if d == device)

    def oom(self, device, requested):
        """An allocation that failed: counts it and calls the observers, in
        this thread and without the allocator's lock, as PyTorch 2.x does
        (alloc() raises OutOfMemoryError after it)."""
        with self.lock:
            self.dev[device]["ooms"] += 1
            free = TOTAL_BYTES - sum(d["reserved"] for d in self.dev)
        for fn in list(self.oom_observers):
            fn(device, requested, self.limit(device), free)


_stub = Stub()


def is_initialized():
    return _stub.initialized


def init():
    _stub._init()


def _lazy_call(fn):
    if _stub.initialized:
        fn()
    else:
        _stub.queued.append(fn)


def set_per_process_memory_fraction(fraction, device=None):
    _stub.fraction[0 if device is None else int(device)] = float(fraction)


def is_available():
    return _stub.devices > 0


def device_count():
    return _stub.devices


def get_device_properties(i):
    return types.SimpleNamespace(name="NVIDIA H200 (stub)", uuid=f"0000000{i}-0000-4000-8000-00000000000{i}",
                                 total_memory=TOTAL_BYTES)


def memory_stats(device=None):
    i = 0 if device is None else int(device)
    with _stub.lock:
        _stub.stats_calls += 1
        if not _stub.initialized:
            _stub.contexts += 1  # the real call would initialise CUDA here
            _stub.initialized = True
        d = _stub.dev[i]
        alloc = _stub.allocated(i)
        n = sum(1 for dv, _, _ in _stub.live.values() if dv == i)
        return {
            "allocated_bytes.all.current": alloc,
            "allocated_bytes.all.peak": d["peak_alloc"],
            "reserved_bytes.all.current": d["reserved"],
            "reserved_bytes.all.peak": d["peak_reserved"],
            "active_bytes.all.current": alloc,
            "inactive_split_bytes.all.current": d["inactive_split"],
            "num_alloc_retries": d["retries"],
            "num_ooms": d["ooms"],
            "allocation.all.current": n,
            "allocation.all.allocated": d["allocs_total"],
            "num_device_alloc": d["device_mallocs"],
        }


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes.all.current"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.current"]


def mem_get_info(device=None):
    """The device's (free, total), all processes: creates the context on
    device as cudaMemGetInfo does."""
    i = _stub.current if device is None else int(getattr(device, "index", device))
    _stub.make_context(i)
    used = _stub.outside[i] + _stub.dev[i]["reserved"] + _stub.others_bytes[i]
    return TOTAL_BYTES - used, TOTAL_BYTES


def current_device():
    _stub._init()
    return _stub.current


def set_device(device):
    """As CUDA 12's cudaSetDevice: the primary context is made there."""
    _stub.current = int(getattr(device, "index", device))
    _stub.make_context(_stub.current)
