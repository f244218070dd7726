#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# callgraph-selftest.sh CC - tools/callgraph.sh fails on what it is for
# (ctest runs it as lint.callgraph_selftest): objects built here from
# small files that call each other in a pair, in a cycle of three, and
# in a line; the lint must name the pair and the cycle and stay quiet on
# the line.  The tree's own names are read as well, so that part of the
# verdict is lint.callgraph's.
set -eu
cc=${1:-cc}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
obj() { # NAME DEFINES [CALLS]
	if [ -n "${3-}" ]; then
		printf 'void %s(void);\nvoid %s(void) { %s(); }\n' "$3" "$2" "$3" >"$tmp/$1.c"
	else
		printf 'void %s(void);\nvoid %s(void) {}\n' "$2" "$2" >"$tmp/$1.c"
	fi
	"$cc" -c -O0 -o "$tmp/$1.c.o" "$tmp/$1.c"
}
fail=0
check() { # WHAT EXPECT_GREP OBJECTS...
	what=$1 want=$2
	shift 2
	sh "$here/callgraph.sh" "$@" >"$tmp/out" 2>&1 || true
	if ! grep -q "$want" "$tmp/out"; then
		echo "callgraph.sh missed $what: no '$want' in"
		sed 's/^/  /' "$tmp/out"
		fail=1
	fi
}
obj pa pa_fn pb_fn
obj pb pb_fn pa_fn
check "a pair" "pa.c and .*pb.c call into each other" "$tmp/pa.c.o" "$tmp/pb.c.o"
obj ca ca_fn cb_fn
obj cb cb_fn cc_fn
obj cc cc_fn ca_fn
check "a cycle of three" "loop:" "$tmp/ca.c.o" "$tmp/cb.c.o" "$tmp/cc.c.o"
obj la la_fn lb_fn
obj lb lb_fn lc_fn
obj lc lc_fn
sh "$here/callgraph.sh" "$tmp/la.c.o" "$tmp/lb.c.o" "$tmp/lc.c.o" >"$tmp/out" 2>&1 || true
if grep -q "each other\|loop:" "$tmp/out"; then
	echo "callgraph.sh saw a circle in a line of three files:"
	sed 's/^/  /' "$tmp/out"
	fail=1
fi
grep -q "^3 files, 2 dependencies" "$tmp/out" || {
	echo "callgraph.sh did not count a line's two dependencies:"
	sed 's/^/  /' "$tmp/out"
	fail=1
}
[ "$fail" = 0 ] && echo "callgraph.sh finds a pair and a cycle, and no circle in a line"
exit $fail
