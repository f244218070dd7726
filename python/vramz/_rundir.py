# SPDX-License-Identifier: Apache-2.0
"""The runtime directory vramz's daemon segment and the agents' files live
in: the rule of lib/rundir.c and include/vramz/daemon.h, so the C tool and
Python agree (change them together).

    1. VRAMZ_RUNTIME_DIR, when set and not empty, is the only directory;
    2. otherwise, as root, /run/vramz;
    3. otherwise $XDG_RUNTIME_DIR/vramz, when XDG_RUNTIME_DIR is absolute;
    4. a reader that is not root also looks in /run/vramz afterwards (the
       machine's daemon, run as root).

The agent publishes where rules 1-3 say; when none applies (a batch job
with no login session has no XDG_RUNTIME_DIR) it falls back to
/run/user/UID/vramz if /run/user/UID exists, which is where the C reader
looks for a process of user UID.
"""
import os

SYSTEM_DIR = "/run/vramz"


def _dirs(euid, publish):
    env = os.environ.get("VRAMZ_RUNTIME_DIR")
    if env:
        return [env]
    if euid == 0:
        return [SYSTEM_DIR]
    out = []
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/"):
        out.append(os.path.join(xdg, "vramz"))
    if not publish:
        out.append(SYSTEM_DIR)
    return out


def runtime_dir(euid=None):
    """The directory this process publishes into (rules 1-3), or None."""
    d = _dirs(os.geteuid() if euid is None else euid, True)
    return d[0] if d else None


def runtime_dirs(euid=None):
    """The directories a reader looks in, in order (rules 1-4)."""
    return _dirs(os.geteuid() if euid is None else euid, False)


def agent_dir(euid=None):
    """Where the agent publishes: runtime_dir(), else /run/user/UID/vramz
    when /run/user/UID exists, else None."""
    euid = os.geteuid() if euid is None else euid
    d = runtime_dir(euid)
    if d is None and os.path.isdir(f"/run/user/{euid}"):
        d = f"/run/user/{euid}/vramz"
    return d
