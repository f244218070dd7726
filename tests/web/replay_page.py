# SPDX-License-Identifier: Apache-2.0
"""replay_page.py - draws a live page recorded on another machine
(tests/gpu/page_record.sh: the GPU machine has no browser) in headless
Chromium here: serves the recorded page with its own headers (its
Content-Security-Policy included), the recorded /api/v1/status, and the
recorded /api/v1/events as one stream (the history a new stream gets
first, then the live ticks of those seconds), then takes the screenshot
as soon as the page is live, before it could call itself stale.

    python3 tests/web/replay_page.py RECORD_DIR OUT.png [WIDTH HEIGHT]

Prints what the page shows (memory per GPU, findings, process rows) and
any console error; exits 1 on an error or when the page never goes live."""
import http.server
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402


def handler(rec):
    page = open(os.path.join(rec, "page.html"), "rb").read()
    headers = []
    for line in open(os.path.join(rec, "page.headers"), encoding="latin-1"):
        k, _, v = line.partition(":")
        if k.lower() in ("content-type", "content-security-policy", "x-content-type-options",
                         "referrer-policy", "cache-control"):
            headers.append((k.strip(), v.strip()))
    status = open(os.path.join(rec, "status.json"), "rb").read()
    events = open(os.path.join(rec, "events.txt"), "rb").read()

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.path == "/":
                self.send_response(200)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
            elif self.path == "/api/v1/status":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(status)))
                self.end_headers()
                self.wfile.write(status)
            elif self.path == "/api/v1/events":
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(events)
                self.wfile.flush()
                time.sleep(30)  # held open, as the exporter's stream is
            elif self.path == "/favicon.ico":  # as the exporter: no icon, quietly
                self.send_response(204)
                self.end_headers()
            else:
                self.send_response(404)
                self.end_headers()
    return H


def main():
    rec, out = sys.argv[1], sys.argv[2]
    w, h = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1280, 800)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(rec))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    port = srv.server_address[1]
    with cdp.Browser() as browser:
        p = browser.open("http://127.0.0.1:%d/" % port, w, h)
        p.wait("document.getElementById('state').textContent == 'live'")
        p.wait("document.querySelectorAll('#pbody tr').length > 0")
        time.sleep(0.5)
        png = p.screenshot()
        shown = p.eval(
            "JSON.stringify({mem: Array.prototype.map.call(document.querySelectorAll('.gpu .mem'),"
            " function(e){return e.textContent}),"
            " findings: Array.prototype.map.call(document.querySelectorAll('#findings li'),"
            " function(l){return l.dataset.kind + ': ' + l.textContent}),"
            " rows: document.querySelectorAll('#pbody tr').length})")
        errors = p.errors
    open(out, "wb").write(png)
    srv.shutdown()
    print(json.dumps(json.loads(shown), indent=1))
    if errors:
        print("console errors:", errors[:5])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
