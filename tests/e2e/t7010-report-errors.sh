#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7010-report-errors.sh - `vramz report` on bad input: a malformed line, a
# truncated header, a foreign CSV, an empty file, a missing file.  Each
# gives one error naming the file (and the line), exit 1, and leaves no
# page behind, not even a temporary one.
. "$TESTS_SRC/e2e/lib.sh"

LOG="$TESTS_SRC/logs/demo.csv"

no_page() { ! ls -A "$1" | grep -q html || { echo "left behind:"; ls -A "$1"; return 1; }; }

expect_success 'a good log gives a page beside it by default' '
	cp "$LOG" run.csv && cp "${LOG%.csv}.procs.csv" run.procs.csv &&
	vramz report run.csv 2>err && test -s run.html && has "wrote run.html" err &&
	has "</html>" run.html
'

expect_success 'a log without its process file: the page says so instead of naming processes' '
	cp "$LOG" alone.csv && vramz report alone.csv 2>/dev/null &&
	has "used \(no process list in the log\)" alone.html &&
	has "no process was recorded" alone.html && hasnt "class=\"proc\"" alone.html
'

expect_success 'a malformed line: FILE:LINE, exit 1, no page' '
	mkdir d && cp "$LOG" d/bad.csv &&
	sed -i "5s/^\([^,]*\),\([0-9]\),/\1,gpu\2,/" d/bad.csv &&
	{ vramz report d/bad.csv 2>err; test $? = 1; } &&
	has "d/bad.csv:5: " err && test "$(wc -l <err)" = 1 && no_page d
'

expect_success 'a bad time mid-file: FILE:LINE, exit 1, no page (-o elsewhere too)' '
	mkdir e && cp "$LOG" e/t.csv && sed -i "4s/^2026/20x6/" e/t.csv &&
	{ vramz report e/t.csv -o e/out.html 2>err; test $? = 1; } &&
	has "e/t.csv:4: bad time" err && no_page e
'

expect_success 'a log cut before its first row, a foreign CSV, an empty file: named, exit 1, no page' '
	mkdir f && head -c 30 "$LOG" >f/trunc.csv &&
	{ vramz report f/trunc.csv 2>err; test $? = 1; } && has "f/trunc.csv: the log holds no samples" err &&
	printf "name,age\nann,3\n" >f/people.csv &&
	{ vramz report f/people.csv 2>err; test $? = 1; } && has "f/people.csv:1: not a vramz GPU log" err &&
	: >f/empty.csv &&
	{ vramz report f/empty.csv 2>err; test $? = 1; } && has "f/empty.csv" err &&
	{ vramz report f/missing.csv 2>err; test $? = 1; } && has "f/missing.csv" err &&
	no_page f
'

expect_success 'one bad file among good ones fails the whole set before writing' '
	mkdir g && cp "$LOG" g/a.csv && printf "name,age\nann,3\n" >g/b.csv &&
	{ vramz report g/a.csv g/b.csv -o g/out.html 2>err; test $? = 1; } &&
	has "g/b.csv" err && no_page g
'

expect_success 'an unwritable destination: exit 1, nothing left' '
	{ vramz report "$LOG" -o /nonexistent/dir/x.html 2>err; test $? = 1; } &&
	has "/nonexistent/dir/x.html" err
'

expect_success 'a log whose clock jumped from 1970 to 9999: a small page, a short axis, a note' '
	{ head -1 "$LOG" &&
	  sed -n 2p "$LOG" | sed "s/^[^,]*,/1970-01-01T00:00:01.000Z,/; s/,1,15075/,0,15075/" &&
	  sed -n 2p "$LOG" | sed "s/^[^,]*,/9999-12-31T23:59:59.000Z,/; s/,1,15075/,0,15075/"; } >span.csv &&
	vramz report span.csv -o span.html 2>err &&
	has "note: the log.s ticks span 2932896 days, more than a year: its clock probably jumped" err &&
	grep -q "Note: the log&#39;s ticks span 2932896 days" span.html &&
	test "$(stat -c %s span.html)" -lt 200000 &&
	ticks=$(grep -o "class=\"tl\"" span.html | wc -l) && test "$ticks" -ge 2 && test "$ticks" -le 9 &&
	grep -q ">9970-01-01<" span.html
'

expect_success 'an ordinary log gets no span note; a week-long one is labelled by date' '
	vramz report "$LOG" -o plain.html 2>err && hasnt "note" err && hasnt "Note:" plain.html &&
	{ head -1 "$LOG" &&
	  sed -n 2p "$LOG" | sed "s/^[^,]*,/2026-11-01T00:00:00.000Z,/; s/,1,15075/,0,15075/" &&
	  sed -n 2p "$LOG" | sed "s/^[^,]*,/2026-11-09T00:00:00.000Z,/; s/,1,15075/,0,15075/"; } >week.csv &&
	vramz report week.csv -o week.html 2>/dev/null && has ">2026-11-05<" week.html
'

expect_success 'usage errors exit 2' '
	{ vramz report 2>err; test $? = 2; } && has "which log" err &&
	{ vramz report --since 12 "$LOG" -o x.html 2>err; test $? = 2; } &&
	{ vramz report - 2>err; test $? = 2; } &&
	vramz report -h | has "LOG\.\.\." /dev/stdin
'

finish
