# SPDX-License-Identifier: Apache-2.0
"""The package installs offline: the in-tree build backend makes a pure
wheel (with the VRAMZ_TORCH=1 .pth hook at the root of site-packages), and
`pip install ./python` into a fresh venv needs no network.  Then the hook
attaches the agent to a script that was not edited."""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

import _paths
from _paths import STUB

HAVE_VENV = True
try:
    import ensurepip  # noqa: F401  (Debian: python3-venv)
    import venv  # noqa: F401
except ImportError:
    HAVE_VENV = False


class WheelTest(unittest.TestCase):
    def test_backend_builds_a_complete_pure_wheel(self):
        sys.path.insert(0, _paths.PKG)
        import vramz_build
        with tempfile.TemporaryDirectory() as d:
            name = vramz_build.build_wheel(d)
            self.assertEqual(name, "vramz-0.2.0-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = set(z.namelist())
                for must in ("vramz/__init__.py", "vramz/torch/__init__.py", "vramz/torch/__main__.py",
                             "vramz/agentfile.py", "vramz-torch.pth",
                             "vramz-0.2.0.dist-info/RECORD", "vramz-0.2.0.dist-info/WHEEL"):
                    self.assertIn(must, names)
                self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
                meta = z.read("vramz-0.2.0.dist-info/METADATA").decode()
                self.assertIn("\nLicense: Apache-2.0\n", meta)
                record = z.read("vramz-0.2.0.dist-info/RECORD").decode().splitlines()
                for line in record:
                    path, digest, size = line.rsplit(",", 2)
                    if not digest:
                        continue
                    data = z.read(path)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual(digest, "sha256=" + want, path)
                    self.assertEqual(int(size), len(data), path)
            sdist = vramz_build.build_sdist(d)
            self.assertTrue(os.path.exists(os.path.join(d, sdist)))


@unittest.skipUnless(HAVE_VENV, "python3-venv is not installed")
class PipInstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="vramz-pip-")
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", cls.venv], check=True, timeout=300,
                       capture_output=True)
        cls.py = os.path.join(cls.venv, "bin", "python")
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   PIP_NO_CACHE_DIR="1")
        env.pop("PYTHONPATH", None)
        cls.pip = subprocess.run([cls.py, "-m", "pip", "install", _paths.PKG], env=env,
                                 capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_pip_install_offline(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)
        r = subprocess.run([self.py, "-c", "import vramz, vramz.torch, sys; print(vramz.__file__)"],
                           capture_output=True, text=True, timeout=60, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.join("site-packages", "vramz"), r.stdout)

    def test_pth_hook_attaches_with_vramz_torch_1(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stderr)
        rundir = os.path.join(self.tmp, "run")
        os.makedirs(rundir, exist_ok=True)
        script = ("import os, re, time, torch\n"
                  "torch.cuda._stub.alloc(1 << 30)\n"
                  "d = os.environ['VRAMZ_RUNTIME_DIR']\n"
                  "for _ in range(3000):\n"
                  "    n = [x for x in os.listdir(d) if re.fullmatch(r'torch-[0-9]+-[0-9]+', x)]\n"
                  "    if n: break\n"
                  "    time.sleep(0.01)\n"
                  "print(open(os.path.join(d, n[0])).read() if n else 'NONE')\n")
        base = dict(os.environ, PYTHONPATH=STUB, VRAMZ_RUNTIME_DIR=rundir)
        on = subprocess.run([self.py, "-c", script], capture_output=True, text=True, timeout=120,
                            env=dict(base, VRAMZ_TORCH="0.05"), cwd=self.tmp)
        self.assertEqual(on.returncode, 0, on.stderr)
        self.assertIn("allocated_bytes=1073741824", on.stdout)
        self.assertIn("interval_ms=50", on.stdout)
        left = os.listdir(rundir)  # its figures, kept as a tombstone with how it ended
        self.assertEqual(len(left), 1, left)
        with open(os.path.join(rundir, left[0])) as f:
            self.assertIn("\nend ", f.read())
        off = subprocess.run([self.py, "-c", "import sys; print('vramz' in sys.modules)"],
                             capture_output=True, text=True, timeout=60, env=base)
        self.assertEqual(off.stdout.strip(), "False", "without VRAMZ_TORCH the hook imports nothing")
        self.assertEqual(os.listdir(rundir), left)


if __name__ == "__main__":
    unittest.main()
