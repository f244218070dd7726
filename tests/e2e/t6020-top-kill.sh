#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6020-top-kill: killing from `vramz top` against real processes the test
# starts and the fake NVML lists (`follow`: listed while they live, their
# memory freed when they exit): the memory comes back and the status line
# says how much; another user's process and vramz's own shell are refused
# (the checks of `vramz kill`, src/jobs/safekill.c); user filter and tree view
# see the real owners and parents; processes tagged with Space are
# signalled together, the untagged left alone.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
# world: two GPUs; VICTIM (root) holds 8 GiB on GPU 0; OTHER (nobody)
# holds 2 GiB on GPU 1; SIB1 and SIB2 are two children of one shell.
world() {
	sleep 300 & VICTIM=$!
	setpriv --reuid nobody --regid nogroup --clear-groups sleep 300 & OTHER=$!
	sh -c "sleep 300 & sleep 300 & wait" & PARENT=$!
	KIDS="$VICTIM $OTHER $PARENT"
	sleep 0.3
	SIB1=$(pgrep -P $PARENT | head -1); SIB2=$(pgrep -P $PARENT | tail -1)
	KIDS="$KIDS $SIB1 $SIB2"
	export VICTIM OTHER SIB1 SIB2
	cat >world.scn <<SCN
driver 580.159.04
gpu 0 name="NVIDIA H200" mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=10 temp=40 power=100000 power_limit=700000
gpu 1 name="NVIDIA H200" mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=10 temp=40 power=100000 power_limit=700000
proc gpu=0 pid=env:VICTIM used=8GiB sm=0 follow
proc gpu=1 pid=env:OTHER used=2GiB sm=0 follow
proc gpu=1 pid=env:SIB1 used=1GiB sm=5 follow
proc gpu=1 pid=env:SIB2 used=1GiB sm=5 follow
SCN
	chmod 755 "$T" && chmod 644 world.scn
	export FAKE_NVML_SCENARIO=$PWD/world.scn
}

expect_success 'k, Enter, y: SIGTERM kills the process; the GPU gets its 8 GiB back' '
	world && shell 100 30 &&
	keys "$VRAMZ_BIN top" Enter &&
	wait_for "$VICTIM .* 8\.00 GiB" &&
	has "used +8\.00 GiB" screen &&
	keys / && keys $VICTIM Enter && wait_for "filter: /$VICTIM" &&
	keys k && wait_for "signal for pid $VICTIM" &&
	has "SIGTERM" screen &&
	keys Enter && wait_for "Send SIGTERM to pid $VICTIM \(sleep 300\) of root\? y/N" &&
	keys y &&
	wait_for "pid $VICTIM exited: GPU 0 got 8\.00 GiB back \(it held 8\.00 GiB\)" &&
	! kill -0 $VICTIM 2>/dev/null &&
	wait_for "used +0 B " &&
	kill -0 $OTHER
'

expect_success 'kill declined at the confirmation: nothing is signalled' '
	world && shell 100 30 &&
	keys "$VRAMZ_BIN top" Enter &&
	wait_for "$VICTIM .* 8\.00 GiB" &&
	keys / && keys $VICTIM Enter && wait_for "filter: /$VICTIM" &&
	keys k && wait_for "signal for pid" && keys Enter && wait_for "y/N" &&
	keys n && wait_for "kill cancelled" &&
	kill -0 $VICTIM
'

expect_success 'as nobody: killing root'"'"'s process is refused, it lives on' '
	world && shell 100 30 &&
	keys "setpriv --reuid nobody --regid nogroup --clear-groups $VRAMZ_BIN top" Enter &&
	wait_for "$VICTIM .* 8\.00 GiB" &&
	keys / && keys $VICTIM Enter && wait_for "filter: /$VICTIM" &&
	keys k &&
	wait_for "refused: pid $VICTIM belongs to root, not you" &&
	hasnt "signal for pid" screen &&
	kill -0 $VICTIM
'

expect_success 'the shell that runs top is never signalled (vramz kill'"'"'s checks)' '
	world && shell 100 30 &&
	printf "proc gpu=0 pid=env:SHELL_PID used=1GiB sm=0\n" >>world.scn &&
	keys "SHELL_PID=\$\$ $VRAMZ_BIN top" Enter &&
	SH=$($TM display -p "#{pane_pid}") &&
	wait_for "^ +$SH .* 1\.00 GiB" &&
	keys / && keys $SH Enter && wait_for "filter: /$SH" &&
	keys k &&
	wait_for "refused: pid $SH: that is vramz.s parent or an ancestor \(your shell\)" &&
	hasnt "signal for pid" screen &&
	kill -0 $SH
'

expect_success 'u filters by user: only nobody'"'"'s process' '
	world && shell 100 30 &&
	keys "$VRAMZ_BIN top" Enter &&
	wait_for "$OTHER " &&
	keys u C-u BSpace BSpace BSpace BSpace BSpace BSpace nobody Enter &&
	wait_for "filter: user=nobody" &&
	has "$OTHER +nobody .* 1 +2\.00 GiB" screen &&
	hasnt "$VICTIM " screen && hasnt "$SIB1 " screen
'

expect_success 't shows the tree: two siblings under their parent, summed' '
	world && shell 100 30 &&
	keys "$VRAMZ_BIN top" Enter &&
	wait_for "$SIB2 " &&
	keys t && wait_for "\[tree\]" &&
	has "$PARENT +root .* 1 +2\.00 GiB .*\(parent of 2 GPU processes\)" screen &&
	has "$SIB1 +root .*└ sleep 300" screen &&
	has "$SIB2 +root .*└ sleep 300" screen
'

expect_success 'Space tags processes, k signals them all, the others live on' '
	world && shell 120 30 &&
	keys "$VRAMZ_BIN top" Enter &&
	wait_for "$SIB2 .* 1\.00 GiB" &&
	bs="BSpace BSpace BSpace BSpace BSpace BSpace BSpace BSpace" &&
	keys / && keys $SIB1 Enter && wait_for "filter: /$SIB1" && keys Space &&
	wait_for "\[1 tagged\]" &&
	keys / $bs && keys $SIB2 Enter && wait_for "filter: /$SIB2" && keys Space &&
	wait_for "\[2 tagged\]" &&
	keys / $bs Enter && wait_for "^ +$VICTIM " &&
	has "^\* *$SIB1 " screen && has "^\* *$SIB2 " screen && hasnt "^\* *$OTHER " screen &&
	keys k && wait_for "signal for 2 tagged" &&
	keys Enter && wait_for "Send SIGTERM to the 2 tagged processes \(pids( $SIB1| $SIB2){2}\)\? y/N" &&
	keys y && wait_for "SIGTERM sent to 2 tagged processes|exited: GPU 1" &&
	for _ in $(seq 50); do kill -0 $SIB1 2>/dev/null || kill -0 $SIB2 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $SIB1 2>/dev/null && ! kill -0 $SIB2 2>/dev/null &&
	kill -0 $OTHER && kill -0 $VICTIM &&
	hasnt "tagged\]" screen
'

finish
