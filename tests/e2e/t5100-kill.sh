#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vramz kill: dry run by default, idle detection, memory that comes back,
# and every refusal: reused pid, another user, vramz itself, pid 1, the
# parent shell, unlisted pids.  Only processes this test started are ever
# signalled.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
jobs_world
# the helpers must be readable by "nobody" for the non-root steps
chmod 755 "$T"
tidy_holders

expect_success 'dry run lists the holder and signals nothing' '
	holdmem 0 3GiB forever & H=$!
	wait_listed $H &&
	vramz kill $H >out &&
	has "^$H +root +3.00 GiB .*would terminate" out &&
	has "dry run: nothing was signalled" out &&
	kill -0 $H && kill $H
'
tidy_holders

expect_success '--yes terminates it and the memory comes back' '
	holdmem 0 3GiB forever & H=$!
	holdmem 1 1GiB forever & K=$!
	wait_listed $H $K &&
	vramz kill --yes $H >out &&
	has "^$H .*terminated \(SIGTERM\)" out &&
	has "^0 +3.00 GiB +0 B +3.00 GiB" out &&
	has "^1 +1.00 GiB +1.00 GiB +0 B" out &&
	! kill -0 $H 2>/dev/null && kill -0 $K && kill $K
'
tidy_holders

expect_success '--idle picks only processes idle the whole time, above --min' '
	holdmem 0 2GiB forever & IDLE=$!
	holdmem 0 100MiB forever & SMALL=$!
	wait_listed $IDLE $SMALL &&
	scn-set busy "proc gpu=1 pid=$BASHPID used=5GiB sm=50" &&
	vramz kill --idle 400ms -i 50ms --min 1GiB >out &&
	has "^$IDLE .*would terminate" out &&
	hasnt "^$SMALL " out && hasnt "^$BASHPID " out &&
	scn-set busy && kill $IDLE $SMALL
'
tidy_holders

expect_success '--idle --yes --json: terminated, with the memory returned' '
	holdmem 1 6GiB forever & IDLE=$!
	wait_listed $IDLE &&
	vramz kill --idle 300ms -i 50ms --yes --json >k.json &&
	json k.json "[(t[\"pid\"], t[\"state\"]) for t in d[\"targets\"]]" >st &&
	has "\($IDLE, .terminated.\)" st &&
	json k.json "d[\"gpus\"][1][\"returned_bytes\"]" >b && has "^6442450944$" b
'
tidy_holders

expect_success 'PIDs with --idle: only those, and only if idle; the others untouched' '
	holdmem 0 2GiB forever & IDLE=$!
	holdmem 0 2GiB forever & OTHER=$!
	wait_listed $IDLE $OTHER &&
	scn-set busy "proc gpu=1 pid=$BASHPID used=5GiB sm=50" &&
	vramz kill --idle 300ms -i 50ms --yes $IDLE $BASHPID >out; test $? = 1 &&
	has "^$IDLE .*terminated \(SIGTERM\)" out &&
	has "^$BASHPID .*refused" out &&
	has "^ +refused: not idle: it used the GPU \(SM up to 50 %\)" out &&
	hasnt "^$OTHER " out &&
	! kill -0 $IDLE 2>/dev/null && kill -0 $OTHER &&
	scn-set busy && kill $OTHER
'
tidy_holders

expect_success '--idle: a process that starts computing during the watch is not idle' '
	holdmem 0 2GiB forever & H=$!
	wait_listed $H &&
	{ { sleep 0.6; scn-set p$H "proc gpu=0 pid=$H used=2GiB follow sm=90"; } & } &&
	vramz kill --idle 2s -i 100ms --yes $H >out; test $? = 1 &&
	has "^ +refused: not idle: it used the GPU \(SM up to 90 %\)" out &&
	kill -0 $H && kill $H
'
tidy_holders

expect_success '--idle: memory growing at 0 % SM is not idle, and says so' '
	holdmem 0 2GiB forever & H=$!
	holdmem 0 2GiB forever & Q=$!
	wait_listed $H $Q &&
	scn-set g "grow gpu=0 pid=$H rate=+1GiB/s" &&
	vramz kill --idle 1s -i 100ms --yes >out; test $? = 1 &&
	has "^$Q .*terminated \(SIGTERM\)" out &&
	has "^$H .*refused" out &&
	has "^ +refused: not idle: its memory grew [0-9.]+ (MiB|GiB) in the window" out &&
	kill -0 $H && ! kill -0 $Q 2>/dev/null && scn-set g && kill $H
'
tidy_holders

expect_success '--force: SIGKILL after --timeout for a process ignoring SIGTERM' '
	bash -c "trap \"\" TERM; exec holdmem 0 1GiB forever" & H=$!
	wait_listed $H &&
	vramz kill --yes --timeout 300ms $H >out; test $? = 1 &&
	has "^$H .*still running" out && kill -0 $H &&
	vramz kill --yes --force --timeout 300ms $H >out &&
	has "^$H .*killed \(SIGKILL\)" out && ! kill -0 $H 2>/dev/null
'
tidy_holders

expect_success 'refused: pid 1, listed by the driver or not' '
	scn-set init "proc gpu=0 pid=1 used=1GiB" &&
	vramz kill --yes 1 >out; test $? = 1 &&
	has "refused: pid 1 \(init\) is never signalled" out &&
	scn-set init
'
tidy_holders

expect_success 'refused: vramz itself (it holds memory and looks idle)' '
	scn-set self "proc gpu=0 pid=self used=1GiB" &&
	vramz kill --idle 200ms -i 50ms --yes >out; test $? = 1 &&
	has "refused: that is vramz itself" out &&
	scn-set self
'
tidy_holders

expect_success 'refused: the shell that ran vramz' '
	scn-set shell "proc gpu=0 pid=$BASHPID used=1GiB" &&
	vramz kill --yes $BASHPID >out; test $? = 1 &&
	has "refused: that is vramz.s parent or an ancestor" out &&
	scn-set shell
'
tidy_holders

expect_success 'refused: a pid the driver does not list' '
	sleep 30 & S=$!
	vramz kill --yes $S >out; test $? = 1 &&
	has "refused: holds no memory on the selected GPUs" out &&
	kill -0 $S && kill $S
'
tidy_holders

expect_success 'root may terminate another user'"'"'s process' '
	setpriv --reuid nobody --regid nogroup --clear-groups sleep 100 & N=$!
	sleep 0.2 &&
	scn-set other "proc gpu=0 pid=$N used=2GiB follow" &&
	vramz kill --yes $N >out &&
	has "^$N +nobody .*terminated" out && ! kill -0 $N 2>/dev/null
'
tidy_holders

expect_success 'refused: a non-root invoker and another user'"'"'s process' '
	holdmem 0 2GiB forever & H=$!
	wait_listed $H && chmod -R a+rX "$T" &&
	setpriv --reuid nobody --regid nogroup --clear-groups "$VRAMZ_BIN" kill --yes $H >out; test $? = 1 &&
	has "refused: another user.s process" out &&
	kill -0 $H && kill $H
'
tidy_holders

expect_success 'refused: a pid reused between listing and signalling' '
	holdmem 0 2GiB forever & H=$!
	wait_listed $H && mkfifo reuse.fifo || exit 1
	{ vramz kill --ask $H <reuse.fifo >reuse.out 2>reuse.ask; echo $? >reuse.rc; } &
	exec 7>reuse.fifo &&
	wait_for reuse.ask && sleep 0.2 && has "send SIGTERM to 1 process" reuse.ask &&
	kill $H && wait $H 2>/dev/null;
	got="";
	for i in $(seq 100); do
		echo $((H - 1)) >/proc/sys/kernel/ns_last_pid;
		sleep 1000 & N=$!;
		[ $N = $H ] && { got=1; break; };
		kill $N; wait $N 2>/dev/null;
	done;
	[ -n "$got" ] || { echo "could not recreate pid $H"; exit 1; }
	echo y >&7 && exec 7>&- &&
	for i in $(seq 100); do [ -s reuse.rc ] && break; sleep 0.05; done &&
	test "$(cat reuse.rc)" = 1 &&
	has "refused: pid reused by another process" reuse.out &&
	kill -0 $N && kill $N
'
tidy_holders

expect_success 'usage: PIDs or --idle, and valid pids' '
	test "$(rc vramz kill)" = 2 &&
	test "$(rc vramz kill --idle 0s)" = 2 &&
	test "$(rc vramz kill abc)" = 2
'
tidy_holders

finish
