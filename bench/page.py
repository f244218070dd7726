#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""page.py - what the live page costs (issue 31): `bench/page.py [BUILD_DIR] [SECONDS]`.

Starts `vramz serve` at 1 Hz on the fake NVML with 8 GPUs and 200
processes (as bench_serve does) and prints:
  - the exporter's CPU (every thread's, from /proc/PID/task/*/schedstat)
    over SECONDS (default 60): with --no-web, then with the page on and no
    stream open, then with one stream open and read as a browser reads
    it: each as % of one core, the stream's difference and ratio (issue
    31's target: one open page at 1 Hz adds at most 0.05 % of a core);
  - the page itself in headless Chromium (tests/web/cdp.py): the time one
    snapshot takes to parse and draw (8 GPUs, 200 processes), median and
    max over the same SECONDS (30 at most), then the same with the
    detail view of GPU 0 open (gpuview.js: eight large charts drawn each
    tick), and the page's JavaScript heap with each.
Figures only: nothing here asserts a time.  On a GPU machine, set
REAL=1 to sample the machine's GPUs instead of the fake; PROCS=N sets the
fake's number of processes (200).
"""
import os
import socket
import statistics
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tests", "web"))
import cdp  # noqa: E402
import servestart  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else "build"
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 60
nprocs = int(os.environ.get("PROCS", 200))


def scenario(path):
    with open(path, "w") as f:
        f.write("driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n")
        for i in range(8):
            f.write('gpu %d name="NVIDIA H200" uuid=GPU-%08x-1c35-4f8a-b6d2-7e90a15c3f48 '
                    "pci=00000000:%02X:00.0 arch=hopper cc=9.0 mem_total=143771MiB "
                    "mem_reserved=616MiB mem_used=auto util=50 mem_util=10 temp=45 power=300000 "
                    "power_limit=700000 sm_clock=1980 mem_clock=3201 pcie_gen=5 pcie_width=16 "
                    "pcie_max_gen=5 pcie_max_width=16 nvlinks=18 throttle=0x4 energy=123456789\n"
                    % (i, 0x10000000 + i, 0x19 + i))
        for i in range(nprocs):
            f.write("proc gpu=%d pid=%d used=%dMiB type=compute sm=%d mem=3\n"
                    % (i % 8, 4000000 + i, 100 + i, i % 100))


def cpu_s(pid):
    """CPU seconds of every thread of pid, to the nanosecond (schedstat:
    /proc/PID/stat counts 10 ms ticks, too coarse for 0.05 %)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that just ended
    return total / 1e9


def measure(pid, seconds):
    c0, t0 = cpu_s(pid), time.monotonic()
    time.sleep(seconds)
    return 100 * (cpu_s(pid) - c0) / (time.monotonic() - t0)


def reader(port, stop, got):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: bench\r\n\r\n")
    s.settimeout(0.5)
    while not stop.is_set():
        try:
            b = s.recv(1 << 16)
            if not b:
                break
            got[0] += len(b)
        except socket.timeout:
            pass
    s.close()


def serve(d, env, *extra):
    """Starts the exporter at 1 Hz; (process, port)."""
    return servestart.start(build, d, env, ["--interval", "1s"] + list(extra))


def main():
    d = tempfile.mkdtemp(prefix="vramz-bench-page.")
    env = dict(os.environ)
    if not os.environ.get("REAL"):
        scenario(os.path.join(d, "s.scn"))
        env["FAKE_NVML_SCENARIO"] = os.path.join(d, "s.scn")
        env["LD_LIBRARY_PATH"] = os.path.join(build, "tests/fake-nvml/full") + \
            (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    p, port = serve(d, env, "--no-web")
    try:
        time.sleep(3)  # past the first samples' one-time costs
        noweb = measure(p.pid, secs)
    finally:
        p.terminate()
        p.wait()
    p, port = serve(d, env)
    try:
        time.sleep(3)
        idle = measure(p.pid, secs)
        stop, got = threading.Event(), [0]
        t = threading.Thread(target=reader, args=(port, stop, got))
        t.start()
        time.sleep(2)
        streaming = measure(p.pid, secs)
        stop.set()
        t.join()
        what = "this machine's GPUs" if os.environ.get("REAL") else "8 GPUs, %d processes" % nprocs
        print("exporter CPU at 1 Hz, %s, %.0f s each:" % (what, secs))
        print("  --no-web        %.4f %% of a core" % noweb)
        print("  no stream       %.4f %% of a core" % idle)
        print("  one stream      %.4f %% of a core (%d bytes streamed)" % (streaming, got[0]))
        print("  the stream adds %.4f %% of a core (ratio %.2f)"
              % (streaming - idle, streaming / idle if idle else float("nan")))
        with cdp.Browser() as browser:
            # open() gives the page (cdp.py's tabs); the page's calls go to it
            b = browser.open("http://127.0.0.1:%d/" % port, 1280, 800)
            b.wait("document.body.dataset.renderMs !== undefined")
            def ticks():
                ms, end = [], time.monotonic() + min(secs, 30)
                last = None
                while time.monotonic() < end:
                    v = b.eval("document.getElementById('last').textContent + '|' + document.body.dataset.renderMs")
                    if v != last:
                        ms.append(float(v.split("|")[1]))
                        last = v
                    time.sleep(0.2)
                return ms, b.eval("performance.memory ? performance.memory.usedJSHeapSize : 0")

            ms, heap = ticks()
            print("page (Chromium, 1280x800): a snapshot parsed and drawn in median %.1f ms, max %.1f ms over %d ticks;"
                  " JS heap %.1f MiB" % (statistics.median(ms), max(ms), len(ms), heap / 1048576))
            print("  (%d GPUs, %d process rows on the page)"
                  % (b.eval("document.querySelectorAll('.gpu').length"),
                     b.eval("document.querySelectorAll('#pbody tr').length")))
            b.eval("document.querySelector('#gpus button.open').click()")
            b.wait("!document.getElementById('detail').hidden")
            ms, heap = ticks()
            print("with GPU 0's detail view open: median %.1f ms, max %.1f ms over %d ticks; JS heap %.1f MiB"
                  % (statistics.median(ms), max(ms), len(ms), heap / 1048576))
            # the worst case: a full ring (3,600 ticks, an hour at 1 s) drawn
            # over the whole hour; the ring made of the ticks there are
            r = b.eval("""(function(){var P=vramzPage,st=P.st,h=st.hist[0],n=h.t.length,t1=h.t[n-1];
              var g={t:[],used:[],util:[],s:{}};Object.keys(h.s).forEach(function(k){g.s[k]=[]});
              for(var i=0;i<3600;i++){var j=i%n;g.t.push(t1-(3599-i)*1000);g.used.push(h.used[j]+i*1048576);
                g.util.push(h.util[j]);Object.keys(h.s).forEach(function(k){g.s[k].push(h.s[k][j])})}
              g.s.mem_used_bytes=g.used;st.hist[0]=g;st.historyMs=3600000;
              var sel=document.getElementById('drange');sel.dataset.hist='';P.detail.snapshot({gpus:[],time_ms:t1});
              sel.value='3600000';sel.dispatchEvent(new Event('change'));
              var ms=[];for(var k=0;k<20;k++){var a=performance.now();P.detail.redraw();ms.push(performance.now()-a)}
              ms.sort(function(x,y){return x-y});return [ms[10],ms[19],document.getElementById('detail').dataset.rangeMs]})()""")
            print("the detail view over a full ring (3,600 ticks, range %s ms): drawn in median %.1f ms, max %.1f ms"
                  % (r[2], r[0], r[1]))
    finally:
        p.terminate()
        p.wait()


main()
