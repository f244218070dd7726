#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4048-serve-stream-cap.sh - issue 35 (minor): one client address cannot
# take every event stream of the live page.  Beyond --max-streams-per-ip
# (default 4) its next stream is answered 429 with Retry-After, while
# another address still gets one, and a stream closed frees its place.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn

# streams PORT SPEC...: holds every stream open at once; each SPEC is
# SRC:N (N streams from source address SRC) and prints one line per SPEC:
# "SRC 200=a 429=b retry=5" (the last refusal's Retry-After); then with
# all of them still open, whether 127.0.0.3 gets one, and after closing
# SRC's first stream whether SRC gets one again
cat >"$T/streams.py" <<'EOF'
import socket, sys

port = int(sys.argv[1])

def open_stream(src):
    s = socket.socket()
    s.settimeout(10)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    head = buf.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    code = head[0].split(" ")[1] if head[0].startswith("HTTP/") else "closed"
    retry = [h.split(":", 1)[1].strip() for h in head if h.lower().startswith("retry-after:")]
    return s, code, retry[0] if retry else "-"

held = {}
for spec in sys.argv[2:]:
    src, n = spec.split(":")
    counts, retry = {}, "-"
    for _ in range(int(n)):
        s, code, r = open_stream(src)
        counts[code] = counts.get(code, 0) + 1
        if code == "200":
            held.setdefault(src, []).append(s)
        else:
            retry = r
            s.close()
    print(src, " ".join("%s=%d" % kv for kv in sorted(counts.items())), "retry=" + retry)
s, code, _ = open_stream("127.0.0.3")
print("other", code)
first = sys.argv[2].split(":")[0]
held[first].pop(0).close()
for _ in range(50):  # the close reaches the exporter asynchronously
    s2, code, _ = open_stream(first)
    s2.close()
    if code == "200":
        break
    import time; time.sleep(0.1)
print("after-close", code)
EOF

expect_success 'the default cap: 4 streams an address, the 5th and 6th 429 with Retry-After; another address 200' '
	serve_start serve.log --interval 200ms &&
	python3 streams.py "$PORT" 127.0.0.1:6 >s.txt && cat s.txt &&
	has "^127.0.0.1 200=4 429=2 retry=5$" s.txt && has "^other 200$" s.txt &&
	has "^after-close 200$" s.txt && serve_stop
'

expect_success '--max-streams-per-ip 2 with --max-streams 3: an address 2; the total still 503' '
	serve_start serve.log --interval 200ms --max-streams 3 --max-streams-per-ip 2 &&
	python3 streams.py "$PORT" 127.0.0.1:3 127.0.0.2:2 >s.txt && cat s.txt &&
	has "^127.0.0.1 200=2 429=1 retry=5$" s.txt && has "^127.0.0.2 200=1 503=1 retry=5$" s.txt &&
	has "^other 503$" s.txt && serve_stop
'

expect_success 'a 429 body says why; a bad --max-streams-per-ip is refused' '
	serve_start serve.log --max-streams-per-ip 1 &&
	{ curl -sSN --max-time 3 "http://127.0.0.1:$PORT/api/v1/events" >held.txt 2>&1 & } &&
	wait_for grep -q "^event: hello" held.txt &&
	scrape /api/v1/events --max-time 2 -o body.txt -w "%{http_code}" >code.txt &&
	serve_stop && test "$(cat code.txt)" = 429 && has "from your address" body.txt &&
	{ "$VRAMZ_BIN" serve --max-streams-per-ip 0 2>e; test $? = 2; } &&
	has "^vramz: serve: --max-streams-per-ip must be positive$" e
'

serve_cleanup
finish
