# SPDX-License-Identifier: Apache-2.0
"""The pure-Python reader of a `vramz daemon`'s segment (vramz._segment,
docs/daemon.md's layout): the real daemon runs against the fake NVML, the
reader's document must equal what `vramz status --json` prints from the
same daemon, and vramz.snapshot() must prefer it to libvramz.  Files that
must not be trusted - truncated, wrong magic, another major version,
group- or other-writable, another user's, a stale or dead publisher's, a
torn or corrupt snapshot - are refused with a line saying why."""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import _paths
from _paths import EnvCase
import vramz
from vramz import _segment

BIN = os.environ.get("VRAMZ_BIN")
SCN = os.environ.get("SCENARIOS")
VOLATILE = ("time", "time_ms", "age_ms")


class Daemon:
    """`vramz daemon ARGS` publishing in a fresh runtime directory."""

    def __init__(self, scenario, *args, runtime_dir=None):
        self.own_dir = runtime_dir is None
        self.dir = runtime_dir or tempfile.mkdtemp(prefix="vramz-pyseg.")
        self.env = dict(os.environ, VRAMZ_RUNTIME_DIR=self.dir,
                        FAKE_NVML_SCENARIO=os.path.join(SCN, scenario))
        self.err = open(os.path.join(self.dir, "daemon.err"), "w+")
        self.proc = subprocess.Popen([BIN, "daemon", *args], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        self.path = os.path.join(self.dir, "segment")

        def published():
            try:
                with open(self.path, "rb") as f:
                    h = f.read(144)
            except OSError:
                return False
            return len(h) == 144 and struct.unpack_from("<Q", h, 136)[0] > 0
        if not _paths.wait_for(published, timeout=30):
            self.stop()
            self.err.seek(0)
            raise AssertionError("the daemon never published: " + self.err.read())

    def status(self, *args):
        """`vramz status --json` as a reader of this daemon sees it."""
        out = subprocess.run([BIN, "status", "--json", *args], env=self.env, capture_output=True,
                             timeout=60, check=True).stdout
        return json.loads(out)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)
        self.err.close()

    def cleanup(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def strip(doc):
    doc = dict(doc)
    for k in VOLATILE:
        doc.pop(k, None)
    return doc


class DaemonCase(EnvCase):
    def daemon(self, scenario, *args):
        d = Daemon(scenario, *args)
        self.addCleanup(d.cleanup)
        # neither the library nor NVML must be what answers: paths that
        # do not load
        self.setenv(VRAMZ_RUNTIME_DIR=d.dir, VRAMZ_NO_DAEMON=None,
                    VRAMZ_LIBRARY=os.path.join(d.dir, "no-libvramz.so.0"),
                    VRAMZ_NVML_LIBRARY=os.path.join(d.dir, "no-libnvidia-ml.so.1"),
                    FAKE_NVML_SCENARIO=d.env["FAKE_NVML_SCENARIO"])
        return d


@unittest.skipUnless(BIN and SCN, "run through ctest (needs the built tool)")
class DaemonSegmentTest(DaemonCase):
    def same_as_status(self, scenario):
        d = self.daemon(scenario, "-i", "1s", "--procs")
        mine = vramz.snapshot()
        tool = d.status()
        self.assertEqual(mine["source"], "daemon")
        self.assertEqual(tool["source"], "daemon")
        self.assertEqual(mine["daemon_pid"], d.proc.pid)
        self.assertTrue(0 <= mine["age_ms"] <= 2000, mine["age_ms"])  # fresh: two 1 s ticks
        # what a user compares first, said apart so a failure reads plainly
        self.assertEqual([(g["uuid"], g["mem_used_bytes"]) for g in mine["gpus"]],
                         [(g["uuid"], g["mem_used_bytes"]) for g in tool["gpus"]])
        self.assertEqual([(p["gpu"], p["pid"], p["used_bytes"]) for p in mine["processes"]],
                         [(p["gpu"], p["pid"], p["used_bytes"]) for p in tool["processes"]])
        self.assertTrue(mine["processes"])
        self.assertEqual(strip(mine), strip(tool))
        return mine

    def test_same_document_as_status_json(self):
        for s in ("2gpu-h200.scn", "mig.scn", "errors.scn"):
            with self.subTest(scenario=s):
                self.same_as_status(s)

    def test_processes_attributed_by_the_daemon(self):
        doc = self.same_as_status("2gpu-h200.scn")
        self.assertEqual(doc["system"]["backend"], "daemon")
        self.assertEqual(doc["system"]["driver_version"], "580.159.04")

    def test_gpus_only_daemon_serves_gpus_not_processes(self):
        d = self.daemon("2gpu-h200.scn", "-i", "1s")
        g = vramz.gpus()
        self.assertEqual(len(g), 2)
        self.assertEqual(strip(vramz.snapshot(procs=False))["gpus"], d.status("-P")["gpus"])
        with self.assertRaises(vramz.VramzError) as cm:
            vramz.snapshot()
        self.assertIn("it publishes no processes (vramz daemon --procs)", str(cm.exception))
        self.assertIn("libvramz could not be loaded", str(cm.exception))

    def test_a_daemon_of_some_gpus_is_not_the_machine(self):
        self.daemon("2gpu-h200.scn", "-i", "1s", "--procs", "-g", "1")
        with self.assertRaises(vramz.VramzError) as cm:
            vramz.snapshot()
        self.assertIn("it does not sample every GPU", str(cm.exception))

    def test_live_and_no_daemon_skip_it(self):
        self.daemon("2gpu-h200.scn", "-i", "1s", "--procs")
        with self.assertRaises(vramz.VramzError) as cm:
            vramz.snapshot(live=True)
        self.assertIn("live=True", str(cm.exception))
        self.setenv(VRAMZ_NO_DAEMON="1")
        with self.assertRaises(vramz.VramzError):
            vramz.snapshot()

    def test_stopped_daemon_leaves_nothing_to_read(self):
        d = self.daemon("2gpu-h200.scn", "-i", "1s", "--procs")
        self.assertEqual(vramz.snapshot()["source"], "daemon")
        d.stop()
        doc, why = _segment.read(d.dir)
        self.assertIsNone(doc)
        with self.assertRaises(vramz.VramzError) as cm:
            vramz.snapshot()
        self.assertIn(f"no live vramz daemon segment in {d.dir}", str(cm.exception))

    def test_killed_daemon_is_gone(self):
        d = self.daemon("2gpu-h200.scn", "-i", "1s", "--procs")
        pid = d.proc.pid
        d.stop(signal.SIGKILL)
        with self.assertRaises(_segment.SegmentError) as cm:
            _segment.read_file(d.path)
        self.assertIn(f"its daemon (pid {pid}) is gone", str(cm.exception))
        doc, why = _segment.read(d.dir)
        self.assertIsNone(doc)
        self.assertIn("is gone", why)


AGENT = """
import os, sys, time
import torch, vramz.torch
s = torch.cuda._stub
s.alloc(3 << 30, reserve=4 << 30)
s.alloc(1 << 30)
s.dev[0].update(inactive_split=512 << 20, retries=3)
a = vramz.torch.attach(interval=0.05)
while not os.path.exists(a.path):
    time.sleep(0.01)
print("ready", flush=True)
end = time.time() + 120
while time.time() < end and not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
"""


@unittest.skipUnless(BIN and SCN, "run through ctest (needs the built tool)")
class DaemonAgentTest(DaemonCase):
    """A process with a PyTorch agent (the stub torch) on a GPU the daemon
    samples: the segment carries no agent figures, so the reader joins the
    agent's file itself, as `vramz status --json` from a daemon does."""

    def test_torch_object_joined_like_status_json(self):
        run = tempfile.mkdtemp(prefix="vramz-pyseg-agent.")
        self.addCleanup(shutil.rmtree, run, True)
        stop = os.path.join(run, "stop")
        agent = subprocess.Popen([sys.executable, "-c", AGENT, stop], stdout=subprocess.PIPE,
                                 env=_paths.child_env(VRAMZ_RUNTIME_DIR=run), text=True)

        def end():
            open(stop, "w").close()
            agent.wait(timeout=60)
            agent.stdout.close()
        self.addCleanup(end)
        self.assertEqual(agent.stdout.readline().split(), ["ready"])
        scn = os.path.join(run, "m.scn")
        with open(scn, "w") as f:
            f.write("driver 580.159.04\n"
                    'gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 '
                    "mem_total=143771MiB util=50\n"
                    'gpu 1 name="NVIDIA H200" uuid=GPU-00000001-0000-4000-8000-000000000001 '
                    "mem_total=143771MiB\n"
                    f"proc gpu=0 pid={agent.pid} used=6GiB\n"
                    f"proc gpu=1 pid={agent.pid} used=600MiB\n"
                    "proc gpu=0 pid=4200999 used=1GiB\n")
        # the daemon publishes in the agent's runtime directory
        self.setenv(VRAMZ_RUNTIME_DIR=run, VRAMZ_NO_DAEMON=None,
                    VRAMZ_LIBRARY=os.path.join(run, "no-libvramz.so.0"),
                    VRAMZ_NVML_LIBRARY=os.path.join(run, "no-libnvidia-ml.so.1"), FAKE_NVML_SCENARIO=scn)
        d = Daemon(scn, "-i", "1s", "--procs", runtime_dir=run)
        self.addCleanup(d.cleanup)
        mine, tool = vramz.snapshot(), d.status()
        self.assertEqual(mine["source"], "daemon")
        self.assertEqual(tool["source"], "daemon")
        row = {(p["pid"], p["gpu"]): p for p in mine["processes"]}
        t0 = row[(agent.pid, 0)]["torch"]
        self.assertEqual((t0["allocated_bytes"], t0["reserved_bytes"], t0["inactive_split_bytes"],
                          t0["alloc_retries"]), (4 << 30, 5 << 30, 512 << 20, 3))
        self.assertEqual(row[(agent.pid, 0)]["outside_allocator_bytes"], 1 << 30)
        self.assertEqual(row[(agent.pid, 1)]["torch"]["reserved_bytes"], 0)  # never used
        self.assertEqual(row[(agent.pid, 1)]["outside_allocator_bytes"], 600 << 20)
        self.assertIsNone(row[(4200999, 0)]["torch"])
        self.assertIsNone(row[(4200999, 0)]["outside_allocator_bytes"])
        # the agent publishes every 50 ms: its time_ms differs between reads
        for doc in (mine, tool):
            for p in doc["processes"]:
                if p["torch"]:
                    p["torch"].pop("time_ms")
        self.assertEqual(strip(mine), strip(tool))


@unittest.skipUnless(BIN and SCN, "run through ctest (needs the built tool)")
class UntrustedSegmentTest(DaemonCase):
    """Copies of a live daemon's segment, altered: the publisher still runs,
    so each refusal is for the alteration alone (the unaltered copy reads)."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon("2gpu-h200.scn", "-i", "200ms", "--procs")
        with open(cls.d.path, "rb") as f:
            cls.good = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.d.cleanup()

    def file(self, data, mode=0o644):
        d = tempfile.mkdtemp(prefix="vramz-pyseg-bad.")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "segment")
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)
        return path

    def refused(self, path, words):
        with self.assertRaises(_segment.SegmentError) as cm:
            with _segment.Segment(path) as seg:
                seg.read()
        self.assertIn(path, str(cm.exception))
        self.assertIn(words, str(cm.exception))
        return str(cm.exception)

    def patched(self, off, fmt, value):
        b = bytearray(self.good)
        struct.pack_into(fmt, b, off, value)
        return bytes(b)

    def test_the_unaltered_copy_reads(self):
        with _segment.Segment(self.file(self.good)) as seg:
            _, _, gpus, procs, _ = seg.read()
        self.assertEqual(len(gpus), 2)
        self.assertTrue(procs)

    def test_truncated(self):
        self.refused(self.file(self.good[:100]), "truncated (100 bytes)")
        self.refused(self.file(self.good[:len(self.good) // 2]), "truncated")
        self.refused(self.file(b""), "empty file, not a vramz segment")

    def test_wrong_magic(self):
        self.refused(self.file(b"NOTVRAMZ" + self.good[8:]), "not a vramz segment (wrong magic)")

    def test_another_major_version(self):
        # u32 at 8: major 2 and minor 0 in one write
        msg = self.refused(self.file(self.patched(8, "<I", 2)), "segment layout 2.0; this vramz reads layout 1.x only")
        self.assertIn("run the same vramz version as the daemon", msg)

    def test_a_newer_minor_version_reads(self):
        with _segment.Segment(self.file(self.patched(10, "<H", 7))) as seg:
            self.assertEqual(len(seg.read()[2]), 2)

    def test_group_or_other_writable(self):
        self.refused(self.file(self.good, 0o664), "ignored: writable by its group")
        self.refused(self.file(self.good, 0o646), "ignored: writable by everyone")

    @unittest.skipUnless(os.geteuid() == 0, "chown needs root (CI runs as root)")
    def test_another_users_file(self):
        path = self.file(self.good)
        os.chown(path, 4242, 4242)
        self.refused(path, "ignored: owned by uid 4242, neither root nor you")

    def test_a_link_is_not_followed(self):
        path = self.file(self.good)
        link = path + ".link"
        os.symlink(path, link)
        self.refused(link, "symbolic link")

    def test_sizes_and_offsets_outside_the_file(self):
        self.refused(self.file(self.patched(24, "<I", 16)), "record sizes out of range")
        self.refused(self.file(self.patched(112, "<Q", 1 << 40)), "offsets outside the file")
        self.refused(self.file(self.patched(76, "<I", 0)), "0 GPUs: out of range")

    def test_a_dead_publisher(self):
        b = bytearray(self.good)
        struct.pack_into("<Q", b, 56, struct.unpack_from("<Q", b, 56)[0] + 1)  # a reused pid
        self.refused(self.file(bytes(b)), f"its daemon (pid {self.d.proc.pid}) is gone")

    def test_stopped_state(self):
        self.refused(self.file(self.patched(40, "<I", 2)), "stopped")

    def test_stale_copy(self):
        path = self.file(self.good)
        time.sleep(0.5)  # two of its 200 ms intervals: only ever staler
        with self.assertRaises(_segment.SegmentError) as cm:
            _segment.read_file(path)
        self.assertIn("stale: the latest snapshot is", str(cm.exception))

    def slot_of_latest(self):
        gen = struct.unpack_from("<Q", self.good, 136)[0]
        return struct.unpack_from("<Q", self.good, 112 if gen % 2 == 0 else 120)[0]

    def test_a_slot_being_written_is_retried_then_given_up(self):
        off = self.slot_of_latest()
        seq = struct.unpack_from("<Q", self.good, off)[0]
        t0 = time.monotonic()
        self.refused(self.file(self.patched(off, "<Q", seq | 1)), "no whole snapshot after")
        self.assertLess(time.monotonic() - t0, 10, "retries are bounded")

    def test_a_corrupt_snapshot_fails_its_crc(self):
        off = self.slot_of_latest()
        b = bytearray(self.good)
        b[off + 24 + 50] ^= 0xFF
        msg = self.refused(self.file(bytes(b)), "snapshot checksum mismatch")
        self.assertIn("not a write in progress", msg)
        self.assertNotIn("dying", msg)

    def big(self, slot_size, plen):
        """The copy with slots of slot_size bytes, the latest claiming a
        payload of plen under its old CRC, in a sparse file."""
        b = bytearray(self.good)
        s0, s1 = struct.unpack_from("<QQ", b, 112)
        end = max(s0, s1) + slot_size
        struct.pack_into("<Q", b, 128, slot_size)
        struct.pack_into("<Q", b, 88, end)
        struct.pack_into("<I", b, self.slot_of_latest() + 20, plen)
        path = self.file(bytes(b))
        os.truncate(path, end)
        return path

    def test_a_huge_slot_is_refused_before_a_byte_is_read(self):
        # the audit's 64 GiB slot, accepted before
        self.refused(self.big(64 << 30, 1000),
                     "slot size 68719476736 bytes: more than the 268435456 a segment may hold")

    def test_a_payload_past_its_slot_is_refused_at_once(self):
        self.refused(self.big(1 << 20, (1 << 20) + 1),
                     "payload size 1048577 bytes: more than its 1048552-byte slot holds")

    def test_a_big_payload_with_a_wrong_crc_is_refused_quickly(self):
        # 16 MiB under a wrong CRC: summed a few times, not READ_TRIES times
        path = self.big((16 << 20) + 24, 16 << 20)
        sums = []
        real = _segment.zlib.crc32
        with mock.patch.object(_segment.zlib, "crc32",
                               lambda b, *a: sums.append(len(b)) or real(b, *a)):
            self.refused(path, "snapshot checksum mismatch")
        self.assertEqual(sums, [16 << 20] * _segment.CRC_TRIES)

    def test_counts_beyond_the_payload(self):
        off = self.slot_of_latest()
        b = bytearray(self.good)
        plen = struct.unpack_from("<I", b, off + 20)[0]
        struct.pack_into("<I", b, off + 24 + 20, 100000)  # proc_count
        import zlib
        struct.pack_into("<I", b, off + 16, zlib.crc32(bytes(b[off + 24:off + 24 + plen])))
        self.refused(self.file(bytes(b)), "snapshot counts exceed its size")


if __name__ == "__main__":
    unittest.main()
