#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7000-report.sh - `vramz report` pages opened in headless Chromium
# (tests/report/pagecheck.py): the pages of fake-NVML recordings and of the
# bundled H200 recording load with no console error and no network
# request, every selected GPU has its plots, each finding of `vramz
# analyze` has its marker at its time, a gap in the log is drawn as a gap,
# and a screenshot is not blank.  Also: several logs and rotated sets read
# as one, and --since / --until, through analyze and report alike.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/diag-lib.sh"
CHECK="python3 $TESTS_SRC/report/pagecheck.py"
EXPECT="python3 $TESTS_SRC/report/expect.py"
LEAKOPT="--window 200ms --leak-warmup 1s --leak-min-span 3s"

rec diag-leak.scn leak 6s & a=$!
rec diag-idle.scn idle 3s & b=$!
rec diag-lost.scn lost 2s & c=$!
rec 8gpu.scn 8gpu 2s & d=$!
# the logger stopped for 6 s: one file with a gap
{ rec 1gpu.scn gap 1500ms && sleep 6 && rec 1gpu.scn gap 1500ms; } & e=$!
rec 1gpu.scn rot 3s --rotate 3KiB --keep 50 & f=$!
wait $a $b $c $d $e $f

# every page first, then one Chromium opens them all (it is slow to start)
expect_success 'the pages and the analyses they must agree with' '
	vramz report $LEAKOPT "$L/leak.csv" -o leak.html 2>err && has "wrote leak.html" err &&
	{ vramz analyze --json $LEAKOPT "$L/leak.csv" >leak.json; test $? = 3; } &&
	vramz report --idle-time 2s "$L/idle.csv" -o idle.html 2>/dev/null &&
	{ vramz analyze --json --idle-time 2s "$L/idle.csv" >idle.json; test $? = 3; } &&
	vramz report "$L/lost.csv" -o lost.html 2>/dev/null &&
	{ vramz analyze --json "$L/lost.csv" >lost.json; test $? = 3; } &&
	vramz report -g 2-4 "$L/8gpu.csv" -o g.html 2>/dev/null &&
	vramz report "$L/gap.csv" -o gap.html 2>/dev/null &&
	vramz demo --report h200.html 2>/dev/null &&
	{ vramz analyze --json "$TESTS_SRC/../examples/h200-leak.csv" >h200.json; test $? = 3; }
'

expect_success 'chromium (tools/bootstrap.sh installs it) opens every page' '
	command -v chromium &&
	$CHECK --shot . leak.html idle.html lost.html g.html gap.html h200.html >/dev/null &&
	test -s h200.html.png
'

expect_success 'a leak: plots, its marker at its time with the fitted slope, no console error, no request' '
	$EXPECT leak.html.check.json --gpus 0 --findings leak.json --kinds leak &&
	grep -q "class=\"fit\"" leak.html && grep -q "OOM in" leak.html &&
	has "pid $LEAK_PID" leak.html &&
	# the marker says what was seen on hover, not only its kind (issue 27)
	has "<title>#1 (warning|critical) leak: pid $LEAK_PID \([a-z0-9]+\) on GPU 0 grows [0-9.]+ MiB/min" leak.html
'

expect_success 'the page is self-contained: its own CSP, no external reference' '
	has "http-equiv=\"Content-Security-Policy\" content=\"default-src .none.; style-src .sha256-" leak.html &&
	hasnt "(src|href)=\"(https?:)?//" leak.html && hasnt "@import|url\([^#]" leak.html &&
	hasnt " style=\"" leak.html
'

expect_success 'an idle holder and a lost GPU: markers at their times on their GPUs' '
	$EXPECT idle.html.check.json --gpus 0 --findings idle.json --kinds idle_holder &&
	$EXPECT lost.html.check.json --gpus 0,1 --findings lost.json --kinds gpu_lost &&
	grep -q "class=\"lost\"" lost.html
'

expect_success '-g 2-4 on 8 GPUs: those three have plots, no other' '
	$EXPECT g.html.check.json --gpus 2,3,4 &&
	{ vramz report -g 9 "$L/8gpu.csv" -o bad.html 2>err; test $? = 2; } &&
	has "no GPU .9. in the log" err && test ! -e bad.html
'

expect_success 'a gap in the log is a gap: lines break there, nothing drawn across' '
	$EXPECT gap.html.check.json --gpus 0 --gaps 1 &&
	has "1 gap in the log" gap.html
'

expect_success 'the H200 recording: demo --report, the leak of pid 593 at its time' '
	$EXPECT h200.html.check.json --gpus 0,1 --findings h200.json --kinds leak &&
	has "pid 593" h200.html
'

expect_success 'a rotated set reads as one log, in order, in analyze and report' '
	test -e "$L/rot.2.csv" &&
	vramz analyze --json "$L/rot.csv" >set.json &&
	total=0 && for f in "$L"/rot.csv "$L"/rot.[0-9].csv; do
		total=$((total + $(tail -n +2 "$f" | cut -d, -f1 | sort -u | wc -l)))
	done &&
	test "$(json set.json "d[\"ticks\"]")" = "$total" &&
	vramz report "$L/rot.csv" -o rot.html 2>/dev/null && has "and its set" rot.html &&
	vramz report "$L/rot.csv" -o - 2>/dev/null >out.html && has "</html>" out.html
'

expect_success 'several files given in any order read in time order' '
	vramz analyze --json "$L/rot.csv" >a.json &&
	vramz analyze --json "$L"/rot.1.csv "$L/rot.csv" "$L"/rot.2.csv >b.json &&
	vramz analyze --json "$L"/rot* >c.json &&
	test "$(json a.json "d[\"ticks\"]")" = "$(json c.json "d[\"ticks\"]")" &&
	test "$(json a.json "d[\"ticks\"]")" = "$(json b.json "d[\"ticks\"]")" &&
	test "$(json a.json "d[\"span_ms\"]")" = "$(json b.json "d[\"span_ms\"]")"
'

expect_success '--since / --until cut the window, relative and absolute' '
	vramz analyze --json "$L/leak.csv" >all.json &&
	vramz analyze --json --since +2s "$L/leak.csv" >s.json &&
	vramz analyze --json --until -2s "$L/leak.csv" >u.json &&
	n=$(json all.json "d[\"ticks\"]") && ns=$(json s.json "d[\"ticks\"]") && nu=$(json u.json "d[\"ticks\"]") &&
	test "$ns" -lt "$n" && test "$ns" -gt 0 && test "$nu" -lt "$n" && test "$nu" -gt 0 &&
	first=$(sed -n 2p "$L/leak.csv" | cut -d, -f1) &&
	since=$(python3 -c "import sys; from datetime import datetime,timezone,timedelta; d=datetime.strptime(sys.argv[1],\"%Y-%m-%dT%H:%M:%S.%fZ\")+timedelta(seconds=3); print(d.strftime(\"%Y-%m-%dT%H:%M:%SZ\"))" "$first") &&
	vramz analyze --json --since "$since" "$L/leak.csv" >abs.json &&
	test "$(json abs.json "d[\"ticks\"]")" -lt "$ns" &&
	vramz report --since "$since" "$L/leak.csv" -o w.html 2>/dev/null &&
	$CHECK w.html >c.json &&
	sms=$(python3 -c "import sys; from datetime import datetime,timezone; print(round(datetime.strptime(sys.argv[1],\"%Y-%m-%dT%H:%M:%SZ\").replace(tzinfo=timezone.utc).timestamp()*1000))" "$since") &&
	$EXPECT c.json --since-ms "$sms" &&
	{ vramz analyze --since yesterday "$L/leak.csv" 2>err; test $? = 2; } && has "bad --since .yesterday." err &&
	{ vramz analyze --since 2000-01-01T00:00:00Z --until 2000-01-02T00:00:00Z "$L/leak.csv" 2>err; test $? = 1; } &&
	has "no samples between --since and --until" err
'

finish
