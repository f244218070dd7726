# SPDX-License-Identifier: Apache-2.0
"""vramz._text against tests/text-cases.txt, the table lib/text.c is
tested on too (tests/unit/test_text_cases.c)."""
import os
import re
import unittest

import _paths  # noqa: F401
from vramz import _text

CASES = os.path.join(os.path.dirname(_paths.HERE), "text-cases.txt")


def unescape(s):
    out = bytearray()
    for m in re.finditer(r"\\x([0-9a-fA-F]{2})|\\t|\\\\|.", s, re.S):
        tok = m.group(0)
        out += (bytes([int(m.group(1), 16)]) if m.group(1) else b"\t" if tok == "\\t"
                else b"\\" if tok == "\\\\" else tok.encode("ascii"))
    return bytes(out)


class TextTest(unittest.TestCase):
    def test_cases_table(self):
        n = 0
        with open(CASES, encoding="ascii") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                name, raw, want = line.split("\t")
                with self.subTest(case=name):
                    self.assertEqual(_text.sanitize(unescape(raw)),
                                     unescape(want).decode("utf-8"))
                n += 1
        self.assertGreaterEqual(n, 18)

    def test_str_in_str_out(self):
        self.assertEqual(_text.sanitize("a\u202eb\x1b"), "a?b?")


if __name__ == "__main__":
    unittest.main()
