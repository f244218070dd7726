# SPDX-License-Identifier: Apache-2.0
"""The agent file format: what the C reader relies on."""
import os
import stat
import tempfile
import unittest

import _paths  # noqa: F401
from _cases import rows, unescape
from vramz import agentfile


class AgentFileTest(unittest.TestCase):
    def test_round_trip(self):
        text = agentfile.format_figures(
            {"pid": 42, "start_time_ticks": 1234, "torch": "2.11.0"},
            [{"cuda": 0, "uuid": "GPU-abc", "allocated_bytes": 10, "reserved_bytes": 20,
              "ooms": None}])
        self.assertTrue(text.startswith("vramz-torch 1\n"))
        self.assertIn("device cuda=0 uuid=GPU-abc allocated_bytes=10 reserved_bytes=20\n", text)
        self.assertNotIn("ooms", text, "an unknown figure is left out, not written as 0")
        d = agentfile.parse(text)
        self.assertEqual(d["process"], {"pid": 42, "start_time_ticks": 1234, "torch": "2.11.0"})
        self.assertEqual(d["device"][0]["reserved_bytes"], 20)

    def test_values_cannot_break_a_line(self):
        text = agentfile.format_figures({"pid": 1, "torch": "2.1 evil=1\nprocess pid=2"}, [])
        d = agentfile.parse(text)
        self.assertEqual(d["process"]["pid"], 1)
        self.assertEqual(len(text.splitlines()), 2)

    def test_site_file_names_keep_blanks(self):
        text = agentfile.format_sites({"pid": 1}, [{"cuda": 0, "bytes": 5, "blocks": 1, "line": 57,
                                                   "func": "step", "file": "/my dir/train.py"}])
        site = agentfile.parse(text)["site"][0]
        self.assertEqual(site["file"], "/my dir/train.py")
        self.assertEqual(site["line"], 57)

    def test_unknown_records_and_keys_are_ignored(self):
        d = agentfile.parse("vramz-torch 1\nprocess pid=3 future=x\nfuture a=1\n")
        self.assertEqual(d["process"]["pid"], 3)

    def test_wrong_magic_or_version_rejected(self):
        with self.assertRaisesRegex(ValueError, "not a vramz agent file"):
            agentfile.parse("hello 1\n")
        with self.assertRaisesRegex(ValueError, "version 2"):
            agentfile.parse("vramz-torch 2\n")

    def test_cases_table(self):
        """tests/agentfile-cases.txt, which lib/agent.c is tested on too
        (test_agentfile_cases.c): both readers read every file alike."""
        n = 0
        for name, text, want in rows("agentfile-cases.txt"):
            with self.subTest(case=name):
                self.assertEqual(self._summary(unescape(text).decode("utf-8", "replace")), want)
            n += 1
        self.assertGreaterEqual(n, 30)

    @staticmethod
    def _summary(text):
        try:
            d = agentfile.parse(text)
        except ValueError:
            return "refused"
        key = agentfile.process_key(d)
        if d["magic"] != agentfile.MAGIC or key is None:
            return "refused"
        dev = (d.get("device") or [{}])[0]
        figs = [agentfile.figure(dev, k) for k in ("allocated_bytes", "reserved_bytes")]
        return "pid=%d start=%d allocated=%s reserved=%s" % (
            key + tuple("-" if v is None else v for v in figs))

    def test_written_atomically_and_not_group_writable(self):
        with tempfile.TemporaryDirectory() as d:
            old = os.umask(0o002)
            try:
                agentfile.write_atomic(d, "torch-1-2", "vramz-torch 1\n")
            finally:
                os.umask(old)
            st = os.stat(os.path.join(d, "torch-1-2"))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
            self.assertEqual(os.listdir(d), ["torch-1-2"], "no temporary file left behind")


if __name__ == "__main__":
    unittest.main()
