# SPDX-License-Identifier: Apache-2.0
"""The Python package's lists of figures against the C tables they copy:
the PyTorch agent's figures (lib/torchfigs.h, the one list from which
lib/agent.c and lib/procfields.c are generated) and the agent file's
figure keys (lib/agentparse.c's agent_stat_keys).  A figure added on one side
only fails here.  The GPU fields are generated from lib/fields.c
(_gpufields.py; the ctest python.fields checks it is current): here, that
the ctypes struct and the segment reader built from it lay the members
out where C does, and that its bits are the public header's."""
import ctypes
import os
import re
import unittest

import _paths
from vramz import _agentjoin, _clib, _fields, _gpufields, _segment, agentfile

LIB = os.path.join(_paths.ROOT, "lib")
T_BITS = {"VRAMZ_T_ALLOCATED": 1 << 0, "VRAMZ_T_RESERVED": 1 << 1, "VRAMZ_T_ACTIVE": 1 << 2,
          "VRAMZ_T_INACTIVE_SPLIT": 1 << 3, "VRAMZ_T_PEAK_ALLOCATED": 1 << 4,
          "VRAMZ_T_RETRIES": 1 << 5, "VRAMZ_T_OOMS": 1 << 6, "VRAMZ_T_ALLOCATIONS": 1 << 7}


def c_torch_figures():
    with open(os.path.join(LIB, "torchfigs.h"), encoding="utf-8") as f:
        text = f.read()
    rows = re.findall(r"^\s*X\((LOG|NOLOG), (\w+), (VRAMZ_T_\w+),", text, re.M)
    return tuple((key, T_BITS[bit], log == "LOG") for log, key, bit in rows)


def c_public_bits():
    with open(os.path.join(_paths.ROOT, "include", "vramz", "vramz.h"), encoding="utf-8") as f:
        return {m[0]: 1 << int(m[1]) for m in re.findall(r"(VRAMZ_T_\w+) = 1u << (\d+)", f.read())}


class FieldListsTest(unittest.TestCase):
    def test_the_bits_are_the_public_headers(self):
        public = c_public_bits()
        for name, bit in T_BITS.items():
            self.assertEqual(public.get(name), bit, name)

    def test_torch_figures_equal_the_c_list(self):
        c = c_torch_figures()
        self.assertGreaterEqual(len(c), 8, "lib/torchfigs.h not read")
        self.assertEqual(_fields.TORCH_FIGURES, c)

    def test_every_user_follows_the_one_list(self):
        keys = tuple(k for k, _, _ in c_torch_figures())
        self.assertEqual(_agentjoin.FIGURES, keys)
        self.assertEqual(tuple(k for k, _, _ in _clib.TORCH_FIELDS), keys)
        members = {name for name, _ in _clib.ProcSample._fields_}
        for _, _, m in _clib.TORCH_FIELDS:
            self.assertIn(m, members)

    def test_agent_file_keys_cover_the_c_reader(self):
        with open(os.path.join(LIB, "agentparse.c"), encoding="utf-8") as f:
            text = f.read()
        block = re.search(r"agent_stat_keys\[AS_COUNT\] = \{(.*?)\};", text, re.S).group(1)
        c_keys = re.findall(r'"(\w+)"', block)
        self.assertGreaterEqual(len(c_keys), 10)
        py_keys = [k for k, _ in agentfile.DEVICE_STATS]
        self.assertEqual(py_keys[:len(c_keys)], c_keys)


class GpuFieldsTest(unittest.TestCase):
    def test_ctypes_lays_the_sample_out_as_c(self):
        self.assertEqual(ctypes.sizeof(_clib.GpuSample), _gpufields.GPU_SAMPLE_SIZE)
        for member, _, c_off, _ in _gpufields.GPU_SAMPLE_MEMBERS:
            self.assertEqual(getattr(_clib.GpuSample, member).offset, c_off, member)

    def test_the_segment_reader_takes_the_tables_offsets(self):
        self.assertEqual({k: o for k, (o, _) in _segment.SAMPLE.items()},
                         {m: seg for m, _, _, seg in _gpufields.GPU_SAMPLE_MEMBERS})
        # a 1.0/1.1 record (192 bytes) carries no VRAM health, 1.2's all
        old = _segment._held(_gpufields.SEG_GPU_SAMPLE_MIN_SIZE)
        self.assertIn("proc_count", old)
        self.assertNotIn("ecc_mode", old)
        self.assertEqual(set(_segment._held(_gpufields.SEG_GPU_SAMPLE_SIZE)), set(_segment.SAMPLE))

    def test_the_bits_are_the_public_headers(self):
        with open(os.path.join(_paths.ROOT, "include", "vramz", "vramz.h"), encoding="utf-8") as f:
            public = {"F_" + m[0]: 1 << int(m[1]) for m in re.findall(r"VRAMZ_F_(\w+) = 1u << (\d+)", f.read())}
        self.assertGreaterEqual(len(public), 24, "include/vramz/vramz.h not read")
        mine = {k: v for k, v in vars(_gpufields).items() if k.startswith("F_")}
        self.assertEqual(mine, public)
        self.assertIs(_fields.GPU_FIELDS, _gpufields.GPU_FIELDS)


if __name__ == "__main__":
    unittest.main()
