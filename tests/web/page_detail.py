# SPDX-License-Identifier: Apache-2.0
"""page_detail.py PORT OUTDIR - the live page's detail view of one GPU
(issue 40), in headless Chromium against a running `vramz serve`
(tests/e2e/t4043-page-detail.sh starts it on the fake NVML: two H200s
with fan and memory temperature, GPU 0 with three processes of 8, 4 and 2
GiB, the last leaking 1 GiB/min; --history 10m at 200 ms).

Each check prints "ok - ..." or raises:
  Enter on GPU 0's name opens the view (a modal dialog, the page behind it
  inert, the URL #gpu-0, focus on its close button); a chart a sensor,
  none "not reported"; the pointer over the memory chart reads the tick
  under it, its time and its value as the ring has them, and every other
  chart the same tick with the scenario's figures (300 W, 40/55 °C,
  1980/3201 MHz, fan 60 %, PCIe TX 1000 KiB/s); the arrow keys move that
  cursor tick by tick; the range selector offers 5 minutes up to the
  history kept and changes the time axis (the data covers twice the
  pixels at 5 min as at 10); the three processes stacked with their own
  colours and their sizes in the readout; Esc closes and gives the focus
  back, Back closes, #gpu-1 opens GPU 1; light and dark at 1280x800 and
  390x844 with screenshots (OUTDIR/web-detail-*.png) and nothing wider
  than the phone; no console error, no request but to the exporter.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

port, outdir = sys.argv[1:3]
origin = "http://127.0.0.1:%s" % port


def ok(what):
    print("ok -", what, flush=True)


def key(p, name, code, vk):
    """A key pressed and released, as a reader's keyboard sends it (Enter
    with its text, so a focused button is activated)."""
    down = {"type": "keyDown", "key": name, "code": code, "windowsVirtualKeyCode": vk,
            "nativeVirtualKeyCode": vk}
    if name == "Enter":
        down["text"] = "\r"
    p.call("Input.dispatchKeyEvent", down)
    p.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": name, "code": code,
                                       "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk})
    assert not p.errors, p.errors


def rect(p, sel):
    return p.eval("(function(){var r=document.querySelector(%r).getBoundingClientRect();"
                  "return [r.left,r.top,r.width,r.height]})()" % sel)


def readouts(p):
    return p.eval("(function(){var o={};document.querySelectorAll('#dcharts figure').forEach(function(f){"
                  "o[f.dataset.chart]=[f.querySelector('output').textContent,f.dataset.t||null,"
                  "f.classList.contains('none')]});return o})()")


def filled_columns(p, sel, rgb, bg):
    """Columns of the canvas sel's screenshot with a pixel of colour rgb
    drawn at least 40 % opaque over bg (a line's antialiased edge too)."""
    p.eval("document.querySelector(%r).scrollIntoView({block: 'center'})" % sel)
    r = rect(p, sel)
    png = p.screenshot({"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1})
    w, h, bpp, rows = cdp.png_pixels(png)
    cols = set()
    for y in range(h):
        row = rows[y]
        for x in range(w):
            px = row[x * bpp:x * bpp + 3]
            d = [rgb[i] - bg[i] for i in range(3)]
            a = sum((px[i] - bg[i]) * d[i] for i in range(3)) / max(1, sum(v * v for v in d))
            if a >= 0.4 and all(abs(bg[i] + a * d[i] - px[i]) < 24 for i in range(3)):
                cols.add(x)
    return cols, w


def colour(p, var):
    v = p.eval("getComputedStyle(document.documentElement).getPropertyValue(%r).trim()" % var)
    if len(v) == 4:  # #fff
        v = "#" + "".join(ch * 2 for ch in v[1:])
    assert v.startswith("#") and len(v) == 7, v
    return tuple(int(v[i:i + 2], 16) for i in (1, 3, 5))


with cdp.Browser() as browser:
    p = browser.open(origin + "/", 1280, 800, network=True)
    p.wait("document.querySelectorAll('#gpus .gpu').length == 2")
    p.wait("document.getElementById('state').textContent == 'live'")
    p.pump(8.0)  # some ticks: a slope, the slow PCIe reading in

    # opened by the keyboard from the GPU's name
    assert p.eval("document.getElementById('detail').hidden") is True
    p.eval("document.querySelector('#gpus button.open[data-gpu=\"0\"]').focus()")
    key(p, "Enter", "Enter", 13)
    p.wait("!document.getElementById('detail').hidden")
    state = p.eval("(function(){var d=document.getElementById('detail');return [d.getAttribute('role'),"
                   "d.getAttribute('aria-modal'),document.querySelector('main').inert,location.hash,"
                   "document.activeElement.id,document.getElementById('dtitle').textContent,"
                   "document.getElementById(d.getAttribute('aria-labelledby')).id]})()")
    assert state[:5] == ["dialog", "true", True, "#gpu-0", "dclose"], state
    assert state[5].startswith("GPU 0 \u00b7 NVIDIA H200"), state
    ok("Enter on GPU 0's name opens its view: %r" % state)

    # a chart for every sensor, none missing
    ro = readouts(p)
    assert sorted(ro) == sorted(["mem", "procs", "util", "temp", "power", "clock", "fan", "pcie"]), ro
    assert not any(v[2] for v in ro.values()), ro
    labels = p.eval("Array.prototype.map.call(document.querySelectorAll('#dcharts canvas'),"
                    " function(c){return [c.getAttribute('aria-label'), c.tabIndex, c.width]})")
    assert all(lab and "over the last 5 min" in lab and ti == 0 and w > 300 for lab, ti, w in labels), labels
    ok("%d charts, each focusable with a label: %s" % (len(labels), labels[0][0]))

    # the values under the pointer: the tick under it, as the ring has it
    r = rect(p, "#dcharts figure[data-chart=mem] canvas")
    x, y = r[0] + r[2] * 0.995, r[1] + r[3] / 2
    p.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    p.pump(0.3)
    ro = readouts(p)
    want = p.eval("(function(){var c=document.querySelector('#dcharts figure[data-chart=mem] canvas');"
                  "var h=vramzPage.st.hist[0],b=h.t.indexOf(%s);"
                  "return [h.t[b],vramzPage.iso(h.t[b]).slice(11,19),vramzPage.cbytes(h.s.mem_used_bytes[b]),"
                  "vramzPage.cbytes(h.s.mem_reserved_bytes[b]),b,h.t.length,+c.dataset.t1]})()" % ro["mem"][1])
    # 0.5 % of 5 minutes before the newest tick when the pointer moved
    assert want[4] >= 0 and abs(want[6] - 1500 - want[0]) < 3000, want
    mem = ro["mem"][0]
    assert mem == "%s \u00b7 reserved %s \u00b7 used %s" % (want[1], want[3], want[2]), (mem, want)
    assert want[4] < want[5] - 1, "the pointer is not on the newest tick: %r" % want
    assert all(v[1] == str(want[0]) for v in ro.values()), ro
    for chart, text in (("power", "draw 300 W"), ("temp", "GPU 40 \u00b0C \u00b7 memory 55 \u00b0C"),
                        ("clock", "SM 1980 MHz \u00b7 memory 3201 MHz"), ("fan", "fan 60 %"),
                        ("util", "GPU 0 % \u00b7 memory 10 %"), ("pcie", "TX 1000 KiB/s")):
        assert ro[chart][0].startswith(want[1] + " \u00b7 ") and text in ro[chart][0], (chart, ro[chart])
    ok("under the pointer: %s; %s; %s" % (mem, ro["power"][0], ro["pcie"][0]))

    # the keyboard's cursor: two ticks back from there
    p.eval("document.querySelector('#dcharts figure[data-chart=mem] canvas').focus()")
    key(p, "ArrowLeft", "ArrowLeft", 37)
    key(p, "ArrowLeft", "ArrowLeft", 37)
    t2 = p.eval("vramzPage.st.hist[0].t[%d]" % (want[4] - 2))
    ro2 = readouts(p)
    assert ro2["mem"][1] == str(t2) and ro2["fan"][1] == str(t2), (ro2["mem"], t2)
    assert ro2["mem"][0].startswith(p.eval("vramzPage.iso(%d).slice(11,19)" % t2)), ro2["mem"]
    ok("ArrowLeft twice: the cursor two ticks back (%s)" % ro2["mem"][0])

    # the time range: 5 minutes up to the history kept
    opts = p.eval("Array.prototype.map.call(document.querySelectorAll('#drange option'),"
                  " function(o){return [o.value, o.textContent]})")
    assert [o[0] for o in opts] == ["300000", "600000"], opts
    p.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5})
    blue, card = colour(p, "--used"), colour(p, "--card")
    at5, w = filled_columns(p, "#dcharts figure[data-chart=fan] canvas", blue, card)
    p.eval("(function(){var s=document.getElementById('drange');s.value='600000';"
           "s.dispatchEvent(new Event('change'))})()")
    span = p.eval("(function(){var c=document.querySelector('#dcharts canvas');return +c.dataset.t1 - +c.dataset.t0})()")
    assert span == 600000 and p.eval("document.getElementById('detail').dataset.rangeMs") == "600000", span
    at10, _ = filled_columns(p, "#dcharts figure[data-chart=fan] canvas", blue, card)
    assert len(at5) >= 6 and 1.5 <= len(at5) / max(1, len(at10)) <= 2.8, (len(at5), len(at10), w)
    assert "10 min" in p.eval("document.querySelector('#dcharts canvas').getAttribute('aria-label')")
    ok("range %r: the data spans %d px at 5 min, %d at 10 min" % (opts, len(at5), len(at10)))
    p.eval("(function(){var s=document.getElementById('drange');s.value='300000';"
           "s.dispatchEvent(new Event('change'))})()")

    # the processes stacked: three bands of their own colours, their sizes said
    legend = p.eval("document.querySelector('#dcharts figure[data-chart=procs] .legend').textContent")
    pids = [os.environ["P1"], os.environ["P2"], os.environ["P3"]]
    assert all(("%s sleep" % pid) in legend for pid in pids), legend
    procs = readouts(p)["procs"][0]
    assert "%s sleep 8.00 GiB" % pids[0] in procs and "%s sleep 4.00 GiB" % pids[1] in procs, procs
    assert "%s sleep 2." % pids[2] in procs, procs
    bands = []
    for var in ("--p0", "--p1", "--p2"):
        # a band is its colour at 55 % over the card
        c = colour(p, var)
        cols, _ = filled_columns(p, "#dcharts figure[data-chart=procs] canvas",
                                 tuple(round(0.55 * c[i] + 0.45 * card[i]) for i in range(3)), card)
        bands.append(len(cols))
    assert all(b >= len(at5) // 2 for b in bands), (bands, len(at5))
    ok("processes stacked: %s; bands over %r columns" % (procs, bands))

    # light and dark, wide and narrow, with screenshots
    cdp.theme_shots(p, outdir, "web-detail", "document.getElementById('detail').scrollWidth",
                    "getComputedStyle(document.getElementById('detail')).backgroundColor", ok)

    # Esc closes and gives the focus back to the GPU's name; Back closes
    key(p, "Escape", "Escape", 27)
    p.wait("document.getElementById('detail').hidden")
    back = p.eval("[location.hash, document.activeElement.dataset.gpu, document.querySelector('main').inert]")
    assert back == ["", "0", False], back
    p.eval("document.querySelector('#gpus button.open[data-gpu=\"1\"]').click()")
    p.wait("!document.getElementById('detail').hidden && location.hash == '#gpu-1'")
    p.eval("history.back()")
    p.wait("document.getElementById('detail').hidden && location.hash == ''")
    ok("Esc closes (focus back on GPU 0's name); Back closes GPU 1's")

    # a link to the view opens it
    p.eval("history.replaceState(null, '', '/#gpu-1')")
    p._events = []
    p.call("Page.reload")
    p.wait_event("Page.loadEventFired")
    p.wait("!document.getElementById('detail').hidden")
    assert p.eval("document.getElementById('detail').dataset.gpu") == "1"
    ok("/#gpu-1 opens GPU 1's view")

    cdp.assert_clean(p, origin, ok)
