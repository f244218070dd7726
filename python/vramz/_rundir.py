"""The runtime directory vramz's daemon segment and the agents' files live
in: the same rule as lib/rundir.c, so the C tool and Python agree.

    VRAMZ_RUNTIME_DIR       when set, always;
    /run/vramz              as root;
    $XDG_RUNTIME_DIR/vramz  otherwise;
    /run/user/UID/vramz     when XDG_RUNTIME_DIR is unset but that
                            directory's parent exists (ssh or batch jobs
                            without a login session).
"""
import os


def runtime_dir(euid=None):
    """The directory, or None when this user has none."""
    env = os.environ.get("VRAMZ_RUNTIME_DIR")
    if env:
        return env
    if euid is None:
        euid = os.geteuid()
    if euid == 0:
        return "/run/vramz"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "vramz")
    user_run = f"/run/user/{euid}"
    if os.path.isdir(user_run):
        return os.path.join(user_run, "vramz")
    return None
