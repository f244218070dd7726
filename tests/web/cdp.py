# SPDX-License-Identifier: Apache-2.0
"""cdp.py - drives a headless Chromium for the live page's tests.

Chromium is started here (Debian's `chromium`, or $CHROMIUM) with
--remote-debugging-pipe: the DevTools protocol as NUL-terminated JSON on
file descriptors 3 (to the browser) and 4 (from it), so no WebSocket
library and no port are needed.  One page target is attached (flat
sessions); everything the page logs as an error, every uncaught exception
and every Content-Security-Policy refusal is collected in `errors`.

    with Browser() as b:
        b.open("http://127.0.0.1:PORT/", 1280, 800)
        b.wait("document.querySelectorAll('.gpu').length == 8")
        png = b.screenshot()
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
import zlib
import struct


def chromium_path():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    def __init__(self, timeout_s=30):
        self.timeout_s = timeout_s
        self.errors = []  # console errors, exceptions, CSP refusals
        self.events = []
        self._id = 0
        self._buf = b""
        self.session = None

    def __enter__(self):
        exe = chromium_path()
        if not exe:
            raise RuntimeError("no chromium: tools/bootstrap.sh installs it")
        self.profile = tempfile.mkdtemp(prefix="vramz-web-")
        to_r, to_w = os.pipe()      # commands: we write, chromium reads fd 3
        from_r, from_w = os.pipe()  # answers: chromium writes fd 4
        # above 9, so putting them on 3 and 4 cannot overwrite one with
        # the other; Python's descriptors are not inherited (PEP 446), so
        # the child keeps only 0-2 and these two (dup2 makes them inherited)
        hi_r, hi_w = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_r)
        os.close(from_w)

        def fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        args = [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
                "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio",
                "--hide-scrollbars", "--user-data-dir=" + self.profile,
                "--window-size=1280,800", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(hi_r)
        os.close(hi_w)
        self.w, self.r = to_w, from_r
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)
        shutil.rmtree(self.profile, ignore_errors=True)

    # ---- the protocol ----
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def _note(self, m):
        method, p = m.get("method"), m.get("params", {})
        self.events.append(m)
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: %s" % d.get("exception", {}).get("description", d.get("text")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description"))) for a in p.get("args", []))))
        elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
            self.errors.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))

    def call(self, method, params=None, session=True):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self._note(m)

    def pump(self, seconds):
        """Lets events arrive for a while (a no-op round trip each 100 ms)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.call("Runtime.evaluate", {"expression": "1"})
            time.sleep(0.1)

    # ---- a page ----
    def open(self, url, width, height, mobile=False):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(m)
        self.resize(width, height, mobile)
        self.call("Page.navigate", {"url": url})
        self.wait("document.readyState == 'complete'")

    def resize(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait(self, expr, timeout_s=None):
        """Polls expr until it is true; the bound is a deadline, not a
        timing claim: a slow machine only waits longer."""
        end = time.monotonic() + (timeout_s or self.timeout_s)
        while time.monotonic() < end:
            if self.eval(expr):
                return True
            time.sleep(0.1)
        raise AssertionError("still false after %ss: %s" % (timeout_s or self.timeout_s, expr))

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])


def png_pixels(data):
    """(width, height, bytes a pixel, rows of bytes) of an 8-bit RGB/RGBA
    non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6) and body[12] == 0, "unexpected PNG format"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def png_stats(data):
    """(width, height, distinct colours, pixels not near white)."""
    w, h, bpp, rows = png_pixels(data)
    colours, dark = set(), 0
    for r in rows:
        for x in range(0, w * bpp, bpp):
            px = r[x:x + 3]
            colours.add(px)
            if min(px) < 200:
                dark += 1
    return w, h, len(colours), dark
