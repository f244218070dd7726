#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1550-input-bounds.sh - what vramz does with inputs that are not what
# they claim: a config file that is /dev/zero, a FIFO, huge, or has a line
# over 1023 bytes; a log that is a FIFO, a device or a directory; option values out of their range or in syntax no person
# means (hex floats, nan); and the one minimum sampling interval that every
# command taking -i shares.  Each is one line naming the file or the
# option and the value, exit 2, and never a hang: every run is bounded by
# timeout, so a hang fails the step instead of the suite.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
vramz() { timeout 20 "$VRAMZ_BIN" "$@"; }
scenario 1gpu.scn
LOG=$TESTS_SRC/logs/demo.csv
export XDG_CONFIG_HOME=$T/cfg
mkdir -p "$T/cfg/vramz"
CFG=$T/cfg/vramz/config

expect_success 'a config file that is /dev/zero: one line naming it, no hang' '
	ln -sf /dev/zero "$CFG" &&
	usage_err "$CFG: not a regular file" analyze "$LOG" &&
	usage_err "$CFG: not a regular file" watch -d 100ms &&
	usage_err "$CFG: not a regular file" serve --once
'

expect_success 'a config file that is a FIFO nobody writes: no hang' '
	rm -f "$CFG" && mkfifo "$CFG" &&
	usage_err "$CFG: not a regular file" analyze "$LOG" &&
	usage_err "$CFG: not a regular file" watch -d 100ms &&
	rm -f "$CFG"
'

expect_success 'a huge config file is refused before it is read' '
	truncate -s 1G "$CFG" &&
	usage_err "$CFG: larger than 64KiB" analyze "$LOG" &&
	rm -f "$CFG"
'

expect_success 'a config line over 1023 bytes names file and line; its tail is no key' '
	{ echo "# thresholds"; printf "#%01100d" 0; echo "leak-p = 0.5"; } >"$CFG" &&
	usage_err "$CFG:2: line longer than 1023 bytes" analyze "$LOG" &&
	rm -f "$CFG"
'

expect_success 'no config file, or a home this user cannot search: the defaults' '
	rm -f "$CFG" && vramz analyze "$LOG" >/dev/null; test $? -ne 2 &&
	mkdir -p locked/vramz && echo "leak-p = 0.5" >locked/vramz/config && chmod 000 locked &&
	{ XDG_CONFIG_HOME=$T/locked setpriv --reuid nobody --regid nogroup --clear-groups \
		"$VRAMZ_BIN" analyze "$LOG" >/dev/null 2>err; test $? -ne 2; } &&
	hasnt "config" err; chmod 755 locked
'

expect_success 'a config file that is there but unreadable is an error naming it' '
	echo "leak-p = 0.5" >"$CFG" && chmod 000 "$CFG" && chmod 755 "$T" "$T/cfg" "$T/cfg/vramz" &&
	{ setpriv --reuid nobody --regid nogroup --clear-groups "$VRAMZ_BIN" analyze "$LOG" >/dev/null 2>err; test $? = 2; } &&
	has "$CFG: Permission denied" err; rm -f "$CFG"
'

expect_success 'leak-p = nan in the file is refused as on the command line' '
	echo "leak-p = nan" >"$CFG" &&
	usage_err "$CFG:1: bad value '"'"'nan'"'"' for leak-p" analyze "$LOG" &&
	rm -f "$CFG" &&
	usage_err "bad value '"'"'nan'"'"' for --leak-p" analyze --leak-p nan "$LOG"
'

expect_success 'out-of-range thresholds, file and command line alike' '
	usage_err "bad value '"'"'-5'"'"' for --leak-min-tau: want a number from 0 to 1" analyze --leak-min-tau -5 "$LOG" &&
	echo "leak-min-tau = -5" >"$CFG" &&
	usage_err "$CFG:1: bad value '"'"'-5'"'"' for leak-min-tau" analyze "$LOG" &&
	rm -f "$CFG" &&
	usage_err "'"'"'0x1p4'"'"' for --leak-min-rise" analyze --leak-min-rise 0x1p4 "$LOG" &&
	usage_err "'"'"'0x1p4'"'"' for --leak-min-rise" watch --leak-min-rise 0x1p4 -d 100ms &&
	usage_err "'"'"'0.5'"'"' for --imbalance-ratio" analyze --imbalance-ratio 0.5 "$LOG"
'

expect_success 'replay --speed -1 and 0 are refused; a positive factor plays' '
	usage_err "bad value '"'"'-1'"'"' for --speed: want a factor above 0" replay --speed -1 "$LOG" &&
	usage_err "'"'"'0'"'"' for --speed" replay --speed 0 "$LOG" &&
	usage_err "'"'"'-1'"'"' for --speed" top --replay "$LOG" --speed -1 &&
	vramz replay --speed 1000 "$LOG" >out && has "GPU" out
'

expect_success 'a FIFO, a device or a directory given as a log: refused at once, no hang' '
	mkfifo fifo.csv && mkdir dir.csv &&
	for what in "fifo.csv:a FIFO" "/dev/zero:a character device" "dir.csv:a directory"; do
		f=${what%%:*} kind=${what#*:} &&
		msg="$f: $kind, not a regular file: a log is read from a file" &&
		fails_with 1 "$msg" report "$f" -o r.html &&
		fails_with 1 "$msg" analyze "$f" &&
		fails_with 1 "$msg" replay "$f" &&
		fails_with 1 "$msg" status --replay "$f" &&
		fails_with 1 "$msg" ps --replay "$f" || exit 1
	done &&
	test ! -e r.html
'

expect_success 'a FIFO as the process sibling of a good log: refused, no hang' '
	cp "$LOG" d.csv && mkfifo d.procs.csv &&
	fails_with 1 "d.procs.csv: a FIFO, not a regular file" analyze d.csv &&
	fails_with 1 "d.procs.csv: a FIFO, not a regular file" replay d.csv &&
	fails_with 1 "d.procs.csv: a FIFO, not a regular file" report d.csv -o r.html &&
	{ vramz analyze - <"$LOG" >out || test $? = 3; } && has "3 ticks" out
'

expect_success 'kill --idle -i 0 is refused, not a busy loop' '
	usage_err "bad value '"'"'0'"'"' for -i: want a duration from 10ms to 1h" kill --idle 1s -i 0 &&
	usage_err "'"'"'5ms'"'"' for -i" kill --idle 1s -i 5ms
'

expect_success 'one minimum interval, 10ms, for every command that samples' '
	for c in watch log top serve run fit; do
		usage_err "bad value '"'"'9ms'"'"' for -i: want a duration from 10ms to 1h" $c -i 9ms &&
		usage_err "'"'"'0'"'"' for --interval" $c --interval 0 &&
		usage_err "'"'"'2h'"'"' for -i" $c -i 2h || exit 1
	done &&
	vramz watch -i 10ms -d 50ms >/dev/null &&
	vramz serve --once -i 10ms >/dev/null &&
	vramz log -o l.csv -i 10ms --duration 30ms 2>/dev/null && test -s l.csv
'

finish
