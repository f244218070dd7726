# SPDX-License-Identifier: Apache-2.0
"""The PyTorch agent against the stub torch: what it publishes, when, and
what it never does (initialise CUDA, snapshot per tick, outlive its
process's files)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import _paths
from _paths import wait_for, child_env

import torch  # the stub
import vramz.torch
from vramz import agentfile
from vramz import _proc
from vramz.torch import _agent

GiB = 1 << 30
MiB = 1 << 20


def leaky_step(n):
    out = []
    for _ in range(n):
        out.append(torch.cuda._stub.alloc(64 * MiB, skip=1))  # LEAK-LINE
    return out


def steady_step():
    return torch.cuda._stub.alloc(8 * MiB, skip=1)  # STEADY-LINE


def line_of(marker):
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "def line_of" not in line and "line_of(" not in line:
                return i
    raise AssertionError(marker)


class AgentTest(unittest.TestCase):
    def setUp(self):
        torch.cuda._stub.reset()
        self.dir = tempfile.mkdtemp(prefix="vramz-agent-")
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.stop()
        vramz.torch.detach()
        shutil.rmtree(self.dir, ignore_errors=True)

    def agent(self, **kw):
        a = _agent.Agent(self.dir, quiet=True, **kw)
        self.agents.append(a)
        return a

    def read(self, a, suffix=""):
        with open(a.path + suffix) as f:
            return agentfile.parse(f.read())

    def test_named_by_pid_and_start_time(self):
        a = self.agent()
        self.assertEqual(os.path.basename(a.path),
                         f"torch-{os.getpid()}-{_proc.start_time_ticks(os.getpid())}")

    def test_start_sweeps_files_of_dead_agents_only(self):
        me = _proc.start_time_ticks()
        # what dead agents left: figures, sites, an (empty) request
        dead = {"torch-4194999-5": "vramz-torch 1\n", "torch-4194999-5.sites": "vramz-torch-sites 1\n",
                "torch-4194999-5.req": "", "torch-4194999-5.sig": "",
                f"torch-{os.getpid()}-{me + 1}": "vramz-torch 1\n"}
        # a live agent's request, other names, and files named like an
        # agent's whose content is not (tests/rundir-cases.txt has more)
        keep = {f"torch-{os.getpid()}-{me}.req": "", "other-file": "vramz-torch 1\n",
                "torch-1-x": "vramz-torch 1\n", "torch-4194999-6": "precious\n",
                "torch-4194999-6.req": "not empty\n", "torch-4194999-6.sites": "vramz-torch 1\n"}
        for n, text in {**dead, **keep}.items():
            with open(os.path.join(self.dir, n), "w") as f:
                f.write(text)
        a = self.agent()
        a.start()
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(list(keep) + [a.name + ".sig"]))

    def test_nothing_before_cuda_is_initialised(self):
        a = self.agent()
        for _ in range(3):
            a.tick()
        self.assertFalse(os.path.exists(a.path))
        self.assertEqual(torch.cuda._stub.stats_calls, 0, "memory_stats read before CUDA init")
        self.assertEqual(torch.cuda._stub.contexts, 0)
        self.assertFalse(torch.cuda.is_initialized())

    def test_publishes_the_allocator_figures(self):
        a = self.agent()
        torch.cuda._stub.alloc(3 * GiB, reserve=4 * GiB)
        torch.cuda._stub.alloc(1 * GiB)
        torch.cuda._stub.dev[0].update(inactive_split=512 * MiB, retries=3)
        a.tick()
        d = self.read(a)
        self.assertEqual(d["process"]["pid"], os.getpid())
        self.assertEqual(d["process"]["start_time_ticks"], _proc.start_time_ticks())
        self.assertEqual(len(d["device"]), 1, "device 1 was never used: not listed")
        dev = d["device"][0]
        self.assertEqual(dev["uuid"], "GPU-00000000-0000-4000-8000-000000000000")
        self.assertEqual(dev["allocated_bytes"], 4 * GiB)
        self.assertEqual(dev["reserved_bytes"], 5 * GiB)
        self.assertEqual(dev["inactive_split_bytes"], 512 * MiB)
        self.assertEqual(dev["alloc_retries"], 3)
        self.assertEqual(dev["ooms"], 0)
        self.assertEqual(dev["allocations"], 2)
        self.assertEqual(torch.cuda._stub.contexts, 0)
        self.assertEqual(torch.cuda._stub.snapshot_calls, 0, "_snapshot() is never per tick")

    def test_second_device_listed_once_used(self):
        a = self.agent()
        torch.cuda._stub.alloc(GiB, device=1)
        a.tick()
        self.assertEqual([d["cuda"] for d in self.read(a)["device"]], [1])

    def test_thread_publishes_every_interval_and_cleans_up(self):
        a = vramz.torch.attach(interval=0.02, runtime_dir=self.dir, quiet=True)
        self.assertIs(vramz.torch.attach(), a, "a second attach returns the running agent")
        torch.cuda._stub.alloc(GiB)
        self.assertTrue(wait_for(lambda: os.path.exists(a.path)))
        torch.cuda._stub.alloc(GiB)
        self.assertTrue(wait_for(lambda: self.read(a)["device"][0]["allocated_bytes"] == 2 * GiB))
        self.assertTrue(wait_for(lambda: self.read(a)["process"]["seq"] >= 3))
        vramz.torch.detach()
        self.assertFalse(os.path.exists(a.path), "file removed at detach/exit")
        self.assertEqual(os.listdir(self.dir), [])

    def test_oom_is_published_at_once(self):
        a = vramz.torch.attach(interval=3600, runtime_dir=self.dir, quiet=True)
        torch.cuda._stub.alloc(GiB)
        a._wake.set()
        self.assertTrue(wait_for(lambda: os.path.exists(a.path)))
        self.assertTrue(wait_for(lambda: torch.cuda._stub.oom_observers))
        torch.cuda._stub.oom(0, 20 * GiB)
        # the interval is an hour: only the observer's wake-up publishes it
        self.assertTrue(wait_for(lambda: self.read(a)["device"][0]["ooms"] == 1))
        oom = self.read(a)["oom"][0]
        self.assertEqual(oom["requested_bytes"], 20 * GiB)
        self.assertEqual(oom["cuda"], 0)

    def test_forked_child_leaves_the_parents_file(self):
        a = self.agent()
        torch.cuda._stub.alloc(GiB)
        a.tick()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                a.stop()  # what atexit would run in the child
                code = 0 if vramz.torch.agent() is None else 3
            except BaseException:
                code = 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertTrue(os.path.exists(a.path), "a child removed its parent's file")

    def test_leak_sites_name_the_growing_line(self):
        _agent.MIN_SITES_INTERVAL_S = 0
        a = self.agent(history=True)
        torch.cuda.init()
        a.tick()  # history switches on once CUDA is up
        self.assertEqual(torch.cuda._stub.history["enabled"], "state",
                         "live blocks only: no event trace to bloat _snapshot()")
        keep = leaky_step(2) + [steady_step()]
        open(a.req_path, "w").close()
        a.tick()
        first = self.read(a, ".sites")
        self.assertFalse(os.path.exists(a.req_path), "request consumed")
        self.assertNotIn("since_ms", first["process"])
        top = first["site"][0]
        self.assertEqual((os.path.basename(top["file"]), top["line"], top["func"]),
                         ("test_agent.py", line_of("LEAK-LINE"), "leaky_step"))
        self.assertEqual(top["bytes"], 128 * MiB)
        keep += leaky_step(10)
        keep.append(steady_step())
        torch.cuda._stub.free(keep[2])  # the steady step frees what it made before
        open(a.req_path, "w").close()
        a.tick()
        second = self.read(a, ".sites")
        self.assertIn("since_ms", second["process"])
        self.assertEqual(second["process"]["growth_bytes"], 640 * MiB)
        top = second["site"][0]
        self.assertEqual((top["line"], top["func"], top["growth_bytes"]),
                         (line_of("LEAK-LINE"), "leaky_step", 640 * MiB))
        self.assertEqual(len(second["site"]), 1, "a site that did not grow is not listed")
        self.assertEqual(torch.cuda._stub.snapshot_calls, 2)
        a.stop()
        self.assertIsNone(torch.cuda._stub.history, "recording stops with the agent")

    def test_sites_requests_are_rate_limited(self):
        _agent.MIN_SITES_INTERVAL_S = 3600
        a = self.agent(history=True)
        torch.cuda._stub.alloc(GiB)
        a.tick()
        open(a.req_path, "w").close()
        a.tick()
        open(a.req_path, "w").close()
        a.tick()
        self.assertEqual(torch.cuda._stub.snapshot_calls, 1)
        self.assertTrue(os.path.exists(a.req_path), "the second request waits its turn")

    def test_sites_without_history_say_how_to_get_them(self):
        _agent.MIN_SITES_INTERVAL_S = 0
        a = self.agent()
        torch.cuda._stub.alloc(GiB)
        open(a.req_path, "w").close()
        a.tick()
        d = self.read(a, ".sites")
        self.assertIn("history=True", d["error"][0]["why"])
        self.assertEqual(torch.cuda._stub.snapshot_calls, 0)


SCRIPT = """
import os, sys, time
import torch
assert __name__ == "__main__"
torch.cuda._stub.alloc(1 << 30)
d = os.environ["VRAMZ_RUNTIME_DIR"]
for _ in range(2000):
    names = [n for n in os.listdir(d) if n.startswith("torch-")]
    if names:
        break
    time.sleep(0.01)
print("ARGS", sys.argv[1:], "FILES", names, "MINE", "torch-%d-" % os.getpid() in names[0])
"""


class AgentProcessTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vramz-agent-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_py(self, args, **env):
        return subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=120,
                              env=child_env(VRAMZ_RUNTIME_DIR=self.dir, **env), cwd=self.dir)

    def test_python_m_runs_the_script_with_the_agent(self):
        script = os.path.join(self.dir, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        r = self.run_py(["-m", "vramz.torch", "-i", "0.02", script, "--lr", "3"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ARGS ['--lr', '3'] FILES", r.stdout)
        self.assertIn("MINE True", r.stdout)
        left = [n for n in os.listdir(self.dir) if n.startswith("torch-")]
        self.assertEqual(len(left), 1, "only the figures file stays, as a tombstone")
        with open(os.path.join(self.dir, left[0])) as f:
            end = agentfile.parse(f.read())["end"][0]
        self.assertEqual((end["how"], end["status"]), ("exit", 0))

    def test_python_m_bad_usage(self):
        r = self.run_py(["-m", "vramz.torch", "-i", "zero", "x.py"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad interval 'zero'", r.stderr)

    def test_cpu_only_torch_publishes_nothing_and_says_why_once(self):
        r = self.run_py(["-c", "import time, vramz.torch; a = vramz.torch.attach(interval=0.01);"
                               "time.sleep(0.3); print(a is not None)"], VRAMZ_STUB_CPU_ONLY="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("CPU-only"), 1, r.stderr)
        self.assertEqual(os.listdir(self.dir), [])

    def test_torch_absent_publishes_nothing_and_says_why(self):
        env = child_env(VRAMZ_RUNTIME_DIR=self.dir)
        env["PYTHONPATH"] = _paths.PKG  # no stub: no torch at all
        r = subprocess.run([sys.executable, "-c", "import vramz.torch; print(vramz.torch.attach())"],
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "None")
        self.assertEqual(r.stderr.count("torch is not installed"), 1)
        self.assertEqual(os.listdir(self.dir), [])


if __name__ == "__main__":
    unittest.main()
