#!/bin/bash
# t6030-top-replay: `vramz top --replay FILE`.  Until the log area (branch
# log: vramz/log.h's reader and `vramz log`) is on main, the dashboard is
# built without replay and must say so in one line, before taking the
# terminal.  With it, see docs/top.md: the playback test is still to come.
. "$TESTS_SRC/e2e/lib.sh"
tm() { tmux -L "$SOCK" "$@"; }

if ! vramz log -h >/dev/null 2>&1; then
	expect_success 'replay not built in: one-line error, exit 1, terminal untouched' '
		SOCK="vramz-test-$$-$BASHPID" &&
		trap "tm kill-server 2>/dev/null" EXIT &&
		echo "time,gpu" >x.csv &&
		tm new-session -d -x 80 -y 24 "$VRAMZ_BIN top --replay x.csv 2>err; echo rc=\$? >rc; sleep 30" &&
		for _ in $(seq 50); do [ -s rc ] && break; sleep 0.1; done &&
		has "rc=1" rc &&
		has "^vramz: --replay: log reading is not built in$" err
	'
fi
finish
