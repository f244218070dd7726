#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25, item 2: one sanitizer (lib/text.c) for every string that can
# reach a terminal, whatever its source.  A GPU name and a driver version
# from NVML, and a GPU name, user and command line recorded in a log, that
# hold a title-setting OSC, a screen clear, C1 controls and bidi controls
# (U+202E, U+2066, U+200F) are shown with '?' live and replayed (status
# --replay, replay, ps --replay, analyze), escaped in JSON, and neither raw
# nor as a character reference in the HTML report.
. "$TESTS_SRC/e2e/lib.sh"

# fails when FILE holds a control byte other than newline / tab, a C1
# control, a bidi control (raw or as an HTML character reference), or is
# not UTF-8
clean() {
	python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8")  # raises on raw 0x9b
bidi = set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a)) | {0x200e, 0x200f, 0x61c}
bad = [hex(ord(c)) for c in t
       if (ord(c) < 0x20 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f or ord(c) in bidi]
bad += re.findall(r"&#x0*(?:202[a-e]|206[6-9]|200[ef]|61c);", t, re.I)
sys.exit("unsafe characters %s in %s" % (bad, sys.argv[1]) if bad else 0)
PY
}

# OSC 0 (window title) ... BEL, CSI 2J (clear), U+009B, U+202E, U+2066
EVIL=$(printf 'H200\033]0;pwned\007\033[2J\302\233\342\200\256cod\342\201\246x')
SHOWN='H200\?\]0;pwned\?\?\[2J'  # a table may cut the rest
scn=$T/evil.scn
sed -e "s/name=\"NVIDIA H200\"/name=\"$EVIL\"/" \
    -e "s/^driver .*/driver $(printf '580\033[31m\342\200\217.159')/" \
    "$SCENARIOS/1gpu.scn" >"$scn"
export FAKE_NVML_SCENARIO=$scn

expect_success 'a hostile GPU name and driver version from NVML: "?" in status, info, ps; escaped in JSON' '
	grep -q "pwned" "$scn" &&
	vramz status >st.out && clean st.out && has "$SHOWN" st.out &&
	vramz info >info.out && clean info.out && has "$SHOWN" info.out && has "580\?\[31m\?\.159" info.out &&
	vramz status --json >st.json && clean st.json &&
	json st.json "d[\"gpus\"][0][\"name\"]" >name && has "^H200\?\]0;pwned\?\?\[2J\?\?cod\?x$" name &&
	vramz ps -w >ps.out && clean ps.out
'

# a log recorded from a clean driver, then edited as an attacker would
forge() {
	rm -f x.csv x.procs.csv &&
	FAKE_NVML_SCENARIO=$SCENARIOS/1gpu.scn vramz log --procs -i 100ms --duration 300ms -o x.csv &&
	python3 - "$EVIL" <<'PY'
import csv, sys
evil = sys.argv[1]
rows = list(csv.reader(open("x.csv", newline="")))
name = rows[0].index("name")
for r in rows[1:]:
    r[name] = evil
csv.writer(open("x.csv", "w", newline="")).writerows(rows)
rows = list(csv.reader(open("x.procs.csv", newline="")))
h = rows[0]
for r in rows[1:]:
    r[h.index("user")] = "root\u202e"
    r[h.index("comm")] = "py\u2066"
    r[h.index("command")] = "python \x1b]0;owned\x07train.py \u200f\x9b"
csv.writer(open("x.procs.csv", "w", newline="")).writerows(rows)
PY
}

expect_success 'a hostile log: "?" in status --replay, replay, ps --replay, analyze' '
	forge && grep -q pwned x.csv && grep -q owned x.procs.csv &&
	vramz status --replay x.csv >st.out && clean st.out && has "$SHOWN" st.out &&
	vramz replay x.csv >rp.out && clean rp.out && has "$SHOWN" rp.out &&
	vramz ps -w --replay x.csv >ps.out && clean ps.out &&
	has "python \?\]0;owned\?train\.py \?\?" ps.out && has "root\?" ps.out &&
	vramz replay --json x.csv >rp.json && clean rp.json &&
	vramz analyze x.csv >an.out && clean an.out
'

expect_success 'a hostile log: the HTML report holds no control and no bidi control' '
	forge && vramz report x.csv -o r.html && clean r.html && grep -q "pwned" r.html
'

finish
