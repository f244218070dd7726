# SPDX-License-Identifier: Apache-2.0
"""vramz.torch - the vramz agent inside a PyTorch process.

    import vramz.torch
    vramz.torch.attach()                 # every second, in a daemon thread

or, without editing the script:

    python -m vramz.torch train.py ARGS...
    VRAMZ_TORCH=1 python train.py ARGS...   # through the package's .pth hook

Every interval the agent publishes, per CUDA device the process uses, the
caching allocator's figures (allocated, reserved, active, inactive split,
peaks, allocation retries, OOMs, allocations) into a small file in vramz's
runtime directory; `vramz ps`, `top`, `status --json`, `log --procs` and
`serve --procs` join them to NVML's view of the process.  With
history=True it also records the stack of each live allocation, so vramz
can name the lines where a leak grows.  The file format is in
docs/python.md.
"""
import os
import sys
from typing import Optional

from .._rundir import agent_dir as _agent_dir
from ._agent import Agent, _say

__all__ = ["attach", "detach", "agent", "Agent"]

_running = None


def attach(interval: float = 1.0, history: bool = False, runtime_dir: Optional[str] = None,
           quiet: bool = False) -> Optional[Agent]:
    """Starts the agent (once per process; a second call returns the
    running one).  Returns the Agent, or None when it cannot publish (the
    reason is printed once on stderr)."""
    global _running
    if _running is not None and _running.pid == os.getpid():
        return _running
    try:
        import torch  # noqa: F401  (only to say early that it is missing)
    except ImportError:
        if not quiet:
            _say("torch is not installed; publishing nothing")
        return None
    return _start(interval, history, runtime_dir, quiet)


def _start(interval, history, runtime_dir, quiet):
    global _running
    if _running is not None and _running.pid == os.getpid():
        return _running  # the .pth hook attached already
    import importlib.util
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        if not quiet:
            _say("torch is not installed; publishing nothing")
        return None
    d = runtime_dir or _agent_dir()
    if d is None:
        if not quiet:
            _say("no runtime directory (set XDG_RUNTIME_DIR or VRAMZ_RUNTIME_DIR); publishing nothing")
        return None
    a = Agent(d, interval=interval, history=history, quiet=quiet)
    try:
        a.start()
    except OSError as e:  # the runtime directory's rule names the path
        if not quiet:
            why = e.strerror if str(e.strerror).startswith(d) else f"{d}: {e.strerror}"
            _say(f"cannot publish in {why}; publishing nothing")
        return None
    _running = a
    return a


def detach() -> None:
    """Stops the agent and removes its files."""
    global _running
    if _running is not None:
        _running.stop()
        _running = None


def agent() -> Optional[Agent]:
    """The running Agent of this process, or None."""
    return _running if _running is not None and _running.pid == os.getpid() else None


def _forget_after_fork():
    global _running
    _running = None  # the thread is not in the child; its files are the parent's


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
