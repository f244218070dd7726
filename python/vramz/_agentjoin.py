# SPDX-License-Identifier: Apache-2.0
"""The PyTorch agents' figures joined to process rows read from a daemon's
segment (which carries none): lib/agent.c's agent_join in Python, so
vramz.snapshot() from a daemon shows the same "torch" object and
"outside_allocator_bytes" (and its "outside_parts") as `vramz status --json`.

A file is believed only as the C reader believes it (docs/python.md, "The
agent's files"): named torch-PID-START in a runtime directory, a regular
file opened without following links, owned by the process's uid or root,
not writable by group or others, of major version 1, and its process
record naming that pid and start time; and only in a directory the
runtime directory's rule trusts (_rundir.open_dir: not a link, owned by
root, this user or the user whose directory it is, writable by nobody
else unless sticky), the file opened relative to it."""
import os
import stat

from . import agentfile
from ._fields import TORCH_FIGURES
from ._rundir import open_dir, runtime_dirs

# the "torch" object's figures, in the one list's order (_fields.py)
FIGURES = tuple(k for k, _, _ in TORCH_FIGURES)
FILE_MAX = 64 << 10


def _dirs(uids):
    """(directory, whose) pairs: the reader's own (whose None), then each
    user's /run/user/UID/vramz (whose UID), as lib/agent.c's agent_join."""
    out = [(d, None) for d in runtime_dirs()]
    if not os.environ.get("VRAMZ_RUNTIME_DIR"):
        out += [(f"/run/user/{u}/vramz", u) for u in sorted(uids)]
    seen = set()
    return [d for d in out if not (d[0] in seen or seen.add(d[0]))]


def _open(directory):
    """directory (a path, or a (path, whose) pair) opened under the rule:
    its descriptor, or None (absent, or refused)."""
    path, whose = directory if isinstance(directory, tuple) else (directory, None)
    try:
        return open_dir(path, also_uid=whose)[0]
    except OSError:
        return None


def _read_trusted(directory, name, uid):
    """The text of name in directory (a descriptor from _open, or what
    _open takes)."""
    dfd = directory if isinstance(directory, int) else _open(directory)
    if dfd is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                     dir_fd=dfd)
    except OSError:
        return None
    finally:
        if dfd is not directory:
            os.close(dfd)
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid not in (uid, 0)
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        return os.read(fd, FILE_MAX).decode("utf-8", "replace")
    finally:
        os.close(fd)


def lookup(dirs, pid, start, uid):
    """The parsed figures file of (pid, start) owned by uid or root, or None.
    dirs: paths (the reader's own directories), (path, whose uid) pairs, or
    descriptors from _open."""
    for d in dirs:
        text = _read_trusted(d, agentfile.base_name(pid, start), uid)
        if text is None:
            continue
        try:
            f = agentfile.parse(text)
        except ValueError:
            continue
        if f["magic"] != agentfile.MAGIC or agentfile.process_key(f) != (pid, start):
            continue  # a file claiming another process
        return f
    return None


def _torch(f, uuid):
    """(torch object, known) for the GPU of uuid, as lib/agent.c's fill_torch."""
    devs = f.get("device", [])
    dev = next((d for d in devs if uuid and d.get("uuid") == uuid), None)
    if dev is None and any(not d.get("uuid") for d in devs):
        return None  # a record without its UUID could be this GPU: unknown
    p = f["process"]
    t = {}
    for k in FIGURES:
        t[k] = agentfile.figure(dev, k) if dev is not None else 0
    t["history"] = bool(p.get("history"))
    tm = p.get("time_ms")
    t["time_ms"] = tm if isinstance(tm, int) and tm > 0 else None
    return t


def join(processes):
    """Fills "torch" and "outside_allocator_bytes" of each visible process
    row (dicts shaped like status --json's) from its agent's file."""
    rows = [p for p in processes if p.get("visible") and p.get("start_time_ticks") is not None]
    if not rows:
        return
    # each directory opened (and judged) once for every row
    fds = [fd for fd in map(_open, _dirs({p["uid"] for p in rows if p.get("uid") is not None}))
           if fd is not None]
    cache = {}
    try:
        for p in rows:
            key = (p["pid"], p["start_time_ticks"])
            if key not in cache:
                cache[key] = lookup(fds, p["pid"], p["start_time_ticks"], p["uid"])
    finally:
        for fd in fds:
            os.close(fd)
    for p in rows:
        f = cache[(p["pid"], p["start_time_ticks"])]
        if f is None:
            continue
        t = _torch(f, p.get("gpu_uuid"))
        if t is None:
            continue
        p["torch"] = t
        if p.get("used_bytes") is not None and t["reserved_bytes"] is not None:
            p["outside_allocator_bytes"] = max(0, p["used_bytes"] - t["reserved_bytes"])
            p["outside_parts"] = agentfile.outside_parts(f, p.get("gpu_uuid"),
                                                         p["outside_allocator_bytes"])


ENDED_MAX = 32  # lib/agent.c's agent_ended_list, as src/format/jsondoc.c asks


def _iso(ms):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _site(rec):
    """'model.py:88 in forward()' of a record's line, func and file."""
    f = str(rec.get("file", ""))
    base = f.rsplit("/", 1)[-1]
    return f'{base[:96]}:{rec.get("line", 0)} in {str(rec.get("func", ""))[:40]}()'


def _ended_one(f, uid):
    """The "ended" object of a tombstone (src/format/jsondoc.c's json_ended_one)."""
    p, e = f["process"], f["end"][-1]
    oom = (f.get("oom") or [None])[-1]
    exc = str(e.get("exception", "")) or None
    is_oom = bool(e.get("oom")) or (exc or "").rsplit(".", 1)[-1] == "OutOfMemoryError"
    at = oom if oom and oom.get("file") else (e if e.get("file") else None)
    tm = e.get("time_ms")
    st = e.get("status")
    return {"pid": p["pid"], "start_time_ticks": p["start_time_ticks"], "uid": uid,
            "time": _iso(tm) if isinstance(tm, int) and tm > 0 else None,
            "how": e.get("how") if e.get("how") in ("exit", "exception") else None,
            "status": st if isinstance(st, int) and 0 <= st <= 255 else None,
            "exception": exc, "oom": is_oom,
            "site": _site(at) if at else None,
            "ooms": oom.get("ooms") if oom and isinstance(oom.get("ooms"), int) and oom.get("ooms") else None,
            "requested_bytes": oom.get("requested_bytes") if oom and isinstance(oom.get("requested_bytes"), int) else None}


def ended(processes):
    """The processes gone from the rows whose agent left a tombstone (a
    figures file with an end record), as lib/agent.c's agent_ended_list:
    in the directories join looks in, each file trusted as join trusts
    one (its owner the directory's user, or us in our own), at most
    ENDED_MAX, by pid and start time."""
    rows = {(p.get("pid"), p.get("start_time_ticks")) for p in processes}
    uids = {p["uid"] for p in processes if p.get("visible") and p.get("uid") is not None}
    out = []
    for d in _dirs(uids):
        fd = _open(d)
        if fd is None:
            continue
        try:
            lfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
            try:
                names = os.listdir(lfd)  # fd is O_PATH: listed through "."
            finally:
                os.close(lfd)
            for n in names:
                m = agentfile._LEFT.match(n)
                if not m or m[3] or (int(m[1]), int(m[2])) in rows:
                    continue
                uid = os.geteuid() if d[1] is None else d[1]
                text = _read_trusted(fd, n, uid)
                try:
                    f = agentfile.parse(text) if text is not None else None
                except ValueError:
                    f = None
                p = (f or {}).get("process", {})
                if (not f or f["magic"] != agentfile.MAGIC or not f.get("end")
                        or p.get("pid") != int(m[1]) or p.get("start_time_ticks") != int(m[2])):
                    continue
                out.append(_ended_one(f, uid))
        finally:
            os.close(fd)
    out.sort(key=lambda e: (e["pid"], e["start_time_ticks"]))
    return out[:ENDED_MAX]
