#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6050-top-direct: `vramz top` writes its frames to the terminal itself
# (src/tui/fb.c, direct output) unless VRAMZ_TUI_CURSES=1 hands them to
# curses.  Both ways must leave the same screen: the same characters in the
# same cells with the same attributes and colours, compared cell by cell
# from tmux's own record of the screen (capture-pane -e), for a replayed
# log at two sizes, in the help box, after a resize, and in ASCII and
# monochrome modes.  A blank cell's colour is not compared where it cannot
# be seen (a space with only a foreground colour).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
DEMO=$TESTS_SRC/logs/demo.csv

# cells FILE: one line per visible cell, "row col char state", from a
# capture-pane -e dump
cat >"$T/cells.py" <<'PY'
import re, sys
sgr = re.compile(r"\x1b\[([0-9;]*)m")
out = []
st = {"b": 0, "d": 0, "u": 0, "r": 0, "fg": "", "bg": ""}
# tmux carries the attributes of a line's end over to the next line
for row, line in enumerate(open(sys.argv[1], encoding="utf-8").read().split("\n")):
    col, i = 0, 0
    while i < len(line):
        m = sgr.match(line, i)
        if m:
            codes = [int(c) if c else 0 for c in m.group(1).split(";")]
            k = 0
            while k < len(codes):
                c = codes[k]
                if c == 0: st = {"b": 0, "d": 0, "u": 0, "r": 0, "fg": "", "bg": ""}
                elif c == 1: st["b"] = 1
                elif c == 2: st["d"] = 1
                elif c == 22: st["b"] = st["d"] = 0
                elif c == 4: st["u"] = 1
                elif c == 24: st["u"] = 0
                elif c == 7: st["r"] = 1
                elif c == 27: st["r"] = 0
                elif 30 <= c <= 37 or 90 <= c <= 97: st["fg"] = str(c)
                elif c == 39: st["fg"] = ""
                elif 40 <= c <= 47 or 100 <= c <= 107: st["bg"] = str(c)
                elif c == 49: st["bg"] = ""
                elif c in (38, 48) and k + 2 < len(codes) and codes[k + 1] == 5:
                    st["fg" if c == 38 else "bg"] = "%d:%d" % (c, codes[k + 2]); k += 2
                k += 1
            i = m.end()
            continue
        ch = line[i]
        i += 1
        if ch == " " and not st["bg"] and not st["r"] and not st["u"]:
            col += 1
            continue  # a blank that shows nothing whatever its colour
        out.append("%d %d %r %s" % (row, col, ch, ",".join("%s=%s" % kv for kv in sorted(st.items()))))
        col += 1
print("\n".join(out))
PY

# the two tmux servers of a step: killed when it ends
reap() { trap 'for m in direct curses; do tmux -L "vramz-test-$$-$BASHPID-$m" kill-server 2>/dev/null || true; done' EXIT; }
# start M W H [ENV] [FIRST]: top --replay in a server of its own for M
# (direct, or curses: VRAMZ_TUI_CURSES=1), ENV in its environment, after
# the command FIRST; $SOCK is left naming that server.  At 64x: the screens
# compared are the last, the same at any speed, and the demo's 2 s at 1x
# were most of the file's time
start() {
	SOCK="vramz-test-$$-$BASHPID-$1"
	tm new-session -d -x "$2" -y "$3" \
		"${5:+$5; }env ${TOP_UNSET:+-u $TOP_UNSET} TZ=UTC LANG=${TOP_LANG:-C.UTF-8} ${4:-} $([ "$1" = curses ] && echo VRAMZ_TUI_CURSES=1) $VRAMZ_BIN top --replay $DEMO --speed 64; sleep 30"
}
# cells M: M's screen now, dumped to M.dump, its cells in M.cells; the
# server is killed
cells() {
	SOCK="vramz-test-$$-$BASHPID-$1"
	tm capture-pane -e -p >"$T/$1.dump" && tm kill-server &&
		python3 "$T/cells.py" "$T/$1.dump" >"$T/$1.cells"
}
# same: both screens hold the same cells (and enough of them)
same() {
	test "$(wc -l <"$T/direct.cells")" -gt 200 || { echo "too few cells on screen"; cat "$T/direct.dump"; return 1; }
	diff "$T/curses.cells" "$T/direct.cells" >"$T/cells.diff" ||
		{ echo "the screens differ (< curses, > direct):"; head -20 "$T/cells.diff"; return 1; }
}

# both W H KEYS ENV: top --replay both ways, shown to its end, the keys
# sent to both, and the two screens compared
both() {
	local w=$1 h=$2 keys=$3 env=$4 m
	reap
	for m in direct curses; do start $m "$w" "$h" "$env"; done
	for m in direct curses; do
		SOCK="vramz-test-$$-$BASHPID-$m"
		wait_for "\[end\]" >/dev/null || { cat "$T/screen"; return 1; }
		[ -z "$keys" ] || { keys $keys; sleep 0.5; }
	done
	cells direct && cells curses && same
}

expect_success 'the replayed log at 120x40: the same cells as through curses' '
	TOP_UNSET=NO_COLOR both 120 40 "" "" && has "GPU 0 H200" "$T/direct.dump" &&
	grep -q "fg=3[0-9]" "$T/direct.cells"
'

expect_success 'at 80x24, with the help box open' '
	TOP_UNSET=NO_COLOR both 80 24 "?" ""
'

# the two ways really differ: direct output only ever moves the cursor
# with absolute moves (one a span), curses also with carriage returns and
# backspaces where they are shorter; the screens above are the same
expect_success 'direct output uses absolute moves only; curses does not' '
	reap &&
	for m in direct curses; do
		start $m 120 40 "" "sleep 0.5" && tm pipe-pane -o "cat >$T/raw-$m" &&
		wait_for "\[end\]" >/dev/null && tm kill-server
	done &&
	test "$(grep -oE "$(printf "\033")\[[0-9]+;[0-9]+H" raw-direct | wc -l)" -ge 20 &&
	test "$(tr -cd "\r\b" <raw-direct | wc -c)" = 0 &&
	test "$(tr -cd "\r\b" <raw-curses | wc -c)" -gt 0
'

expect_success 'monochrome (NO_COLOR) and ASCII glyphs' '
	TOP_LANG=C both 100 30 "" "NO_COLOR=1"
'

expect_success 'after a resize the new size is drawn whole' '
	reap &&
	for m in direct curses; do
		start $m 100 30 && wait_for "\[end\]" >/dev/null &&
		tm resize-window -x 130 -y 45 && sleep 1 && cells $m
	done &&
	same &&
	awk "\$2 > 100" "$T/direct.cells" | grep -q . &&
	awk "\$1 > 30" "$T/direct.cells" | grep -q .
'
finish
