#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""expect.py - asserts what a reader of a `vramz report` page would notice,
from pagecheck.py's JSON for that page (tests/e2e/t7000-report.sh).

usage: expect.py CHECK.json [--gpus 0,1] [--findings ANALYZE.json]
                 [--kinds leak,gpu_lost] [--gaps N] [--since-ms T] [--until-ms T]

- the page loaded with no console error, no CSP violation, no exception
  and no network request;
- exactly the GPUs named have plots, each with memory, utilization,
  temperature and power drawn;
- every finding of `vramz analyze --json` (same log, same thresholds) has
  a marker on its GPU's plot at its first-seen time: data-t-ms equal, and
  x where the time axis puts that time;
- the hover read-out and the zoom respond; the screenshot is not blank;
- the reader's dark setting gives a dark page, printing keeps every plot.
"""
import json
import sys
from datetime import datetime, timezone


def iso_ms(s):
    d = datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return round(d.timestamp() * 1000)


def fail(msg):
    print("expect: " + msg)
    sys.exit(1)


def main(argv):
    page = json.load(open(argv[0]))
    opts = dict(zip(argv[1::2], argv[2::2]))
    if page.get("extract_error"):
        fail("page script failed: %s" % page["extract_error"])
    if page["errors"]:
        fail("console errors: %s" % page["errors"])
    if page["requests"]:
        fail("network requests: %s" % page["requests"])
    if page["scripts"] != 2:
        fail("expected the data block and one script, found %d scripts" % page["scripts"])
    gpus = sorted(page["gpus"], key=int)
    if "--gpus" in opts:
        want = opts["--gpus"].split(",")
        if gpus != want:
            fail("plots for GPUs %s, expected %s" % (gpus, want))
    for g, p in page["gpus"].items():
        # the total is drawn where it is in view: zoomed to a used range
        # below it (issue 40), the plot says "total ... above" instead
        zoomed_below = p.get("totalAbove")
        for cls in ("b-res", "b-un", "l-tot", "a-util", "l-temp", "l-pow"):
            if cls == "l-tot" and zoomed_below:
                if p["paths"].get(cls, 0):
                    fail("GPU %s: the total drawn at the top of a plot zoomed below it" % g)
                continue
            if p["paths"].get(cls, 0) < 10:
                fail("GPU %s: nothing drawn for %s (%s)" % (g, cls, p["paths"]))
        if not (0 <= p.get("memLo", 0) < p.get("memHi", 1)):
            fail("GPU %s: memory range %s-%s" % (g, p.get("memLo"), p.get("memHi")))
        if p["width"] < 600 or p["height"] < 200:
            fail("GPU %s: plot too small to read: %s" % (g, p))
    t0, t1, cols, L = page["t0"], page["t1"], page["cols"], page["L"]
    if "--since-ms" in opts and t0 < int(opts["--since-ms"]):
        fail("time axis starts at %d, before --since %s" % (t0, opts["--since-ms"]))
    if "--until-ms" in opts and t1 > int(opts["--until-ms"]):
        fail("time axis ends at %d, after --until %s" % (t1, opts["--until-ms"]))
    markers = page["markers"]
    for m in markers:
        want_x = L + (m["t_ms"] - t0) * cols / (t1 - t0)
        if abs(m["x"] - want_x) > 0.01 or abs(m["x1"] - want_x) > 0.01:
            fail("marker %s at x %.2f (line %.2f), its time puts it at %.2f" %
                 (m, m["x"], m["x1"], want_x))
    if "--findings" in opts:
        an = json.load(open(opts["--findings"]))
        fs = an["findings"] + an["cleared"]
        if len(page["rows"]) != len(fs):
            fail("%d findings in the table, analyze has %d" % (len(page["rows"]), len(fs)))
        for f in fs:
            if f.get("gpu") is None or str(f["gpu"]) not in page["gpus"]:
                continue
            t = iso_ms(f["first_seen"])
            hit = [m for m in markers if m["kind"] == f["kind"] and m["gpu"] == str(f["gpu"])
                   and m["t_ms"] == t]
            if not hit:
                fail("no %s marker on GPU %s at %s (markers: %s)" % (f["kind"], f["gpu"],
                                                                     f["first_seen"], markers))
            rows = [r for r in page["rows"] if r["kind"] == f["kind"] and r["t_ms"] == t]
            if not rows or f["summary"][:40] not in rows[0]["text"]:
                fail("the table lacks %s: %s" % (f["kind"], f["summary"]))
    if "--kinds" in opts:
        kinds = sorted({m["kind"] for m in markers})
        for k in opts["--kinds"].split(","):
            if k not in kinds:
                fail("no %s marker (markers: %s)" % (k, kinds))
    if "--gaps" in opts:
        n = int(opts["--gaps"])
        if len(page["gaps"]) != n * len(page["gpus"]):
            fail("%d gap marks, expected %d per GPU: %s" % (len(page["gaps"]), n, page["gaps"]))
        for g, p in page["gpus"].items():
            # a line never crosses a gap: each gap starts a new subpath
            # (the lowest-reading line: the total's is not drawn when the
            # plot is zoomed below it)
            line = "l-min" if p.get("totalAbove") else "l-tot"
            if p["breaks"][line] != n + 1:
                fail("GPU %s: the %s line has %d pieces, expected %d" % (g, line, p["breaks"][line], n + 1))
        for gp in page["gaps"]:
            want_x = L + (gp["from_ms"] - t0) * cols / (t1 - t0)
            if abs(gp["x"] - want_x) > 0.1:
                fail("gap drawn at %.1f, its time puts it at %.1f" % (gp["x"], want_x))
    ro = page.get("readout") or ""
    if "memory" not in ro and "no data" not in ro:
        fail("the hover read-out did not respond: %r" % ro)
    if not page.get("zoomed") or page.get("unzoomed"):
        fail("zoom: %s plots zoomed by a drag, %s left after a double-click" %
             (page.get("zoomed"), page.get("unzoomed")))
    def lum(css):
        r, g, b = (int(x) for x in css[css.index("(") + 1:].rstrip(")").split(",")[:3])
        return (r * 299 + g * 587 + b * 114) / 1000
    if not (lum(page["dark"]["bg"]) < 80 < lum(page["light"]["bg"])):
        fail("themes: background %s in dark, %s in light" % (page["dark"]["bg"], page["light"]["bg"]))
    if page["print"]["plots"] != len(gpus) or lum(page["print"]["bg"]) < 200:
        fail("print: %s (expected %d plots on white)" % (page["print"], len(gpus)))
    sh = page["screenshot"]
    if sh["lum_std"] < 10 or sh["colours"] < 20:
        fail("the screenshot looks blank: %s" % sh)
    print("ok: %d GPUs, %d markers, %d findings rows, %d processes" %
          (len(gpus), len(markers), len(page["rows"]), page["procs"]))


if __name__ == "__main__":
    main(sys.argv[1:])
