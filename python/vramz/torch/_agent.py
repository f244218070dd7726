# SPDX-License-Identifier: Apache-2.0
"""The agent thread inside a PyTorch process (see __init__.py for the API).

Each interval it reads torch.cuda.memory_stats() of every CUDA device the
allocator has used and rewrites one small file in the runtime directory
(vramz.agentfile).  Rules it keeps, because it runs inside someone's
training job:

- it never initialises CUDA: nothing is read until
  torch.cuda.is_initialized() (memory_stats on a device the process has not
  touched would create a context of ~500 MiB);
- it never allocates GPU memory and never imports torch on its own thread;
- torch absent or CPU-only: it publishes nothing and says why, once;
- memory._snapshot() (up to a second with a long history) runs only when
  vramz asks for leak sites, at most every MIN_SITES_INTERVAL_S;
- a forked child does not inherit it (its thread does not exist there) and
  never removes the parent's files;
- the runtime directory is opened once, under the rule readers apply
  (vramz._rundir.open_dir: not a link, ours or root's, writable by nobody
  else unless sticky), and every file is made, renamed, read and removed
  relative to that descriptor; its sweep removes only dead agents' files
  of ours (agentfile.sweep), and something planted at its temporary name
  is refused at once and said once.
"""
import atexit
import os
import sys
import threading
import time

from .. import agentfile
from .. import _proc
from .. import _rundir
from . import _sites

MIN_SITES_INTERVAL_S = 10.0
SITES_LIMIT = 20


def _say(msg):
    try:
        sys.stderr.write(f"vramz.torch: {msg}\n")
        sys.stderr.flush()
    except Exception:  # a closed stderr must not break the job
        pass


class Agent:
    def __init__(self, directory, interval=1.0, history=False, quiet=False):
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.directory = directory
        self.interval = float(interval)
        self.history = bool(history)
        self.quiet = quiet
        self.pid = os.getpid()
        self.start_ticks = _proc.start_time_ticks()
        self.name = agentfile.base_name(self.pid, self.start_ticks)
        self.path = os.path.join(directory, self.name)
        self.req_path = self.path + ".req"
        self.sites_path = self.path + ".sites"
        self.dir_fd = None  # the runtime directory, opened by start()
        self.shared = False  # sticky and writable by others: only our files
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._said = set()
        self._thread = None
        self._published = False
        self._history_on = False
        self._oom_observer = False
        self._last_oom = None
        self._uuids = {}
        self._prev_sites = None
        self._prev_sites_ms = None
        self._last_sites_t = None
        self.seq = 0
        self.tick_s = 0.0  # time spent in ticks, for the cost figures

    # ---- life cycle --------------------------------------------------------
    def start(self):
        """Opens (makes) the runtime directory and starts the thread.
        Raises OSError (_rundir.Untrusted: the directory fails the rule)."""
        # root's directory is /run/vramz, shared with the daemon's readers
        mode = 0o755 if os.geteuid() == 0 else 0o700
        self.dir_fd, self.shared = _rundir.open_dir(self.directory, mode, make_parents=True)
        self._sweep_stale()
        self._thread = threading.Thread(target=self._run, name="vramz-torch", daemon=True)
        self._thread.start()
        atexit.register(self.stop)

    def _sweep_stale(self):
        """Removes this user's files left by agents that died without
        cleaning up (kill -9, SIGTERM with no handler): readers ignore
        them anyway, but they should not pile up."""
        try:
            agentfile.sweep(self.dir_fd, _proc.alive)
        except OSError:
            pass

    def _dir(self):
        """The directory's descriptor; opened again (not made) when the
        one held was deleted, as a login's runtime directory is, so a
        directory made again is published in, as by path before (and
        opened the first time when ticked without start())."""
        if self.dir_fd is not None:
            try:
                if os.fstat(self.dir_fd).st_nlink > 0:
                    return self.dir_fd
            except OSError:
                pass
        fd, shared = _rundir.open_dir(self.directory)
        if self.dir_fd is not None:
            os.close(self.dir_fd)
        self.dir_fd, self.shared = fd, shared
        return fd

    def _unlink(self, name):
        """Removes a file of ours; in a shared (sticky) directory only one
        owned by us."""
        try:
            if not self.shared or _rundir.own_file(self.dir_fd, name) is not None:
                os.unlink(name, dir_fd=self.dir_fd)
        except OSError:
            pass

    def stop(self):
        """Stops the thread and removes the files (only in the process that
        started it)."""
        self._stop.set()
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread() and os.getpid() == self.pid:
            t.join(timeout=2 * self.interval + 1)
        if os.getpid() == self.pid and self._history_on:
            self._history_on = False
            torch = sys.modules.get("torch")
            try:  # recording costs per allocation: stop it with the agent
                torch.cuda.memory._record_memory_history(enabled=None)
            except Exception:
                pass
        if os.getpid() == self.pid and self.dir_fd is not None:
            for n in (self.name, self.name + ".sites", self.name + ".req"):
                self._unlink(n)
            if t is None or not t.is_alive():  # a thread still in a tick keeps using it
                os.close(self.dir_fd)
                self.dir_fd = None

    def say_once(self, key, msg):
        if key not in self._said:
            self._said.add(key)
            if not self.quiet:
                _say(msg)

    def _run(self):
        while not self._stop.is_set():
            t0 = time.perf_counter()
            try:
                self.tick()
            except _rundir.Untrusted as e:  # a planted temporary name, a directory gone bad
                self.say_once("untrusted", f"not publishing: {e}; trying again each interval")
            except Exception as e:  # keep the job alive whatever torch does
                self.say_once("tick-" + type(e).__name__,
                              f"publishing failed ({type(e).__name__}: {e}); will keep trying")
            self.tick_s += time.perf_counter() - t0
            self._wake.wait(self.interval)
            self._wake.clear()

    # ---- one tick ---------------------------------------------------------
    def _torch(self):
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "cuda"):
            return None  # not imported (yet): the VRAMZ_TORCH=1 hook waits for it
        version = getattr(torch, "version", None)
        if getattr(version, "cuda", None) is None and getattr(version, "hip", None) is None:
            self.say_once("cpu", "this torch is CPU-only; publishing nothing")
            return None
        return torch

    def tick(self):
        torch = self._torch()
        if torch is None or not torch.cuda.is_initialized():
            return
        self.seq += 1
        if not self._oom_observer:
            self._oom_observer = True
            self._attach_oom_observer(torch)
        if self.history and not self._history_on:
            self._history_on = True
            self._enable_history(torch)
        devices = self._devices(torch)
        process = {
            "pid": self.pid,
            "start_time_ticks": self.start_ticks,
            "uid": os.geteuid(),
            "time_ms": int(time.time() * 1000),
            "interval_ms": int(self.interval * 1000),
            "seq": self.seq,
            "history": int(self._history_on),
            "torch": getattr(torch, "__version__", None),
        }
        agentfile.write_atomic(self._dir(), self.name,
                               agentfile.format_figures(process, devices, self._last_oom),
                               where=self.directory)
        self._published = True
        try:
            os.stat(self.name + ".req", dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError:
            return
        self._answer_sites(torch, process)

    def _uuid(self, torch, i):
        if i not in self._uuids:
            uuid = None
            try:
                u = str(torch.cuda.get_device_properties(i).uuid)
                uuid = u if u.startswith(("GPU-", "MIG-")) else "GPU-" + u
            except Exception:
                pass
            self._uuids[i] = uuid
        return self._uuids[i]

    def _devices(self, torch):
        out = []
        for i in range(torch.cuda.device_count()):
            st = torch.cuda.memory_stats(i)
            if not st or not (st.get("reserved_bytes.all.peak") or st.get("allocation.all.allocated")):
                continue  # the allocator never used this device
            d = {"cuda": i, "uuid": self._uuid(torch, i)}
            for key, skey in agentfile.DEVICE_STATS:
                if skey in st:
                    d[key] = int(st[skey])
            out.append(d)
        return out

    def _attach_oom_observer(self, torch):
        attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
        if attach is None:
            return

        def observer(device, alloc, device_allocated, device_free):
            self._last_oom = {"time_ms": int(time.time() * 1000), "cuda": device,
                              "requested_bytes": alloc, "device_allocated_bytes": device_allocated,
                              "device_free_bytes": device_free}
            self._wake.set()  # publish now: the process may be about to die
        try:
            attach(observer)
        except Exception as e:
            self.say_once("oom-observer", f"cannot watch for out-of-memory errors: {e}")

    def _enable_history(self, torch):
        rec = getattr(torch.cuda.memory, "_record_memory_history", None)
        if rec is None:
            self.say_once("history", "this torch cannot record allocation stacks; no leak sites")
            self._history_on = False
            return
        try:
            # "state": stacks of the live blocks only, no trace of events,
            # so memory is bounded by the live allocations and _snapshot()
            # stays fast
            rec(enabled="state", context="alloc", stacks="python")
        except TypeError:
            rec(True)  # torch < 2.1

    def _answer_sites(self, torch, process):
        now_t = time.monotonic()
        if self._last_sites_t is not None and now_t - self._last_sites_t < MIN_SITES_INTERVAL_S:
            return  # the request stays; answered on a later tick
        self._last_sites_t = now_t
        self._unlink(self.name + ".req")
        proc = dict(process)
        if not self._history_on:
            text = agentfile.format_sites(proc, [], error="attach(history=True) to record allocation sites")
        else:
            snap = torch.cuda.memory._snapshot()
            torch_dir = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "")
            now = _sites.group(snap, torch_dir)
            if self._prev_sites_ms is not None:
                proc["since_ms"] = self._prev_sites_ms
            rows = _sites.answer(now, self._prev_sites, self._uuids, SITES_LIMIT)
            if self._prev_sites is not None:
                proc["growth_bytes"] = _sites.total_growth(now, self._prev_sites)
            self._prev_sites, self._prev_sites_ms = now, process["time_ms"]
            total = sum(v[0] for v in now.values())
            proc["live_bytes"] = total
            text = agentfile.format_sites(proc, rows)
        agentfile.write_atomic(self.dir_fd, self.name + ".sites", text, 0o600,
                               where=self.directory)
