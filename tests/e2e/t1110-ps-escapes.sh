#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Terminal escapes in what a process chooses (its argv) never reach a
# person's terminal (issue 12): C0 controls, DEL, the C1 controls U+0080-
# U+009F (U+009B is a one-character CSI on terminals that honour C1) and
# raw bytes that are not UTF-8 (0x9B is CSI on 8-bit terminals) are shown
# as '?' in ps, the kill listing and the CSV log, and escaped in JSON.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
jobs_world
tidy_holders

# fails when FILE holds a control byte other than newline / tab, or a C1
# control, or is not UTF-8
clean() {
	python3 - "$1" <<'PY'
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")  # raises on raw 0x9b
bad = [hex(ord(c)) for c in t if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
sys.exit("control characters %s in %s" % (bad, sys.argv[1]) if bad else 0)
PY
}

# a sleep whose argv[0] holds U+009B, a raw 0x9B, ESC, DEL and an e-acute
evil() { exec -a "$(printf 'evil\xc2\x9b2J\x9b31m\x1b[1m\x7f\xc3\xa9')" sleep 300; }

expect_success 'C0, DEL, C1 and raw 0x9B in argv: "?" in ps, kill, CSV; escaped in JSON' '
	( evil ) & S=$!
	for _ in $(seq 100); do grep -q evil /proc/$S/cmdline 2>/dev/null && break; sleep 0.05; done &&
	scn-set esc "proc gpu=0 pid=$S used=1GiB" &&
	vramz ps >ps.out && clean ps.out &&
	has "evil\?2J\?31m\?\[1m\?é 300" ps.out &&
	vramz kill $S >kill.out && clean kill.out && has "evil\?2J" kill.out &&
	vramz ps --json >ps.json && clean ps.json &&
	json ps.json "[p[\"command\"] for p in d[\"processes\"] if p[\"pid\"] == $S][0]" >cmd &&
	has "^evil\?2J\?31m\?\[1m\?é 300$" cmd &&
	vramz log --procs -i 100ms --duration 300ms -o x.csv &&
	clean x.procs.csv && has "evil\?2J" x.procs.csv || r=1
	kill $S; scn-set esc; exit ${r:-0}
'
tidy_holders

finish
