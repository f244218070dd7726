#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pagecheck.py - opens `vramz report` pages in headless Chromium and says
what a reader would see, as JSON on stdout (one object per page).

Standard library only.  Chromium is driven by tests/web/cdp.py (the
DevTools protocol over --remote-debugging-pipe), one browser for all the
pages, each in a tab of its own.  For each page it records console errors
and warnings, uncaught exceptions and log entries at error or warning
level (a Content-Security-Policy violation is one), every network request
other than the page itself, what the plots and markers hold (through
their data attributes), how the reader's dark setting and printing show
it, whether the hover read-out and the zoom respond, and a screenshot's
pixel statistics (the PNG decoded by cdp.py).

usage: pagecheck.py [--chromium PATH] [--shot DIR] PAGE.html...
(each page's result also goes to PAGE.html.check.json)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web"))
import cdp  # noqa: E402

TIMEOUT_S = 60
WINDOW = (1400, 1800)  # a desktop's width; tall enough for two plots

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
                   memLo: +s.dataset.memLo, memHi: +s.dataset.memHi,
                   totalAbove: !!s.querySelector('text.ta'),
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


def check(browser, path, shot_dir):
    """What a reader of one page would see, from a tab of its own (closed
    after): every request it makes is recorded, none other than its own."""
    url = "file://" + os.path.abspath(path)
    p = browser.open(url, *WINDOW, network=True, new_tab=True)
    ev = p.call("Runtime.evaluate", {"expression": EXTRACT_JS, "returnByValue": True})
    if "exceptionDetails" in ev:
        res = {"extract_error": ev["exceptionDetails"].get("text")}
    else:
        res = json.loads(ev["result"]["value"])
    # the reader's dark setting turns the page dark; printing keeps the plots
    look = "JSON.stringify({bg: getComputedStyle(document.body).backgroundColor, " \
           "plots: [...document.querySelectorAll('svg.plot')].filter(" \
           "s => getComputedStyle(s).display !== 'none' && s.getBoundingClientRect().height > 100).length})"
    for name, media, scheme in (("dark", "", "dark"), ("print", "print", "light"), ("light", "", "light")):
        p.emulate(media, scheme)
        res[name] = json.loads(p.eval(look))
    # the first screen, scaled down: enough to tell a blank page, and a
    # tenth of the pixels for the decoder below
    png = p.screenshot({"x": 0, "y": 0, "width": WINDOW[0], "height": WINDOW[1], "scale": 0.3})
    if shot_dir:
        with open(os.path.join(shot_dir, os.path.basename(path) + ".png"), "wb") as f:
            f.write(png)
    res["screenshot"] = png_stats(png)
    p.pump(0.2)  # what the page did meanwhile (a late error) arrives
    # a warning counts as an error here: the page is generated, nothing in
    # it has a reason to warn
    res["errors"] = p.errors + p.warnings
    res["requests"] = [u for u in p.requests if u != url]
    res["page"] = path
    p.close()
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
    if not cdp.chromium_path(chromium):
        print("pagecheck: no chromium (tools/bootstrap.sh installs it)", file=sys.stderr)
        return 2
    with cdp.Browser(timeout_s=TIMEOUT_S, chromium=chromium, window=WINDOW,
                     scrollbars=True) as browser:
        for p in pages:
            res = json.dumps(check(browser, p, shot_dir))
            with open(p + ".check.json", "w") as f:
                f.write(res + "\n")
            print(res)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
