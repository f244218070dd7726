"""vramz - what vramz knows about this machine's GPUs, from Python.

    import vramz
    doc = vramz.snapshot()      # the dict `vramz status --json` prints
    vramz.gpus()                # doc["gpus"]
    vramz.processes()           # doc["processes"]

snapshot() reads a live `vramz daemon`'s shared-memory segment when there
is one, else samples through libvramz (ctypes), else raises VramzError
naming what is missing.  Standard library only.  The PyTorch agent is
vramz.torch.  See docs/python.md.
"""
from ._rundir import runtime_dir, runtime_dirs

__all__ = ["snapshot", "gpus", "processes", "runtime_dir", "runtime_dirs", "VramzError", "__version__"]
__version__ = "0.1.0"


class VramzError(RuntimeError):
    """No source of vramz data could be used; the message says why."""


def snapshot(procs=True):
    """One snapshot of every GPU as a dict shaped like `vramz status
    --json` (docs/json.md), plus "source": "daemon" or "library"."""
    from . import _segment, _clib
    why = []
    dirs = runtime_dirs()
    for d in dirs:
        doc, reason = _segment.read(d)
        if doc is not None:
            doc["source"] = "daemon"
            return doc
        why.append(f"no live vramz daemon segment in {d} ({reason})")
    if not dirs:
        why.append("no runtime directory for a vramz daemon segment")
    try:
        doc = _clib.snapshot(procs=procs)
    except _clib.LibError as e:
        why.append(str(e))
        raise VramzError("vramz: " + "; ".join(why)) from None
    doc["source"] = "library"
    return doc


def gpus():
    """The GPUs of a snapshot: a list of dicts, one per GPU."""
    return snapshot(procs=False)["gpus"]


def processes():
    """The processes holding GPU memory: a list of dicts, one per (GPU,
    process)."""
    return snapshot()["processes"]
