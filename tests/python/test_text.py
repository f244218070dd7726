# SPDX-License-Identifier: Apache-2.0
"""vramz._text against tests/text-cases.txt, the table lib/text.c is
tested on too (tests/unit/test_text_cases.c)."""
import unittest

import _paths  # noqa: F401
from _cases import rows, unescape
from vramz import _text


class TextTest(unittest.TestCase):
    def test_cases_table(self):
        n = 0
        for name, raw, want in rows("text-cases.txt"):
            with self.subTest(case=name):
                self.assertEqual(_text.sanitize(unescape(raw)), unescape(want).decode("utf-8"))
            n += 1
        self.assertGreaterEqual(n, 18)

    def test_str_in_str_out(self):
        self.assertEqual(_text.sanitize("a\u202eb\x1b"), "a?b?")


if __name__ == "__main__":
    unittest.main()
