# SPDX-License-Identifier: Apache-2.0
"""servestart.py - the benchmarks' `vramz serve` (bench/page.py,
bench/history_ring.py): started on a free loopback port, its stderr in
DIR/NAME.log, found ready when it says where it listens."""
import os
import re
import subprocess
import time


def start(build, d, env, args, name="serve"):
    """Starts BUILD/vramz serve ARGS; (process, port)."""
    log = open(os.path.join(d, name + ".log"), "w+")
    p = subprocess.Popen([os.path.join(build, "vramz"), "serve", "--listen", "127.0.0.1:0"] + list(args),
                         env=env, stderr=log)
    for _ in range(100):
        log.seek(0)
        m = re.search(r":(\d+)/metrics", log.read())
        if m:
            return p, int(m.group(1))
        time.sleep(0.1)
    p.kill()
    raise RuntimeError("vramz serve did not start")
