# SPDX-License-Identifier: Apache-2.0
"""checktable.py - the results table the GPU checks print last (one line
per check: what it is, what was got, what was wanted, PASS or FAIL), for
the checks whose Python part reads their logs (verdicts_check.sh,
verdicts_log_check.sh): sys.path.insert(0, "tests/gpu") and import."""


class Table:
    def __init__(self):
        self.rows = []

    def row(self, name, got, want, ok):
        self.rows.append((name, got, want, ok))

    def print(self):
        wd = max(len(r[0]) for r in self.rows)
        print(f'{"check":<{wd}}  {"got":<40}  {"want":<16}  ok')
        for name, got, want, ok in self.rows:
            print(f'{name:<{wd}}  {str(got)[:40]:<40}  {str(want)[:16]:<16}  {"PASS" if ok else "FAIL"}')
