#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# serve_reconnect.py - the exporter under slow clients that reconnect
# (issue 25, item 4): N connections spread over K loopback source
# addresses (127.0.0.2 ...), each sending a request one byte a second and
# never finishing it, each reconnecting at once from its address when the
# server cuts it; meanwhile a scraper asks for /metrics every INTERVAL
# seconds, in turn from 127.0.0.1 and 127.0.0.100 (addresses of their
# own, as a Prometheus server's), and counts the answers that are not a
# whole 200 within TIMEOUT seconds.  FROM_SLOW=1 scrapes from the slow
# addresses too: the exporter cannot tell a scraper from the slow clients
# of its own address before its request is in, so those may fail.
#
#   serve_reconnect.py PORT [N=300] [K=10] [SECONDS=20] [INTERVAL=0.2] [TIMEOUT=2]
#
# Prints one line: scrapes, failed, the slowest scrape, reconnects.
import http.client, os, selectors, socket, sys, threading, time

port = int(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
k = int(sys.argv[3]) if len(sys.argv) > 3 else 10
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 20
interval = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 2
addrs = ["127.0.0.%d" % (2 + i) for i in range(k)]
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Drip: " + b"a" * 4096
stop = time.monotonic() + secs
sel = selectors.DefaultSelector()
reconnects = 0


def connect(addr):
    s = socket.socket()
    s.bind((addr, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    sel.register(s, selectors.EVENT_READ, [addr, 0])


def drip():
    global reconnects
    for i in range(n):
        connect(addrs[i % k])
    next_byte = time.monotonic()
    while not done.is_set():
        for key, _ in sel.select(timeout=0.05):
            s, (addr, _) = key.fileobj, key.data
            try:
                data = s.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:  # cut: again, at once, from the same address
                sel.unregister(s)
                s.close()
                reconnects += 1
                connect(addr)
        if time.monotonic() >= next_byte:
            next_byte += 1
            for key in list(sel.get_map().values()):
                s, d = key.fileobj, key.data
                try:
                    if s.send(req[d[1]:d[1] + 1]) == 1:
                        d[1] = (d[1] + 1) % len(req)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    pass
    for key in list(sel.get_map().values()):
        key.fileobj.close()


done = threading.Event()  # the scraper is through: the load ends
t = threading.Thread(target=drip)
t.start()
time.sleep(2)  # the slow connections in place
scrapes = failed = 0
slowest = 0.0
why = {}
srcs = ["127.0.0.1", "127.0.0.100"] + (addrs if os.environ.get("FROM_SLOW") == "1" else [])
while time.monotonic() < stop:
    src = srcs[scrapes % len(srcs)]
    scrapes += 1
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(src, 0))
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read()
        c.close()
        ok = r.status == 200 and b"vramz_up 1" in body
        if not ok:
            why["status %d" % r.status] = why.get("status %d" % r.status, 0) + 1
    except Exception as e:  # refused, reset, timed out
        ok = False
        why[type(e).__name__] = why.get(type(e).__name__, 0) + 1
    dt = time.monotonic() - t0
    slowest = max(slowest, dt)
    failed += not ok
    time.sleep(max(0.0, interval - dt))
done.set()
t.join()
print("%d slow connections from %d addresses, reconnecting: %d scrapes, %d failed (%s), "
      "slowest %.3f s, %d reconnects" % (n, k, scrapes, failed,
                                         ", ".join("%s %d" % kv for kv in sorted(why.items())) or "none",
                                         slowest, reconnects))
