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

Whether to trust the directory is lib/rundir_open.c's rule too (docs/
daemon.md, "Trusting the runtime directory"; tests/rundir-cases.txt is the
table both are tested on): open_dir() opens it once, by descriptor (its
parents walked a component at a time, a symbolic link among them followed
only when owned by root or the effective user, the last component never),
and refuses it unless it is a directory owned by the effective user or
root (or, for a reader, the user whose directory it is) and writable by
nobody else - except a sticky one (as /tmp), where only our own files are
ever touched.  Every file is then reached relative to that descriptor.
"""
import errno
import os
import stat
from typing import List, Optional

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


def runtime_dir(euid: Optional[int] = None) -> Optional[str]:
    """The directory this process publishes into (rules 1-3), or None."""
    d = _dirs(os.geteuid() if euid is None else euid, True)
    return d[0] if d else None


def runtime_dirs(euid: Optional[int] = None) -> List[str]:
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


MAX_LINKS = 40


class Untrusted(OSError):
    """The runtime directory, or a name in it, fails the rule; strerror
    (and str()) say why, naming the path."""

    def __init__(self, msg):
        super().__init__(errno.EPERM, msg)

    def __str__(self):
        return self.strerror


def _trusted_uid(uid, also_uid=None):
    return uid == 0 or uid == os.geteuid() or (also_uid is not None and uid == also_uid)


def check(path, st, also_uid=None):
    """The rule applied to st, an fstat of the directory: True when shared
    (sticky and writable by others), False when private; raises
    NotADirectoryError or Untrusted."""
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, f"{path}: not a directory")
    if not _trusted_uid(st.st_uid, also_uid):
        raise Untrusted(f"{path}: not trusted: owned by uid {st.st_uid}, neither root nor you")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        if not st.st_mode & stat.S_ISVTX:
            who = "everyone" if st.st_mode & stat.S_IWOTH else "its group"
            raise Untrusted(f"{path}: not trusted: writable by {who} and not sticky")
        return True
    return False


_PATH_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


def _walk_parents(path, make_parents):
    """(descriptor of path's parent, last component), walking from / (or
    the working directory) one component at a time."""
    comps = [c for c in path.split("/") if c]
    cur = os.open("/" if path.startswith("/") else ".", _PATH_FLAGS)
    links = 0
    try:
        while len(comps) > 1:
            c = comps.pop(0)
            if c == ".":
                continue
            try:
                nfd = os.open(c, _PATH_FLAGS | os.O_NOFOLLOW, dir_fd=cur)
            except FileNotFoundError:
                if not make_parents:
                    raise
                try:
                    os.mkdir(c, 0o777, dir_fd=cur)  # as os.makedirs: the umask's mode
                except FileExistsError:
                    pass
                comps.insert(0, c)
                make_parents = make_parents - 1  # bounded, should another race it
                continue
            except OSError as e:
                if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                st = os.stat(c, dir_fd=cur, follow_symlinks=False)
                if not stat.S_ISLNK(st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, f"{path}: {c}: not a directory") from None
                if not _trusted_uid(st.st_uid):
                    raise Untrusted(f"{path}: not trusted: its parent {c} is a symbolic link "
                                    f"owned by uid {st.st_uid}, not followed") from None
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, f"{path}: too many symbolic links") from None
                target = os.readlink(c, dir_fd=cur)
                comps = [x for x in target.split("/") if x] + comps
                if target.startswith("/"):
                    os.close(cur)
                    cur = -1
                    cur = os.open("/", _PATH_FLAGS)
                continue
            os.close(cur)
            cur = nfd
        return cur, comps[0] if comps else "."
    except BaseException:
        if cur >= 0:
            os.close(cur)
        raise


def open_dir(path, create_mode=0, also_uid=None, make_parents=False):
    """Opens the runtime directory path under the rule: (descriptor, shared).
    The descriptor is O_PATH (openat, renameat, unlinkat, fstatat work on
    it; os.listdir needs os.open(".", O_RDONLY, dir_fd=fd)).  create_mode:
    made with it (umask applies) when absent, and with make_parents its
    missing parents too (as os.makedirs).  also_uid: a reader's trust of
    the user whose directory it is.  Raises Untrusted (refused: why),
    FileNotFoundError (absent), NotADirectoryError or another OSError, each
    with a strerror of one line naming the path."""
    try:
        return _open_dir(path, create_mode, also_uid, make_parents)
    except Untrusted:
        raise
    except OSError as e:
        msg = e.strerror or str(e)
        if not msg.startswith(f"{path}:") and not msg.startswith("cannot"):
            msg = f"{path}: {msg}"
        raise type(e)(e.errno, msg) from None


def _open_dir(path, create_mode, also_uid, make_parents):
    if not path:
        raise FileNotFoundError(errno.ENOENT, "empty runtime directory name")
    pfd, last = _walk_parents(path, 64 if (create_mode and make_parents) else 0)
    try:
        try:
            fd = os.open(last, _PATH_FLAGS | os.O_NOFOLLOW, dir_fd=pfd)
        except FileNotFoundError:
            if not create_mode:
                raise FileNotFoundError(errno.ENOENT, f"{path}: no such directory") from None
            try:
                os.mkdir(last, create_mode, dir_fd=pfd)
            except FileExistsError:
                pass
            fd = os.open(last, _PATH_FLAGS | os.O_NOFOLLOW, dir_fd=pfd)
    except OSError as e:
        if e.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                link = stat.S_ISLNK(os.stat(last, dir_fd=pfd, follow_symlinks=False).st_mode)
            except OSError:
                link = False
            if link:
                raise Untrusted(f"{path}: not trusted: a symbolic link, not followed") from None
            raise NotADirectoryError(errno.ENOTDIR, f"{path}: not a directory") from None
        raise
    finally:
        os.close(pfd)
    try:
        return fd, check(path, os.fstat(fd), also_uid)
    except BaseException:
        os.close(fd)
        raise


def own_file(dir_fd, name):
    """The lstat of name when it is a regular file owned by the effective
    user, else None."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() else None


def _kind(mode):
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISREG, "a file")):
        if test(mode):
            return word
    return "a device"


def create_tmp(dir_fd, name, mode, where="."):
    """Opens name in dir_fd for writing, O_CREAT|O_EXCL|O_NOFOLLOW|
    O_NONBLOCK: a FIFO, link or another user's file at the name is refused
    at once (Untrusted), never opened or waited on; a regular file of our
    own there (a write that died) is removed first.  where: the
    directory's path, for messages."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK
             | os.O_CLOEXEC)
    for again in range(2):
        try:
            return os.open(name, flags, mode, dir_fd=dir_fd)
        except FileExistsError:
            if again:
                raise
        if own_file(dir_fd, name) is None:
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone meanwhile: try once more
            raise Untrusted(f"{where}/{name}: refused: {_kind(st.st_mode)} owned by uid "
                            f"{st.st_uid} is at this temporary name")
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
    raise FileExistsError(errno.EEXIST, f"{where}/{name}")
