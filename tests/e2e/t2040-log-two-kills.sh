#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25, item 5: a rotation killed twice, once in its delete and once
# in the next rotation's first move, leaves k.2.csv beside an older
# process file and its own one level down.  The next `vramz log` says what
# it puts back and what it sets aside (k.2.procs.csv.unpaired), every GPU
# file then replays with its own processes, and no rotation overwrites the
# real process file.
. "$TESTS_SRC/e2e/lib.sh"
scenario 1gpu.scn

run_log() { vramz log --procs -i 50ms --duration "$1" --rotate 2KiB --keep "$2" -o k.csv; }

expect_success 'two kills mid-rotation: put back, set aside, said; nothing overwritten' '
	run_log 1500ms 2 2>/dev/null && [ -f k.2.csv ] && [ -f k.2.procs.csv ] &&
	rm k.2.csv &&                       # the first kill: after the GPU file went
	mv k.1.csv k.2.csv &&               # the second: after the next move
	real=$(md5sum <k.1.procs.csv) &&
	! vramz replay --fast k.2.csv >/dev/null 2>rp.err && has "not this log.s pair" rp.err &&
	run_log 1s 5 2>log.err &&
	has "k\.2\.procs\.csv is older than its GPU file: set aside as k\.2\.procs\.csv\.unpaired" log.err &&
	has "k\.1\.procs\.csv: put back as k\.2\.procs\.csv" log.err &&
	[ -f k.2.procs.csv.unpaired ] &&
	for g in k.csv k.[0-9].csv; do vramz replay --fast "$g" >/dev/null || exit 1; done &&
	found=0 &&
	for p in k.[0-9].procs.csv; do [ "$(md5sum <"$p")" = "$real" ] && found=1; done &&
	[ $found = 1 ]
'

expect_success 'a process file without its GPU file is set aside, not appended to' '
	rm -f k* &&
	run_log 300ms 2 2>/dev/null && rm k.csv &&
	run_log 300ms 2 2>log.err &&
	has "k\.procs\.csv has no GPU file: set aside as k\.procs\.csv\.unpaired" log.err &&
	vramz replay --fast k.csv >/dev/null
'

finish
