#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""history_ring.py - what serve's history ring costs (issue 40):
`bench/history_ring.py [BUILD_DIR] [NGPUS]`.

The ring (src/serve/history.c) keeps every sensor the page's detail view
draws.  Two exporters run side by side on the fake NVML with NGPUS GPUs
(default 8) at --interval 20ms: one keeping 3,600 ticks (--history 72s,
the most a ring keeps), one keeping a single tick.  Once the first has
filled its ring (80 s), this prints both resident sizes (VmRSS) and
their difference, next to what history.c's layout says it must be
(56 bytes a GPU and 8 a tick), and the size of the `hello` a new stream
gets with the full ring (what a page that opens downloads first).
Figures only: nothing here asserts a size.
"""
import http.client
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servestart  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else "build"
ngpus = int(sys.argv[2]) if len(sys.argv) > 2 else 8
TICKS, INTERVAL_MS = 3600, 20


def scenario(path):
    with open(path, "w") as f:
        f.write("driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n")
        for i in range(ngpus):
            f.write('gpu %d name="NVIDIA H200" uuid=GPU-%08x-1c35-4f8a-b6d2-7e90a15c3f48 '
                    "mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 mem_util=10 "
                    "temp=45 temp_mem=55 power=300000 power_limit=700000 sm_clock=1980 mem_clock=3201 "
                    "fan=60 pcie_gen=5 pcie_width=16 pcie_tx=1000 pcie_rx=2000\n" % (i, 0x10000000 + i))
            f.write("proc gpu=%d pid=%d used=1GiB type=compute sm=10\n" % (i, 4000000 + i))
            f.write("grow gpu=%d pid=%d rate=+1GiB/min\n" % (i, 4000000 + i))


def serve(d, env, name, history):
    return servestart.start(build, d, env, ["--interval", "%dms" % INTERVAL_MS, "--history", history,
                                            "--slow-interval", "1s"], name)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def hello_bytes(port):
    """The hello event's bytes (its "event:" and "data:" lines), and what
    its memory and utilization alone take (the hello before issue 40)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/api/v1/events")
    r = c.getresponse()
    buf = b""
    while b"event: hello" not in buf or b"\n\n" not in buf[buf.index(b"event: hello"):]:
        b = r.read1(1 << 20)
        if not b:
            break
        buf += b
    c.close()
    i = buf.index(b"event: hello")
    ev = buf[i:buf.index(b"\n\n", i)]
    doc = json.loads(ev[ev.index(b"data: ") + 6:].split(b"\n")[0])
    for g in doc["gpus"]:
        for k in list(g):
            if k not in ("index", "used_bytes", "util_pct"):
                del g[k]
    return len(ev), len(json.dumps(doc, separators=(",", ":")))


def main():
    d = tempfile.mkdtemp(prefix="vramz-bench-ring.")
    env = dict(os.environ)
    scenario(os.path.join(d, "s.scn"))
    env["FAKE_NVML_SCENARIO"] = os.path.join(d, "s.scn")
    env["LD_LIBRARY_PATH"] = os.path.join(build, "tests/fake-nvml/full") + \
        (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    full, pf = serve(d, env, "full", "%ds" % (TICKS * INTERVAL_MS // 1000))
    one, po = serve(d, env, "one", "%dms" % INTERVAL_MS)
    try:
        time.sleep(TICKS * INTERVAL_MS / 1000 + 8)
        a, b = rss_kib(full.pid), rss_kib(one.pid)
        hb, old = hello_bytes(pf)
        layout = (TICKS * ngpus * 56 + TICKS * 8) / 1024
        print("%d GPUs, %d ticks kept vs 1: VmRSS %d KiB vs %d KiB, the ring %d KiB "
              "(history.c's layout: %.0f KiB)" % (ngpus, TICKS, a, b, a - b, layout))
        print("per GPU: %.0f KiB for %d ticks; at 1 s, %.0f KiB per hour of history"
              % (TICKS * 56 / 1024, TICKS, 3600 * 56 / 1024))
        print("hello with the full ring: %d bytes (%d per GPU per tick); its memory and utilization"
              " alone (the hello before): %d bytes" % (hb, hb // (ngpus * TICKS), old))
    finally:
        for p in (full, one):
            p.terminate()
            p.wait()


main()
