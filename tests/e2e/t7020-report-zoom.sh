#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7020-report-zoom: the report's memory plot is drawn over the range the
# memory moved in (issue 40, format/zoom.h, as `top` and the live page):
# ten minutes of a 14 GiB job leaking 1 GiB/min on a 140 GiB H200 climb
# most of the lane's height, the foot is labelled with its value, the
# total is named ("total 140.4 GiB ↑") instead of drawn at the lane's top; a job that
# fills the card keeps the total as the ceiling line from 0.
. "$TESTS_SRC/e2e/lib.sh"
export XDG_CONFIG_HOME=$T/cfg

python3 "$TESTS_SRC/helpers/leaklog.py" "$T/leak" 600 14 1 || exit 1
python3 "$TESTS_SRC/helpers/leaklog.py" "$T/full" 600 100 3 || exit 1

# rise SVG_HTML: "LO HI RISE H": the memory lane's range (bytes) and how far,
# in the lane's units, the top of the stack climbs from its first column
# to its last, of its height H
rise() {
	python3 - "$1" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg class="plot" data-gpu="0"[^>]*data-mem-lo="([0-9.]+)" data-mem-hi="([0-9.]+)"', page)
d = re.search(r'<path class="b-un" d="([^"]*)"', page).group(1)
m = re.match(r"M([0-9.]+) ([0-9.]+)V([0-9.]+)", d)
base, y = float(m.group(2)), float(m.group(3))
first = y
for t in re.finditer(r"([hlVHZ])([-0-9.]*)(?: ([-0-9.]+))?", d[m.end():]):
    if t.group(1) == "l":
        y += float(t.group(3))
    elif t.group(1) == "V":
        break
print(svg.group(1), svg.group(2), round(first - y, 1), 220)
PY
}

expect_success 'the leak climbs most of the memory lane; the foot and the total said' '
	vramz report "$T/leak.csv" -o leak.html 2>/dev/null; test -s leak.html &&
	read -r lo hi up h < <(rise leak.html) &&
	echo "range $lo-$hi, rises $up of $h" &&
	python3 -c "import sys; lo, hi, up, h = map(float, sys.argv[1:]); G = 1 << 30
assert 0 < lo <= 14 * G and 24 * G <= hi < 140 * G, (lo, hi)
assert up >= 0.4 * h, up" "$lo" "$hi" "$up" "$h" &&
	grep -q "<text class=\"ls ta\"[^>]*><tspan[^>]*>total</tspan><tspan[^>]*>140.4 GiB ↑</tspan>" leak.html &&
	grep -qE "text-anchor=\"end\">1[0-9](\.[0-9]+)? GiB</text>" leak.html &&
	grep -q "<path class=\"l-tot\" d=\"\"/>" leak.html
'

expect_success 'near the total: the total is the ceiling, drawn' '
	vramz report "$T/full.csv" -o full.html 2>/dev/null; test -s full.html &&
	read -r lo hi up h < <(rise full.html) &&
	echo "range $lo-$hi, rises $up of $h" &&
	python3 -c "import sys; assert abs(float(sys.argv[1]) - 143771 * (1 << 20)) < 1" "$hi" &&
	! grep -q "class=\"ls ta\"" full.html &&
	grep -qE "<path class=\"l-tot\" d=\"M" full.html
'
finish
