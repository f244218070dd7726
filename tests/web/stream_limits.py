# SPDX-License-Identifier: Apache-2.0
"""stream_limits.py - the live page's bounds, against a running exporter
(tests/e2e/t4040-page.sh).  Plain sockets, no browser:

  burst PORT N        N clients open /api/v1/events at once; prints how
                      many got 200, 503 or nothing, then (the streams
                      still open) whether /metrics answers
  neverread PORT PID  a client opens a stream and never reads; prints the
                      exporter's RSS growth (KiB) after the events it was
                      sent could have piled up several MiB
  malformed PORT PATH...  malformed requests on each path; prints each
                      answer's status (or "closed")
"""
import socket
import sys
import time


def connect(port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def status_of(s):
    """The status code of the answer on s, or 'closed'."""
    buf = b""
    try:
        while b"\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    parts = buf.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 and buf.startswith(b"HTTP/") else "closed"


def get(port, path):
    s = connect(port)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
    st = status_of(s)
    s.close()
    return st


def burst(port, n):
    socks, counts = [], {}
    for _ in range(n):
        try:
            socks.append(connect(port))
        except OSError:
            counts["refused"] = counts.get("refused", 0) + 1
    for s in socks:
        try:
            s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
        except OSError:
            pass
    for s in socks:
        st = status_of(s)
        counts[st] = counts.get(st, 0) + 1
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
    # the streams are still open here: the metrics must still answer
    print("metrics", get(port, "/metrics"))
    for s in socks:
        s.close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def neverread(port, pid, seconds):
    s = connect(port, rcvbuf=4096)
    s.sendall(b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(1)
    before = rss_kib(pid)
    time.sleep(seconds)
    after = rss_kib(pid)
    print("rss_growth_kib", after - before)
    s.close()


def malformed(port, paths):
    for p in paths:
        cases = {
            "post": "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" % p,
            "version": "GET %s HTTP/7.3\r\nHost: x\r\n\r\n" % p,
            "no-host": "GET %s HTTP/1.1\r\n\r\n" % p,
            "huge-header": "GET %s HTTP/1.1\r\nHost: x\r\nX-A: %s\r\n\r\n" % (p, "a" * 40000),
            "bad-length": "GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n" % p,
            "nul": "GET %s\0x HTTP/1.1\r\nHost: x\r\n\r\n" % p,
            "query": "GET %s?%%zz=%%%%&x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % p,
        }
        for name, req in cases.items():
            s = connect(port)
            try:
                s.sendall(req.encode("latin-1"))
            except OSError:
                pass
            print(p, name, status_of(s))
            s.close()


if __name__ == "__main__":
    cmd, port = sys.argv[1], int(sys.argv[2])
    if cmd == "burst":
        burst(port, int(sys.argv[3]))
    elif cmd == "neverread":
        neverread(port, int(sys.argv[3]), float(sys.argv[4]))
    elif cmd == "malformed":
        malformed(port, sys.argv[3:])
