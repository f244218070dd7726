#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t8010-daemon-lost-dir.sh - issue 25, item 6: a daemon whose runtime
# directory, segment or lock file is removed or replaced under it says so
# once, makes it again and republishes (readers find it again), and the
# one-publisher lock stays meaningful: a second daemon is still refused,
# and when a second one took a directory made again first, the first stops.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

. "$TESTS_SRC/e2e/daemon-lib.sh"

# waits (up to 10 s) for the $2th line (default 1) matching $1 in the
# daemon's stderr
said() {
	for _ in $(seq 100); do
		[ "$(grep -cE -- "$1" "$T/daemon.err")" -ge "${2:-1}" ] && return 0
		sleep 0.1
	done
	echo "the daemon never said /$1/ ${2:-1} times:"; cat "$T/daemon.err"; return 1
}
# the daemon's segment is there and a reader takes it (within 5 s: a
# reader refuses a snapshot over 2 ticks old, and on a loaded machine the
# daemon's first tick after republishing was seen that late once in 30
# runs under ASan beside a CPU load)
reads_it() {
	for _ in $(seq 50); do
		nonvml status >st 2>st.err && grep -q "from vramz daemon pid $1," st && return 0
		sleep 0.1
	done
	cat st.err
	has "from vramz daemon pid $1," st
}

expect_success 'the runtime directory removed: said once, made again, republished; a second daemon refused' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	rm -rf run &&
	said "publishing .*/run/segment again" && reads_it "$pid" &&
	test "$(grep -c "run was removed or replaced; making it again" "$T/daemon.err")" = 1 &&
	{ vramz daemon -i 100ms 2>err2; test $? -eq 1; } && has "is already published by pid $pid" err2 &&
	# replaced while the daemon is stopped: it re-creates a missing run
	# every 100 ms, so between a running mv and mkdir it could win (the
	# mkdir then failed, 1 run in 3 under ASan); stopped, it can only find
	# the new directory
	stop_pid "$pid" && mv run run.old && mkdir -m 700 run && kill -CONT "$pid" &&
	said "publishing .*/run/segment again" 2 && reads_it "$pid" &&
	test "$(grep -c "making it again" "$T/daemon.err")" = 2 &&
	stop_daemon && rm -rf run.old
'

expect_success 'the segment removed, then replaced by a copy: republished each time' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	rm run/segment &&
	said "run/segment was removed; publishing it again" && said "publishing .*/run/segment again" &&
	reads_it "$pid" &&
	cp run/segment run/copy && mv run/copy run/segment &&
	said "run/segment was replaced; publishing it again" &&
	said "publishing .*/run/segment again" 2 &&
	reads_it "$pid" && stop_daemon
'

expect_success 'the lock file removed: taken again, so a second daemon is still refused' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	rm run/daemon.lock &&
	said "daemon.lock was removed or replaced; taking it again" &&
	{ vramz daemon -i 100ms 2>err2; test $? -eq 1; } && has "is already published by pid $pid" err2 &&
	stop_daemon
'

expect_success 'a second daemon took the directory made again first: the first stops, one publisher' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	stop_pid "$pid" && mv run run.old &&
	{ "$VRAMZ_BIN" daemon -i 100ms --procs 2>"$T/second.err" & echo $! >"$T/second.pid"; } &&
	for _ in $(seq 100); do [ -s run/segment ] && break; sleep 0.1; done &&
	second=$(cat "$T/second.pid") &&
	kill -CONT "$pid" &&
	{ wait "$pid"; test $? -eq 1; } && rm -f "$T/daemon.pid" &&
	has "stopping: one publisher per directory" "$T/daemon.err" &&
	has "is already published by pid $second" "$T/daemon.err" &&
	reads_it "$second" &&
	kill -TERM "$second" && wait "$second" && rm -f "$T/second.pid" && rm -rf run.old
'

finish
