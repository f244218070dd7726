#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# diaggraph.sh OBJECT... - the files of lib/diagnose depend on each other
# without a cycle (ctest runs it as lint.diaggraph over the library's
# objects).  A file depends on another when its object uses a symbol the
# other defines: the real calls and table references, not what headers
# declare.  The shape this keeps (docs/architecture.md, "The diagnoses"):
# the engine and kinds.c at the centre, the detectors and words around
# them; a detector that called back into the engine, or two files that
# call each other, close a cycle and fail here.  Prints the edges, and
# the cycle when there is one.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/defs"
: >"$tmp/uses"
n=0
for o in "$@"; do
	case $o in */diagnose/*) ;; *) continue ;; esac
	f=$(basename "$o")
	f=${f%%.*}
	n=$((n + 1))
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 {print $3, f}' >>"$tmp/defs"
	nm -u "$o" | awk -v f="$f" '{print f, $NF}' >>"$tmp/uses"
done
if [ "$n" -lt 2 ]; then
	echo "diaggraph.sh: no objects of lib/diagnose among the arguments" >&2
	exit 2
fi
# user -> definer, once each
awk 'NR == FNR {def[$1] = $2; next} ($2 in def) && def[$2] != $1 {print $1, def[$2]}' \
	"$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
echo "lib/diagnose: $n files, $(wc -l <"$tmp/edges") dependencies (user -> definer):"
sed 's/ / -> /; s/^/  /' "$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "lib/diagnose depends on itself in a circle:"
	cat "$tmp/err"
	exit 1
fi
