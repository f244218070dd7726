#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6100-top-zoom: memory charts of `vramz top` are drawn over the used
# range (issue 40), so a 14 GiB job leaking 1 GiB/min on a 140 GiB GPU is a
# slope that climbs most of the chart's rows, not a strip at its foot; the
# foot is labelled with its value and the total, above the range, is named
# in the legend; `z` goes back to 0 .. the total, where the same data
# climbs a row or two.  `s` turns the chart beside memory into
# temperature, power or SM clock history.  The choices are kept at `q`.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
WAIT_FOR_TENTHS=200
export XDG_CONFIG_HOME=$T/cfg

# ten minutes at 1 Hz of one 140 GiB H200: pid 4300101 at 14 GiB, then
# 1 GiB/min
python3 "$TESTS_SRC/helpers/leaklog.py" "$T/leak" 600 14 1 || exit 1

# rise ROWS: how many plot rows the memory area's top edge climbs from
# its oldest column to its newest, over the plot's rows, as "RISE ROWS"
rise() {
	python3 - "$T/screen" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
# the memory chart: rows from the legend row ("used") to the time axis
top = next(i for i, l in enumerate(lines) if "used" in l and "reserved" in l and ("total" in l))
foot = next(i for i in range(top + 1, len(lines)) if "└" in lines[i])
rows = lines[top + 1:foot]
axis = lines[foot].index("└")
# up to the utilization chart beside it, if any
end = lines[foot].find("└", axis + 1)
end = end - 8 if end > 0 else max(len(r) for r in rows)
def braille(c): return 0x2801 <= ord(c) <= 0x28FF
heights = []
for col in range(axis + 1, end):
    h = None
    for k, r in enumerate(rows):
        if col < len(r) and braille(r[col]):
            h = len(rows) - k
            break
    if h is not None:
        heights.append(h)
print(heights[-1] - heights[0], len(rows))
PY
}

expect_success 'zoomed by default: the 1 GiB/min leak climbs most of the chart' '
	top_session 200 40 --replay "$T/leak.csv" --speed 64 &&
	wait_for "\[end\]" &&
	read -r up rows < <(rise) &&
	echo "rises $up of $rows rows" &&
	[ "$up" -ge $((rows * 2 / 5)) ] &&
	has "total 140\.4G above|total 140G above" screen &&
	has "┈┈┈" screen &&
	hasnt "^ +0 GiB ┤" screen &&
	has "^ +2[0-9](\.[0-9]+)? GiB ┤" screen
'

expect_success 'z: 0 .. the total, the same leak a strip at the foot; z again zooms' '
	top_session 200 40 --replay "$T/leak.csv" --speed 64 &&
	wait_for "\[end\]" &&
	keys z && sleep 0.5 && wait_for "─ total" &&
	read -r up rows < <(rise) &&
	echo "rises $up of $rows rows" &&
	[ "$up" -le $((rows / 8)) ] &&
	has "^ *140\.4 GiB ┤" screen &&
	has "^ +0 GiB ┤" screen &&
	keys z && wait_for "above" &&
	read -r up rows < <(rise) &&
	[ "$up" -ge $((rows * 2 / 5)) ]
'

scenario 1gpu.scn
expect_success 's: the chart beside memory cycles utilization, temperature, power, SM clock' '
	top_session 200 40 &&
	wait_for "⣿ util" && has "100% ┤" screen &&
	has "^GPU 0 H200 .* PCIe 5x16  clocks [0-9]+/3201 MHz" screen &&
	keys s && wait_for "⣿ temp" && has "^.*[0-9]+C ┤─+ ⣿ temp" screen &&
	keys s && wait_for "⣿ power" && has "700W ┤─+ ⣿ power" screen &&
	keys s && wait_for "⣿ SM clock" && has "[0-9]+MHz ┤─+ ⣿ SM clock" screen &&
	keys s && wait_for "⣿ util" && has "100% ┤─+ ⣿ util" screen
'

expect_success 'q keeps the choices in top.conf; the next top starts with them, -s wins' '
	export XDG_CONFIG_HOME=$T/keep &&
	top_session 200 40 &&
	wait_for "⣿ util" && keys z s P t && wait_for "⣿ temp" && wait_for "─ total" &&
	keys q && wait_for "vramz-exited rc=0" &&
	has "^sort = pid$" keep/vramz/top.conf && has "^zoom-total = 1$" keep/vramz/top.conf &&
	has "^side = temp$" keep/vramz/top.conf && has "^tree = 1$" keep/vramz/top.conf &&
	top_session 200 40 &&
	wait_for "⣿ temp" && has "─ total" screen && has "\[tree\]" screen &&
	has "PID[▲▼]" screen &&
	top_session 200 40 -s vram &&
	wait_for "VRAM[▲▼]" && hasnt "PID[▲▼]" screen
'

expect_success 'help names z' '
	top_session 120 40 --replay "$T/leak.csv" --speed 64 &&
	wait_for "\[end\]" && keys "?" &&
	wait_for "z +memory charts: the used range" &&
	has "s +the chart beside memory: util, temperature, power, SM clock" screen
'
finish
