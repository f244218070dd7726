#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6030-top-replay: `vramz top --replay FILE` plays back a log that `vramz
# log` recorded from the fake NVML (a process growing 4 GiB/s, so every
# tick has its own numbers) in a real terminal (tmux): the screen shows the
# recorded numbers and time, the header names the file; space pauses (the
# numbers stop), Left seeks to the first tick, Right past the end stops at
# the last one, + and - change the speed.  Bad logs fail before the
# terminal is taken.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
TOP_ENV="TZ=UTC"
top() { top_session "$@"; }
# the GPU's used memory and the process's VRAM on screen: "USED|VRAM"
shown() {
	$TM capture-pane -p >"$T/screen"
	echo "$(grep -oE "used +[0-9.]+ [KMGT]?i?B" "$T/screen" | head -1 | sed -E "s/used +//")|$(
		grep -oE "^ +4200101 .*" "$T/screen" | grep -oE "[0-9.]+ GiB" | head -1)"
}
# shows "USED|VRAM": the screen shows that tick (says what it shows if not)
shows() {
	local now
	now=$(shown)
	[ "$now" = "$1" ] || { cat "$T/screen"; echo "expected $1 on screen, it shows $now"; return 1; }
}

cat >"$T/grow.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=37 temp=41 power=318000 power_limit=700000
proc gpu=0 pid=4200101 used=10GiB type=compute sm=50
grow gpu=0 pid=4200101 rate=+4GiB/s
SCN
export FAKE_NVML_SCENARIO=$T/grow.scn
vramz log -o "$T/rec.csv" --procs -i 200ms --duration 2s 2>/dev/null
# each tick's "USED|VRAM@TIME": the numbers as top prints them (fmt_bytes)
python3 - "$T/rec.csv" "$T/rec.procs.csv" >"$T/ticks" <<'PY'
import csv, sys
def fmt(b):
    v, u = float(b), 0
    while v >= 1024 and u < 5:
        v /= 1024; u += 1
    unit = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"][u]
    if u == 0: return "%d B" % b
    if u <= 2: return "%.0f %s" % (v, unit)
    return ("%.2f %s" if v < 10 else "%.1f %s") % (v, unit)
gpu = {r["time"]: int(r["mem_used_bytes"]) for r in csv.DictReader(open(sys.argv[1]))}
proc = {r["time"]: int(r["used_bytes"]) for r in csv.DictReader(open(sys.argv[2]))}
for t in sorted(gpu):
    print("%s|%s@%s" % (fmt(gpu[t]), fmt(proc[t]), t[11:19]))
PY
first=$(head -1 "$T/ticks" | cut -d@ -f1); first_time=$(head -1 "$T/ticks" | cut -d@ -f2)
last=$(tail -1 "$T/ticks" | cut -d@ -f1); last_time=$(tail -1 "$T/ticks" | cut -d@ -f2)

expect_success 'the recording has distinct ticks to tell apart' '
	test $(wc -l <ticks) -ge 6 &&
	test "$first" != "$last" &&
	test $(cut -d@ -f1 ticks | sort -u | wc -l) -ge 6
'

expect_success 'replay shows the recorded numbers and time; the header names the file' '
	top 160 24 --replay "$T/rec.csv" --speed 0.25 &&
	wait_for "replay of $T/rec.csv" &&
	wait_for "4200101 " &&
	now=$(shown) &&
	grep -qF "$now@" ticks || { echo "on screen: $now, recorded:"; cat ticks; exit 1; }
	has "0\.25x  recorded [0-9-]+ [0-9:]+" screen &&
	hasnt "driver" screen
'

expect_success 'space pauses: the numbers stop; Left goes to the first tick, Right to the last' '
	top 160 24 --replay "$T/rec.csv" --speed 0.5 &&
	wait_for "4200101 " &&
	keys Space && wait_for "\[paused\]" &&
	a=$(shown) && sleep 1.5 && shows "$a" &&
	keys Left &&
	wait_for "used +${first%|*} " && wait_for "recorded [0-9-]+ $first_time" &&
	shows "$first" &&
	has "\[paused\]" screen &&
	keys Right &&
	wait_for "used +${last%|*} " && wait_for "recorded [0-9-]+ $last_time" &&
	shows "$last"
'

expect_success '+ and - change the speed; played to the end it says so and stays' '
	top 160 24 --replay "$T/rec.csv" --speed 4 &&
	wait_for "4x" &&
	keys + && wait_for " 8x " &&
	keys - && wait_for " 4x " && keys - && wait_for " 2x " &&
	wait_for "\[end\]" &&
	shows "$last" &&
	keys q && wait_for "vramz-exited rc=0"
'

# the state on the right outranks the file's directory: a log in a deep
# directory at 80 columns is named by its base name and [end] still shows
# (CI's longer checkout path once pushed [end] off an 80-column header)
expect_success 'a long path at 80 columns: the base name, and [end] still on screen' '
	d="$T/a-directory-name-long-enough/to-push-the-state/off-the-header" &&
	mkdir -p "$d" && cp "$T/rec.csv" "$T/rec.procs.csv" "$d/" &&
	top 80 24 --replay "$d/rec.csv" --speed 8 &&
	wait_for "\[end\]" &&
	has "^vramz top  replay of rec.csv  1 GPU" screen &&
	hasnt "to-push" screen
'

expect_success 'a bad row further on: the last good tick stays on screen, with the error' '
	cp "$T/rec.csv" tail.csv && cp "$T/rec.procs.csv" tail.procs.csv &&
	echo "2099-01-01T00:00:00.000Z,zero" >>tail.csv &&
	line=$(wc -l <tail.csv) &&
	top 160 24 --replay tail.csv --speed 4 &&
	wait_for "tail.csv:$line: " &&
	shows "$last" &&
	has "recorded [0-9-]+ $last_time" screen
'

expect_success 'a log that is not one: one-line error naming FILE:LINE, exit 1, no terminal taken' '
	printf "time,gpu\n2026-11-30T01:00:00.000Z,zero\n" >bad.csv &&
	top 80 24 --replay bad.csv &&
	wait_for "vramz-exited rc=1" &&
	hasnt "vramz top" screen &&
	has "bad.csv" screen
'
finish
