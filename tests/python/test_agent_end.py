# SPDX-License-Identifier: Apache-2.0
"""How a process with the agent ended, against the stub torch, whose
allocations past the allocator's limit raise OutOfMemoryError the way
PyTorch does (num_ooms counted, the observer called in the allocating
thread, then the exception): the end record the agent leaves as a
tombstone, the out-of-memory error's site, limit and holders, and the
sweep that keeps tombstones for their time, then removes them."""
import os
import signal
import subprocess
import sys
import tempfile
import shutil
import time
import unittest

import _paths  # noqa: F401  (sys.path)
from _paths import child_env, wait_for

from vramz import agentfile
from vramz import _rundir

GiB = 1 << 30
MiB = 1 << 20

# a job that probes its batch size: one out-of-memory error caught, then
# it trains on and exits normally
CAUGHT = """
import sys, time
import torch, vramz.torch
torch.cuda.set_per_process_memory_fraction(0.25)
a = vramz.torch.attach(interval=0.02, quiet=True)
torch.cuda._stub.alloc(1 << 30)
def probe(n):
    return torch.cuda._stub.alloc(n << 30)  # PROBE-LINE
for n in (64, 48, 8):
    try:
        probe(n)
        break
    except torch.OutOfMemoryError:
        pass
time.sleep(0.1)
EXIT
"""

# a job that dies of one request that does not fit, with most of the GPU
# free (a per-process cap)
UNCAUGHT = """
import time
import torch, vramz.torch
torch.cuda.set_per_process_memory_fraction(0.25)
a = vramz.torch.attach(interval=0.02, quiet=True, history=HISTORY)
kept = [torch.cuda._stub.alloc(1 << 20)]
WAIT
def load():
    kept.append(torch.cuda._stub.alloc(20 << 30))  # HOLDER-LINE
def forward():
    return torch.cuda._stub.alloc(20 << 30)  # OOM-LINE
load()
time.sleep(0.1)
forward()
"""


def line_of(text, marker):
    for i, line in enumerate(text.splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(marker)


class EndTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vramz-end-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_script(self, text, args=(), runner=(), **env):
        path = os.path.join(self.dir, "job.py")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([sys.executable, *runner, path, *args], capture_output=True, text=True,
                           timeout=120, env=child_env(VRAMZ_RUNTIME_DIR=self.dir, **env))
        return r, path

    def left(self):
        return sorted(n for n in os.listdir(self.dir) if n.startswith("torch-"))

    def tomb(self):
        names = [n for n in self.left() if "." not in n]
        self.assertEqual(len(names), 1, self.left())
        with open(os.path.join(self.dir, names[0])) as f:
            return agentfile.parse(f.read())

    def test_caught_oom_then_normal_exit(self):
        r, path = self.run_script(CAUGHT.replace("EXIT", "pass"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.left()), 1, "the tombstone alone stays: " + str(self.left()))
        d = self.tomb()
        self.assertEqual(d["end"][0]["how"], "exit")
        self.assertNotIn("oom", d["end"][0])
        self.assertEqual(d["device"][0]["ooms"], 2, "the probe's two errors, counted")
        oom = d["oom"][0]
        self.assertEqual(oom["requested_bytes"], 48 * GiB)
        self.assertEqual(oom["file"], path)
        self.assertEqual(oom["line"], line_of(CAUGHT, "PROBE-LINE"))
        self.assertEqual(oom["func"], "probe")

    def test_sys_exit_status_is_recorded(self):
        r, _ = self.run_script(CAUGHT.replace("EXIT", "sys.exit(3)"))
        self.assertEqual(r.returncode, 3)
        self.assertEqual(self.tomb()["end"][0], {**self.tomb()["end"][0], "how": "exit", "status": 3})

    def test_python_m_runner_sees_a_raised_system_exit(self):
        r, _ = self.run_script(CAUGHT.replace("EXIT", "raise SystemExit(4)"),
                               runner=("-m", "vramz.torch"))
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertEqual(self.tomb()["end"][0]["status"], 4)

    def check_uncaught(self, history, wait=True):
        text = UNCAUGHT.replace("HISTORY", str(history)).replace(
            "WAIT", "time.sleep(0.2)  # CUDA has been up for ticks" if wait else "")
        r, path = self.run_script(text)
        self.assertEqual(r.returncode, 1)
        self.assertIn("OutOfMemoryError", r.stderr, "the user still sees the traceback")
        d = self.tomb()
        end = d["end"][0]
        self.assertEqual((end["how"], end["exception"], end["oom"], end["status"]),
                         ("exception", "torch.OutOfMemoryError", 1, 1))
        self.assertEqual((end["file"], end["line"], end["func"]),
                         (path, line_of(text, "OOM-LINE"), "forward"))
        oom = d["oom"][0]
        self.assertEqual((oom["file"], oom["line"], oom["func"]),
                         (path, line_of(text, "OOM-LINE"), "forward"))
        self.assertEqual(oom["requested_bytes"], 20 * GiB)
        self.assertEqual(oom["limit_bytes"], int(0.25 * 150754820096))
        self.assertGreater(oom["device_free_bytes"], 100 * GiB, "most of the GPU was free")
        self.assertEqual((oom["allocated_bytes"], oom["reserved_bytes"]),
                         (20 * GiB + MiB, 20 * GiB + MiB))
        return d, text, path

    def test_uncaught_oom_is_a_death_with_its_line(self):
        d, _, _ = self.check_uncaught(False)
        self.assertNotIn("holder", d, "holders need history=True")

    def test_history_names_what_held_the_memory(self):
        d, text, path = self.check_uncaught(True)
        h = d["holder"][0]
        self.assertEqual((h["file"], h["line"], h["func"], h["bytes"]),
                         (path, line_of(text, "HOLDER-LINE"), "load", 20 * GiB))

    def test_history_names_what_was_allocated_before_the_first_tick(self):
        # a job that loads its model as CUDA starts, before the agent's
        # first tick: stacks are recorded from CUDA's initialisation on
        # (seen on the H200: turned on at the first tick, the model's
        # blocks had no stack and the death named no holder)
        text = UNCAUGHT.replace("HISTORY", "True").replace("interval=0.02", "interval=30").replace(
            "WAIT\n", "").replace("load()\n", "").replace(
            "kept = [torch.cuda._stub.alloc(1 << 20)]",
            "def load():\n    return torch.cuda._stub.alloc(20 << 30)  # HOLDER-LINE\n"
            "kept = [load()]")
        r, path = self.run_script(text)
        self.assertEqual(r.returncode, 1, r.stderr)
        h = self.tomb()["holder"][0]
        self.assertEqual((h["file"], h["line"], h["func"], h["bytes"]),
                         (path, line_of(text, "HOLDER-LINE"), "load", 20 * GiB))

    def test_oom_at_the_first_allocation(self):
        # CUDA starts with the request that does not fit: the observer,
        # queued with torch.cuda._lazy_call, is attached before it
        text = ("import torch, vramz.torch\nvramz.torch.attach(interval=30, quiet=True)\n"
                "import time; time.sleep(0.2)\n"
                "torch.cuda._stub.alloc(200 << 30)  # FIRST\n")
        r, path = self.run_script(text)
        self.assertEqual(r.returncode, 1)
        d = self.tomb()
        self.assertEqual(d["end"][0]["oom"], 1)
        self.assertEqual((d["oom"][0]["line"], d["oom"][0]["requested_bytes"]), (4, 200 * GiB))

    def test_another_exception_is_not_an_oom(self):
        r, path = self.run_script("import torch, vramz.torch\nvramz.torch.attach(quiet=True)\n"
                                  "torch.cuda._stub.alloc(1 << 30)\nraise ValueError('bad config')\n")
        self.assertEqual(r.returncode, 1)
        end = self.tomb()["end"][0]
        self.assertEqual((end["exception"], end["oom"], end["line"]), ("ValueError", 0, 4))

    def test_a_replaced_excepthook_still_tells_the_death(self):
        text = ("import sys, torch, vramz.torch\nvramz.torch.attach(quiet=True)\n"
                "sys.excepthook = lambda *a: None\n"
                "torch.cuda.set_per_process_memory_fraction(0.1)\n"
                "torch.cuda._stub.alloc(50 << 30)\n")
        r, _ = self.run_script(text)
        self.assertEqual(r.returncode, 1)
        end = self.tomb()["end"][0]
        self.assertEqual((end["how"], end["oom"]), ("exception", 1))

    def test_sigterm_is_written_by_faulthandler_and_still_kills(self):
        text = ("import os, time, torch, vramz.torch\na = vramz.torch.attach(interval=0.02, quiet=True)\n"
                "torch.cuda._stub.alloc(1 << 30)\nprint('ready', flush=True)\ntime.sleep(60)\n")
        path = os.path.join(self.dir, "job.py")
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.Popen([sys.executable, path], stdout=subprocess.PIPE, text=True,
                             env=child_env(VRAMZ_RUNTIME_DIR=self.dir))
        self.assertEqual(p.stdout.readline().strip(), "ready")
        self.assertTrue(wait_for(lambda: any("." not in n for n in self.left())))
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), -signal.SIGTERM, "the default action still ends it")
        p.stdout.close()
        self.assertLess(time.monotonic() - t0, 5, "not deferred to the main thread's next bytecode")
        sig = [n for n in self.left() if n.endswith(".sig")]
        self.assertEqual(len(sig), 1)
        with open(os.path.join(self.dir, sig[0]), "rb") as f:
            self.assertIn(b'File "' + path.encode(), f.read())
        self.assertNotIn("end", self.tomb(), "no Python ran: the figures stay as they were")

    def test_a_sigterm_handler_of_the_job_is_left_alone(self):
        text = ("import signal, sys, time, torch, vramz.torch\n"
                "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
                "a = vramz.torch.attach(interval=0.02, quiet=True)\n"
                "torch.cuda._stub.alloc(1 << 30)\nprint('ready', flush=True)\ntime.sleep(60)\n")
        path = os.path.join(self.dir, "job.py")
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.Popen([sys.executable, path], stdout=subprocess.PIPE, text=True,
                             env=child_env(VRAMZ_RUNTIME_DIR=self.dir))
        self.assertEqual(p.stdout.readline().strip(), "ready")
        self.assertTrue(wait_for(lambda: any("." not in n for n in self.left())))
        self.assertFalse([n for n in self.left() if n.endswith(".sig")])
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), 7)
        p.stdout.close()
        self.assertEqual((self.tomb()["end"][0]["how"], self.tomb()["end"][0]["status"]), ("exit", 7))

    def test_a_forked_child_killed_by_sigterm_writes_nothing_of_its_parent(self):
        text = ("import os, signal, time, torch, vramz.torch\n"
                "a = vramz.torch.attach(interval=0.02, quiet=True)\ntorch.cuda._stub.alloc(1 << 30)\n"
                "pid = os.fork()\n"
                "if pid == 0:\n    time.sleep(60)\n    os._exit(0)\n"
                "time.sleep(0.2)\nos.kill(pid, signal.SIGTERM)\nos.waitpid(pid, 0)\n"
                "print('sig', os.path.getsize(a.sig_path))\n")
        r, _ = self.run_script(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "sig 0", "the child wrote into its parent's .sig")
        self.assertEqual(self.left(), [n for n in self.left() if "." not in n], "no .sig left")
        self.assertEqual(self.tomb()["end"][0]["how"], "exit")

    def test_detach_leaves_nothing(self):
        r, _ = self.run_script("import torch, vramz.torch\nvramz.torch.attach(interval=0.02, quiet=True)\n"
                               "torch.cuda._stub.alloc(1 << 30)\nimport time; time.sleep(0.1)\n"
                               "vramz.torch.detach()\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.left(), [])

    def test_no_cuda_no_tombstone(self):
        r, _ = self.run_script("import torch, vramz.torch\nvramz.torch.attach(interval=0.02, quiet=True)\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.left(), [])


class SweepTest(unittest.TestCase):
    """agentfile.sweep keeps a dead agent's tombstone for its time."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vramz-sweep-")
        self.fd, _ = _rundir.open_dir(self.dir)

    def tearDown(self):
        os.close(self.fd)
        shutil.rmtree(self.dir, ignore_errors=True)

    def put(self, name, text, age_s=0):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        t = time.time() - age_s
        os.utime(p, (t, t))

    def test_tombstones_stay_for_their_time_then_go(self):
        end = "vramz-torch 1\nprocess pid=1\nend time_ms=1 how=exit status=0\n"
        self.put("torch-4194901-1", end, 10)                    # young: stays
        self.put("torch-4194902-1", end, agentfile.TOMBSTONE_KEEP_S + 5)  # old: goes
        self.put("torch-4194903-1", "vramz-torch 1\nprocess pid=1\n", 10)  # kill -9: goes now
        self.put("torch-4194904-1", "vramz-torch 1\nprocess pid=1\n", 10)  # SIGTERM ...
        self.put("torch-4194904-1.sig", 'Thread 0x1 (most recent call first):\n  File "x.py"', 10)
        self.put("torch-4194905-1.sig", "", 10)                 # an empty .sig: goes
        self.put("torch-4194906-1", "vramz-torch 1\nprocess pid=1\n", 10)
        self.put("torch-4194906-1.sig", "not what faulthandler writes", 10)  # not ours: stays
        self.put("torch-4194901-1.sites", "vramz-torch-sites 1\n", 10)  # a tombstone's sites: go
        gone = agentfile.sweep(self.fd, lambda pid, start: False)
        self.assertEqual(sorted(gone), ["torch-4194901-1.sites", "torch-4194902-1",
                                        "torch-4194903-1", "torch-4194905-1.sig",
                                        "torch-4194906-1"])
        later = agentfile.sweep(self.fd, lambda pid, start: False,
                                now=time.time() + agentfile.TOMBSTONE_KEEP_S)
        self.assertEqual(sorted(later), ["torch-4194901-1", "torch-4194904-1", "torch-4194904-1.sig"])
        self.assertEqual(os.listdir(self.dir), ["torch-4194906-1.sig"])

    def test_a_live_agents_files_are_never_swept(self):
        self.put("torch-4194907-1", "vramz-torch 1\nend how=exit\n", agentfile.TOMBSTONE_KEEP_S * 2)
        self.assertEqual(agentfile.sweep(self.fd, lambda pid, start: True), [])


if __name__ == "__main__":
    unittest.main()
