#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4006-serve-slow.sh - slow clients must not blind the exporter (issue 12
# item 2).  Connections that send one byte a second never hit an idle
# timeout; they must still not lock out other clients of their address,
# nor, hundreds of them over ten addresses, everybody.  A bounded drip
# client on loopback addresses (127.0.0.x) holds them open while a normal
# scraper asks for /metrics.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

cat >"$T/drip.py" <<'PY'
# drip.py PORT SPEC SECONDS READYFILE: SPEC is ADDR:N,ADDR:N...; opens N
# connections from each source ADDR, sends a request one byte a second
# (never finishing it) until the server closes them or SECONDS pass, and
# counts the connections the server closed.
import os, socket, sys, time
port, spec, secs, ready = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Drip: " + b"a" * 4096
conns = []
for part in spec.split(","):
    addr, n = part.split(":")
    for _ in range(int(n)):
        s = socket.socket()
        s.bind((addr, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        conns.append([s, 0, False])
start = time.time()
said_ready = False
while time.time() - start < secs:
    for c in conns:
        s, sent, closed = c
        if closed:
            continue
        try:
            if s.send(req[sent:sent + 1]) == 1:
                c[1] = (sent + 1) % len(req)
            s.setblocking(False)
            if s.recv(4096) == b"":
                c[2] = True
        except BlockingIOError:
            pass
        except OSError:
            c[2] = True
    if not said_ready and time.time() - start >= 1.5:
        open(ready, "w").close()
        said_ready = True
    if all(c[2] for c in conns):
        break
    time.sleep(1)
closed = sum(1 for c in conns if c[2])
print("dripped %d connections for %.0f s; the server closed %d" %
      (len(conns), time.time() - start, closed))
PY

scenario_fleet "$T/fleet.scn" 2 4
export FAKE_NVML_SCENARIO=$T/fleet.scn

# scrape_from ADDR: /metrics answered 200 within 4 s, from that source address
scrape_from() {
	curl -sS --max-time 4 --interface "$1" -o "body.$1" -w "%{http_code}" \
		"http://127.0.0.1:$PORT/metrics" >"code.$1" &&
	test "$(cat "code.$1")" = 200 &&
	has "^vramz_up 1$" "body.$1"
}

expect_success 'slow clients over ten addresses: scrapers of any address still answered' '
	serve_start serve.log &&
	spec=127.0.0.2:40 &&
	for i in $(seq 3 12); do spec="$spec,127.0.0.$i:30"; done &&
	{ timeout 60 python3 "$T/drip.py" "$PORT" "$spec" 30 ready >drip.txt & dp=$!; } &&
	for i in $(seq 50); do test -e ready && break; sleep 0.1; done &&
	test -e ready &&
	scrape_from 127.0.0.2 &&
	scrape_from 127.0.0.7 &&
	scrape_from 127.0.0.1 &&
	wait $dp &&
	cat drip.txt &&
	has "dripped 340 connections for [0-9]+ s; the server closed 340$" drip.txt &&
	kill -0 "$SERVE_PID" &&
	scrape_from 127.0.0.1 &&
	serve_stop
'

expect_success 'a request that drips is closed within seconds, not held' '
	serve_start serve.log --timeout 30 &&
	{ timeout 60 python3 "$T/drip.py" "$PORT" 127.0.0.1:3 20 ready >drip.txt & dp=$!; } &&
	wait $dp &&
	cat drip.txt &&
	has "the server closed 3$" drip.txt &&
	serve_stop
'

serve_cleanup
finish
