# SPDX-License-Identifier: Apache-2.0
"""Where the memory outside PyTorch's allocator appeared (issue 37): the
agent's `outside` records (docs/python.md).

NVML's figure for a process minus the allocator's reserved bytes is memory
the allocator never sees: the CUDA context, the CUDA libraries' kernels
and handles, NCCL's communicators.  vramz knows the total; this module
tells the parts, measured at the moments they appear:

- context: the first time the process is seen holding memory on a GPU
  (the agent's thread looks every FAST_S for a few seconds after CUDA's
  lazy initialisation, then at each tick), or just before a wrapped
  distributed call on a GPU that had no context yet;
- nccl: around torch.distributed's init_process_group, new_group and the
  first collective of each group (NCCL makes a group's communicator at
  its first collective unless a device_id bound it at init), each wrapped
  so that only the first call per group measures: a later call costs one
  set lookup.  destroy_process_group forgets the parts of what it ends;
- libraries: a later jump of the outside figure, seen at a tick, when a
  CUDA library (cuDNN, cuFFT, ...) was newly mapped since the last look;
  any other jump is recorded as "other", and what was never seen to
  appear stays in vramz's "other" (outside minus the known parts).

A figure is the process's own where NVML lists this pid (how=process,
_nvml.py), else, around a wrapped call only, the device's used memory
from torch.cuda.mem_get_info (how=device: other processes' moves in the
same instant would count too).  The allocator's reserved delta over the
same span is subtracted.  Nothing is measured on the training step's
path: the ticks run on the agent's thread, the wrappers measure once per
group, and a gloo group is never measured.
"""
import os
import re
import sys
import threading
import time

from . import _nvml

MIN_BYTES = 2 << 20     # NVML's granularity: a smaller move is noise
JUMP_BYTES = 32 << 20   # a jump at a tick worth a record
MAX_RECORDS = 64        # then records of the same part and GPU are merged
FAST_S = 0.02           # how often to look for the context after CUDA's init
FAST_FOR_S = 5.0
# a CUDA library whose mapping tells its first use (cuBLAS is mapped with
# torch itself, so its first use cannot be told this way: it is "other")
_CUDA_LIB = re.compile(r"/(lib(?:cudnn\w*|cufft\w*|cusparse\w*|cusolver\w*|curand\w*|"
                       r"nvrtc\w*|nvJitLink\w*|cublasLt?|nvToolsExt\w*))\.so")
# the collectives wrapped: name -> the position of their group argument
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
               "reduce_scatter_tensor", "broadcast", "reduce", "all_to_all",
               "all_to_all_single", "barrier", "send", "recv", "isend", "irecv",
               "gather", "scatter", "batch_isend_irecv", "all_gather_object",
               "broadcast_object_list")


def ranks_text(ranks):
    """[0,1,2,3,6] -> "0-3,6": a group's ranks as one token."""
    out, rs = [], sorted(set(int(r) for r in ranks))
    i = 0
    while i < len(rs):
        j = i
        while j + 1 < len(rs) and rs[j + 1] == rs[j] + 1:
            j += 1
        out.append(str(rs[i]) if i == j else f"{rs[i]}-{rs[j]}")
        i = j + 1
    text = ",".join(out)
    return text if len(text) <= 64 else text[:60] + "..."


def _device_index(d):
    """A device_id or a tensor's device as a CUDA index, or None."""
    if d is None:
        return None
    if isinstance(d, int):
        return d
    if getattr(d, "type", "cuda") != "cuda":
        return None
    i = getattr(d, "index", None)
    return i if isinstance(i, int) else None


def _tensor_device(args, kw):
    """The CUDA index of the first tensor among a collective's arguments."""
    for v in list(args) + list(kw.values()):
        if isinstance(v, (list, tuple)):
            v = v[0] if v else None
        dev = getattr(v, "device", None)
        if dev is not None and not isinstance(v, (int, str)):
            return _device_index(dev)
    return None


class Outside:
    def __init__(self, agent):
        self.agent = agent
        self.nvml = _nvml.Nvml()
        self.lock = threading.Lock()
        self.records = []
        self.accounted = {}      # cuda -> bytes recorded there
        self.context = set()     # cuda indices whose context is recorded
        self.measured = set()    # id() of groups whose first call measured
        self.groups = {}         # id(group) -> (comm serial, name)
        self.next_comm = 1       # 0 is the default group's
        self.world_name = None
        self.in_call = 0         # wrapped calls running: ticks keep off
        self.gen = 0             # bumped by every wrapped call
        self.libs = None         # CUDA libraries mapped at the last look
        self.installed = False
        self.fast_until = None
        self.originals = {}      # (module, name) -> the function we replaced

    # ---- figures ---------------------------------------------------------
    def _process(self, torch, dev):
        return self.nvml.process_bytes(self.agent._uuid(torch, dev), self.agent.pid)

    @staticmethod
    def _reserved(torch, dev):
        try:
            return int(torch.cuda.memory_reserved(dev))
        except Exception:
            return 0

    def _figure(self, torch, dev, device_ok):
        """(used bytes, how): the process's own, else (device_ok) the
        device's; (None, None) when neither can be read."""
        p = self._process(torch, dev)
        if p is not None:
            return p, "process"
        if device_ok:
            try:
                free, total = torch.cuda.mem_get_info(dev)
                return int(total) - int(free), "device"
            except Exception:
                pass
        return None, None

    # ---- records ---------------------------------------------------------
    def _add(self, torch, part, nbytes, how, dev, **extra):
        """A record (under the lock)."""
        if nbytes < MIN_BYTES:
            return
        rec = {"part": part, "bytes": int(nbytes), "how": how, "cuda": dev,
               "uuid": self.agent._uuid(torch, dev)}
        rec.update((k, v) for k, v in extra.items() if v is not None)
        rec["time_ms"] = int(time.time() * 1000)
        self.accounted[dev] = self.accounted.get(dev, 0) + rec["bytes"]
        if len(self.records) >= MAX_RECORDS:
            for r in self.records:  # merged into the first of its kind
                if r["part"] == part and r["cuda"] == dev:
                    r["bytes"] += rec["bytes"]
                    r["comms"] = r.get("comms", 1) + (part == "nccl")
                    return
        self.records.append(rec)
        self.agent._wake.set()

    def snapshot(self):
        with self.lock:
            return [dict(r) for r in self.records]

    def _new_libs(self):
        """The CUDA libraries mapped since the last look (the first look
        sets the baseline and returns none)."""
        try:
            with open("/proc/self/maps") as f:
                now = set(_CUDA_LIB.findall(f.read()))
        except OSError:
            return set()
        before, self.libs = self.libs, now
        return set() if before is None else now - before

    def _settle(self, torch, dev, used, how, at):
        """What appeared outside on dev since the last record, given its
        figure now (under the lock): the context the first time, later a
        jump (libraries when a CUDA library was newly mapped, else other)."""
        if how != "process":
            return  # the device's figure moves with other processes
        outside = used - self._reserved(torch, dev)
        gap = outside - self.accounted.get(dev, 0)
        if dev not in self.context:
            self.context.add(dev)
            self._new_libs()
            self._add(torch, "context", gap, how, dev, at=at)
        elif gap >= JUMP_BYTES:
            libs = self._new_libs()
            self._add(torch, "libraries" if libs else "other", gap, how, dev, at=at,
                      lib=",".join(sorted(libs))[:80] or None)

    # ---- the agent's thread ----------------------------------------------
    def on_cuda_init(self):
        """Inside CUDA's lazy initialisation: look for the context often
        for a while, as it appears at the first allocation."""
        self.fast_until = time.monotonic() + FAST_FOR_S
        self.agent._wake.set()

    def fast(self):
        return self.fast_until is not None and time.monotonic() < self.fast_until and \
            not self.context

    def tick(self, torch):
        """Each tick once CUDA is up: the process's own figure on each GPU
        (NVML only), settled while no wrapped call runs."""
        self.install()
        if self.in_call:
            return
        gen = self.gen
        for dev in range(torch.cuda.device_count()):
            used = self._process(torch, dev)
            if used is None:
                continue
            with self.lock:
                if self.in_call or self.gen != gen:
                    return
                self._settle(torch, dev, used, "process", "tick")

    # ---- the wrappers ----------------------------------------------------
    def install(self):
        """Wraps torch.distributed's functions once it is imported (never
        imports it): in torch.distributed and distributed_c10d, where
        torch's own callers (DeviceMesh) find them."""
        if self.installed:
            return
        dist = sys.modules.get("torch.distributed")
        if dist is None:
            return
        self.installed = True
        try:
            if not dist.is_available():
                return
        except Exception:
            return
        mods = [dist]
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        if c10d is not None:
            mods.append(c10d)
        wraps = {"init_process_group": self._wrap_init, "new_group": self._wrap_new_group,
                 "destroy_process_group": self._wrap_destroy}
        wraps.update((n, self._wrap_collective) for n in COLLECTIVES)
        done = {}
        for m in mods:
            for name, make in wraps.items():
                fn = getattr(m, name, None)
                if fn is None or getattr(fn, "_vramz_wrapped", False):
                    continue
                if id(fn) not in done:
                    done[id(fn)] = make(fn, name)
                self.originals[(m, name)] = fn
                setattr(m, name, done[id(fn)])

    def uninstall(self):
        for (m, name), fn in self.originals.items():
            setattr(m, name, fn)
        self.originals.clear()
        self.installed = False

    def _torch(self):
        torch = sys.modules.get("torch")
        return torch if torch is not None and hasattr(torch, "cuda") else None

    def _group_name(self, dist, group):
        try:
            backend = str(dist.get_backend(group))
        except Exception:
            backend = "?"
        try:
            if group is None:
                ranks = range(dist.get_world_size())
            else:
                ranks = dist.get_process_group_ranks(group)
            return f"{backend}:{ranks_text(ranks)}", backend
        except Exception:
            return f"{backend}:?", backend

    def _measure(self, call, dev, at, name_of):
        """Runs call() measuring the outside figure on dev around it;
        name_of(result) -> (comm serial, group name, backend) after it.
        Any failure of ours leaves the call's own result alone."""
        torch = self._torch()
        ok = torch is not None and dev is not None
        before = None
        if ok:
            try:
                with self.lock:
                    self.in_call += 1
                    self.gen += 1
                # the context NCCL is about to make on dev made now (CUDA
                # initialised with it), so the call's delta is its own:
                # the process holds that context either way
                if dev not in self.context:
                    torch.cuda.mem_get_info(dev)
                used, how = self._figure(torch, dev, True)
                if used is not None:
                    with self.lock:
                        self._settle(torch, dev, used, how, at)
                    before = (used, how, self._reserved(torch, dev))
            except Exception:
                before = None
        try:
            result = call()
        finally:
            if ok:
                try:
                    self._after(torch, dev, at, before, name_of)
                except Exception:
                    pass
                with self.lock:
                    self.in_call -= 1
                    self.gen += 1
        return result

    def _after(self, torch, dev, at, before, name_of):
        comm, name, backend = name_of()
        if before is None or "nccl" not in backend:
            return
        used, how = self._figure(torch, dev, before[1] == "device")
        if used is None or how != before[1]:
            return
        grown = (used - before[0]) - (self._reserved(torch, dev) - before[2])
        with self.lock:
            self._add(torch, "nccl", grown, how, dev, comm=comm, group=name, at=at)

    def _current(self):
        torch = self._torch()
        try:
            if torch is not None and torch.cuda.is_initialized():
                return torch.cuda.current_device()
        except Exception:
            pass
        return None

    def _wrap_init(self, fn, fname):
        def init_process_group(*args, **kw):
            dist = sys.modules.get("torch.distributed")
            backend = kw.get("backend", args[0] if args else None)
            if backend is not None and "nccl" not in str(backend).lower():
                return fn(*args, **kw)  # gloo, mpi: no GPU memory of theirs
            dev = _device_index(kw.get("device_id"))
            if dev is None:
                dev = self._current()

            def name_of():
                name, b = self._group_name(dist, None)
                self.world_name = name
                return 0, name, b
            return self._measure(lambda: fn(*args, **kw), dev, fname, name_of)
        init_process_group._vramz_wrapped = True
        init_process_group.__wrapped__ = fn
        return init_process_group

    def _wrap_new_group(self, fn, fname):
        def new_group(*args, **kw):
            dist = sys.modules.get("torch.distributed")
            dev = _device_index(kw.get("device_id")) if kw.get("device_id") is not None \
                else self._current()
            backend = kw.get("backend", args[2] if len(args) > 2 else None)
            try:
                backend = backend or dist.get_backend()
            except Exception:
                pass
            if "nccl" not in str(backend).lower():
                dev = None  # gloo: no GPU memory of its own to measure
            box = {}

            def call():
                box["g"] = fn(*args, **kw)
                return box["g"]

            def name_of():
                g = box.get("g")
                name, b = self._group_name(dist, g)
                with self.lock:
                    serial = self.next_comm
                    self.next_comm += 1
                    if g is not None:
                        self.groups[id(g)] = (serial, name)
                return serial, name, b
            if dev is None:
                g = call()
                name_of()
                return g
            return self._measure(call, dev, fname, name_of)
        new_group._vramz_wrapped = True
        new_group.__wrapped__ = fn
        return new_group

    def _wrap_collective(self, fn, fname):
        import inspect
        try:
            params = list(inspect.signature(fn).parameters)
            gpos = params.index("group") if "group" in params else None
        except (TypeError, ValueError):
            gpos = None
        measured = self.measured

        def collective(*args, **kw):
            if "group" in kw:
                g = kw["group"]
            else:
                g = args[gpos] if gpos is not None and len(args) > gpos else None
            if id(g) in measured:
                return fn(*args, **kw)
            return self._first_collective(fn, fname, g, args, kw)
        collective._vramz_wrapped = True
        collective.__wrapped__ = fn
        collective.__name__ = fname
        return collective

    def _first_collective(self, fn, fname, g, args, kw):
        dist = sys.modules.get("torch.distributed")
        self.measured.add(id(g))
        try:
            backend = str(dist.get_backend(g))
        except Exception:
            backend = ""
        if "nccl" not in backend:
            return fn(*args, **kw)
        dev = _tensor_device(args, kw)
        if dev is None:
            dev = self._current()

        def name_of():
            with self.lock:
                known = self.groups.get(id(g))
            if g is None:
                return 0, self.world_name or self._group_name(dist, None)[0], backend
            if known is None:
                name, _ = self._group_name(dist, g)
                with self.lock:
                    known = self.groups.setdefault(id(g), (self.next_comm, name))
                    if known[0] == self.next_comm:
                        self.next_comm += 1
            return known[0], known[1], backend
        return self._measure(lambda: fn(*args, **kw), dev, fname, name_of)

    def _wrap_destroy(self, fn, fname):
        def destroy_process_group(*args, **kw):
            g = kw.get("group", args[0] if args else None)
            result = fn(*args, **kw)
            with self.lock:
                if g is None:  # all groups end
                    gone = None
                    self.measured.clear()
                    self.groups.clear()
                else:
                    gone = self.groups.pop(id(g), (None,))[0]
                    self.measured.discard(id(g))
                keep = []
                for r in self.records:
                    if r["part"] == "nccl" and (gone is None or r.get("comm") == gone):
                        self.accounted[r["cuda"]] = self.accounted.get(r["cuda"], 0) - r["bytes"]
                    else:
                        keep.append(r)
                self.records = keep
            self.agent._wake.set()
            return result
        destroy_process_group._vramz_wrapped = True
        destroy_process_group.__wrapped__ = fn
        return destroy_process_group


def enabled():
    return os.environ.get("VRAMZ_TORCH_OUTSIDE", "1") != "0"
