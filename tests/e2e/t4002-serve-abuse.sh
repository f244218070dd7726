#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4002-serve-abuse.sh - hostile and careless clients against `vramz serve`:
# malformed requests, 1,000 concurrent connections, clients that never read
# their answer.  The exporter must survive, keep sampling, keep answering
# a well-behaved scraper, and not grow in memory.  Loopback only; every
# loop is bounded.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

cat >"$T/abuse.py" <<'PY'
import socket, sys, time, selectors
port, mode = int(sys.argv[1]), sys.argv[2]
addr = ("127.0.0.1", port)

def one(raw, timeout=5):
    s = socket.create_connection(addr, timeout=timeout)
    try:
        s.sendall(raw)
        data = b""
        while True:
            try:
                b = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not b:
                break
            data += b
        return data
    finally:
        s.close()

if mode == "bad":
    cases = [
        b"\x00\x01\x02garbage\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET /metrics HTTP/9.9\r\n\r\n",
        b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(5000)) + b"\r\n",
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\nabc",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\r\n",  # never finishes its headers
    ]
    for c in cases:
        r = one(c, timeout=3)
        assert b"root:" not in r, r[:200]
        print(repr(c[:30]), "->", r.split(b"\r\n", 1)[0][:60])
elif mode == "flood":
    # 1,000 connections at once, each sending a request; count answers
    sel = selectors.DefaultSelector()
    socks = []
    for i in range(1000):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(addr)
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE, [b"", False])
    ok = refused = 0
    deadline = time.time() + 30
    while sel.get_map() and time.time() < deadline:
        for key, ev in sel.select(timeout=1):
            s, st = key.fileobj, key.data
            try:
                if ev & selectors.EVENT_WRITE and not st[1]:
                    s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    st[1] = True
                    sel.modify(s, selectors.EVENT_READ, st)
                    continue
                b = s.recv(65536)
            except OSError:
                b = b""
            if b:
                st[0] += b
                continue
            if st[0].startswith(b"HTTP/1.1 200"):
                ok += 1
            else:
                refused += 1
            sel.unregister(s)
            s.close()
    for k in list(sel.get_map().values()):
        k.fileobj.close()
    print("answered", ok, "refused", refused)
    assert ok >= 1, "not a single request answered"
elif mode == "noread":
    # connections that ask for many bodies and never read a byte
    socks = []
    for i in range(int(sys.argv[3])):
        s = socket.create_connection(addr, timeout=5)
        s.setblocking(False)
        try:
            for k in range(200):
                s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        except BlockingIOError:
            pass
        socks.append(s)
    time.sleep(float(sys.argv[4]))
    for s in socks:
        s.close()
    print("held", len(socks), "connections without reading")
PY

scenario_fleet "$T/fleet.scn" 8 200
export FAKE_NVML_SCENARIO=$T/fleet.scn

# a well-behaved scraper: every answer complete and valid
scrape_ok() {
	scrape /metrics -o body.txt -w "%{http_code}" >code.txt &&
	test "$(cat code.txt)" = 200 &&
	has "^vramz_up 1$" body.txt
}
# RSS is only meaningful without AddressSanitizer, whose quarantine keeps
# freed memory resident; under ASan, leaks fail serve_stop at exit instead.
rss_flat() {
	echo "RSS before $1 KiB, after $2 KiB"
	if ldd "$VRAMZ_BIN" 2>/dev/null | grep -q libasan; then return 0; fi
	test "$2" -lt $(($1 + 2048))
}
samples() { scrape /metrics | sed -n "s/^vramz_samples_total //p"; }

expect_success 'malformed requests: an error answer or a closed connection, never a crash' '
	serve_start serve.log --procs --timeout 2 &&
	python3 "$T/abuse.py" "$PORT" bad &&
	kill -0 "$SERVE_PID" &&
	scrape_ok &&
	serve_stop
'

expect_success '1,000 concurrent connections: bounded, survived, RSS flat' '
	serve_start serve.log --procs --interval 200ms --timeout 3 &&
	for i in $(seq 200); do scrape /metrics -o /dev/null; done &&
	before=$(rss_kib "$SERVE_PID") &&
	python3 "$T/abuse.py" "$PORT" flood &&
	python3 "$T/abuse.py" "$PORT" flood &&
	kill -0 "$SERVE_PID" &&
	scrape_ok &&
	for i in $(seq 200); do scrape /metrics -o /dev/null; done &&
	after=$(rss_kib "$SERVE_PID") &&
	rss_flat "$before" "$after" &&
	serve_stop
'

expect_success 'clients that never read do not stall sampling or other scrapers' '
	serve_start serve.log --procs --interval 100ms --timeout 2 --max-per-ip 32 &&
	for i in $(seq 100); do scrape /metrics -o /dev/null; done &&
	before=$(rss_kib "$SERVE_PID") &&
	s0=$(samples) &&
	{ python3 "$T/abuse.py" "$PORT" noread 16 4 >noread.txt & nr=$!; } &&
	sleep 1 &&
	scrape_ok &&
	s1=$(samples) &&
	sleep 1 &&
	s2=$(samples) &&
	echo "samples: $s0 -> $s1 -> $s2 while 16 clients refuse to read" &&
	test "$s2" -gt "$s1" &&
	wait $nr &&
	has "held 16" noread.txt &&
	for i in $(seq 100); do scrape /metrics -o /dev/null; done &&
	after=$(rss_kib "$SERVE_PID") &&
	rss_flat "$before" "$after" &&
	serve_stop
'

serve_cleanup
finish
