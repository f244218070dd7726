# SPDX-License-Identifier: Apache-2.0
"""The tables of cases the C and Python sides are both tested on
(tests/NAME-cases.txt), read as tests/unit/cases.h reads them: a row is NAME
and two fields, tab-separated, with the escapes \\n \\r \\v \\t \\\\ and
\\xHH; blank lines and # comments are skipped."""
import os

import _paths


def rows(name):
    """(name, field, field) of each row of tests/NAME, escapes kept."""
    with open(os.path.join(os.path.dirname(_paths.HERE), name), encoding="ascii") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                name_, a, b = line.split("\t")
                yield name_, a, b


def unescape(field):
    """A field's escapes undone: its bytes."""
    return field.encode("ascii").decode("unicode_escape").encode("latin-1")
