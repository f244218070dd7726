# SPDX-License-Identifier: Apache-2.0
# lib.sh - the end-to-end test harness, sourced by tests/e2e/t*.sh.
#
# Each step is `expect_success TITLE 'commands'` (or expect_failure); the
# commands run in a subshell inside a fresh temporary directory ($T) and
# should be chained with && so any failing check fails the step.  The
# real vramz binary ($VRAMZ_BIN) runs against the fake NVML
# (LD_LIBRARY_PATH points at it) with the scenario in $FAKE_NVML_SCENARIO.
set -u
: "${VRAMZ_BIN:?run through ctest}"
T=$(mktemp -d "${TMPDIR:-/tmp}/vramz-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
PASSED=0
FAILED=0
vramz() { "$VRAMZ_BIN" "$@"; }
# The PyTorch agent reads its process's own NVML figure through ctypes: in
# the sanitizer build the fake NVML it would load is instrumented, and an
# ASan library aborts an uninstrumented python at load - so the agents
# the tests start use the device's figure there (docs/python.md)
[ "${VRAMZ_SANITIZE:-0}" = 1 ] && export VRAMZ_TORCH_NVML=0
scenario() { export FAKE_NVML_SCENARIO="$SCENARIOS/$1"; }

expect_success() {
	local title=$1 body=$2
	if (cd "$T" && set -e && eval "$body") >"$T/.out" 2>&1; then
		PASSED=$((PASSED + 1))
		echo "ok - $title"
	else
		FAILED=$((FAILED + 1))
		echo "FAIL - $title"
		# the head holds the check that failed (has: "expected /X/ in F:"),
		# the tail what the step did last: a screen dump kept only its end
		if [ "$(wc -l <"$T/.out")" -le 80 ]; then
			sed 's/^/    /' "$T/.out"
		else
			sed 's/^/    /' "$T/.out" | head -40
			echo "    ..."
			sed 's/^/    /' "$T/.out" | tail -40
		fi
	fi
}

# check: fails (with a message) when the grep pattern is not in the file
has() { grep -qE -- "$1" "$2" || { echo "expected /$1/ in $2:"; cat "$2"; return 1; }; }
hasnt() { ! grep -qE -- "$1" "$2" || { echo "unexpected /$1/ in $2:"; cat "$2"; return 1; }; }
# exit code of a command, without set -e stopping at it
rc() { "$@" >/dev/null 2>&1; echo $?; }
# jq-free JSON checks through python3
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# stop_pid PID: SIGSTOP, then wait (bounded) until every thread of PID is
# stopped: kill returns before the signal lands, and a thread still
# running could write (a rename over the file a test then changes)
stop_pid() {
	kill -STOP "$1" || return 1
	local t st
	for _ in $(seq 300); do
		st=stopped
		for t in /proc/"$1"/task/*/stat; do
			[ "$(sed 's/.*) //' "$t" 2>/dev/null | cut -c1)" = T ] || st=running
		done
		[ $st = stopped ] && return 0
		sleep 0.01
	done
	echo "pid $1 never stopped"
	return 1
}

# bg_run NAME CMD...: runs CMD in the background in $T, its output in
# $T/NAME.out and NAME.err and its exit code in NAME.rc once it ends.  For
# the fixed-length runs of one file (watch -d, log --duration) that its
# steps check one by one but need not wait out one after another: each
# step then waits for its own (bg_wait).
bg_run() {
	local n=$1
	shift
	(cd "$T" && "$@" >"$n.out" 2>"$n.err"; echo $? >"$n.rc.new" && mv "$n.rc.new" "$n.rc") &
}
# bg_wait NAME [SECONDS]: waits (300 s at most) for bg_run's NAME to end and
# returns its exit code
bg_wait() {
	local n=$1 i
	for i in $(seq $((${2:-300} * 10))); do
		[ -f "$T/$n.rc" ] && return "$(cat "$T/$n.rc")"
		sleep 0.1
	done
	echo "$n: still running after ${2:-300} s"
	return 124
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
