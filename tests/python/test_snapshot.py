# SPDX-License-Identifier: Apache-2.0
"""vramz.snapshot(): the same document as `vramz status --json`, through
libvramz against the fake NVML; a clear error when nothing can be read;
the daemon-segment path's own tests are test_segment.py."""
import json
import os
import subprocess
import tempfile
import unittest

from _paths import EnvCase
import vramz
from vramz import _segment, _rundir

BIN = os.environ.get("VRAMZ_BIN")
LIB = os.environ.get("VRAMZ_TEST_LIBRARY")
SCN = os.environ.get("SCENARIOS")
SANITIZED = os.environ.get("VRAMZ_SANITIZE") in ("1", "ON", "TRUE", "true")


class RuntimeDirTest(EnvCase):
    def test_rule_of_lib_rundir(self):
        self.setenv(VRAMZ_RUNTIME_DIR=None, XDG_RUNTIME_DIR="/run/user/1000")
        self.assertEqual(_rundir.runtime_dir(euid=0), "/run/vramz")
        self.assertEqual(_rundir.runtime_dir(euid=1000), "/run/user/1000/vramz")
        self.assertEqual(_rundir.runtime_dirs(euid=1000), ["/run/user/1000/vramz", "/run/vramz"])
        self.assertEqual(_rundir.runtime_dirs(euid=0), ["/run/vramz"])
        self.setenv(XDG_RUNTIME_DIR="relative/dir")
        self.assertIsNone(_rundir.runtime_dir(euid=1000), "a relative XDG_RUNTIME_DIR is no rule")
        self.assertEqual(_rundir.runtime_dirs(euid=1000), ["/run/vramz"])
        self.setenv(VRAMZ_RUNTIME_DIR="/tmp/x")
        self.assertEqual(_rundir.runtime_dir(euid=0), "/tmp/x")
        self.assertEqual(_rundir.runtime_dirs(euid=1000), ["/tmp/x"])


class SnapshotErrorsTest(EnvCase):
    def test_nothing_to_read_names_what_is_missing(self):
        with tempfile.TemporaryDirectory() as d:
            self.setenv(VRAMZ_RUNTIME_DIR=d, VRAMZ_LIBRARY=os.path.join(d, "libvramz.so.0"),
                        VRAMZ_NVML_LIBRARY=os.path.join(d, "libnvidia-ml.so.1"))
            with self.assertRaises(vramz.VramzError) as cm:
                vramz.snapshot()
            msg = str(cm.exception)
            self.assertIn(f"no live vramz daemon segment in {d}", msg)
            self.assertIn("libvramz could not be loaded", msg)
            self.assertIn("NVML could not be loaded", msg)
            self.assertNotIn("\n", msg)
            self.assertTrue(msg.endswith("; " + vramz.HOW_TO), msg)
            self.assertIn("set VRAMZ_LIBRARY", msg)

    def test_an_empty_runtime_dir_is_said(self):
        with tempfile.TemporaryDirectory() as d:
            doc, why = _segment.read(d)
            self.assertIsNone(doc)
            self.assertEqual(why, f"no segment in {d}")


@unittest.skipUnless(BIN and LIB and SCN, "run through ctest (needs the built tool and library)")
@unittest.skipIf(SANITIZED, "an ASan libvramz cannot load into an uninstrumented python")
class SnapshotLibraryTest(EnvCase):
    def compare(self, scenario):
        self.setenv(FAKE_NVML_SCENARIO=os.path.join(SCN, scenario), VRAMZ_LIBRARY=LIB,
                    VRAMZ_RUNTIME_DIR=tempfile.mkdtemp())
        doc = vramz.snapshot()
        tool = json.loads(subprocess.run([BIN, "status", "--json"], capture_output=True, check=True,
                                         timeout=60).stdout)
        self.assertEqual(doc.pop("source"), "library")
        for k in ("time", "time_ms", "source", "age_ms"):
            doc.pop(k, None)
            tool.pop(k, None)
        self.assertEqual(doc, tool)
        return doc

    def test_same_document_as_status_json(self):
        for s in ("2gpu-h200.scn", "8gpu.scn", "mig.scn", "errors.scn"):
            with self.subTest(scenario=s):
                self.compare(s)

    def test_conveniences(self):
        self.setenv(FAKE_NVML_SCENARIO=os.path.join(SCN, "2gpu-h200.scn"), VRAMZ_LIBRARY=LIB,
                    VRAMZ_RUNTIME_DIR=tempfile.mkdtemp())
        g = vramz.gpus()
        self.assertEqual([x["name"] for x in g], ["NVIDIA H200", "NVIDIA H200"])
        self.assertEqual(g[0]["mem_total_bytes"], 143771 << 20)
        self.assertTrue(all(p["pid"] for p in vramz.processes()))


if __name__ == "__main__":
    unittest.main()
