# SPDX-License-Identifier: Apache-2.0
"""The runtime directory's rule in Python, case by case from
tests/rundir-cases.txt (its header says what each column means), the
table tests/unit/test_rundir_cases.c walks for the C side: for each case
the layout is built, the readers (vramz._segment, vramz._agentjoin) say
what they trust, the directory is opened as the agent opens it
(vramz._rundir.open_dir), the agent's sweep runs and a file is written
through its temporary name, then every planted file's fate is checked and
that nothing else was written.  Then the agent itself: a FIFO at its
temporary name is refused at once and said once."""
import contextlib
import io
import os
import shutil
import signal
import stat
import tempfile
import unittest

import _paths  # noqa: F401  (the package and the stub torch on sys.path)

import torch  # the stub
from vramz import _agentjoin, _proc, _rundir, _segment, agentfile
from vramz.torch import _agent

NOBODY = 65534
TMP_NAME = ".torch-4194000-1.tmp"
OUT_NAME = "torch-4194000-1"
CASES = os.path.join(os.path.dirname(_paths.HERE), "rundir-cases.txt")


def _uid(word):
    return {"me": os.geteuid(), "root": 0, "nobody": NOBODY}[word]


def load():
    cases = []
    with open(CASES) as f:
        for line in f:
            if line.startswith("#") or len(line.split()) != 4:
                continue
            name, layout, opened, write = line.split()
            c = {"name": name, "open": opened, "write": write, "shape": None, "parent": None,
                 "items": [], "owners": set()}
            for it in layout.split(","):
                f = it.split(":")
                if f[0] == "none":
                    c["shape"] = "none"
                elif f[0] == "parent":
                    c["parent"] = _uid(f[1])
                    c["owners"].add(f[1])
                elif f[0] in ("dir", "link", "regular"):
                    c["shape"], c["mode"], c["owner"] = f[0], int(f[1], 8), _uid(f[2])
                    c["owners"].add(f[2])
                    if f[0] == "link":
                        c["owners"].add("root")  # its target is root's
                else:
                    kind, fname, owner, fate = f
                    c["items"].append({"kind": kind, "name": fname, "owner": _uid(owner), "fate": fate})
                    c["owners"].add(owner)
            cases.append(c)
    return cases


def agent_text(name, exact=True):
    """(pid, start, figures a reader believes) for torch-PID-START (with
    exact=False, any suffix after it), else None."""
    parts = (name if exact else name.split(".")[0]).split("-")
    if len(parts) != 3 or parts[0] != "torch" or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    pid, start = int(parts[1]), int(parts[2])
    return pid, start, f"vramz-torch 1\nprocess pid={pid} start_time_ticks={start}\n"


class RundirCases(unittest.TestCase):
    def setUp(self):
        self.base = tempfile.mkdtemp(prefix="vramz-rdc-")

    def tearDown(self):
        shutil.rmtree(self.base, ignore_errors=True)

    def put(self, path, text, owner):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
        os.lchown(path, owner, owner)

    def plant(self, d, it):
        path = os.path.join(d, it["name"])
        k, owner = it["kind"], it["owner"]
        if k == "agent":
            self.put(path, agent_text(it["name"], exact=False)[2], owner)
        elif k in ("sites", "req", "data"):
            self.put(path, {"sites": "vramz-torch-sites 1\n", "req": "", "data": "precious\n"}[k], owner)
        elif k == "fifo":
            os.mkfifo(path, 0o644)
            os.lchown(path, owner, owner)
        elif k == "symlink":
            os.symlink(os.path.join(self.base, "victim"), path)
            os.lchown(path, owner, owner)
        else:
            self.fail(f"unknown kind {k}")

    def build(self, c):
        """(the runtime directory's path, the real directory holding the items)"""
        self.put(os.path.join(self.base, "victim"), "precious\n", os.geteuid())
        holder, run = self.base, os.path.join(self.base, "run")
        if c["parent"] is not None:
            holder = os.path.join(self.base, "real")
            os.mkdir(holder, 0o755)
            os.symlink(holder, os.path.join(self.base, "via"))
            os.lchown(os.path.join(self.base, "via"), c["parent"], c["parent"])
            run = os.path.join(self.base, "via", "run")
        real = os.path.join(holder, "run")
        if c["shape"] == "dir":
            os.mkdir(real, 0o700)
            os.chmod(real, c["mode"])
            os.chown(real, c["owner"], c["owner"])
        elif c["shape"] == "link":
            real = os.path.join(self.base, "target")
            os.mkdir(real, 0o700)
            os.chmod(real, c["mode"])
            os.symlink(real, run)
            os.lchown(run, c["owner"], c["owner"])
        elif c["shape"] == "regular":
            self.put(real, "not a directory\n", c["owner"])
            os.chmod(real, c["mode"])
        for it in c["items"]:
            self.plant(real, it)
        return run, real

    def trusted(self, c):
        return c["open"] in ("ok", "shared")

    def check_readers(self, c, run):
        doc, why = _segment.read(run)
        self.assertIsNone(doc)
        if self.trusted(c) or c["shape"] == "none":
            self.assertEqual(why, f"no segment in {run}")
        elif c["open"] == "notdir":
            self.assertIn("not a directory", why)
        else:
            self.assertIn("not trusted", why)
        for it in c["items"]:
            a = agent_text(it["name"]) if it["kind"] == "agent" else None
            if a is None:
                continue
            # as join() looks into /run/user/UID/vramz for UID's process
            got = _agentjoin.lookup([(run, it["owner"])], a[0], a[1], it["owner"])
            want = self.trusted(c) or c["open"] == "theirs"
            self.assertEqual(got is not None, want, f"agent reader on {it['name']}")

    def publish(self, c, run):
        """The agent's work: open (make), sweep, write; the verdicts."""
        try:
            fd, shared = _rundir.open_dir(run, 0o700)
            got = "shared" if shared else "ok"
        except _rundir.Untrusted as e:
            got, fd = "refused", None
            self.assertIn("not trusted", str(e))
        except NotADirectoryError:
            got, fd = "notdir", None
        self.assertEqual(got, "refused" if c["open"] == "theirs" else c["open"])
        if fd is None:
            self.assertEqual(c["write"], "-")
            return
        try:
            agentfile.sweep(fd, _proc.alive)
            old = signal.signal(signal.SIGALRM, lambda *a: self.fail("the write blocked"))
            signal.alarm(5)
            try:
                agentfile.write_atomic(fd, OUT_NAME, "vramz-torch 1\n", where=run)
                wgot = "ok"
            except _rundir.Untrusted as e:
                wgot = "refused"
                self.assertIn("refused", str(e))
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
            self.assertEqual(wgot, c["write"])
        finally:
            os.close(fd)

    def check_after(self, c, real):
        expect = set()
        for it in c["items"]:
            path = os.path.join(real, it["name"])
            if it["fate"] in ("swept", "gone"):
                self.assertFalse(os.path.lexists(path), f"{it['name']} still there")
                continue
            expect.add(it["name"])
            st = os.lstat(path)
            self.assertEqual(st.st_uid, it["owner"])
            if it["kind"] == "fifo":
                self.assertTrue(stat.S_ISFIFO(st.st_mode))
            elif it["kind"] == "symlink":
                self.assertTrue(stat.S_ISLNK(st.st_mode))
            elif it["kind"] == "data":
                with open(path) as f:
                    self.assertEqual(f.read(), "precious\n")
        with open(os.path.join(self.base, "victim")) as f:
            self.assertEqual(f.read(), "precious\n", "the victim behind a link was written")
        if c["write"] == "ok":
            expect.add(OUT_NAME)
        if c["shape"] == "regular":
            return
        got = set(os.listdir(real)) if os.path.isdir(real) else set()
        self.assertEqual(got, expect, "something else was written, or removed")
        if c["shape"] == "none":
            self.assertEqual(stat.S_IMODE(os.stat(real).st_mode), 0o700)

    def run_case(self, c):
        if c["owners"] - {"me"} and os.geteuid() != 0:
            self.skipTest("chown needs root (CI runs as root)")
        run, real = self.build(c)
        self.check_readers(c, run)
        self.publish(c, run)
        self.check_after(c, real)


def _add(c):
    def test(self):
        self.run_case(c)
    test.__doc__ = f"rundir-cases.txt: {c['name']}"
    setattr(RundirCases, "test_" + c["name"].replace("-", "_"), test)


_CASES = load()
assert len(_CASES) >= 10, CASES
for _c in _CASES:
    _add(_c)


class AgentRefusals(unittest.TestCase):
    """The agent on the rule's refusals: it says so, once, and never blocks."""

    def setUp(self):
        torch.cuda._stub.reset()
        self.dir = tempfile.mkdtemp(prefix="vramz-agent-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_fifo_at_the_temporary_name_is_said_once(self):
        a = _agent.Agent(self.dir, interval=0.05)
        os.mkfifo(os.path.join(self.dir, f".{a.name}.tmp"))
        torch.cuda._stub.alloc(1 << 20)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            a.start()
            try:
                _paths.wait_for(lambda: "refused" in err.getvalue(), timeout=5)
                _paths.wait_for(lambda: a.seq >= 3, timeout=5)
            finally:
                a.stop()
        said = [ln for ln in err.getvalue().splitlines() if "FIFO" in ln]
        self.assertEqual(len(said), 1, err.getvalue())
        self.assertIn("not publishing", said[0])
        self.assertIn(f".{a.name}.tmp: refused: a FIFO", said[0])
        self.assertFalse(os.path.exists(a.path))
        self.assertTrue(stat.S_ISFIFO(os.lstat(os.path.join(self.dir, f".{a.name}.tmp")).st_mode))

    def test_a_symlinked_directory_is_not_published_in(self):
        target = os.path.join(self.dir, "target")
        os.mkdir(target, 0o700)
        os.symlink(target, os.path.join(self.dir, "run"))
        a = _agent.Agent(os.path.join(self.dir, "run"), quiet=True)
        with self.assertRaises(_rundir.Untrusted) as e:
            a.start()
        self.assertIn("a symbolic link, not followed", str(e.exception))
        self.assertEqual(os.listdir(target), [])


if __name__ == "__main__":
    unittest.main()
