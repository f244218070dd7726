# SPDX-License-Identifier: Apache-2.0
"""How a process with the agent ends, for its last record (the agent's
`end` record, docs/python.md "How the process ended").  A reader that
finds the process gone reads it from the file the agent leaves behind (a
tombstone), so "it died out of memory" is said only when it did, and a
job that caught its out-of-memory errors and exited normally is never
called dead of one.

- An uncaught exception: sys.excepthook (wrapped; the previous hook is
  still called) sees it in the dying thread before atexit, and the record
  is written at once.  At atexit, sys.last_value (which the interpreter
  sets before calling any excepthook) is the fallback when a later hook
  replaced ours.
- A normal exit: at atexit, with the status given to sys.exit (wrapped,
  main thread only) or seen by `python -m vramz.torch`; without either it
  is unknown (falling off the end exits 0, but nothing tells that apart
  from `raise SystemExit(3)` here).
- SIGTERM, when nothing handles it: Python's faulthandler is registered
  for it with the agent's .sig file, so its C handler writes the stacks
  there and then lets the default action kill the process as it would
  have.  No Python-level handler is installed: one would run only when
  the main thread returns to the interpreter, and a job stuck in a
  collective would no longer die of its scheduler's SIGTERM.  A forked
  child unregisters it (it must not write into its parent's file).
- os._exit and SIGKILL leave no record: the reader then knows only that
  the process is gone.
"""
import faulthandler
import os
import signal
import sys
import threading
import time

from . import _sites

_state = {"agent": None, "excepthook": None, "exit": None, "sig_fd": None}


def exception_name(t):
    mod = getattr(t, "__module__", "") or ""
    name = getattr(t, "__qualname__", None) or getattr(t, "__name__", "?")
    return name if mod in ("builtins", "") else f"{mod}.{name}"


def _oom_types():
    torch = sys.modules.get("torch")
    out = []
    for owner in (torch, getattr(torch, "cuda", None)):
        t = getattr(owner, "OutOfMemoryError", None)
        if isinstance(t, type):
            out.append(t)
    return tuple(out)


def is_oom(exc):
    """exc is a PyTorch out-of-memory error, or was raised while handling
    one or because of one (a chain of at most 8)."""
    types = _oom_types()
    seen = 0
    while exc is not None and seen < 8:
        if (types and isinstance(exc, types)) or type(exc).__name__ == "OutOfMemoryError":
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def exception_record(t, v, tb, torch_dir):
    """The end record of an uncaught exception."""
    rec = {"time_ms": int(time.time() * 1000), "how": "exception",
           "exception": exception_name(t), "oom": int(is_oom(v))}
    if not issubclass(t, KeyboardInterrupt):
        rec["status"] = 1  # the interpreter's status for an uncaught exception
    site = _sites.tb_site(tb, torch_dir)
    if site:
        rec["line"], rec["func"], rec["file"] = site[1], site[2], site[0]
    return rec


def exit_record(status):
    """The end record of a normal exit; status None: unknown."""
    rec = {"time_ms": int(time.time() * 1000), "how": "exit"}
    if status is not None:
        rec["status"] = status
    return rec


def status_of(code):
    """What the process's exit status is for sys.exit(code), as the
    interpreter maps it: None 0, an int its low byte, anything else 1."""
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    return 1


def at_exit_record(noted_status, torch_dir):
    """At atexit: an uncaught exception the interpreter printed (our hook
    replaced or not), else a normal exit."""
    v = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    if v is not None and not hasattr(sys, "ps1"):  # ps1: interactive, errors are not deaths
        return exception_record(type(v), v, v.__traceback__, torch_dir)
    return exit_record(noted_status)


# ---- the hooks ------------------------------------------------------------

def _excepthook(t, v, tb):
    a = _state["agent"]
    try:
        if a is not None:
            a.end_exception(t, v, tb)
    except Exception:  # the previous hook must run whatever happened here
        pass
    prev = _state["excepthook"] or sys.__excepthook__
    prev(t, v, tb)


def _exit(status=None):
    a = _state["agent"]
    if a is not None and threading.current_thread() is threading.main_thread():
        a.note_exit(status)
    return _state["exit"](status)


def install(agent, sig_fd):
    """Hooks the process's end for agent; sig_fd: its .sig file, or None."""
    _state["agent"] = agent
    if sys.excepthook is not _excepthook:
        _state["excepthook"] = sys.excepthook
        sys.excepthook = _excepthook
    if sys.exit is not _exit:
        _state["exit"] = sys.exit
        sys.exit = _exit
    if sig_fd is not None and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        try:
            faulthandler.register(signal.SIGTERM, file=sig_fd, all_threads=True, chain=True)
            _state["sig_fd"] = sig_fd
        except (RuntimeError, ValueError, OSError):
            pass
    return _state["sig_fd"] is not None


def uninstall(agent):
    """Undoes install() (detach), leaving hooks others put on top."""
    if _state["agent"] is not agent:
        return
    _state["agent"] = None
    if sys.excepthook is _excepthook:
        sys.excepthook = _state["excepthook"] or sys.__excepthook__
    if sys.exit is _exit and _state["exit"] is not None:
        sys.exit = _state["exit"]
    if _state["sig_fd"] is not None:
        try:
            faulthandler.unregister(signal.SIGTERM)
        except (RuntimeError, ValueError):
            pass
        _state["sig_fd"] = None


def _after_fork_in_child():
    # the child is another process: its SIGTERM is not the parent's end
    if _state["sig_fd"] is not None:
        try:
            faulthandler.unregister(signal.SIGTERM)
        except (RuntimeError, ValueError):
            pass
        try:
            os.close(_state["sig_fd"])
        except OSError:
            pass
        _state["sig_fd"] = None
    _state["agent"] = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
