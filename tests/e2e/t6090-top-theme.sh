#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6090-top-theme: `vramz top --theme light` (or `theme = light` in the
# config file) for a light background, read from tmux's record of each
# cell's colours (capture-pane -e): names in blue, not cyan; a warning in
# magenta, not yellow; the keys line white on blue; and no yellow, cyan or
# white text on the terminal's own background anywhere on the screen,
# the charts and their lines included.  The dark theme keeps its colours;
# the command line's theme wins over the config file's; a bad theme is a
# usage error naming it; NO_COLOR leaves no colour in either theme.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
top() { top_session "$@"; }
unset NO_COLOR # the harness's: these steps look at the colours
export XDG_CONFIG_HOME=$T/cfg
mkdir -p "$T/cfg/vramz"
scenario 8gpu.scn

# cells FILE: a line per visible cell, "row col char fg bg bold", from a
# capture-pane -e dump ("-" the terminal's default colour)
cat >"$T/cells.py" <<'PY'
import re, sys
sgr = re.compile(r"\x1b\[([0-9;]*)m")
st = {"b": 0, "fg": "-", "bg": "-"}
for row, line in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n")):
    col, i = 0, 0
    while i < len(line):
        m = sgr.match(line, i)
        if m:
            for c in [int(c) if c else 0 for c in m.group(1).split(";")]:
                if c == 0: st = {"b": 0, "fg": "-", "bg": "-"}
                elif c == 1: st["b"] = 1
                elif c == 22: st["b"] = 0
                elif 30 <= c <= 37: st["fg"] = str(c)
                elif c == 39: st["fg"] = "-"
                elif 40 <= c <= 47: st["bg"] = str(c)
                elif c == 49: st["bg"] = "-"
            i = m.end()
            continue
        if line[i] != " " or st["bg"] != "-":
            print(row, col, line[i], st["fg"], st["bg"], st["b"])
        col += 1
        i += 1
PY
# capture: the screen with its colours, as cells
capture() { $TM capture-pane -p -e >raw && python3 "$T/cells.py" raw >cells && $TM capture-pane -p >screen; }
# cell_of ROW-PATTERN TEXT: "fg bg bold" of the first character of TEXT on
# the first row matching ROW-PATTERN
cell_of() {
	local y x
	y=$(grep -nE -- "$1" screen | head -1 | cut -d: -f1) && y=$((y - 1)) &&
	x=$(sed -n "$((y + 1))p" screen | python3 -c "import sys; print(sys.stdin.read().index(sys.argv[1]))" "$2") &&
	awk -v y="$y" -v x="$x" '$1 == y && $2 == x { print $4, $5, $6 }' cells
}
# the bar of GPU 1 (84 % used: a warning) in its used colour
bar_of() { cell_of "^ 1 " "█"; }

expect_success 'dark (the default): cyan names, a yellow warning, black on cyan keys' '
	top 120 40 &&
	wait_for "4300001" && sleep 0.5 && capture &&
	test "$(cell_of "^ 0 " "H100")" = "36 - 1" &&
	test "$(bar_of)" = "33 - 1" &&
	test "$(cell_of "^\?Help" "Help")" = "30 46 0"
'

expect_success '--theme light: blue names, a magenta warning, white on blue keys, nothing pale on the background' '
	top 120 40 --theme light &&
	wait_for "4300001" && sleep 1.2 && capture &&
	test "$(cell_of "^ 0 " "H100")" = "34 - 1" &&
	test "$(bar_of)" = "35 - 1" &&
	test "$(cell_of "^ 4 " "█")" = "31 - 1" &&
	test "$(cell_of "^\?Help" "Help")" = "37 44 0" &&
	test "$(cell_of "^ +PID" "PID")" = "30 42 0" &&
	grep -q "⣿" screen &&
	! awk "\$5 == \"-\" && (\$4 == 33 || \$4 == 36 || \$4 == 37)" cells | grep . &&
	test "$(awk "\$4 != \"-\"" cells | wc -l)" -gt 100
'

expect_success 'the config file key: theme = light; the command line wins over it' '
	printf "theme = light\n" >cfg/vramz/config &&
	top 120 40 && wait_for "4300001" && sleep 0.5 && capture &&
	test "$(cell_of "^ 0 " "H100")" = "34 - 1" && test "$(bar_of)" = "35 - 1" &&
	$TM kill-server &&
	top 120 40 --theme dark && wait_for "4300001" && sleep 0.5 && capture &&
	test "$(cell_of "^ 0 " "H100")" = "36 - 1" &&
	rm cfg/vramz/config
'

expect_success 'a bad theme: a usage error naming it, from the command line or the file' '
	test "$(rc vramz top --theme pink)" = 2 &&
	{ vramz top --theme pink 2>err || true; } && has "unknown theme .pink. \(dark, light\)" err &&
	printf "theme = sepia\n" >cfg/vramz/config &&
	top 80 24 && wait_for "vramz-exited rc=2" &&
	has "cfg/vramz/config:1: bad theme .sepia. \(dark, light\)" screen &&
	test "$(rc vramz watch -d 1s)" = 2 &&
	rm cfg/vramz/config
'

expect_success 'NO_COLOR: no colour in the light theme either' '
	TOP_ENV=NO_COLOR=1 top 120 40 --theme light &&
	wait_for "4300001" && capture &&
	test "$(awk "\$4 != \"-\" || \$5 != \"-\"" cells | wc -l)" = 0
'

finish
