# SPDX-License-Identifier: Apache-2.0
"""Leak sites: torch.cuda.memory._snapshot()'s live blocks grouped by the
Python line that allocated them, and the growth of each group since the
previous answer.  Pure functions of the snapshot, so the stub torch of the
tests and the real one go through the same code."""
import os
import sysconfig

_SKIP_DIRS = []


def _skip_dirs():
    if not _SKIP_DIRS:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        dirs = [here + os.sep]  # vramz itself
        for key in ("stdlib", "platstdlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                dirs.append(os.path.join(p, ""))
        _SKIP_DIRS.extend(dirs)
    return _SKIP_DIRS


def _is_library(filename, torch_dir):
    if not filename or filename.startswith("<frozen") or filename == "??":
        return True
    if torch_dir and filename.startswith(torch_dir):
        return True
    # a stdlib file, but not a user's script that happens to live under a
    # directory named like one (site-packages is under stdlib: packages
    # there other than torch are user code as far as we can tell)
    for d in _skip_dirs():
        if filename.startswith(d) and "site-packages" not in filename[len(d):] \
                and "dist-packages" not in filename[len(d):]:
            return True
    return False


def site_of(frames, torch_dir):
    """(file, line, func) of the first frame, innermost first, outside torch,
    the standard library and vramz: the user's line that allocated."""
    if not frames:
        return ("?", 0, "?")
    for fr in frames:
        fn = fr.get("filename", "")
        if not _is_library(fn, torch_dir):
            return (fn, int(fr.get("line", 0)), fr.get("name", "?"))
    fr = frames[0]
    return (fr.get("filename", "?"), int(fr.get("line", 0)), fr.get("name", "?"))


def _frames(block):
    fr = block.get("frames")
    if fr is None:  # torch < 2.1: the stack is in the block's history
        hist = block.get("history") or []
        fr = hist[-1].get("frames", []) if hist else []
    return fr


def group(snapshot, torch_dir):
    """{(cuda, file, line, func): [bytes, blocks]} of the live blocks."""
    out = {}
    for seg in snapshot.get("segments", []):
        dev = seg.get("device", 0)
        for b in seg.get("blocks", []):
            if b.get("state") != "active_allocated":
                continue
            key = (dev,) + site_of(_frames(b), torch_dir)
            acc = out.setdefault(key, [0, 0])
            acc[0] += int(b.get("size", 0))
            acc[1] += 1
    return out


def answer(now, prev, uuids, limit=20):
    """The site records of an answer: now and prev as group() returns
    (prev None for a first answer), uuids {cuda index: uuid}.  With a
    previous answer, the sites that grew, most growth first; without,
    the largest sites."""
    rows = []
    for key, (nbytes, blocks) in now.items():
        growth = None
        if prev is not None:
            growth = nbytes - prev.get(key, (0, 0))[0]
            if growth <= 0:
                continue
        dev, fn, line, func = key
        rows.append({"cuda": dev, "uuid": uuids.get(dev), "bytes": nbytes, "blocks": blocks,
                     "growth_bytes": growth, "line": line, "func": func, "file": fn})
    rows.sort(key=lambda r: -(r["growth_bytes"] if prev is not None else r["bytes"]))
    return rows[:limit]


def total_growth(now, prev):
    """Bytes all sites that grew gained since prev: the whole of which the
    shares of the answer are parts."""
    return sum(max(0, b - prev.get(k, (0, 0))[0]) for k, (b, _) in now.items())


def frame_site(frame, torch_dir):
    """(file, line, func) of the first frame, from frame outwards, outside
    torch, the standard library and vramz: the user's line that asked (an
    out-of-memory observer runs in the allocating thread, so the failing
    call's frames are its callers).  None when there is no such frame."""
    f, depth = frame, 0
    while f is not None and depth < 200:
        fn = f.f_code.co_filename
        if not _is_library(fn, torch_dir):
            return (fn, f.f_lineno, f.f_code.co_name)
        f, depth = f.f_back, depth + 1
    return None


def tb_site(tb, torch_dir):
    """The innermost user frame of a traceback (where an uncaught exception
    was raised, as far as the user's code goes), or None."""
    best = None
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not _is_library(fn, torch_dir):
            best = (fn, tb.tb_lineno, tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return best


def holders(snapshot, torch_dir, device, uuids, limit=3):
    """The largest live allocation sites on device (what held the memory
    at an out-of-memory error), largest first: site records without
    growth."""
    now = {k: v for k, v in group(snapshot, torch_dir).items() if k[0] == device}
    rows = answer(now, None, uuids, limit)
    for r in rows:
        del r["growth_bytes"]
    return rows
