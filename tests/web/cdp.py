# SPDX-License-Identifier: Apache-2.0
"""cdp.py - the tests' one Chromium driver: headless Chromium for the live
page's tests (tests/web/) and the report pages' check (tests/report/).

Chromium is started here (Debian's `chromium`, or $CHROMIUM, or the path
given) with --remote-debugging-pipe: the DevTools protocol as
NUL-terminated JSON on file descriptors 3 (to the browser) and 4 (from
it), so no WebSocket library and no port are needed.  A Browser holds
the process and the pipe; each Page is one tab attached as a flat
session, with what arrived for that tab alone: everything it logs as an
error (`errors`: console errors and asserts, uncaught exceptions, log
entries at error level, a Content-Security-Policy refusal is one), as a
warning (`warnings`), and, when opened with network=True, the URL of
every request it made (`requests`).  Several pages can be open at once.

    with Browser() as b:
        p = b.open("http://127.0.0.1:PORT/", 1280, 800)
        p.wait("document.querySelectorAll('.gpu').length == 8")
        png = p.screenshot()
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


def chromium_path(given=None):
    """The browser: the one given (a path or a name), or else $CHROMIUM
    or the first of the usual names on $PATH."""
    names = (given,) if given else (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome")
    for name in names:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """timeout_s bounds each answer and each wait; window is the size the
    browser starts with (a page's viewport is set by open()); scrollbars
    take their width from a page, as on a reader's desktop, or (the
    default, for screenshots that do not depend on the platform's
    scrollbar) are hidden."""

    def __init__(self, timeout_s=30, chromium=None, window=(1280, 800), scrollbars=False):
        self.timeout_s = timeout_s
        self.chromium = chromium
        self.window = window
        self.scrollbars = scrollbars
        self.pages = {}  # session id -> Page
        self._id = 0
        self._buf = b""

    def __enter__(self):
        exe = chromium_path(self.chromium)
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
                "--user-data-dir=" + self.profile, "--window-size=%d,%d" % self.window]
        args += ([] if self.scrollbars else ["--hide-scrollbars"]) + ["about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(hi_r)
        os.close(hi_w)
        self.w, self.r = to_w, from_r
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close")
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

    def _route(self, m):
        """An event to the page of its session; one of a page closed
        since, or of the browser itself, is not needed by any test."""
        page = self.pages.get(m.get("sessionId"))
        if page:
            page._note(m)

    def call(self, method, params=None, session=None):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self._route(m)

    def _next_event(self, deadline):
        m = self._read_message(deadline)
        self._route(m)

    # ---- pages ----
    def open(self, url, width, height, mobile=False, network=False, new_tab=False):
        """A Page showing url (loaded: its load event fired) in a
        width x height viewport: the tab chromium started with, or with
        new_tab a tab of its own, so that several pages can be open."""
        if new_tab:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        else:
            targets = self.call("Target.getTargets")["targetInfos"]
            target = next(t for t in targets if t["type"] == "page")["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = self.pages[session] = Page(self, target, session)
        for m in ("Runtime.enable", "Log.enable", "Page.enable") + (("Network.enable",) if network else ()):
            page.call(m)
        page.resize(width, height, mobile)
        page.goto(url)
        return page


class Page:
    """One tab: its session, and what arrived for it alone."""

    def __init__(self, browser, target, session):
        self.browser, self.target, self.session = browser, target, session
        self.errors = []    # console errors, exceptions, CSP refusals
        self.warnings = []  # console warnings, log entries at warning level
        self.requests = []  # the URL of every request (with network=True)
        self._events = []   # not yet taken by wait_event

    def _note(self, m):
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: %s" % d.get("exception", {}).get("description", d.get("text")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            (self.warnings if p["type"] == "warning" else self.errors).append("console.%s: %s" % (
                p["type"], " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))))
        elif method == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
            e = p["entry"]
            (self.warnings if e["level"] == "warning" else self.errors).append(
                "log: %s %s" % (e.get("text"), e.get("url", "")))
        elif method == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif method == "Page.loadEventFired":
            self._events.append(m)

    def call(self, method, params=None):
        return self.browser.call(method, params, self.session)

    def wait_event(self, method):
        """The next event `method` of this page (kept ones: the load event)."""
        deadline = time.monotonic() + self.browser.timeout_s
        while True:
            for i, e in enumerate(self._events):
                if e["method"] == method:
                    return self._events.pop(i)
            self.browser._next_event(deadline)

    def goto(self, url):
        self._events = [e for e in self._events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")
        self.wait("document.readyState == 'complete'")

    def close(self):
        self.browser.call("Target.closeTarget", {"targetId": self.target})
        del self.browser.pages[self.session]

    def pump(self, seconds):
        """Lets events arrive for a while (a no-op round trip each 100 ms):
        whatever the page did before the last answer has been noted."""
        end = time.monotonic() + seconds
        while True:
            self.call("Runtime.evaluate", {"expression": "1"})
            if time.monotonic() >= end:
                return
            time.sleep(0.1)

    def resize(self, width, height, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})

    def emulate(self, media="", color_scheme="light"):
        """CSS media as a reader's setting would make it: media "print" or
        "" (the screen), prefers-color-scheme "dark" or "light"."""
        self.call("Emulation.setEmulatedMedia", {"media": media, "features": [
            {"name": "prefers-color-scheme", "value": color_scheme}]})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait(self, expr, timeout_s=None):
        """Polls expr until it is true; the bound is a deadline, not a
        timing claim: a slow machine only waits longer."""
        limit = timeout_s or self.browser.timeout_s
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if self.eval(expr):
                return True
            time.sleep(0.1)
        raise AssertionError("still false after %ss: %s" % (limit, expr))

    def screenshot(self, clip=None):
        """A PNG of the viewport, or of clip {x, y, width, height, scale}."""
        params = {"format": "png"}
        if clip:
            params["clip"] = clip
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])


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


def theme_shots(p, outdir, prefix, wide_expr, bg_expr, ok):
    """Light and dark at 1280x800 and 390x844 (mobile): each a screenshot
    PREFIX-WxH[-dark].png in outdir, of that size and more than 50
    colours, the dark one with more than twice the light one's dark
    pixels, and at 390 nothing wider than the phone (wide_expr, a
    scrollWidth).  Returns {(width, scheme): (bg_expr's value, dark
    pixels)}; leaves the page at 1280x800, light."""
    shots = {}
    for (w, h, mobile) in ((1280, 800, False), (390, 844, True)):
        for scheme in ("light", "dark"):
            p.resize(w, h, mobile)
            p.emulate("", scheme)
            p.pump(0.6)
            if mobile:
                sw = p.eval(wide_expr)
                assert sw <= w + 1, "%d px wide at %d px" % (sw, w)
            png = p.screenshot()
            name = "%s-%dx%d%s.png" % (prefix, w, h, "-dark" if scheme == "dark" else "")
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(png)
            pw, ph, colours, darkpx = png_stats(png)
            assert (pw, ph) == (w, h) and colours >= 50, (name, pw, ph, colours)
            shots[(w, scheme)] = (p.eval(bg_expr), darkpx)
        assert shots[(w, "dark")][1] > 2 * shots[(w, "light")][1], shots
        ok("%dx%d light (%s) and dark (%s): screenshots saved" % (w, h, shots[(w, "light")][0], shots[(w, "dark")][0]))
    p.resize(1280, 800)
    p.emulate("", "light")
    return shots


def assert_clean(p, origin, ok):
    """No console error, and no request but to origin (the page is
    self-contained)."""
    assert not p.errors, p.errors
    others = [u for u in p.requests if not u.startswith(origin + "/")]
    assert not others, others
    ok("no console error; %d requests, all to the exporter" % len(p.requests))
