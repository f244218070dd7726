# SPDX-License-Identifier: Apache-2.0
# top-lib.sh - the tmux harness of the `vramz top` tests (t60*-top-*.sh),
# sourced after lib.sh.  The dashboard needs a real terminal, so each step
# (a subshell) starts its own tmux server on a private socket, named when
# the step opens its session so that $(...) subshells reach it too, and
# kills it - and any processes the test listed in $KIDS - when the step ends.

# LeakSanitizer's exit-time check was seen to hang, spinning a core, when
# the pty closes under it (tmux killed right after vramz top quits), leaving
# processes behind in sanitizer runs; the dashboard's memory errors are still
# caught by ASan, its leaks by the library's own tests.
export ASAN_OPTIONS=detect_leaks=0
# top keeps its choices in $XDG_CONFIG_HOME/vramz/top.conf at quit: never
# the machine's, so a person's choices do not change what a test sees
export XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-$T/cfg}

tm() { tmux -L "$SOCK" "$@"; }
TM=tm
# tm_session W H COMMAND: this step's tmux server, one session running COMMAND
# (a fresh socket each time: a server just killed may still be exiting
# when the next session is asked of it, and tmux then says "server exited
# unexpectedly")
tm_session() {
	TM_N=$((${TM_N:-0} + 1))
	SOCK="vramz-test-$$-$BASHPID-$TM_N"
	SOCKS="${SOCKS-} $SOCK"
	trap 'for s in $SOCKS; do tmux -L "$s" kill-server 2>/dev/null || true; done; [ -z "${KIDS-}" ] || kill $KIDS 2>/dev/null' EXIT
	tm new-session -d -x "$1" -y "$2" "$3"
}
# top_session W H ARGS...: a session running vramz top ARGS in LANG
# $TOP_LANG (C.UTF-8 unless set) with $TOP_ENV in its environment; the
# pane stays to show how it exited
top_session() {
	local w=$1 h=$2
	shift 2
	tm_session "$w" "$h" \
		"LANG=${TOP_LANG:-C.UTF-8} ${TOP_ENV:+$TOP_ENV }$VRAMZ_BIN top $*; echo vramz-exited rc=\$?; sleep 30"
}
# shell W H: a session running a plain interactive shell
shell() {
	tm_session "$1" "$2" "env PS1='prompt\$ ' LANG=C.UTF-8 bash --norc --noprofile -i"
}
keys() { tm send-keys "$@"; }
# wait_for PATTERN: until the screen shows it (WAIT_FOR_TENTHS tenths of a
# second, 10 s unless set); screen in $T/screen
wait_for() {
	for _ in $(seq "${WAIT_FOR_TENTHS:-100}"); do
		tm capture-pane -p >"$T/screen" 2>/dev/null
		grep -qE -- "$1" "$T/screen" && return 0
		sleep 0.1
	done
	echo "screen never showed /$1/:"
	cat "$T/screen"
	return 1
}
