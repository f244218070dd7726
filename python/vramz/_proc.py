"""What /proc says about a process: its start time, the half of the key
(pid, start time) that tells a live process from a reused pid."""


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
