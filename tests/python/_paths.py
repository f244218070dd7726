# SPDX-License-Identifier: Apache-2.0
"""Puts the package (python/) and the stub torch first on sys.path, and
helpers the tests share."""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PKG = os.path.join(ROOT, "python")
STUB = os.path.join(HERE, "stub")
for p in (STUB, PKG):
    if p not in sys.path:
        sys.path.insert(0, p)


def wait_for(cond, timeout=20.0, step=0.01):
    """Polls cond until true; False after timeout (generous: CI is slow,
    and a pass never waits for it)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


def child_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([STUB, PKG])
    env.update({k: v for k, v in extra.items() if v is not None})
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
    return env


class EnvCase(unittest.TestCase):
    """A test case whose setenv() changes os.environ for the test alone
    (None removes a variable); each change is undone at cleanup."""

    def setenv(self, **kw):
        for k, v in kw.items():
            old = os.environ.get(k)
            self.addCleanup(lambda k=k, old=old: os.environ.__setitem__(k, old) if old is not None
                            else os.environ.pop(k, None))
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
