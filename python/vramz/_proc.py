# SPDX-License-Identifier: Apache-2.0
"""What /proc says about a process: its start time, the half of the key
(pid, start time) that tells a live process from a reused pid."""
import os

from . import _text


def start_time_ticks(pid="self"):
    """Field 22 of /proc/PID/stat (clock ticks since boot), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # the command name (field 2) may hold blanks and parentheses: the
    # fields after it start after the last ')'
    rest = data[data.rfind(b")") + 2:].split()
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def alive(pid, start_ticks):
    """The process pid exists and started at start_ticks (not a reused pid)."""
    return start_ticks is not None and start_time_ticks(pid) == start_ticks


def attribute(pid):
    """What this process's /proc shows of pid, with the members of a
    segment's process record (a redacted segment left them out), or None
    when pid is not visible here.  The cgroup keys (container, pod, Slurm
    job) are not read: they stay unknown."""
    import pwd
    base = f"/proc/{pid}"
    try:
        uid = os.stat(base).st_uid
        with open(f"{base}/stat", "rb") as f:
            stat = f.read()
        with open(f"{base}/comm", "rb") as f:
            comm = f.read().rstrip(b"\n")
        with open(f"{base}/cmdline", "rb") as f:
            cmd = f.read()
        with open(f"{base}/status", "rb") as f:
            status = f.read()
    except OSError:
        return None
    rest = stat[stat.rfind(b")") + 2:].split()
    try:
        ppid, pgid, start = int(rest[1]), int(rest[2]), int(rest[19])
    except (IndexError, ValueError):
        return None
    ns_pid = pid
    for line in status.splitlines():
        if line.startswith(b"NSpid:"):
            ns_pid = int(line.split()[-1])
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = str(uid)
    # a process chooses its argv: the one rule for the terminal (_text.py)
    command = _text.sanitize(cmd.rstrip(b"\0").replace(b"\0", b" ")[:255])
    return {"uid": uid, "ppid": ppid, "pgid": pgid, "ns_pid": ns_pid,
            "start_time_ticks": start, "user": _text.sanitize(user[:32]),
            "comm": _text.sanitize(comm[:15]), "cmdline": command,
            "container": "", "pod_uid": "", "slurm_job": ""}
