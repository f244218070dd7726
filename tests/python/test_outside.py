# SPDX-License-Identifier: Apache-2.0
"""The agent's `outside` records (issue 37): where memory outside PyTorch's
allocator appeared - the CUDA context, CUDA libraries, NCCL's
communicators per process group - measured against the stub torch, whose
torch.distributed adds memory the way NCCL 2.28 does (564 MiB a
single-rank communicator) and whose NVML stand-in answers with the
process's own figure."""
import os
import shutil
import sys
import tempfile
import types
import unittest

import _paths  # noqa: F401

import torch  # the stub
import torch.distributed as dist
from torch.distributed import distributed_c10d as c10d
from vramz import agentfile
from vramz.torch import _agent, _outside

MiB = 1 << 20
CTX = torch.cuda.CONTEXT_BYTES
COMM = torch.cuda.COMM_BYTES


def on(dev):
    """A tensor on CUDA device dev, as a collective sees it."""
    return types.SimpleNamespace(device=torch.device("cuda", dev))


class NoNvml:
    def process_bytes(self, uuid, pid):
        return None


class OutsideTest(unittest.TestCase):
    def setUp(self):
        torch.cuda._stub.reset()
        c10d._reset()
        self.dir = tempfile.mkdtemp(prefix="vramz-outside-")
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.stop()
        c10d._reset()
        shutil.rmtree(self.dir, ignore_errors=True)

    def agent(self, nvml=True):
        a = _agent.Agent(self.dir, quiet=True)
        self.agents.append(a)
        a.outside.nvml = torch.cuda._stub.nvml() if nvml else NoNvml()
        a.outside._new_libs = lambda: set()  # the tests say which libraries appear
        a.outside.install()
        return a

    def records(self, a):
        a.tick()
        with open(a.path) as f:
            d = agentfile.parse(f.read())
        self.assertEqual(d["process"]["outside"], 1)
        return [{k: v for k, v in r.items() if k != "time_ms"} for r in d.get("outside", [])]

    def test_the_issue_table_context_libraries_one_communicator_three_groups(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)      # CUDA up, the context made
        self.assertEqual([(r["part"], r["bytes"], r["how"]) for r in self.records(a)],
                         [("context", CTX, "process")])
        a.outside._new_libs = lambda: {"libcudnn_cnn"}
        torch.cuda._stub.outside_add(0, 74 * MiB)  # cuDNN's first conv
        a.tick()
        a.outside._new_libs = lambda: set()
        torch.cuda._stub.outside_add(0, 40 * MiB)  # cuBLAS: mapped with torch, not told
        a.tick()
        dist.init_process_group("nccl", world_size=1, device_id=torch.device("cuda", 0))
        for _ in range(3):
            g = dist.new_group([0])
            dist.all_reduce(on(0), group=g)
        recs = self.records(a)
        self.assertEqual([(r["part"], r["bytes"]) for r in recs],
                         [("context", CTX), ("libraries", 74 * MiB), ("other", 40 * MiB),
                          ("nccl", COMM), ("nccl", COMM), ("nccl", COMM), ("nccl", COMM)])
        self.assertEqual(recs[1]["lib"], "libcudnn_cnn")
        nccl = recs[3:]
        self.assertEqual([r["comm"] for r in nccl], [0, 1, 2, 3])
        self.assertEqual([r["group"] for r in nccl], ["nccl:0"] * 4)
        self.assertEqual([r["at"] for r in nccl], ["init_process_group"] + ["new_group"] * 3)
        self.assertEqual({r["uuid"] for r in recs}, {"GPU-00000000-0000-4000-8000-000000000000"})
        self.assertTrue(all(r["how"] == "process" and r["cuda"] == 0 for r in recs))
        # the parts sum to NVML's figure minus reserved
        self.assertEqual(sum(r["bytes"] for r in recs),
                         torch.cuda._stub.process_bytes(0) - torch.cuda._stub.dev[0]["reserved"])

    def test_a_lazy_communicator_is_measured_at_the_groups_first_collective_only(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        a.tick()
        dist.init_process_group("nccl", world_size=4)  # no device_id: nothing made yet
        g = dist.new_group([0, 1, 3])
        self.assertEqual([r["part"] for r in self.records(a)], ["context"])
        dist.all_reduce(on(0))
        dist.all_reduce(on(0), group=g)
        calls = torch.cuda._stub.nvml_calls
        stats = torch.cuda._stub.stats_calls
        for _ in range(5):  # later calls pass straight through: no measure
            dist.all_reduce(on(0))
            dist.broadcast(on(0), 0, group=g)
        self.assertEqual((torch.cuda._stub.nvml_calls, torch.cuda._stub.stats_calls), (calls, stats))
        self.assertEqual(c10d._state["calls"], 4 + 10)
        recs = self.records(a)
        self.assertEqual([(r["part"], r["bytes"], r["group"], r["at"], r["comm"]) for r in recs[1:]],
                         [("nccl", COMM, "nccl:0-3", "all_reduce", 0),
                          ("nccl", COMM, "nccl:0-1,3", "all_reduce", 1)])

    def test_gloo_only_is_never_measured(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        a.tick()
        calls = torch.cuda._stub.nvml_calls
        dist.init_process_group("gloo", world_size=2)
        g = dist.new_group()
        dist.all_reduce(on(0), group=g)
        dist.barrier()
        self.assertEqual(torch.cuda._stub.nvml_calls, calls)
        self.assertEqual([r["part"] for r in self.records(a)], ["context"])

    def test_a_process_that_never_calls_a_collective(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        dist.init_process_group("nccl", world_size=8)
        dist.new_group([0, 1])
        dist.new_group([2, 3])
        self.assertEqual([r["part"] for r in self.records(a)], ["context"])

    def test_without_torch_distributed(self):
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.startswith("torch.distributed")}
        try:
            a = _agent.Agent(self.dir, quiet=True)
            self.agents.append(a)
            a.outside.nvml = torch.cuda._stub.nvml()
            a.outside.install()
            self.assertFalse(a.outside.originals)
            torch.cuda._stub.alloc(2 * MiB)
            self.assertEqual([(r["part"], r["bytes"]) for r in self.records(a)], [("context", CTX)])
        finally:
            sys.modules.update(saved)

    def test_without_nvml_the_device_figure_around_the_call(self):
        a = self.agent(nvml=False)
        torch.cuda._stub.alloc(2 * MiB)
        torch.cuda._stub.others_bytes[0] = 9 << 30  # another process: constant meanwhile
        dist.init_process_group("nccl", world_size=2, device_id=torch.device("cuda", 0))
        recs = self.records(a)
        # no context: the device's figure cannot tell it (it is vramz's "other")
        self.assertEqual([(r["part"], r["bytes"], r["how"], r["group"]) for r in recs],
                         [("nccl", COMM, "device", "nccl:0-1")])

    def test_a_group_on_the_second_gpu_and_a_context_made_by_the_call(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        dist.init_process_group("nccl", world_size=2)
        dist.all_reduce(on(1))  # device 1 had no context: made first, then measured
        recs = self.records(a)
        self.assertEqual([(r["part"], r["cuda"], r["bytes"]) for r in recs],
                         [("context", 0, CTX), ("context", 1, CTX), ("nccl", 1, COMM)])
        self.assertEqual(recs[2]["uuid"], "GPU-00000001-0000-4000-8000-000000000001")

    def test_destroy_process_group_forgets_what_it_ended(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        dist.init_process_group("nccl", world_size=1, device_id=0)
        g = dist.new_group([0])
        dist.destroy_process_group(g)
        self.assertEqual([(r["part"], r.get("comm")) for r in self.records(a)],
                         [("context", None), ("nccl", 0)])
        dist.destroy_process_group()
        self.assertEqual([r["part"] for r in self.records(a)], ["context"])

    def test_wrappers_live_in_both_modules_and_go_with_the_agent(self):
        orig = c10d.all_reduce
        a = self.agent()
        self.assertIs(dist.all_reduce, c10d.all_reduce)
        self.assertIsNot(dist.all_reduce, orig)
        self.assertIs(dist.all_reduce.__wrapped__, orig)
        a.stop()
        self.assertIs(dist.all_reduce, orig)
        self.assertIs(c10d.all_reduce, orig)

    def test_a_failing_call_keeps_its_own_error(self):
        self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        with self.assertRaises(ValueError):
            dist.new_group([0])  # before init_process_group, as torch refuses

    def test_records_are_bounded(self):
        a = self.agent()
        torch.cuda._stub.alloc(2 * MiB)
        dist.init_process_group("nccl", world_size=1, device_id=0)
        for _ in range(_outside.MAX_RECORDS + 10):
            dist.new_group([0])
        recs = self.records(a)
        self.assertEqual(len(recs), _outside.MAX_RECORDS)
        nccl = [r for r in recs if r["part"] == "nccl"]
        self.assertEqual(sum(r["bytes"] for r in nccl), (_outside.MAX_RECORDS + 11) * COMM)
        self.assertEqual(sum(r.get("comms", 1) for r in nccl), _outside.MAX_RECORDS + 11)


class RanksTest(unittest.TestCase):
    def test_ranks_as_one_token(self):
        self.assertEqual(_outside.ranks_text([0, 1, 2, 3, 6]), "0-3,6")
        self.assertEqual(_outside.ranks_text(range(512)), "0-511")
        self.assertEqual(_outside.ranks_text([5]), "5")
        self.assertLessEqual(len(_outside.ranks_text(range(0, 4096, 2))), 64)


if __name__ == "__main__":
    unittest.main()
