# SPDX-License-Identifier: Apache-2.0
"""Reading a live `vramz daemon`'s shared-memory segment with mmap: the
layout of docs/daemon.md ("The segment layout", version 1.x), read as the C
reader reads it (lib/segment_read.c, lib/backend/segment.c), into the dict
`vramz status --json` prints from a daemon.

Nothing in the file is trusted before it is checked:
  - its directory: the runtime directory's rule (_rundir.open_dir: not a
    link, owned by root or this user, writable by nobody else unless
    sticky), the file opened relative to it;
  - the file: a regular file (opened without following links) owned by
    root or by this user and writable by neither its group nor others;
  - the header: magic, major version (another major is refused with both
    versions named), record sizes and offsets inside the file;
  - the publisher: its pid runs with the start time the header says (a
    reused pid does not), the segment is not marked stopped;
  - the snapshot: a slot no larger than MAX_SLOT_BYTES and a payload no
    larger than its slot, before a byte is copied or summed; copied under
    the slot's sequence (odd: being written; changed: overwritten while
    copied) and its CRC-32 (a mismatch in an unchanged slot is a corrupt
    file after CRC_TRIES), retried a bounded number of times; every count
    checked against the bytes it needs;
  - freshness: at most two of the daemon's intervals and 5 s old.
Anything else is refused with one line saying what and why
(SegmentError), and vramz.snapshot() goes on to libvramz.

Standard library only: os, mmap, struct, zlib."""
import mmap
import os
import stat
import struct
import time
import zlib

from ._fields import GPU_FIELDS
from ._gpufields import (F_MEM, F_PROCS, GPU_SAMPLE_MEMBERS, SEG_GPU_SAMPLE_10_END,
                         SEG_GPU_SAMPLE_MIN_SIZE)
from . import _agentjoin, _proc, _rundir, _text

IMPLEMENTED = True
MAGIC = b"VRAMZSEG"
MAJOR = 1
SEGMENT_NAME, SEGMENT_FULL_NAME = "segment", "segment.full"
LIVE, STOPPED, REPLACED = 1, 2, 3
FUTURE_SLACK_MS = 1000  # a snapshot stamped later than now by more: refused
FL_PROCS, FL_REDACTED, FL_FINDINGS = 1, 2, 4
MAX_AGE_MS = 5000                    # VRAMZ_DAEMON_MAX_AGE_MS
MAX_GPUS = 1024
READ_TRIES = 400                     # a snapshot copy; ~20 us apart, then 1 ms
CRC_TRIES = 3                        # a checksum mismatch in an unchanged slot: corrupt
MAX_SLOT_BYTES = 256 << 20           # SEG_MAX_SLOT_BYTES (docs/daemon.md, "Bounds")
SLOT_HEAD, PAYLOAD_HEAD = 24, 40
# the least each record size can be (layout 1.0) and the most a reader takes
MIN_SIZES = {"header": 336, "gpu_info": 512, "gpu_sample": 192, "proc": 512, "mig": 160,
             "finding": 512, "link": 8}
BIG = 1 << 20

# header fields: name -> (offset, struct format)
H = {"major": (8, "<H"), "minor": (10, "<H"), "header": (12, "<I"), "gpu_info": (16, "<I"),
     "gpu_sample": (20, "<I"), "proc": (24, "<I"), "mig": (28, "<I"), "finding": (32, "<I"),
     "link": (36, "<I"), "state": (40, "<I"), "flags": (44, "<I"), "pid": (48, "<I"),
     "uid": (52, "<I"), "start_ticks": (56, "<Q"), "start_ms": (64, "<q"),
     "interval_ms": (72, "<I"), "gpu_count": (76, "<I"), "slow_interval_ms": (80, "<I"),
     "sample_flags": (84, "<I"), "file_size": (88, "<Q"), "info_off": (96, "<Q"),
     "links_off": (104, "<Q"), "slot0": (112, "<Q"), "slot1": (120, "<Q"),
     "slot_size": (128, "<Q"), "generation": (136, "<Q"), "cuda": (156, "<i")}

# GPU sample members: name -> (offset, format), from lib/fields.c's table
# (_gpufields.py, generated), as lib/segment_codec.c walks it
SAMPLE = {m: (seg, "<" + fmt) for m, fmt, _, seg in GPU_SAMPLE_MEMBERS}
FIELD_BIT = {member: bit for _, bit, member in GPU_FIELDS}


def _held(size):
    """The members a GPU sample record of size bytes carries, as
    lib/segment_codec.c's record_holds: those that fit, and from a 1.0 or
    1.1 record (192 bytes) nothing from byte 136 on (its reserved zeros,
    where 1.2 put the VRAM health)."""
    return {k: (o, f) for k, (o, f) in SAMPLE.items()
            if o + struct.calcsize(f) <= size
            and (o < SEG_GPU_SAMPLE_10_END or size > SEG_GPU_SAMPLE_MIN_SIZE)}


PROC = {"gpu_index": (0, "<I"), "pid": (4, "<I"), "valid": (8, "<I"), "type": (12, "<I"),
        "used_bytes": (16, "<Q"), "sm_pct": (24, "<I"), "mem_util_pct": (28, "<I"),
        "gi_id": (32, "<I"), "ci_id": (36, "<I"), "uid": (40, "<I"), "ppid": (44, "<I"),
        "pgid": (48, "<I"), "ns_pid": (52, "<I"), "start_time_ticks": (56, "<Q")}
PROC_STR = {"user": (64, 40), "comm": (104, 16), "cmdline": (120, 256), "container": (376, 72),
            "pod_uid": (448, 40), "slurm_job": (488, 24)}
MIG = {"parent_index": (0, "<I"), "mig_index": (4, "<I"), "gi_id": (8, "<I"), "ci_id": (12, "<I"),
       "valid": (16, "<I"), "mem_total_bytes": (24, "<Q"), "mem_used_bytes": (32, "<Q"),
       "mem_free_bytes": (40, "<Q")}
P_USED, P_SM, P_MEMUTIL, P_VISIBLE, P_MIG = 1, 2, 4, 8, 16


class SegmentError(Exception):
    """A segment this reader will not use; str() says which file and why."""


class NotThere(SegmentError):
    """No segment file at that path."""


def _get(buf, off, fmt):
    return struct.unpack_from(fmt, buf, off)[0]


def _str(buf, off, size):
    """A string of the segment, through the one rule for the terminal
    (_text.py, lib/text.c: the C readers apply it in lib/ctx.c)."""
    raw = bytes(buf[off:off + size])
    return _text.sanitize(raw.split(b"\0", 1)[0])


def _fits(a, n, size, lim):
    """a + n * size <= lim, as the C reader checks it (no wrap in Python)."""
    return a <= lim and a + n * size <= lim


class Segment:
    """One segment file, checked and mapped.  read() gives the latest whole
    snapshot as a dict; close() unmaps."""

    def __init__(self, path):
        self.path = path
        self.map = None
        directory, name = os.path.split(path)
        try:
            dfd, _ = _rundir.open_dir(directory or ".")
        except FileNotFoundError:
            raise NotThere(f"{path}: no such file") from None
        except OSError as e:  # refused by the rule: it says why
            raise SegmentError(e.strerror) from None
        try:
            fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
                         dir_fd=dfd)
        except FileNotFoundError:
            raise NotThere(f"{path}: no such file") from None
        except OSError as e:
            try:
                link = stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            why = "a symbolic link, not followed" if link else e.strerror
            raise SegmentError(f"{path}: {why}") from None
        finally:
            os.close(dfd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SegmentError(f"{path}: not a regular file")
            # a file someone else could have written is not evidence of anything
            if st.st_uid not in (0, os.geteuid()):
                raise SegmentError(f"{path}: ignored: owned by uid {st.st_uid}, neither root nor you")
            if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                who = "everyone" if st.st_mode & stat.S_IWOTH else "its group"
                raise SegmentError(f"{path}: ignored: writable by {who}")
            if st.st_size == 0:
                raise SegmentError(f"{path}: empty file, not a vramz segment")
            try:
                self.map = mmap.mmap(fd, st.st_size, mmap.MAP_SHARED, mmap.PROT_READ)
            except (OSError, ValueError) as e:
                raise SegmentError(f"{path}: mmap: {e}") from None
        finally:
            os.close(fd)
        try:
            self._header()
            state = _get(self.map, 40, "<I")
            if state == STOPPED:
                raise SegmentError(f"{path}: its daemon (pid {self.h['pid']}) stopped")
            if state not in (LIVE, REPLACED):
                raise SegmentError(f"{path}: unknown state {state} (1 live, 2 stopped, "
                                   "3 replaced): not trusted")
            if not publisher_alive(self.h["pid"], self.h["start_ticks"]):
                raise SegmentError(f"{path}: its daemon (pid {self.h['pid']}) is gone")
        except Exception:
            self.close()
            raise

    def close(self):
        if self.map is not None:
            self.map.close()
            self.map = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fail(self, why):
        raise SegmentError(f"{self.path}: {why}")

    def _header(self):
        m, size = self.map, len(self.map)
        if size < 8 or m[0:8] != MAGIC:
            self._fail("not a vramz segment (wrong magic)")
        if size < MIN_SIZES["header"]:
            self._fail(f"truncated ({size} bytes)")
        h = {k: _get(m, off, fmt) for k, (off, fmt) in H.items()}
        if h["major"] != MAJOR:
            self._fail(f"segment layout {h['major']}.{h['minor']}; this vramz reads layout "
                       f"{MAJOR}.x only (run the same vramz version as the daemon)")
        if h["header"] < MIN_SIZES["header"] or h["header"] > size:
            self._fail("record sizes out of range")
        for k in ("gpu_info", "gpu_sample", "proc", "mig", "finding", "link"):
            if not MIN_SIZES[k] <= h[k] <= BIG:
                self._fail("record sizes out of range")
        n, fsize = h["gpu_count"], h["file_size"]
        if fsize > size:
            self._fail(f"truncated ({size} of {fsize} bytes)")
        if n == 0 or n > MAX_GPUS:
            self._fail(f"{n} GPUs: out of range")
        if h["interval_ms"] == 0:
            self._fail("interval 0")
        # bounded before a byte of a slot is copied or summed
        if h["slot_size"] > MAX_SLOT_BYTES:
            self._fail(f"slot size {h['slot_size']} bytes: more than the {MAX_SLOT_BYTES} "
                       "a segment may hold")
        slots = (h["slot0"], h["slot1"])
        if (h["info_off"] < h["header"] or not _fits(h["info_off"], n, h["gpu_info"], fsize)
                or (h["links_off"] and (h["links_off"] < h["header"]
                                        or not _fits(h["links_off"], n * n, h["link"], fsize)))
                or h["slot_size"] < SLOT_HEAD + PAYLOAD_HEAD or h["slot_size"] > fsize
                or any(s < h["header"] or not _fits(s, 1, h["slot_size"], fsize) or s & 7
                       for s in slots)):
            self._fail("offsets outside the file")
        h["driver_version"] = _str(m, 160, 80)
        h["nvml_version"] = _str(m, 240, 80)
        self.h = h
        self.info = []
        for i in range(n):
            off = h["info_off"] + i * h["gpu_info"]
            self.info.append({"name": _str(m, off + 8, 96), "uuid": _str(m, off + 104, 96),
                              "pci_bus_id": _str(m, off + 200, 32),
                              "present": _get(m, off + 436, "<I") == 1,
                              # 1.1; a 1.0 segment has zeros there: unknown
                              "vendor": _str(m, off + 440, 16)})

    def covers_all(self):
        """The daemon samples every GPU the driver has."""
        return all(g["present"] for g in self.info)

    def _copy(self):
        """The latest whole snapshot's slot bytes (header and payload)."""
        m, h = self.map, self.h
        cap = h["slot_size"] - SLOT_HEAD  # bounded by _header
        odd = crc_bad = 0
        for tries in range(READ_TRIES):
            state = _get(m, 40, "<I")
            if state == STOPPED:
                self._fail(f"its daemon (pid {h['pid']}) stopped")
            if state == REPLACED:
                raise _Replaced()
            if state != LIVE:
                self._fail(f"unknown state {state} (1 live, 2 stopped, 3 replaced): not trusted")
            gen = _get(m, 136, "<Q")
            if gen == 0:
                self._fail("no snapshot published yet")
            off = h["slot0"] if gen % 2 == 0 else h["slot1"]
            s1 = _get(m, off, "<Q")
            if s1 & 1:  # being written: a newer generation is coming
                odd += 1
                time.sleep(0.00002 if tries < 100 else 0.001)
                continue
            # a size past the slot is never copied: only the slot's head then
            plen = _get(m, off + 20, "<I")
            copy = m[off:off + SLOT_HEAD + (plen if plen <= cap else 0)]
            if _get(m, off, "<Q") != s1:  # overwritten while copied
                continue
            length = _get(copy, 20, "<I")
            if length > cap:
                self._fail(f"payload size {length} bytes: more than its {cap}-byte slot holds")
            if length != plen:
                continue
            if zlib.crc32(copy[SLOT_HEAD:]) & 0xFFFFFFFF != _get(copy, 16, "<I"):
                # no fences here: the CRC catches a torn copy, so a retry or
                # two; more, with the slot unchanged, is a corrupt file
                crc_bad += 1
                if crc_bad >= CRC_TRIES:
                    self._fail(f"snapshot checksum mismatch: generation {gen}'s payload does "
                               "not match its CRC although its slot did not change "
                               "(a corrupt or forged segment, not a write in progress)")
                continue
            return copy
        if odd * 2 > READ_TRIES:
            self._fail(f"no whole snapshot after {READ_TRIES} tries: the slot stayed "
                       f"half-written (is the daemon (pid {h['pid']}) dying mid-write?)")
        self._fail(f"no whole snapshot after {READ_TRIES} tries: overwritten while copied "
                   "each time")

    def read(self):
        """The latest snapshot, decoded: (time_ms, mono_ns, gpus, procs, migs)
        with each record a dict of its members."""
        h = self.h
        copy = self._copy()
        pl = memoryview(copy)[SLOT_HEAD:]
        plen = len(pl)
        if plen < PAYLOAD_HEAD:
            self._fail("snapshot too short")
        time_ms, mono_ns = _get(pl, 0, "<q"), _get(pl, 8, "<q")
        ng, np_, nm = _get(pl, 16, "<I"), _get(pl, 20, "<I"), _get(pl, 24, "<I")
        nf = _get(pl, 28, "<I")
        need = PAYLOAD_HEAD
        sizes = (h["gpu_sample"], h["proc"], h["mig"], h["finding"])
        for count, size in zip((ng, np_, nm, nf), sizes):
            need += count * size
        if ng > h["gpu_count"] or need > plen:
            self._fail("snapshot counts exceed its size")
        off = PAYLOAD_HEAD
        gpus = []
        held = _held(h["gpu_sample"])
        absent = [k for k in SAMPLE if k not in held]  # an older daemon's: unknown
        absent_bits = 0
        for k in absent:
            absent_bits |= FIELD_BIT.get(k, 0)
        for i in range(ng):
            g = {k: _get(pl, off + o, f) for k, (o, f) in held.items()}
            g.update({k: 0 for k in absent})
            g["valid"] &= ~absent_bits
            if (g["index"] >= h["gpu_count"] or g["proc_first"] > np_
                    or g["proc_count"] > np_ - g["proc_first"]):
                self._fail(f"GPU {i}'s record is inconsistent")
            gpus.append(g)
            off += h["gpu_sample"]
        procs = []
        for i in range(np_):
            p = {k: _get(pl, off + o, f) for k, (o, f) in PROC.items()}
            p.update({k: _str(pl, off + o, n) for k, (o, n) in PROC_STR.items()})
            procs.append(p)
            off += h["proc"]
        migs = []
        for i in range(nm):
            x = {k: _get(pl, off + o, f) for k, (o, f) in MIG.items()}
            x["uuid"] = _str(pl, off + 48, 96)
            migs.append(x)
            off += h["mig"]
        return time_ms, mono_ns, gpus, procs, migs


class _Replaced(Exception):
    """The daemon grew its file and renamed a new one over this name."""


def publisher_alive(pid, start_ticks):
    """The publisher runs: its pid with the start time the header says; where
    /proc hides another user's pids (hidepid), existence is all we learn."""
    if pid == 0 or pid >= 1 << 31:
        return False
    t = _proc.start_time_ticks(pid)
    if t is not None:
        return t == start_ticks
    try:
        os.kill(pid, 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


def _iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _document(seg, snap, procs):
    from . import __version__
    h = seg.h
    time_ms, mono_ns, gpus, plist, migs = snap
    age_ms = max(0, (time.monotonic_ns() - mono_ns) // 1000000)
    cuda = h["cuda"]
    doc = {"schema": 1, "vramz_version": __version__, "kind": "status",
           "time": _iso(time_ms), "time_ms": time_ms,
           "source": "daemon", "age_ms": age_ms, "daemon_pid": h["pid"],
           "system": {"backend": "daemon",
                      "driver_version": h["driver_version"] or None,
                      "nvml_version": h["nvml_version"] or None,
                      "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}" if cuda else None}}
    doc["gpus"] = [_gpu(seg, g, migs) for g in gpus]
    if procs:
        redacted = bool(h["flags"] & FL_REDACTED)
        doc["processes"] = [_proc_doc(seg, p, redacted) for p in plist]
        _agentjoin.join(doc["processes"])  # the segment carries no agent figures
        doc["ended"] = _agentjoin.ended(doc["processes"])
    return doc


def _gpu(seg, g, migs):
    gi = seg.info[g["index"]]
    lost = bool(g["lost"])
    d = {"index": g["index"], "uuid": gi["uuid"] or None, "name": gi["name"] or None,
         "pci_bus_id": gi["pci_bus_id"] or None,
         "vendor": gi["vendor"] or None,  # layout 1.1 on
         "lost": lost}
    for name, bit, member in GPU_FIELDS:
        d[name] = g[member] if not lost and (g["valid"] & bit) == bit else None
    memok = not lost and (g["valid"] & F_MEM) and g["mem_total_bytes"]
    d["mem_used_pct"] = (float("%.1f" % (100.0 * g["mem_used_bytes"] / g["mem_total_bytes"]))
                         if memok else None)
    d["process_count"] = g["proc_count"] if not lost and (g["valid"] & F_PROCS) else None
    if migs:
        d["mig"] = [{"mig_index": m["mig_index"], "gpu_instance_id": m["gi_id"],
                     "compute_instance_id": m["ci_id"], "uuid": m["uuid"] or None,
                     "mem_total_bytes": m["mem_total_bytes"] if m["valid"] & F_MEM else None,
                     "mem_used_bytes": m["mem_used_bytes"] if m["valid"] & F_MEM else None,
                     "mem_free_bytes": m["mem_free_bytes"] if m["valid"] & F_MEM else None}
                    for m in migs if m["parent_index"] == g["index"]]
    return d


def _proc_doc(seg, p, redacted):
    gi = seg.info[p["gpu_index"]] if p["gpu_index"] < len(seg.info) else None
    if redacted:  # the daemon left /proc out: what this reader's /proc shows it
        seen = _proc.attribute(p["pid"])
        if seen:
            p.update(seen)
            p["valid"] |= P_VISIBLE
    vis = bool(p["valid"] & P_VISIBLE)
    v = p["valid"]
    d = {"gpu": p["gpu_index"], "gpu_uuid": (gi["uuid"] or None) if gi else None,
         "pid": p["pid"], "visible": vis,
         "type": [n for bit, n in ((1, "compute"), (2, "graphics"), (4, "mps")) if p["type"] & bit],
         "used_bytes": p["used_bytes"] if v & P_USED else None,
         "sm_pct": p["sm_pct"] if v & P_SM else None,
         "mem_util_pct": p["mem_util_pct"] if v & P_MEMUTIL else None}
    if v & P_MIG:
        d["gpu_instance_id"] = p["gi_id"]
        d["compute_instance_id"] = p["ci_id"]
    d.update({"user": p["user"] if vis else None,
              "uid": p["uid"] if vis else None,
              "command": p["cmdline"] if vis else None,
              "comm": p["comm"] if vis else None,
              "ppid": p["ppid"] if vis else None,
              "pgid": p["pgid"] if vis else None,
              "ns_pid": p["ns_pid"] if vis else None,
              "start_time_ticks": p["start_time_ticks"] if vis else None,
              "container": (p["container"] or None) if vis else None,
              "pod_uid": (p["pod_uid"] or None) if vis else None,
              "slurm_job": (p["slurm_job"] or None) if vis else None})
    # layout 1.0 carries no PyTorch agent figures: _agentjoin reads them
    d["outside_allocator_bytes"] = None
    d["outside_parts"] = None
    d["torch"] = None
    # nor Kubernetes names (docs/attribution.md): the pod uid alone
    d.update({"pod": None, "namespace": None, "container_name": None})
    return d


def _fresh(seg, mono_ns):
    h = seg.h
    age_ms = (time.monotonic_ns() - mono_ns) // 1000000
    limit = min(2 * h["interval_ms"], MAX_AGE_MS)
    if age_ms < -FUTURE_SLACK_MS:  # CLOCK_MONOTONIC is the machine's
        return (f"{seg.path}: its latest snapshot is stamped {-age_ms / 1000:.1f} s in the "
                "future (CLOCK_MONOTONIC): not this machine's daemon, or forged; not trusted")
    if age_ms <= limit:
        return None
    if not publisher_alive(h["pid"], h["start_ticks"]):
        return f"{seg.path}: its daemon (pid {h['pid']}) is gone"
    return (f"{seg.path}: stale: the latest snapshot is {age_ms / 1000:.1f} s old "
            f"(daemon pid {h['pid']}, every {h['interval_ms']} ms)")


def read_file(path, procs=True):
    """The dict `vramz status --json` prints from the daemon segment at
    path.  Raises SegmentError (NotThere: no file) saying why it is not
    usable: untrusted, malformed, another layout, its daemon gone, stale,
    or not covering what was asked (every GPU; processes when procs)."""
    for again in range(2):
        with Segment(path) as seg:
            try:
                snap = seg.read()
            except _Replaced:
                if again:
                    raise SegmentError(f"{path}: replaced by a newer file") from None
                continue
            why = _fresh(seg, snap[1])
            if why:
                raise SegmentError(why)
            if not seg.covers_all():
                raise SegmentError(f"{path}: it does not sample every GPU")
            if procs and not seg.h["flags"] & FL_PROCS:
                raise SegmentError(f"{path}: it publishes no processes (vramz daemon --procs)")
            return _document(seg, snap, procs)
    raise SegmentError(f"{path}: replaced by a newer file")


def read(directory, procs=True):
    """(doc, None) from the live segment in directory (root first tries the
    unredacted segment.full), or (None, why) when there is none this reader
    can use."""
    names = ([SEGMENT_FULL_NAME] if os.geteuid() == 0 else []) + [SEGMENT_NAME]
    why = None
    for name in names:
        path = os.path.join(directory, name)
        try:
            return read_file(path, procs), None
        except NotThere:
            continue
        except SegmentError as e:
            why = why or str(e)
    return None, why or f"no segment in {directory}"
