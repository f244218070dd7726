# SPDX-License-Identifier: Apache-2.0
"""The Python package's lists of figures against the C tables they copy:
the PyTorch agent's figures (lib/torchfigs.h, the one list from which
lib/agent.c and lib/procfields.c are generated) and the agent file's
figure keys (lib/agentparse.c's agent_stat_keys).  A figure added on one side
only fails here."""
import os
import re
import unittest

import _paths
from vramz import _agentjoin, _clib, _fields, agentfile

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


if __name__ == "__main__":
    unittest.main()
