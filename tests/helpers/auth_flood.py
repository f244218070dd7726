#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# auth_flood.py - a flood of ever-new wrong passwords against `vramz serve`
# with basic auth (issue 35, item 6): K loopback addresses (127.0.0.2 ...),
# THREADS connections each, every request a password never sent before,
# for SECONDS (bounded; each request times out after 10 s).  Prints the
# answers' status codes counted, e.g. "401 12, 503 4000".
#
#   auth_flood.py PORT [K=8] [THREADS=2] [SECONDS=10]
import base64, http.client, sys, threading, time

port = int(sys.argv[1])
k = int(sys.argv[2]) if len(sys.argv) > 2 else 8
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 10
stop = time.monotonic() + secs
codes = {}
lock = threading.Lock()


def flood(addr, n):
    i = 0
    while time.monotonic() < stop:
        i += 1
        cred = base64.b64encode(b"prom:wrong-%s-%d-%d" % (addr.encode(), n, i)).decode()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(addr, 0))
            c.request("GET", "/metrics", headers={"Authorization": "Basic " + cred})
            code = str(c.getresponse().status)
            c.close()
        except Exception as e:  # refused, reset, timed out
            code = type(e).__name__
        with lock:
            codes[code] = codes.get(code, 0) + 1


ts = [threading.Thread(target=flood, args=("127.0.0.%d" % (2 + a), n))
      for a in range(k) for n in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(", ".join("%s %d" % kv for kv in sorted(codes.items())))
