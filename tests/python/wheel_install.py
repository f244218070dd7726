# SPDX-License-Identifier: Apache-2.0
"""ctest python.wheel: the package stands alone after `pip install`.

pip builds the wheel from python/ offline, the wheel carries the licence,
py.typed and a long description with no link into the source tree, and
it installs with --no-index into a fresh venv.  Then, from a directory
outside the tree, with no libvramz and no daemon, vramz.snapshot() reads
the fake NVML through its own ctypes reader and agrees with `vramz status
--json` on every value that reader reads; given libvramz it uses that;
given neither, it raises one line that says how to get either.

Run by ctest with the fake NVML on LD_LIBRARY_PATH (VRAMZ_BIN,
VRAMZ_TEST_LIBRARY and SCENARIOS from its environment)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PKG = os.path.join(ROOT, "python")
BIN = os.environ.get("VRAMZ_BIN")
LIB = os.environ.get("VRAMZ_TEST_LIBRARY")
SCN = os.environ.get("SCENARIOS")
SANITIZED = os.environ.get("VRAMZ_SANITIZE") in ("1", "ON", "TRUE", "true")

# what the NVML reader reads; everything else of a GPU is None there
NVML_KEYS = ("index", "uuid", "name", "pci_bus_id", "lost", "mem_total_bytes",
             "mem_reserved_bytes", "mem_used_bytes", "mem_free_bytes", "mem_used_pct",
             "util_gpu_pct", "util_mem_pct", "temp_c", "power_mw", "power_limit_mw",
             "clock_sm_mhz", "clock_mem_mhz", "process_count")

PROBE = r"""
import json, sys, typing
import vramz
try:
    doc = vramz.snapshot()
except vramz.VramzError as e:
    print(json.dumps({"error": str(e), "how_to": vramz.HOW_TO}))
    sys.exit(0)
hints = {f.__name__: sorted(typing.get_type_hints(f)) for f in (vramz.snapshot, vramz.gpus, vramz.processes,
                                                                vramz.runtime_dir, vramz.runtime_dirs)}
print(json.dumps({"doc": doc, "file": vramz.__file__, "hints": hints}))
"""


@unittest.skipUnless(BIN and SCN, "run through ctest (needs the built tool and the fake NVML)")
class WheelStandsAlone(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="vramz-wheel-")
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
        env.pop("PYTHONPATH", None)
        cls.env = env
        wheels = os.path.join(cls.tmp, "wheels")
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-w", wheels, PKG], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        (cls.wheel,) = [os.path.join(wheels, w) for w in os.listdir(wheels) if w.endswith(".whl")]
        cls.venv = os.path.join(cls.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", cls.venv], check=True, timeout=300, capture_output=True)
        cls.py = os.path.join(cls.venv, "bin", "python")
        r = subprocess.run([cls.py, "-m", "pip", "install", "--no-index", cls.wheel], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.rundir = os.path.join(cls.tmp, "run")  # no daemon there
        os.mkdir(cls.rundir, 0o700)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def probe(self, **extra):
        env = dict(self.env, VRAMZ_RUNTIME_DIR=self.rundir,
                   FAKE_NVML_SCENARIO=os.path.join(SCN, "2gpu-h200.scn"))
        env.pop("VRAMZ_LIBRARY", None)
        env.update({k: v for k, v in extra.items() if v is not None})
        for k in [k for k, v in extra.items() if v is None]:
            env.pop(k, None)
        r = subprocess.run([self.py, "-c", PROBE], env=env, cwd=self.tmp, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_wheel_carries_licence_types_and_a_self_contained_description(self):
        with zipfile.ZipFile(self.wheel) as z:
            names = z.namelist()
            lic = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
            self.assertEqual(len(lic), 1, names)
            with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
                self.assertEqual(z.read(lic[0]), f.read())
            self.assertIn("vramz/py.typed", names)
            meta = z.read([n for n in names if n.endswith(".dist-info/METADATA")][0]).decode()
            self.assertIn("\nLicense-File: LICENSE\n", meta)
            self.assertNotIn("](../", meta, "a relative link is broken on an index")
            self.assertNotIn("](docs/", meta)

    @unittest.skipIf(SANITIZED, "an ASan fake NVML cannot load into an uninstrumented python")
    def test_snapshot_reads_nvml_itself_and_agrees_with_the_tool(self):
        out = self.probe(VRAMZ_NVML_LIBRARY=None)
        self.assertNotIn("error", out, out.get("error"))
        self.assertIn(os.path.join(self.venv, "lib"), out["file"], "the venv's copy, not the tree's")
        doc = out["doc"]
        self.assertEqual(doc["source"], "nvml")
        env = dict(self.env, FAKE_NVML_SCENARIO=os.path.join(SCN, "2gpu-h200.scn"), VRAMZ_NO_DAEMON="1")
        tool = json.loads(subprocess.run([BIN, "status", "--json"], env=env, capture_output=True,
                                         text=True, timeout=60, check=True).stdout)
        self.assertEqual(len(doc["gpus"]), 2)
        self.assertEqual(doc["system"]["driver_version"], tool["system"]["driver_version"])
        for mine, theirs in zip(doc["gpus"], tool["gpus"]):
            for k in NVML_KEYS:
                self.assertEqual(mine[k], theirs[k], f"gpu {theirs['index']} {k}")
            self.assertLessEqual({"fan_pct", "energy_mj", "ecc_mode", "throttle_reasons"}, set(mine))
            self.assertIsNone(mine["energy_mj"], "not read by this pass: None, never 0")
        key = lambda p: (p["gpu"], p["pid"])  # noqa: E731
        self.assertEqual(sorted((key(p), p["used_bytes"], p["type"]) for p in doc["processes"]),
                         sorted((key(p), p["used_bytes"], p["type"]) for p in tool["processes"]))
        self.assertTrue(doc["processes"])
        self.assertEqual(out["hints"]["snapshot"], ["live", "procs", "return"])
        for f in ("gpus", "processes", "runtime_dir", "runtime_dirs"):
            self.assertIn("return", out["hints"][f], f)

    @unittest.skipUnless(LIB, "needs the built libvramz")
    @unittest.skipIf(SANITIZED, "an ASan libvramz cannot load into an uninstrumented python")
    def test_snapshot_uses_libvramz_when_it_is_there(self):
        out = self.probe(VRAMZ_LIBRARY=LIB)
        self.assertEqual(out["doc"]["source"], "library")
        # a reading the NVML pass leaves out
        self.assertIsNotNone(out["doc"]["gpus"][1]["throttle_reasons"])

    def test_neither_says_how_to_get_one_in_one_line(self):
        out = self.probe(VRAMZ_NVML_LIBRARY=os.path.join(self.tmp, "no-libnvidia-ml.so.1"),
                         LD_LIBRARY_PATH="")
        msg = out["error"]
        self.assertNotIn("\n", msg)
        self.assertIn("libvramz could not be loaded", msg)
        self.assertIn("NVML could not be loaded", msg)
        self.assertTrue(msg.endswith(out["how_to"]), msg)
        self.assertIn("libnvidia-ml.so.1", out["how_to"])
        self.assertIn("VRAMZ_LIBRARY", out["how_to"])


if __name__ == "__main__":
    unittest.main()
