#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6010-top-keys: the keys of `vramz top` in a real terminal (tmux): sort,
# filter by text / user / GPU, tree view, help; and that quitting - by q
# or by a signal, even a crash - always gives back a sane terminal.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
top() { # W H ARGS...: vramz top in a fresh shell
	local w=$1 h=$2
	shift 2
	shell "$w" "$h" && $TM send-keys "$VRAMZ_BIN top $*; echo vramz-exited rc=\$?" Enter
}
# the vramz process in the pane: the shell's only child
vramz_pid() { pgrep -P "$($TM display -p "#{pane_pid}")"; }
first_pid() { grep -oE "^ +[0-9]{7} " screen | head -1 | tr -d " "; }
# first_pid_is PID: until the first row is PID (10 s).  A header already
# showing the new sort says nothing of the keys after it (Home): the
# screen was read between the two and the test failed under load
first_pid_is() {
	for _ in $(seq 100); do
		tm capture-pane -p >"$T/screen" 2>/dev/null
		[ "$(first_pid)" = "$1" ] && return 0
		sleep 0.1
	done
	echo "the first row never was pid $1:"; cat "$T/screen"; return 1
}
# wait_gone PATTERN: until the screen no longer shows it (10 s)
wait_gone() {
	for _ in $(seq 100); do
		tm capture-pane -p >"$T/screen" 2>/dev/null
		grep -qE -- "$1" "$T/screen" || return 0
		sleep 0.1
	done
	echo "the screen still shows /$1/:"; cat "$T/screen"; return 1
}

scenario 8gpu.scn
expect_success 'default sort is VRAM, largest first; P sorts by pid, again reverses' '
	top 200 60 &&
	wait_for "4300001" &&
	test "$(first_pid)" = 4300001 &&
	keys P Home && wait_for "PID▲" &&
	first_pid_is "$(grep -oE "pid=[0-9]+" $SCENARIOS/8gpu.scn | cut -d= -f2 | sort -n | head -1)" &&
	keys P Home && wait_for "PID▼" &&
	first_pid_is "$(grep -oE "pid=[0-9]+" $SCENARIOS/8gpu.scn | cut -d= -f2 | sort -n | tail -1)"
'

expect_success '> moves the sort column; the header marks it' '
	top 200 60 &&
	wait_for "VRAM▼" &&
	keys ">" && wait_for "SM%▼" &&
	keys ">" && wait_for "IDLE▼"
'

expect_success '/ filters by text; Esc clears the filter' '
	top 200 60 &&
	wait_for "4300001" &&
	keys / && wait_for "Filter" &&
	keys 4320003 Enter &&
	wait_for "filter: /4320003" &&
	test $(grep -cE "^ +43[0-9]{5} " screen) -eq 1 &&
	has "4320003 .* 2,3 " screen &&
	keys Escape &&
	wait_for "4300001" &&
	hasnt "filter:" screen
'

expect_success 'g filters by GPU: only processes on that GPU remain' '
	top 200 60 &&
	wait_for "4300001" &&
	keys g && wait_for "GPU index:" &&
	keys C-u BSpace BSpace BSpace 5 Enter &&
	wait_for "filter: gpu=5" &&
	has "4300001 .* 0-7 " screen &&
	has "4360120 .* 5 " screen &&
	hasnt "4320180 " screen &&
	! grep -E "^ +43[0-9]{5} " screen | grep -vE " (0-7|4-7|4,5|5|5-7) " | grep .
'

expect_success '? shows the help, any key closes it' '
	top 80 24 &&
	wait_for "4300001" &&
	keys "?" && wait_for "vramz top keys" &&
	has "kill: choose a signal" screen &&
	keys x && wait_gone "vramz top keys" && wait_for "4300001" &&
	hasnt "vramz top keys" screen
'

expect_success 'q quits: exit 0, shell prompt back, terminal sane' '
	top 80 24 &&
	wait_for "4300001" &&
	keys q &&
	wait_for "vramz-exited rc=0" &&
	keys "stty -a | tr \" \" \"\\n\" | grep -xE -- \"-?(icanon|echo)\" | tr \"\\n\" \" \"; echo" Enter &&
	wait_for "^icanon echo" &&
	wait_for "prompt\\$ *$"
'

for sig in TERM INT HUP; do
expect_success "SIG$sig: the terminal is restored" '
	top 80 24 &&
	wait_for "4300001" &&
	kill -'$sig' $(vramz_pid) &&
	wait_for "vramz-exited rc=" &&
	keys "stty -a | tr \" \" \"\\n\" | grep -xE -- \"-?(icanon|echo)\" | tr \"\\n\" \" \"; echo" Enter &&
	wait_for "^icanon echo"
'
done

expect_success 'a crash (SIGSEGV): terminal restored, the signal still kills it' '
	top 80 24 &&
	wait_for "4300001" &&
	kill -SEGV $(vramz_pid) &&
	wait_for "vramz-exited rc=139" &&
	keys "stty -a | tr \" \" \"\\n\" | grep -xE -- \"-?(icanon|echo)\" | tr \"\\n\" \" \"; echo" Enter &&
	wait_for "^icanon echo"
'

finish
