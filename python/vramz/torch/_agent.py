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
- at an out-of-memory error (the allocator's observer, called in the
  allocating thread) it keeps the first user frame of the failing call,
  the bytes asked, the allocator's limit and figures and the GPU's free
  memory; with history, the largest live allocation sites then (at most
  one snapshot every MIN_SITES_INTERVAL_S);
- at the process's end it writes how it ended (_end.py) as the last
  record and leaves the figures file as a tombstone, which sweeps remove
  TOMBSTONE_KEEP_S later (detach() removes its files instead);
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
from . import _end
from . import _outside
from . import _sites

MIN_SITES_INTERVAL_S = 10.0
SITES_LIMIT = 20
HOLDERS_LIMIT = 3


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
        self.sig_path = self.path + ".sig"
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
        self._oom_holders = []
        self._holders_t = None
        self._end = None            # the end record, once known
        self._exit_status = None    # what sys.exit was given (where Python knows it)
        self._last_devices = []
        self._write_lock = threading.Lock()  # the thread, an excepthook and atexit all write
        self._sig_fd = None
        self._torch_dir_s = None
        self._stopped = False
        self._observer_lock = threading.Lock()
        self._oom_queued = False
        self._uuids = {}
        self._prev_sites = None
        self._prev_sites_ms = None
        self._last_sites_t = None
        self.seq = 0
        self.tick_s = 0.0  # time spent in ticks, for the cost figures
        # where the memory outside the allocator appeared (issue 37)
        self.outside = _outside.Outside(self) if _outside.enabled() else None

    # ---- life cycle --------------------------------------------------------
    def start(self):
        """Opens (makes) the runtime directory and starts the thread.
        Raises OSError (_rundir.Untrusted: the directory fails the rule)."""
        # root's directory is /run/vramz, shared with the daemon's readers
        mode = 0o755 if os.geteuid() == 0 else 0o700
        self.dir_fd, self.shared = _rundir.open_dir(self.directory, mode, make_parents=True)
        self._sweep_stale()
        self._watch_end()
        if self.outside is not None:
            self.outside.install()
        self._thread = threading.Thread(target=self._run, name="vramz-torch", daemon=True)
        self._thread.start()
        atexit.register(self._at_exit)

    def _watch_end(self):
        """The .sig file faulthandler writes into at a SIGTERM, and the
        hooks that tell how the process ends (_end.py)."""
        try:
            fd = _rundir.create_tmp(self.dir_fd, self.name + ".sig", 0o644, self.directory)
            os.fchmod(fd, 0o644)
            self._sig_fd = fd
        except OSError:
            self._sig_fd = None  # something planted there: no SIGTERM record
        if not _end.install(self, self._sig_fd) and self._sig_fd is not None:
            os.close(self._sig_fd)  # SIGTERM has a handler of someone's: theirs decides
            self._sig_fd = None
            self._unlink(self.name + ".sig")

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

    def stop(self, tombstone=False):
        """Stops the thread and removes the files (only in the process that
        started it); with tombstone, the figures file is written a last
        time, with the end record, and stays."""
        if os.getpid() == self.pid:
            if self._stopped:
                return
            self._stopped = True
            try:
                atexit.unregister(self._at_exit)
            except Exception:
                pass
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
        if os.getpid() == self.pid:
            _end.uninstall(self)
            if self.outside is not None:
                self.outside.uninstall()
            if self._sig_fd is not None:
                os.close(self._sig_fd)
                self._sig_fd = None
        wrote = False
        if os.getpid() == self.pid and tombstone:
            try:
                wrote = self._final_write()
            except Exception:  # the last write failed: readers keep the one before
                wrote = self._published
        if os.getpid() == self.pid and self.dir_fd is not None:
            names = [".sites", ".req", ".sig"] + ([] if wrote else [""])
            for n in names:
                self._unlink(self.name + n)
            if t is None or not t.is_alive():  # a thread still in a tick keeps using it
                os.close(self.dir_fd)
                self.dir_fd = None

    # ---- the end of the process ------------------------------------------
    def _torch_dir(self):
        if self._torch_dir_s is None:
            torch = sys.modules.get("torch")
            f = getattr(torch, "__file__", None)
            self._torch_dir_s = os.path.join(os.path.dirname(os.path.abspath(f)), "") if f else ""
        return self._torch_dir_s

    def note_exit(self, code):
        """sys.exit(code) in the main thread (or the -m runner saw it)."""
        if os.getpid() == self.pid:
            self._exit_status = _end.status_of(code)

    def end_exception(self, t, v, tb):
        """An uncaught exception is ending the process (the excepthook):
        written now, as the process may never reach atexit."""
        if os.getpid() != self.pid or self._end is not None:
            return
        self._end = _end.exception_record(t, v, tb, self._torch_dir())
        self._final_write()

    def _at_exit(self):
        if os.getpid() != self.pid:
            return
        if self._end is None:
            self._end = _end.at_exit_record(self._exit_status, self._torch_dir())
        self.stop(tombstone=True)

    def _final_write(self):
        """The figures with the end record, when the process used CUDA
        (an OOM at its first allocation too, before any tick published):
        True when written."""
        torch = self._torch()
        if torch is None or not (self._published or torch.cuda.is_initialized()):
            return False
        self._publish(torch, final=True)
        return True

    def say_once(self, key, msg):
        if key not in self._said:
            self._said.add(key)
            if not self.quiet:
                _say(msg)

    def _run(self):
        while not self._stop.is_set():
            t0 = time.perf_counter()
            if self.outside is not None and self.outside.fast():
                # just after CUDA's initialisation: the context is measured
                # as soon as it appears, before libraries add to it
                try:
                    torch = self._torch()
                    if torch is not None and torch.cuda.is_initialized():
                        self.outside.tick(torch)
                except Exception:
                    pass
                self.tick_s += time.perf_counter() - t0
                self._wake.wait(_outside.FAST_S)
                self._wake.clear()
                continue
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
        if torch is None:
            return
        if not self._oom_observer:
            self._watch_oom(torch)
        if not torch.cuda.is_initialized():
            return
        if self.history and not self._history_on:
            self._history_on = True
            self._enable_history(torch)
        if self.outside is not None:
            try:
                self.outside.tick(torch)
            except Exception as e:
                self.say_once("outside", f"cannot measure the memory outside the allocator: {e}")
        process = self._publish(torch)
        try:
            os.stat(self.name + ".req", dir_fd=self.dir_fd, follow_symlinks=False)
        except OSError:
            return
        self._answer_sites(torch, process)

    def _publish(self, torch, final=False):
        """Writes the figures file (with the end record once there is one);
        the process record written.  At the end (final) the figures of the
        last tick stand in for ones that cannot be read any more."""
        with self._write_lock:
            self.seq += 1
            try:
                devices = self._devices(torch)
                self._last_devices = devices
            except Exception:
                if not final:
                    raise
                devices = self._last_devices
            process = {
                "pid": self.pid,
                "start_time_ticks": self.start_ticks,
                "uid": os.geteuid(),
                "time_ms": int(time.time() * 1000),
                "interval_ms": int(self.interval * 1000),
                "seq": self.seq,
                "history": int(self._history_on),
                "torch": getattr(torch, "__version__", None),
                "outside": 1 if self.outside is not None else None,
            }
            outside = self.outside.snapshot() if self.outside is not None else ()
            text = agentfile.format_figures(process, devices, self._last_oom, self._oom_holders,
                                            self._end, outside)
            agentfile.write_atomic(self._dir(), self.name, text, where=self.directory)
            self._published = True
            return process

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

    def _watch_oom(self, torch):
        """Attaches the out-of-memory observer once CUDA is up.  Attached
        before, it would reach no device's allocator; so before, it is
        queued to run inside CUDA's lazy initialisation (torch.cuda.
        _lazy_call), ahead of the first allocation, which may be the one
        that does not fit; each tick checks it ran.  With history, stack
        recording starts there too (_on_cuda_init)."""
        if torch.cuda.is_initialized():
            self._attach_once(torch)
            return
        lazy = getattr(torch.cuda, "_lazy_call", None)
        if lazy is not None and not self._oom_queued:
            self._oom_queued = True
            try:
                # runs while is_initialized() is still False, and an
                # exception there would break the program's first CUDA call
                lazy(lambda: self._on_cuda_init(torch))
            except Exception:
                pass

    def _on_cuda_init(self, torch):
        """Inside CUDA's lazy initialisation, before the first allocation:
        the out-of-memory observer, and with history the recording of
        allocation stacks, so what a job allocates first (its model, its
        data: what holds the memory at an OOM) has its site too; turned on
        at the next tick it would miss them."""
        self._attach_once(torch)
        if self.outside is not None:
            self.outside.install()
            self.outside.on_cuda_init()
        if self.history and not self._history_on:
            self._history_on = True
            try:
                self._enable_history(torch)
            except Exception:
                self._history_on = False  # the next tick tries again

    def _attach_once(self, torch):
        try:
            with self._observer_lock:
                if not self._oom_observer:
                    self._oom_observer = True
                    self._attach_oom_observer(torch)
        except Exception:
            pass

    def _attach_oom_observer(self, torch):
        attach = getattr(getattr(torch, "_C", None), "_cuda_attach_out_of_memory_observer", None)
        if attach is None:
            return

        def observer(device, alloc, limit, device_free):
            # torch names the third argument device_allocated, but passes the
            # allocator's limit: set_per_process_memory_fraction's cap, else
            # the device's total
            try:
                self._last_oom, self._oom_holders = self._oom_seen(
                    torch, device, alloc, limit, device_free, sys._getframe(1))
            except Exception as e:  # never in the way of torch's own error
                self.say_once("oom-record", f"cannot record an out-of-memory error: {e}")
            self._wake.set()  # publish now: the process may be about to die
        try:
            attach(observer)
        except Exception as e:
            self.say_once("oom-observer", f"cannot watch for out-of-memory errors: {e}")

    def _oom_seen(self, torch, device, alloc, limit, device_free, frame):
        """The oom record (and the holders) of an out-of-memory error, in
        the allocating thread: the Python frames of the failing call are
        frame's callers."""
        oom = {"time_ms": int(time.time() * 1000), "cuda": device, "requested_bytes": alloc,
               "limit_bytes": limit, "device_free_bytes": device_free}
        st = torch.cuda.memory_stats(device)
        for key, skey in (("allocated_bytes", "allocated_bytes.all.current"),
                          ("reserved_bytes", "reserved_bytes.all.current"), ("ooms", "num_ooms")):
            if skey in st:
                oom[key] = int(st[skey])
        site = _sites.frame_site(frame, self._torch_dir())
        if site:
            oom["line"], oom["func"], oom["file"] = site[1], site[2], site[0]
        holders = self._oom_holders
        now_t = time.monotonic()
        if self._history_on and (self._holders_t is None
                                 or now_t - self._holders_t >= MIN_SITES_INTERVAL_S):
            # a snapshot can take a second with a long history: at most one
            # every MIN_SITES_INTERVAL_S, however many OOMs a probe raises
            self._holders_t = now_t
            snap = torch.cuda.memory._snapshot()
            holders = _sites.holders(snap, self._torch_dir(), device, self._uuids, HOLDERS_LIMIT)
            for h in holders:
                h["time_ms"] = oom["time_ms"]
        return oom, holders

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
            now = _sites.group(snap, self._torch_dir())
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
