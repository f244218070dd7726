# SPDX-License-Identifier: Apache-2.0
# core.sh - helpers for the core commands' end-to-end tests (t1000-t1700),
# sourced after lib.sh.
#
# jassert FILE EXPR   python expression over the parsed JSON document d;
#                     fails (printing the expression) when it is false.
# usage_err NAME ARGS one line on stderr naming NAME, empty stdout, exit 2.
# fails_with CODE NAME ARGS   the same for exit code CODE.
# write_scn FILE      the scenario on stdin into $T/FILE, selected.
jassert() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
ok = eval(sys.argv[2])
if not ok:
    print("false:", sys.argv[2])
sys.exit(0 if ok else 1)' "$@"
}

fails_with() {
	local code=$1 name=$2 rc
	shift 2
	vramz "$@" >"$T/.fw.out" 2>"$T/.fw.err" && rc=0 || rc=$?
	if [ "$rc" -ne "$code" ]; then
		echo "vramz $*: exit $rc, want $code"; cat "$T/.fw.err"; return 1
	fi
	if [ -s "$T/.fw.out" ]; then
		echo "vramz $*: stdout not empty:"; cat "$T/.fw.out"; return 1
	fi
	if [ "$(wc -l <"$T/.fw.err")" -ne 1 ]; then
		echo "vramz $*: stderr is not one line:"; cat "$T/.fw.err"; return 1
	fi
	grep -qF -- "$name" "$T/.fw.err" || {
		echo "vramz $*: stderr does not name '$name':"; cat "$T/.fw.err"; return 1
	}
}

usage_err() { fails_with 2 "$@"; }

write_scn() {
	cat >"$T/$1"
	export FAKE_NVML_SCENARIO="$T/$1"
}
