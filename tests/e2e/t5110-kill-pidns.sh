#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kill and ps where pids cannot be proven to be the driver's (issue 12):
# NVML reports pids as the host's PID namespace numbers them, so inside
# any other namespace (a container without --pid=host, `unshare --pid`) a
# GPU pid that matches a local process's pid is NOT that process.  Also
# the refusals that need no namespace: kernel threads, pid 0.  Only
# processes this test started are ever signalled.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
jobs_world
tidy_holders

if [ "$(id -u)" = 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null; then
expect_success 'in another PID namespace a local pid is never taken for the GPU pid' '
	unshare --pid --fork --mount-proc bash -c "
		sleep 300 & S=\$!
		echo \$S >local.pid
		scn-set ns \"proc gpu=0 pid=\$S used=2GiB\"
		\"\$VRAMZ_BIN\" ps --json >ps.json
		\"\$VRAMZ_BIN\" ps >ps.out
		\"\$VRAMZ_BIN\" kill --yes \$S >kill.out 2>kill.err; echo \$? >kill.rc
		kill -0 \$S && echo alive >alive
		kill \$S
	" &&
	S=$(cat local.pid) &&
	test "$(cat kill.rc)" = 1 &&
	has "^$S .*refused" kill.out &&
	has "not visible here: vramz runs in another PID namespace" kill.out &&
	test "$(cat alive)" = alive &&
	json ps.json "[(p[\"pid\"], p[\"visible\"], p[\"command\"]) for p in d[\"processes\"]]" >procs &&
	has "\($S, False, None\)" procs &&
	hasnt sleep ps.out && has "not visible here" ps.out || r=1
	scn-set ns; exit ${r:-0}
'
else
	echo "ok - # SKIP not root or no unshare --pid: the PID-namespace case is not checked"
fi
tidy_holders

expect_success 'the same pid in the driver'"'"'s namespace is attributed and may be signalled' '
	sleep 300 & S=$!
	scn-set host "proc gpu=0 pid=$S used=2GiB" &&
	vramz ps >ps.out && has "^ +0 +$S .*sleep 300" ps.out &&
	vramz kill --yes $S >kill.out && has "^$S .*terminated" kill.out &&
	! kill -0 $S 2>/dev/null || r=1
	kill $S 2>/dev/null; scn-set host; exit ${r:-0}
'
tidy_holders

# the first kernel thread (PF_KTHREAD in /proc/PID/stat field 9)
kthread() {
	local f s
	for f in /proc/[0-9]*/stat; do
		s=$(cat "$f" 2>/dev/null) || continue
		set -- ${s##*) }
		(( $7 & 0x200000 )) && { f=${f#/proc/}; echo "${f%/stat}"; return 0; }
	done
	return 1
}

expect_success 'refused: a kernel thread the driver lists' '
	K=$(kthread) &&
	test -n "$K" &&
	scn-set kt "proc gpu=0 pid=$K used=1GiB" &&
	vramz kill --yes $K >out; test $? = 1 &&
	has "^$K .*refused" out && has "a kernel thread is never signalled" out &&
	test -d /proc/$K && scn-set kt
'
tidy_holders

expect_success 'kill 0 is a usage error, not "pid 1 (init)"' '
	vramz kill --yes 0 >out 2>err; test $? = 2 &&
	has "bad pid .0.: 0 names a process group" err && hasnt init err
'

finish
