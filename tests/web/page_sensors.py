# SPDX-License-Identifier: Apache-2.0
"""page_sensors.py PORT SCENARIO OUTDIR - the live page as issue 40 asks,
in headless Chromium against a running `vramz serve` (tests/e2e/t4042-page-
sensors.sh starts it on the fake NVML: two 140 GiB H200s, GPU 0 with a job
at 14 GiB leaking 1 GiB/min, a process not visible from here).

Each check prints "ok - ..." or raises:
  the memory chart is zoomed to the used range: the leak's area climbs
  pixel rows of the chart in a screenshot (its top edge at the newest
  column above the oldest's), where drawn 0 .. the total (the "show total"
  button) it climbs none; the page's zoom rule (page.js) gives what
  src/format/zoom.c gives on the unit test's cases; every sensor the
  sample has is a row with a sparkline and now / min / max / avg; the
  findings grouped by severity, INFO folded; aria-sort on the sorted
  header; a new finding said in the polite live region; dark by the
  reader's setting and by the toggle; 1280x800 and 390x844, light and
  dark, with screenshots (OUTDIR/web-*.png) and nothing wider than a
  phone; no console error, no request but to the exporter.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

port, scenario, outdir = sys.argv[1:4]
origin = "http://127.0.0.1:%s" % port


def ok(what):
    print("ok -", what, flush=True)


def canvas_rise(p, gpu):
    """Pixel rows the memory area's top edge climbs from the chart's oldest
    filled column to its newest, in a screenshot of GPU gpu's chart; and
    the chart's height."""
    r = p.eval("(function(){var c=document.querySelectorAll('#gpus .gpu canvas')[%d]"
               ".getBoundingClientRect();return [c.left,c.top,c.width,c.height]})()" % gpu)
    png = p.screenshot({"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1})
    w, h, bpp, rows = cdp.png_pixels(png)

    def filled(x, y):
        px = rows[y][x * bpp:x * bpp + 3]
        return px[2] - px[0] > 30 and px[2] > px[1]  # the used area's blue

    tops = []
    for x in range(w):
        top = next((y for y in range(h) if filled(x, y) and all(filled(x, yy) for yy in range(y, min(h, y + 3)))), None)
        if top is not None:
            tops.append(top)
    assert len(tops) > w // 3, "the memory area covers %d of %d columns" % (len(tops), w)
    left = sorted(tops[:5])[2]
    right = sorted(tops[-8:-3])[2]
    return left - right, h


with cdp.Browser() as browser:
    p = browser.open(origin + "/", 1280, 800, network=True)
    p.wait("document.querySelectorAll('#gpus .gpu').length == 2")
    p.wait("document.getElementById('state').textContent == 'live'")

    # the rule is one: page.js's copy against zoom.c's cases (test_tui_model)
    cases = [[14, 24, 140.4, 10, 25, True and 0], [14, 14, 140.4, 13, 15, 0],
             [0.5, 0.6, 80, 0, 1, 0], [120, 135, 140.4, 115, 140.4, 1], [10, 5, 80, 0, 80, 1]]
    for mn, mx, tot, lo, hi, at in cases:
        z = p.eval("vramzZoomRange(%r, %r, %r, 0.25)" % (mn, mx, tot))
        assert abs(z["lo"] - lo) < 1e-9 and abs(z["hi"] - hi) < 1e-9 and z["atTotal"] == bool(at), (mn, mx, z)
    ok("page.js's zoom rule is zoom.c's on the unit test's cases")

    # 20 s of history at 1 GiB/min: a third of a GiB on 140 GiB
    p.wait("(function(){var c=document.querySelector('#gpus .gpu canvas');"
           "return c && +c.dataset.hi > 0})()")
    p.pump(20.0)
    up, h = canvas_rise(p, 0)
    lo, hi = p.eval("(function(){var c=document.querySelector('#gpus .gpu canvas');"
                    "return [+c.dataset.lo, +c.dataset.hi]})()")
    assert lo > 0 and hi < 140 * (1 << 30), (lo, hi)
    assert up >= 12, "the 1 GiB/min leak climbs %d of %d pixel rows zoomed" % (up, h)
    scale = p.eval("document.querySelector('#gpus .gpu .scale').textContent")
    assert "GiB" in scale and "of 140 GiB" in scale, scale
    ok("zoomed to %.1f-%.1f GiB: the leak climbs %d of %d pixel rows (%s)" % (lo / 2**30, hi / 2**30, up, h, scale.strip()))
    p.eval("document.getElementById('zoom').click()")
    p.pump(0.5)
    up_total, _ = canvas_rise(p, 0)
    assert up_total <= 2, "0 .. the total: %d rows" % up_total
    assert p.eval("document.getElementById('zoom').getAttribute('aria-pressed')") == "true"
    p.eval("document.getElementById('zoom').click()")
    ok("0 .. the total (show total): the same leak climbs %d rows; back to zoomed" % up_total)

    # the sensors the sample has, each with its history and figures
    rows = p.eval("Array.prototype.map.call(document.querySelectorAll('#gpus .gpu')[0]"
                  ".querySelectorAll('table.sens tbody tr'), function(r){return [r.dataset.sensor,"
                  " Array.prototype.map.call(r.querySelectorAll('td.n'), function(c){return c.textContent}),"
                  " r.querySelector('canvas').width]})")
    keys = [r[0] for r in rows]
    for k in ("mem_used_bytes", "mem_reserved_bytes", "util_gpu_pct", "util_mem_pct", "temp_c",
              "temp_mem_c", "power_mw", "clock_sm_mhz", "clock_mem_mhz", "fan_pct",
              "pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s"):
        assert k in keys, "no %s row: %r" % (k, keys)
    for k, figs, cw in rows:
        assert len(figs) == 4 and all(f and f != "-" for f in figs) and cw > 0, (k, figs)
    used = next(r for r in rows if r[0] == "mem_used_bytes")[1]
    assert used[1] != used[2], "memory used: min %s = max %s while leaking" % (used[1], used[2])
    ok("%d sensor rows with sparkline, now/min/max/avg; memory used %s" % (len(rows), " / ".join(used)))

    # VRAM health, in `vramz status`'s words: GPU 1's uncorrected ECC
    # errors and pending remap (the slow thread's, every second)
    p.wait("(document.querySelectorAll('#gpus .gpu .health')[1] || {}).textContent =="
           " 'VRAM health: UNCORR ECC 2, remap pending'")
    hl = p.eval("Array.prototype.map.call(document.querySelectorAll('#gpus .gpu .health'),"
                " function(h){return [h.hidden, h.className, h.textContent]})")
    assert hl == [[False, "health good", "VRAM health: ok"],
                  [False, "health bad", "VRAM health: UNCORR ECC 2, remap pending"]], hl
    ok("VRAM health per GPU: %r" % [h[2] for h in hl])

    # findings grouped by severity, INFO folded
    groups = p.eval("Array.prototype.map.call(document.querySelectorAll('#findings > *'),"
                    " function(g){return [g.tagName, g.className, g.open === undefined ? null : g.open,"
                    " g.querySelectorAll('li').length]})")
    info = [g for g in groups if "info" in g[1]]
    assert info and info[0][0] == "DETAILS" and info[0][2] is False and info[0][3] >= 1, groups
    sev = [g[1].split()[-1] for g in groups]
    assert sev == sorted(sev, key=["critical", "warning", "info"].index), groups
    ok("findings by severity, INFO folded: %r" % groups)

    # aria-sort
    sorts = p.eval("Array.prototype.map.call(document.querySelectorAll('#phead th'),"
                   " function(t){return [t.dataset.key, t.getAttribute('aria-sort')]})")
    assert dict(sorts)["used_bytes"] == "descending" and list(dict(sorts).values()).count("none") == len(sorts) - 1, sorts
    p.eval("document.querySelector('th[data-key=pid]').click()")
    assert p.eval("document.querySelector('th[data-key=pid]').getAttribute('aria-sort')") == "descending"
    p.eval("document.querySelector('th[data-key=pid]').click()")
    assert p.eval("document.querySelector('th[data-key=pid]').getAttribute('aria-sort')") == "ascending"
    assert p.eval("document.querySelector('th[data-key=used_bytes]').getAttribute('aria-sort')") == "none"
    p.eval("document.querySelector('th[data-key=used_bytes]').click()")
    ok("aria-sort follows the sorted column")

    # a new finding is said, politely
    assert p.eval("document.getElementById('announce').getAttribute('aria-live')") == "polite"
    with open(scenario) as f:
        text = f.read()
    with open(scenario + ".new", "w") as f:
        f.write(text + "grow gpu=1 rate=+64MiB/s\n")
    os.rename(scenario + ".new", scenario)
    p.wait("document.getElementById('announce').textContent.indexOf('New ') == 0", timeout_s=60)
    said = p.eval("document.getElementById('announce').textContent")
    ok("a new finding said in the live region: %s" % said[:70])

    # light and dark, wide and narrow: screenshots, nothing wider than the phone
    shots = cdp.theme_shots(p, outdir, "web", "document.documentElement.scrollWidth",
                            "getComputedStyle(document.body).backgroundColor", ok)

    # the toggle: dark in a light setting, kept for the next visit
    p.eval("document.getElementById('theme').click()")
    assert p.eval("document.documentElement.dataset.theme") == "dark"
    assert p.eval("getComputedStyle(document.body).backgroundColor") == shots[(1280, "dark")][0]
    p.goto(origin + "/")
    p.wait("document.documentElement.dataset.theme == 'dark'")
    p.eval("document.getElementById('theme').click()")
    assert p.eval("document.documentElement.dataset.theme") == "light"
    ok("the theme toggle: dark under a light setting, kept across a reload")

    cdp.assert_clean(p, origin, ok)
