#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2020-log-crash.sh - `vramz log` where the audit of issue 12 broke it:
# kill -9 during rotation (a GPU file paired with another tick's process
# file), --keep without bound, --procs beside /dev/stdout.  The crash
# states one by one are in tests/unit/test_log_rotate.c; here the real
# logger is killed at random moments of a run that rotates every few ticks.
. "$TESTS_SRC/e2e/lib.sh"
scenario 2gpu-h200.scn

# pairs_ok FILE...: each GPU file with a sibling holds, for every GPU row
# with a proc_count, exactly that many sibling rows at its time and GPU
pairs_ok() { python3 - "$@" <<'PY'
import collections, csv, os, sys
for path in sys.argv[1:]:
    root, ext = os.path.splitext(path)
    sib = root + ".procs" + ext
    if not os.path.exists(sib):
        print(path, "has no sibling")
        continue
    have = collections.Counter((r["time"], r["gpu"]) for r in csv.DictReader(open(sib)))
    for r in csv.DictReader(open(path)):
        if r["proc_count"] != "":
            assert have[(r["time"], r["gpu"])] == int(r["proc_count"]), \
                (path, r["time"], r["gpu"], r["proc_count"], have[(r["time"], r["gpu"])])
    print(path, "pairs with", sib)
PY
}

# the reader checks each pair (a GPU row's proc_count against the sibling),
# so a replay that exits 0 is a pair that matches; python3 starts slowly on
# a loaded machine, so the independent check runs once at the end
expect_success 'kill -9 at random points of rotating runs: every pair matches, every file reads' '
	for i in $(seq 15); do
		"$VRAMZ_BIN" log -o k.csv --procs -i 10ms --rotate 3KiB --keep 3 2>/dev/null & pid=$!
		# 0.10 to 0.39 s: past start-up on a loaded machine, into rotation
		sleep "0.$((1 + RANDOM % 3))$((RANDOM % 10))"
		kill -9 $pid; wait $pid 2>/dev/null || true
		for f in k.csv k.[0-9].csv; do
			[ -e "$f" ] || continue
			# killed before the first row: a log of no
			# samples, which replay says (exit 1); any other refusal fails
			vramz replay --fast "$f" >/dev/null 2>err ||
				{ has "the log holds no samples|empty file, not a vramz log" err && ! grep -qv "^time," "$f"; } ||
				{ cat err; exit 1; }
		done
	done &&
	{ test -e k.1.csv || { echo "no run rotated before its kill: the kills tested no rotation"; ls -l; exit 1; }; } &&
	vramz log -o k.csv --procs -i 10ms --duration 30ms --rotate 3KiB --keep 3 &&
	pairs_ok k.csv k.[0-9].csv >pairs.txt &&
	cat pairs.txt &&
	hasnt "has no sibling" pairs.txt
'

expect_success '--keep is bounded: more than 1000 is a usage error, nothing written' '
	{ vramz log -o b.csv --rotate 1MiB --keep 4294967295 --duration 20ms -i 10ms 2>err && r=0 || r=$?; } &&
	test "$r" = 2 &&
	has "^vramz: log: --keep 4294967295: at most 1000 rotated files$" err &&
	test ! -e b.csv &&
	vramz log -h >help &&
	has "at most 1000" help
'

expect_success 'log -o /dev/stdout --procs: refused, no /dev/stdout.procs' '
	had=0 && { [ ! -e /dev/stdout.procs ] || had=1; } &&
	{ "$VRAMZ_BIN" log -o /dev/stdout --procs --duration 20ms -i 10ms >out.csv 2>err && r=0 || r=$?; } &&
	{ [ $had = 1 ] || [ ! -e /dev/stdout.procs ] || { rm -f /dev/stdout.procs; false; }; } &&
	test "$r" = 2 &&
	has "/dev/stdout: not a regular file, so no place for a .procs sibling" err &&
	test ! -s out.csv &&
	vramz log -o /dev/stdout --duration 20ms -i 10ms >out.csv 2>/dev/null &&
	has "^time,gpu," out.csv
'

finish
