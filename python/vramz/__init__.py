# SPDX-License-Identifier: Apache-2.0
"""vramz - what vramz knows about this machine's GPUs, from Python.

    import vramz
    doc = vramz.snapshot()      # the dict `vramz status --json` prints
    vramz.gpus()                # doc["gpus"]
    vramz.processes()           # doc["processes"]

snapshot() reads a live `vramz daemon`'s shared-memory segment when there
is one, else samples through libvramz (ctypes), else reads NVML itself
(ctypes, the NVIDIA driver's libnvidia-ml.so.1), else raises VramzError
naming what is missing and how to get it.  Standard library only.  The
PyTorch agent is vramz.torch.  See docs/python.md.
"""
from typing import List

from ._rundir import runtime_dir, runtime_dirs
from ._types import Gpu, Process, Snapshot

__all__ = ["snapshot", "gpus", "processes", "runtime_dir", "runtime_dirs", "VramzError",
           "Snapshot", "Gpu", "Process", "__version__"]
__version__ = "0.2.0"  # the tree's (CMakeLists.txt project VERSION)

# the one line VramzError ends with when no source works
HOW_TO = ("install the NVIDIA driver (libnvidia-ml.so.1) for the built-in NVML reader, "
          "or vramz (libvramz.so.0; or set VRAMZ_LIBRARY) for the whole document")


class VramzError(RuntimeError):
    """No source of vramz data could be used; the message says why."""


def snapshot(procs: bool = True, live: bool = False) -> Snapshot:
    """One snapshot of every GPU as a dict shaped like `vramz status
    --json` (docs/json.md).  From a live `vramz daemon`'s segment when one
    is fresh and covers every GPU (and publishes processes, with procs):
    "source": "daemon", "age_ms", "daemon_pid"; else sampled through
    libvramz: "source": "library"; else read from NVML directly, the
    cheap readings only (the rest None): "source": "nvml".  live=True, or
    VRAMZ_NO_DAEMON=1, skips the daemon.  Raises VramzError naming each
    source tried and why it could not be used, then how to get one."""
    from . import _segment, _clib, _nvml
    import os
    why = []
    off = os.environ.get("VRAMZ_NO_DAEMON", "")
    if live or (off and off != "0"):
        why.append("the daemon was not asked (" + ("live=True" if live else "VRAMZ_NO_DAEMON") + ")")
    else:
        dirs = runtime_dirs()
        for d in dirs:
            doc, reason = _segment.read(d, procs=procs)
            if doc is not None:
                return doc
            why.append(f"no live vramz daemon segment in {d} ({reason})")
        if not dirs:
            why.append("no runtime directory for a vramz daemon segment "
                       "(set VRAMZ_RUNTIME_DIR or XDG_RUNTIME_DIR)")
    try:
        doc = _clib.snapshot(procs=procs)
        doc["source"] = "library"
        return doc
    except _clib.LibError as e:
        why.append(str(e))
    try:
        doc = _nvml.snapshot(procs=procs)
        doc["source"] = "nvml"
        return doc
    except _nvml.NvmlError as e:
        why.append(str(e))
    raise VramzError("vramz: " + "; ".join(why) + "; " + HOW_TO) from None


def gpus() -> List[Gpu]:
    """The GPUs of a snapshot: a list of dicts, one per GPU."""
    return snapshot(procs=False)["gpus"]


def processes() -> List[Process]:
    """The processes holding GPU memory: a list of dicts, one per (GPU,
    process)."""
    return snapshot()["processes"]
