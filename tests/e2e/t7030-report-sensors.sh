#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7030-report-sensors.sh - the report shows the sensors of the live
# page's detail view (issue 40), from the log's columns: memory
# utilization beside the GPU's, the SM and memory clocks, the fan and the
# PCIe throughput each drawn in its lane at the value the GPU reported,
# inside the group the drag zooms; the hover read-out says them; a log
# without a sensor (the H200 recording has no fan) draws no lane for it.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
export XDG_CONFIG_HOME=$T/cfg

# lanes HTML: "NAME Y0 H" for each lane frame, then "CLASS Y" for the first
# point of each sensor line, read from GPU 0's plot
lanes() {
	python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg class="plot" data-gpu="0".*?</svg>', page, re.S).group(0)
names = re.findall(r'<text class="lt" x="4" y="[0-9.]+">([^<]+)</text>', svg)
frames = re.findall(r'<rect class="fr" x="72" y="([0-9.]+)" width="1000" height="([0-9.]+)"/>', svg)
for n, (y, h) in zip(names, frames):
    print(n, y, h)
z = re.search(r'<g class="z".*?</g>', svg, re.S).group(0)
for cls in ("l-umem", "l-sm", "l-mclk", "l-fan", "l-tx", "l-rx"):
    m = re.search(r'<path class="%s" d="M[0-9.]+ ([0-9.]+)' % cls, z)
    print(cls, m.group(1) if m else "none")
PY
}

expect_success 'every sensor of the detail view in its lane, at its value' '
	{
		printf "driver 580.159.04\n"
		gpu_line 0 fan=60 util=50
	} >s.scn &&
	FAKE_NVML_SCENARIO=$T/s.scn vramz log -o s.csv -i 100ms --duration 3s --slow-interval 1s 2>/dev/null &&
	head -1 s.csv | grep -q "fan_pct" &&
	vramz report s.csv -o s.html 2>/dev/null && test -s s.html &&
	lanes s.html >lanes && cat lanes &&
	python3 - lanes <<-"PY"
	import sys
	rows = [l.split() for l in open(sys.argv[1])]
	lane = {r[0]: (float(r[1]), float(r[2])) for r in rows if len(r) == 3}
	first = {r[0]: r[1] for r in rows if len(r) == 2}
	assert list(lane) == ["memory", "util", "temp", "power", "clocks", "fan", "PCIe"], lane
	def y(name, frac):
	    y0, h = lane[name]
	    return y0 + h - frac * h
	def at(cls, name, frac):
	    got = float(first[cls])
	    assert abs(got - y(name, frac)) < 0.6, (cls, got, y(name, frac))
	at("l-umem", "util", 0.10)             # mem_util=10 on 0..100 %
	at("l-fan", "fan", 0.60)               # fan=60
	at("l-sm", "clocks", 1980 / 3500)      # 1980 MHz: the top a round 500 over 3201 * 1.05
	at("l-mclk", "clocks", 3201 / 3500)
	# PCIe: RX 2000 KiB/s is the busier direction, in the upper
	# half of the lane (its top a round figure above it), TX at half its height
	rx, tx = float(first["l-rx"]), float(first["l-tx"])
	y0, h = lane["PCIe"]
	assert y0 < rx < y0 + h * 0.5 and abs((y0 + h - tx) * 2 - (y0 + h - rx)) < 1, (rx, tx, lane["PCIe"])
	PY
'

expect_success 'the hover read-out says them; the drag zooms their lanes with the rest' '
	command -v chromium &&
	python3 "$TESTS_SRC/report/pagecheck.py" s.html >/dev/null &&
	python3 - s.html.check.json <<-"PY"
	import json, sys
	p = json.load(open(sys.argv[1]))
	ro = p["readout"]
	for want in ("mem util 10 %", "clocks 1980/3201 MHz", "fan 60 %", "PCIe tx 1000.0 KiB/s rx 2.0 MiB/s"):
	    assert want in ro, (want, ro)
	assert p["zoomed"] == 1 and not p["errors"], p
	print(ro)
	PY
'

expect_success 'a sensor the log lacks has no lane: the H200 recording has no fan' '
	vramz report "$TESTS_SRC/../examples/h200-leak.csv" -o h.html 2>/dev/null &&
	lanes h.html >hl && cat hl &&
	has "^clocks " hl && has "^PCIe " hl && hasnt "^fan " hl && has "^l-fan none" hl &&
	hasnt "class=\"s-fan\"" h.html
'
finish
