#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2050-log-links.sh - the link rule (lib/internal/safefile.h), run as root
# as the audit ran it (issue 35): another user's symbolic link at
# gpu.csv, gpu.procs.csv or gpu.events.csv made `vramz log -o DIR/gpu.csv
# --procs` create the link's target and fill it with rows.  Now every file
# vramz writes is refused, with one line naming it and exit 1, when it is
# another user's link, FIFO or file in a directory others can write, or
# when the directory is writable by others and not sticky; nothing is
# written anywhere.  fs.protected_symlinks does not matter: the directory
# that is not sticky is refused by our own rule, and the links are never
# followed by us in any directory.  The normal cases still work.
. "$TESTS_SRC/e2e/lib.sh"
scenario 2gpu-h200.scn

if [ "$(id -u)" != 0 ]; then
	echo "ok - skipped: needs root, to plant a second user's links (CI runs as root)"
	finish
	exit
fi
OTHER=65534 # nobody

# plant DIR NAME: NAME in DIR as uid $OTHER's link to $T/secret/NAME
# (a file of root's that does not exist yet)
plant() { ln -s "$T/secret/$2" "$1/$2" && chown -h $OTHER "$1/$2"; }
# refused MSG ARGS...: vramz ARGS exits 1 at once (a FIFO must not block
# it) with one line on stderr, MSG in it
refused() {
	local msg=$1
	shift
	{ timeout 20 "$VRAMZ_BIN" "$@" >out 2>err && r=0 || r=$?; } &&
	{ [ "$r" = 1 ] || { echo "exit $r, want 1"; cat err; return 1; }; } &&
	{ [ "$(wc -l <err)" = 1 ] || { echo "want one line:"; cat err; return 1; }; } &&
	has "$msg" err
}
# nothing written: the links' targets never made
untouched() { [ -z "$(ls -A "$T/secret")" ] || { ls -l "$T/secret"; false; }; }
# each step in a directory of its own
fresh() { cd "$(mktemp -d -p "$T")"; }
LOG() { echo log --procs -i 20ms --duration 60ms -o "$@"; }

mkdir -m 700 "$T/secret"

expect_success 'a directory others can write, not sticky: refused for each file, nothing written' '
	fresh &&
	mkdir -m 777 ww && chmod 777 ww &&
	for f in gpu.csv gpu.procs.csv gpu.events.csv; do
		plant ww $f &&
		refused "^vramz: log: refusing to write ww/gpu.csv: in ww, which other users can write and is not sticky$" \
			$(LOG ww/gpu.csv) &&
		untouched && rm ww/$f || exit 1
	done &&
	refused "refusing to write ww/new.csv: in ww, which other users can write" $(LOG ww/new.csv) &&
	test -z "$(ls -A ww)"
'

expect_success 'a sticky directory: another user'"'"'s link at each name refused, never followed' '
	fresh &&
	mkdir st && chmod 1777 st &&
	for f in gpu.csv gpu.procs.csv gpu.events.csv; do
		plant st $f &&
		refused "^vramz: log: refusing to write st/$f: a symbolic link \(owned by uid $OTHER\), not followed$" \
			$(LOG st/gpu.csv) &&
		untouched && test "$(ls -A st)" = $f && rm st/$f || exit 1
	done
'

expect_success 'a sticky directory: another user'"'"'s FIFO or file at each name refused at once' '
	fresh &&
	mkdir st && chmod 1777 st &&
	for f in gpu.csv gpu.procs.csv gpu.events.csv; do
		mkfifo st/$f && chown $OTHER st/$f &&
		refused "^vramz: log: refusing to write st/$f: a FIFO, not a regular file$" \
			$(LOG st/gpu.csv) &&
		rm st/$f && echo planted >st/$f && chown $OTHER st/$f &&
		refused "refusing to write st/$f: owned by uid $OTHER, not you, in st, which other users can write" \
			$(LOG st/gpu.csv) &&
		test "$(cat st/$f)" = planted && test "$(ls -A st)" = $f && rm st/$f || exit 1
	done
'

expect_success 'our own private directory: a link there is not followed either' '
	fresh &&
	mkdir own && plant own gpu.events.csv &&
	refused "refusing to write own/gpu.events.csv: a symbolic link" $(LOG own/gpu.csv) &&
	untouched && test "$(ls -A own)" = gpu.events.csv
'

expect_success 'the normal cases: our own directory, appending to our own file, a new file in a sticky one' '
	fresh &&
	mkdir own st && chmod 1777 st &&
	vramz $(LOG own/gpu.csv) 2>err && has "to own/gpu.csv" err &&
	n=$(wc -l <own/gpu.csv) &&
	vramz $(LOG own/gpu.csv) 2>err && test "$(wc -l <own/gpu.csv)" -gt "$n" &&
	test -s own/gpu.procs.csv && test -s own/gpu.events.csv &&
	vramz $(LOG st/gpu.csv) 2>err && has "to st/gpu.csv" err &&
	vramz $(LOG st/gpu.csv) 2>err &&
	test -s st/gpu.procs.csv && test -s st/gpu.events.csv &&
	test "$(stat -c %u st/gpu.csv)" = 0 &&
	vramz log -o /dev/null -i 20ms --duration 40ms 2>err
'

expect_success 'rotation: a planted name among the rotated files is refused, not renamed over' '
	fresh &&
	mkdir st && chmod 1777 st &&
	vramz log --procs -i 10ms --duration 30ms -o st/gpu.csv 2>/dev/null &&
	plant st gpu.1.csv &&
	{ vramz log --procs -i 10ms --duration 300ms --rotate 1 -o st/gpu.csv 2>err && r=0 || r=$?; } &&
	test "$r" = 1 && has "refusing to write st/gpu.1.csv: a symbolic link" err &&
	test -L st/gpu.1.csv && untouched
'

expect_success 'report -o and run --report / -o through another user'"'"'s link: refused, nothing written' '
	fresh &&
	mkdir own st ww && chmod 1777 st && chmod 777 ww &&
	vramz $(LOG own/l.csv) 2>/dev/null &&
	plant st r.html &&
	refused "^vramz: report: refusing to write st/r.html: a symbolic link \(owned by uid $OTHER\), not followed$" \
		report own/l.csv -o st/r.html &&
	test -L st/r.html && untouched &&
	refused "^vramz: report: refusing to write ww/r.html: in ww, which other users can write" \
		report own/l.csv -o ww/r.html &&
	test -z "$(ls -A ww)" &&
	vramz report own/l.csv -o st/mine.html && test -s st/mine.html &&
	plant st run.txt &&
	refused "^vramz: run: refusing to write st/run.txt: a symbolic link" run --report st/run.txt -- touch ran &&
	test ! -e ran && untouched &&
	plant st j.events.csv &&
	refused "^vramz: run: refusing to write st/j.events.csv: a symbolic link" run -o st/j.csv -- touch ran &&
	test ! -e ran && test ! -e st/j.csv && untouched
'

expect_success 'pick --lock: another user'"'"'s link at the lock or a reservation is refused' '
	fresh &&
	mkdir locks && chmod 1777 locks && export VRAMZ_LOCK_DIR=$PWD/locks &&
	plant locks pick.lock &&
	refused "^vramz: pick: --lock: refusing to write $VRAMZ_LOCK_DIR/pick.lock: a symbolic link" pick --lock &&
	untouched && rm locks/pick.lock &&
	vramz pick --lock >p1 && gpu=$(sed -n "s/^CUDA_VISIBLE_DEVICES=//p" p1) && test -n "$gpu" &&
	chown $OTHER locks/pick.lock && vramz pick --lock >p2 && ! cmp -s p1 p2 &&
	rm -f locks/gpu-* && plant locks gpu-$gpu &&
	refused "refusing to write $VRAMZ_LOCK_DIR/gpu-$gpu: a symbolic link" pick --lock &&
	untouched && test -L locks/gpu-$gpu
'

finish
