# SPDX-License-Identifier: Apache-2.0
"""The agent's files: what a process running vramz.torch publishes for the
vramz tool to join to NVML's view (format in docs/python.md, read in C by
lib/agent.c).

One directory (the runtime directory, see _rundir.py), up to four files
per process, named by pid and start time so a reused pid never matches:

    torch-PID-START          the figures, rewritten every interval; at the
                             process's end its last record says how it
                             ended, and the file stays as a tombstone for
                             TOMBSTONE_KEEP_S
    torch-PID-START.req      a request for leak sites (written by vramz)
    torch-PID-START.sites    the answer (written by the agent)
    torch-PID-START.sig      empty; Python's faulthandler writes the stacks
                             into it when a SIGTERM ends the process

Text, ASCII, one record a line: a record type, then blank-separated
key=value pairs with integer values except where noted.  Readers ignore
record types and keys they do not know (the format only grows within a
major version); a key left out is unknown, never zero.  Files are written
to a dot-file beside and renamed, so a reader sees the old or the new
content, never a mix; both relative to the runtime directory's descriptor
(_rundir.open_dir), the dot-file made O_EXCL|O_NOFOLLOW|O_NONBLOCK.
"""
import os
import re
import stat
import time
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from . import _rundir
from ._fields import OUTSIDE_PARTS

MAGIC = "vramz-torch"
# how long the figures file of an ended process stays for readers (a
# reader sampling every few seconds learns how it ended), then swept
TOMBSTONE_KEEP_S = 300
# the free-text keys: the rest of the line is the value
TAIL_KEYS = ("file", "why")
SITES_MAGIC = "vramz-torch-sites"
VERSION = 1

# (key in the file, key in torch.cuda.memory_stats())
DEVICE_STATS = (
    ("allocated_bytes", "allocated_bytes.all.current"),
    ("reserved_bytes", "reserved_bytes.all.current"),
    ("active_bytes", "active_bytes.all.current"),
    ("inactive_split_bytes", "inactive_split_bytes.all.current"),
    ("peak_allocated_bytes", "allocated_bytes.all.peak"),
    ("peak_reserved_bytes", "reserved_bytes.all.peak"),
    ("alloc_retries", "num_alloc_retries"),
    ("ooms", "num_ooms"),
    ("allocations", "allocation.all.current"),
    ("allocations_total", "allocation.all.allocated"),
    ("device_mallocs", "num_device_alloc"),
)


def base_name(pid: int, start_ticks: int) -> str:
    return f"torch-{pid}-{start_ticks}"


def _clean(value):
    """A value as one token: no blanks, no newlines, no '='."""
    s = str(value)
    return "".join(c if c.isprintable() and c not in " \t=" else "_" for c in s) or "_"


def _record(kind, pairs, tail=None):
    parts = [kind]
    for key, value in pairs:
        if value is not None:
            parts.append(f"{key}={_clean(value)}")
    if tail is not None:
        # a free-text value (a file name may hold blanks): last on the line
        key, value = tail
        parts.append(f"{key}=" + "".join(c if c.isprintable() else "?" for c in str(value)))
    return " ".join(parts)


def _with_tail(kind, rec):
    """A record whose 'file' (free text) goes last."""
    pairs = [(k, v) for k, v in rec.items() if k != "file"]
    return _record(kind, pairs, ("file", rec["file"]) if rec.get("file") is not None else None)


# the keys of an outside record, in the order written (the rest after)
OUTSIDE_KEYS = ("part", "bytes", "how", "cuda", "uuid", "comm", "comms", "group", "at", "lib",
                "time_ms")


def outside_parts(parsed: Dict[str, Any], uuid: Optional[str],
                  outside: int) -> Optional[Dict[str, int]]:
    """The parts of outside bytes (NVML's figure minus reserved) of a
    figures file's process on the GPU of uuid, as lib/agent.c's
    agent_outside_parts: {"context", "libraries", "nccl", "other",
    "nccl_communicators"}, or None when its agent measures no parts."""
    if parsed.get("process", {}).get("outside") in (None, 0):
        return None
    by_cuda = {d.get("cuda"): d.get("uuid") for d in parsed.get("device", [])
               if isinstance(d.get("uuid"), str) and d.get("uuid")}
    sums = dict.fromkeys(OUTSIDE_PARTS, 0)
    comms, seen = 0, set()
    for r in parsed.get("outside", []):
        b, part = figure(r, "bytes"), r.get("part")
        if part not in sums or b is None:
            continue
        gpu = r.get("uuid") if isinstance(r.get("uuid"), str) else by_cuda.get(r.get("cuda"))
        if gpu is None or gpu != uuid:
            continue
        sums[part] += b
        if part == "nccl":
            c = r.get("comm")
            if not isinstance(c, int) or c not in seen:
                n = r.get("comms")
                comms += n if isinstance(n, int) and 1 <= n < 1 << 20 else 1
                if isinstance(c, int):
                    seen.add(c)
    out, left = {}, outside
    for part in ("context", "nccl", "libraries"):  # the surest first
        out[part] = min(sums[part], left)
        left -= out[part]
    out["other"] = left
    out = {k: out[k] for k in OUTSIDE_PARTS}
    out["nccl_communicators"] = comms
    return out


def format_figures(process: Dict[str, Any], devices: Sequence[Dict[str, Any]],
                   oom: Optional[Dict[str, Any]] = None, holders: Sequence[Dict[str, Any]] = (),
                   end: Optional[Dict[str, Any]] = None,
                   outside: Sequence[Dict[str, Any]] = ()) -> str:
    """process: dict of the process record; devices: list of dicts, each
    with 'cuda', 'uuid' and the DEVICE_STATS keys; oom: the last OOM seen
    (with its site: line, func, file), or None; holders: the largest live
    allocation sites at that OOM (cuda, bytes, blocks, line, func, file);
    end: how the process ended (the last record), or None; outside: where
    memory outside the allocator appeared (OUTSIDE_KEYS, issue 37)."""
    lines = [f"{MAGIC} {VERSION}", _record("process", process.items())]
    for d in devices:
        lines.append(_record("device", d.items()))
    for o in outside:
        lines.append(_record("outside", [(k, o.get(k)) for k in OUTSIDE_KEYS]))
    if oom:
        lines.append(_with_tail("oom", oom))
        for h in holders:
            lines.append(_with_tail("holder", h))
    if end:
        lines.append(_with_tail("end", end))
    return "\n".join(lines) + "\n"


def format_sites(process: Dict[str, Any], sites: Iterable[Dict[str, Any]],
                 error: Optional[str] = None) -> str:
    """sites: dicts with cuda, uuid, bytes, blocks, growth_bytes (or None),
    line, func and file (free text, last)."""
    lines = [f"{SITES_MAGIC} {VERSION}", _record("process", process.items())]
    if error:
        lines.append(_record("error", [], ("why", error)))
    for s in sites:
        pairs = [(k, s.get(k)) for k in ("cuda", "uuid", "bytes", "blocks", "growth_bytes",
                                          "line", "func")]
        lines.append(_record("site", pairs, ("file", s.get("file", "?"))))
    return "\n".join(lines) + "\n"


# a value is an integer when it is 1-20 ASCII digits and fits 64 bits, as
# lib/agent.c's to_u64 reads it (not "-5", not "²")
_UINT = re.compile(r"[0-9]{1,20}\Z")
U64_MAX = (1 << 64) - 1
# a figure above this (1 PiB, lib/internal/fields.h FIELD_MAX_BYTES) is unknown:
# 2^64-1 is a sentinel, not 16 EiB
FIGURE_MAX = 1 << 50


def parse(text: str) -> Dict[str, Any]:
    """The records of a figures or sites file: {'magic', 'version',
    'process': {...}, 'device': [...], 'site': [...], ...}.  Values that are
    integers come back as int.  Raises ValueError on a wrong magic or major
    version.  Read exactly as lib/agent.c reads it (tests/agentfile-cases.txt
    is both readers' table): lines end at '\\n' only, and a last line
    without its '\\n' is torn and ignored; the first is the
    magic, one blank and the version, nothing else; blanks are spaces; a
    token without '=' is skipped."""
    lines = text.split("\n")
    # after the last '\n': nothing in a complete file (the agent writes it
    # whole and renames it); anything there is a line still being written,
    # its figures perhaps cut short, and is ignored
    lines.pop()
    head = lines[0] if lines else ""
    if head not in (f"{MAGIC} {VERSION}", f"{SITES_MAGIC} {VERSION}"):
        if head.partition(" ")[0] in (MAGIC, SITES_MAGIC):
            raise ValueError(f"unknown agent file version {head.partition(' ')[2]}")
        raise ValueError("not a vramz agent file" if head else "empty file")
    out = {"magic": head.partition(" ")[0], "version": VERSION}
    for line in lines[1:]:
        kind, _, rest = line.partition(" ")
        rec = {}
        while rest:
            rest = rest.lstrip(" ")
            token, _, after = rest.partition(" ")
            key, eq, value = rest.partition("=")
            if not eq or " " in key:  # a token without '=': skipped
                rest = after
                continue
            if key in TAIL_KEYS:
                rec[key] = value
                break
            value, _, rest = value.partition(" ")
            rec[key] = int(value) if _UINT.match(value) and int(value) <= U64_MAX else value
        if kind == "process":
            out["process"] = rec
        else:
            out.setdefault(kind, []).append(rec)
    return out


def process_key(parsed: Dict[str, Any]) -> Optional[Tuple[int, int]]:
    """(pid, start_time_ticks) of a figures file's process record, or None
    when it names none (lib/agent.c: then the file is refused)."""
    p = parsed.get("process", {})
    pid, start = p.get("pid"), p.get("start_time_ticks")
    if not isinstance(pid, int) or pid > 0xFFFFFFFF or not isinstance(start, int):
        return None
    return pid, start


def figure(rec: Dict[str, Any], key: str) -> Optional[int]:
    """A device record's figure: an int up to FIGURE_MAX, else None."""
    v = rec.get(key)
    return v if isinstance(v, int) and v <= FIGURE_MAX else None


def write_atomic(directory: Union[int, str], name: str, text: str, mode: int = 0o644,
                 where: Optional[str] = None):
    """Writes name in directory (a descriptor from _rundir.open_dir, or a
    path opened so here) through a dot-file and a rename.  Something not
    ours at the dot-file's name (a FIFO, a link, another user's file) is
    refused at once: _rundir.Untrusted.  where: the directory's path, for
    messages."""
    if isinstance(directory, int):
        return _write_at(directory, name, text, mode, where or ".")
    fd, _ = _rundir.open_dir(directory)
    try:
        return _write_at(fd, name, text, mode, directory)
    finally:
        os.close(fd)


def _write_at(dir_fd, name, text, mode, where):
    tmp = f".{name}.tmp"
    fd = _rundir.create_tmp(dir_fd, tmp, mode, where)
    try:
        try:
            os.fchmod(fd, mode)  # whatever the umask: readers refuse group-writable files
            data = text.encode("ascii", "replace")
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


# what an agent leaves: its figures, the sites it answered, a request, the
# file faulthandler writes into at a SIGTERM
_LEFT = re.compile(r"torch-([0-9]+)-([0-9]+)(\.sites|\.req|\.sig)?\Z")
# what faulthandler writes first (Python 3.9 to 3.14)
_SIG_HEADS = (b"Thread 0x", b"Current thread", b"Stack (most recent", b"Fatal Python",
              b"<no Python frame>", b"  File ")
_READ_MAX = 16384  # a figures file's size bound (lib/internal/agent.h: AGENT_FILE_MAX)


def _says_agent(suffix, head):
    """Whether a file's bytes say it is the agent's kind of file: the magic
    line of figures or sites, an empty request (vramz writes it empty), or
    a signal file that is empty or holds what faulthandler writes."""
    if suffix == ".req":
        return head == b""
    if suffix == ".sig":
        return head == b"" or head.startswith(_SIG_HEADS)
    magic = SITES_MAGIC if suffix == ".sites" else MAGIC
    return head.startswith(magic.encode() + b" ")


def has_end(data: bytes) -> bool:
    """A figures file's bytes hold an end record: the process ended and
    said how (a tombstone)."""
    return data.startswith(MAGIC.encode() + b" ") and b"\nend " in data


def _read_own(dir_fd, name):
    """(lstat, bytes) of name when it is a regular file of ours, else None."""
    if _rundir.own_file(dir_fd, name) is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        data = os.read(fd, _READ_MAX)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return None
    return st, data


def sweep(dir_fd, alive, now=None, keep_s=TOMBSTONE_KEEP_S):
    """Removes the files of agents that died from the runtime directory
    dir_fd: only a regular file owned by the effective user, named
    torch-PID-START[.sites|.req|.sig] for a (PID, START) that alive(pid,
    start) says is gone, whose content says it is an agent's.  A
    tombstone (a figures file with an end record, or whose .sig file holds
    what faulthandler wrote at a SIGTERM) stays, with its .sig, until
    keep_s seconds after it was last written; other files of a dead agent
    (kill -9: no end) go at once.  Nothing else is ever removed.  Returns
    the names removed."""
    lfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        names = os.listdir(lfd)
    finally:
        os.close(lfd)
    now = time.time() if now is None else now
    found = {}  # name -> (match, lstat)
    tomb = {}   # base name -> when its tombstone was last written
    for n in names:
        m = _LEFT.match(n)
        if not m or alive(int(m[1]), int(m[2])):
            continue
        got = _read_own(dir_fd, n)
        if got is None or not _says_agent(m[3], got[1][:32]):
            continue
        st, data = got
        found[n] = (m, st)
        base = n[:len(n) - len(m[3] or "")]
        if (m[3] is None and has_end(data)) or (m[3] == ".sig" and data):
            tomb[base] = max(tomb.get(base, 0), st.st_mtime)
    gone = []
    for n, (m, st) in found.items():
        base = n[:len(n) - len(m[3] or "")]
        if m[3] in (None, ".sig") and base in tomb and now - tomb[base] < keep_s:
            continue  # a tombstone, still young
        # still the file read: in a private directory nobody else can swap
        # it, and in a sticky one nobody else can rename over our file
        cur = _rundir.own_file(dir_fd, n)
        if cur is None or (cur.st_dev, cur.st_ino) != (st.st_dev, st.st_ino):
            continue
        try:
            os.unlink(n, dir_fd=dir_fd)
            gone.append(n)
        except OSError:
            pass
    return gone
