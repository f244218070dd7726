#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pagecheck.py - opens `vramz report` pages in headless Chromium and says
what a reader would see, as JSON on stdout (one object per page).

Standard library only.  Chromium runs with --remote-debugging-pipe: the
DevTools protocol over fds 3 and 4, NUL-terminated JSON messages.  For
each page it records console errors, uncaught exceptions and log entries
at error level (a Content-Security-Policy violation is one), every network
request other than the page itself, what the plots and markers hold
(through their data attributes), whether the hover read-out and the zoom
respond, and a screenshot's pixel statistics (PNG decoded here).

usage: pagecheck.py [--chromium PATH] [--shot DIR] PAGE.html...
(each page's result also goes to PAGE.html.check.json)
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web"))
import cdp  # noqa: E402  (the PNG decoder)

TIMEOUT_S = 60

EXTRACT_JS = r"""
(() => {
  const out = {title: document.title, gpus: {}, markers: [], rows: [], procs: 0, gaps: []};
  const data = JSON.parse(document.getElementById('vz-data').textContent);
  out.t0 = data.t0; out.t1 = data.t1; out.cols = data.cols; out.L = data.L;
  document.querySelectorAll('svg.plot').forEach(s => {
    const g = s.dataset.gpu;
    const paths = {};
    s.querySelectorAll('g.z > path').forEach(p => {
      const d = p.getAttribute('d') || '';
      paths[p.getAttribute('class')] = d.length;
    });
    const box = s.getBoundingClientRect();
    out.gpus[g] = {paths, width: box.width, height: box.height,
                   breaks: {}};
    s.querySelectorAll('g.z > path').forEach(p => {
      out.gpus[g].breaks[p.getAttribute('class')] = ((p.getAttribute('d') || '').match(/M/g) || []).length;
    });
  });
  document.querySelectorAll('g.fm').forEach(m => {
    const line = m.querySelector('line.mk');
    out.markers.push({gpu: m.closest('svg').dataset.gpu, finding: +m.dataset.finding,
                      kind: m.dataset.kind, t_ms: +m.dataset.tMs, x: +m.dataset.x,
                      x1: +line.getAttribute('x1'),
                      sev: m.getAttribute('class').split(' ')[1]});
  });
  document.querySelectorAll('g.gap').forEach(g => {
    const r = g.querySelector('rect');
    out.gaps.push({from_ms: +g.dataset.fromMs, to_ms: +g.dataset.toMs,
                   x: +r.getAttribute('x'), w: +r.getAttribute('width')});
  });
  document.querySelectorAll('tr.finding').forEach(r => {
    out.rows.push({finding: +r.dataset.finding, kind: r.dataset.kind, gpu: +r.dataset.gpu,
                   t_ms: +r.dataset.tMs, text: r.textContent});
  });
  out.procs = document.querySelectorAll('tr.proc').length;
  // the script: a pointer over the first plot fills its read-out ...
  const s = document.querySelector('svg.plot');
  if (s) {
    const ro = document.getElementById('ro' + s.dataset.gpu);
    const b = s.getBoundingClientRect();
    const ev = (type, fx) => s.dispatchEvent(new MouseEvent(type, {bubbles: true,
        clientX: b.left + b.width * fx, clientY: b.top + b.height * 0.2}));
    ev('mousemove', 0.5);
    out.readout = ro ? ro.textContent : null;
    // ... and a drag zooms every plot's time axis
    ev('mousedown', 0.3); ev('mouseup', 0.6);
    out.zoomed = [...document.querySelectorAll('g.z')].filter(g => g.getAttribute('transform')).length;
    s.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));
    out.unzoomed = [...document.querySelectorAll('g.z')].filter(g => g.getAttribute('transform')).length;
  }
  out.scripts = document.scripts.length;
  out.bytes = document.documentElement.outerHTML.length;
  return JSON.stringify(out);
})()
"""


class Browser:
    def __init__(self, chromium):
        self.prof = tempfile.mkdtemp(prefix="vramz-chromium.")
        to_r, to_w = os.pipe()    # we write commands, chromium reads fd 3
        from_r, from_w = os.pipe()  # chromium writes fd 4, we read
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--user-data-dir=" + self.prof, "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--disable-component-update", "--window-size=1400,1800", "about:blank"],
            preexec_fn=lambda: self._fds(to_r, from_w), close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.w = to_w
        self.r = from_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.deadline = time.time() + TIMEOUT_S

    @staticmethod
    def _fds(to_r, from_w):
        # in the child: fd 3 reads our commands, fd 4 carries the answers
        # (copied high first: a pipe end may itself be fd 3 or 4)
        a, b = os.dup(to_r), os.dup(from_w)
        os.dup2(a, 3)
        os.dup2(b, 4)

    def _read_msg(self):
        while b"\0" not in self.buf:
            if time.time() > self.deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        self.deadline = time.time() + TIMEOUT_S
        m = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            m["sessionId"] = session
        os.write(self.w, json.dumps(m).encode() + b"\0")
        while True:
            r = self._read_msg()
            if r.get("id") == self.next_id:
                if "error" in r:
                    raise RuntimeError("%s: %s" % (method, r["error"]))
                return r.get("result", {})
            self.events.append(r)

    def wait_event(self, method, session):
        self.deadline = time.time() + TIMEOUT_S
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            e = self._read_msg()
            self.events.append(e)
            if e.get("method") == method and e.get("sessionId") == session:
                self.events.pop()
                return e

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.prof, ignore_errors=True)


def png_stats(png):
    """Pixel statistics of an 8-bit RGB(A) non-interlaced PNG (decoded by
    tests/web/cdp.py), every 4th pixel of every 4th row."""
    w, h, bpp, rows = cdp.png_pixels(png)
    lum_sum = lum_sq = 0
    colours = set()
    n = 0
    for line in rows[::4]:
        for x in range(0, w, 4):
            r, g, b = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
            lum = (r * 299 + g * 587 + b * 114) // 1000
            lum_sum += lum
            lum_sq += lum * lum
            colours.add((r, g, b))
            n += 1
    mean = lum_sum / n
    return {"width": w, "height": h, "lum_mean": mean,
            "lum_std": max(0.0, lum_sq / n - mean * mean) ** 0.5, "colours": len(colours)}


def check(b, path, shot_dir):
    t = b.call("Target.createTarget", {"url": "about:blank"})
    s = b.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})["sessionId"]
    for dom in ("Page", "Runtime", "Log", "Network"):
        b.call(dom + ".enable", session=s)
    url = "file://" + os.path.abspath(path)
    b.call("Page.navigate", {"url": url}, session=s)
    b.wait_event("Page.loadEventFired", s)
    ev = b.call("Runtime.evaluate", {"expression": EXTRACT_JS, "returnByValue": True}, session=s)
    if "exceptionDetails" in ev:
        res = {"extract_error": ev["exceptionDetails"].get("text")}
    else:
        res = json.loads(ev["result"]["value"])
    # the reader's dark setting turns the page dark; printing keeps the plots
    look = "JSON.stringify({bg: getComputedStyle(document.body).backgroundColor, " \
           "plots: [...document.querySelectorAll('svg.plot')].filter(" \
           "s => getComputedStyle(s).display !== 'none' && s.getBoundingClientRect().height > 100).length})"
    for name, media, scheme in (("dark", "", "dark"), ("print", "print", "light"), ("light", "", "light")):
        b.call("Emulation.setEmulatedMedia", {"media": media, "features": [
            {"name": "prefers-color-scheme", "value": scheme}]}, session=s)
        v = b.call("Runtime.evaluate", {"expression": look, "returnByValue": True}, session=s)
        res[name] = json.loads(v["result"]["value"])
    # the first screen, scaled down: enough to tell a blank page, and a
    # tenth of the pixels for the decoder below
    shot = b.call("Page.captureScreenshot", {"format": "png", "clip": {
        "x": 0, "y": 0, "width": 1400, "height": 1800, "scale": 0.3}}, session=s)
    png = base64.b64decode(shot["data"])
    if shot_dir:
        with open(os.path.join(shot_dir, os.path.basename(path) + ".png"), "wb") as f:
            f.write(png)
    res["screenshot"] = png_stats(png)
    time.sleep(0.2)
    # drain what arrived meanwhile
    os.set_blocking(b.r, False)
    try:
        while True:
            chunk = os.read(b.r, 1 << 16)
            if not chunk:
                break
            b.buf += chunk
    except BlockingIOError:
        pass
    os.set_blocking(b.r, True)
    while b"\0" in b.buf:
        msg, b.buf = b.buf.split(b"\0", 1)
        b.events.append(json.loads(msg))
    errors, requests = [], []
    for e in b.events:
        if e.get("sessionId") != s:
            continue
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            errors.append(p["exceptionDetails"].get("text", "exception"))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value")) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
            errors.append("log: " + p["entry"].get("text", ""))
        elif m == "Network.requestWillBeSent":
            u = p["request"]["url"]
            if u != url:
                requests.append(u)
    b.events = [e for e in b.events if e.get("sessionId") != s]
    res["errors"] = errors
    res["requests"] = requests
    res["page"] = path
    b.call("Target.closeTarget", {"targetId": t["targetId"]})
    return res


def main(argv):
    chromium, shot_dir, pages = None, None, []
    i = 0
    while i < len(argv):
        if argv[i] == "--chromium":
            chromium = argv[i + 1]
            i += 2
        elif argv[i] == "--shot":
            shot_dir = argv[i + 1]
            i += 2
        else:
            pages.append(argv[i])
            i += 1
    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("pagecheck: no chromium (tools/bootstrap.sh installs it)", file=sys.stderr)
        return 2
    b = Browser(chromium)
    try:
        b.call("Target.setDiscoverTargets", {"discover": False})
        for p in pages:
            res = json.dumps(check(b, p, shot_dir))
            with open(p + ".check.json", "w") as f:
                f.write(res + "\n")
            print(res)
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
