#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# callgraph.sh OBJECT... - no two files of the library and the tool call
# into each other, and no two functions share a name (ctest runs it as
# lint.callgraph over the objects of vramz_objs, vramz_writers and
# vramz_tool).
#
# A file depends on another when its object uses a symbol the other's
# object defines (nm: the real calls and table references, not what the
# headers declare).  Shared helpers live in a file below both of their
# users ("down" files: lib/vec.c under ctx.c and the backends,
# format/prombuf.c under prom.c and prom_dcgm.c, report/htmlesc.c under
# reportpage.c and svg.c, tui/draw.c under render.c and its panels), so a
# reader can take the files in order, each leaning only on what is below.
# Fails on two files that use each other, and on a longer cycle (tsort
# names its files); tools/callgraph-selftest.sh shows it does.
#
# Names: a function (static or not) defined in two files of lib/, src/
# or include/, or two of their files of one name, is one name for two
# things, and a reader (or a tool that goes by names, like ctags or a
# call-graph review) takes one for the other.  Definitions are read from the sources in the tree's style: the
# line that names the function starts at column 0, its body's '{' opens
# alone at column 0 (static inline helpers in headers count once, where
# they are written).
#
# Allowed exceptions are lines of tools/callgraph-allow.txt, each with
# its reason; an exception nothing needs any more fails too, so the file
# only shrinks.  Prints the counts read and what is allowed; exits 1
# with what is wrong (a pair with the symbols each uses of the other).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
allow="$top/tools/callgraph-allow.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/defs"
: >"$tmp/uses"
n=0
for o in "$@"; do
	# .../build/lib/CMakeFiles/vramz_objs.dir/backend/nvml.c.o -> lib/backend/nvml.c
	f=$(printf '%s\n' "$o" | sed 's|.*/\([^/]*\)/CMakeFiles/[^/]*\.dir/|\1/|; s|\.o$||; s|\.obj$||')
	n=$((n + 1))
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 {print $3, f}' >>"$tmp/defs"
	nm -u "$o" | awk -v f="$f" '{print f, $NF}' >>"$tmp/uses"
done
if [ "$n" -lt 2 ]; then
	echo "callgraph.sh: no objects among the arguments" >&2
	exit 2
fi
# user -> definer, once each
awk 'NR == FNR {def[$1] = $2; next} ($2 in def) && def[$2] != $1 {print $1, def[$2]}' \
	"$tmp/defs" "$tmp/uses" | sort -u >"$tmp/edges"
echo "$n files, $(wc -l <"$tmp/edges") dependencies (user -> definer)"

# the allowed exceptions: "pair A B" or "name NAME", then the reason
: >"$tmp/allowed"
if [ -f "$allow" ]; then
	sed 's/#.*//' "$allow" | awk 'NF {
		if (($1 == "pair" && NF >= 4) || ($1 == "name" && NF >= 3)) {print; next}
		print "callgraph-allow.txt: \"" $0 "\": want \"pair A B reason\" or \"name NAME reason\"" > "/dev/stderr"
		exit 2
	}' >"$tmp/allowed"
fi

bad=0
# two files that use each other (each pair once, A before B)
awk 'NR == FNR {e[$1 " " $2] = 1; next}
     ($2 " " $1) in e && $1 < $2 {print $1, $2}' "$tmp/edges" "$tmp/edges" >"$tmp/pairs"
while read -r a b; do
	if awk -v a="$a" -v b="$b" '$1 == "pair" && (($2 == a && $3 == b) || ($2 == b && $3 == a)) {f = 1} END {exit !f}' "$tmp/allowed"; then
		echo "allowed: $a <-> $b"
		continue
	fi
	echo "$a and $b call into each other:"
	awk -v a="$a" -v b="$b" 'NR == FNR {def[$1] = $2; next}
		($1 == a && def[$2] == b) || ($1 == b && def[$2] == a) {print "  " $1 " uses " $2 " (" def[$2] ")"}' \
		"$tmp/defs" "$tmp/uses" | sort -u
	bad=1
done <"$tmp/pairs"
# a longer cycle, once the pairs (said above, or allowed) are taken out
awk 'FILENAME == ARGV[1] {x[$1 " " $2] = 1; x[$2 " " $1] = 1; next}
     !(($1 " " $2) in x)' "$tmp/pairs" "$tmp/edges" >"$tmp/dag"
if ! tsort "$tmp/dag" >/dev/null 2>"$tmp/err"; then
	echo "a cycle of files (tsort):"
	sed 's|^tsort: [^:]*: input contains a loop:|  loop:|; s|^tsort: |    |' "$tmp/err"
	bad=1
fi

# function names defined in two files
cd "$top"
find lib src include -name '*.[ch]' | sort | while read -r f; do
	awk -v f="$f" '
		/^[A-Za-z_]/ && !/^(typedef|struct [A-Za-z_0-9]+ *\{|enum|union|extern|#)/ && /\(/ {
			s = $0; sub(/\(.*/, "", s)
			if (match(s, /[A-Za-z_][A-Za-z_0-9]*$/)) cand = substr(s, RSTART, RLENGTH)
			else cand = ""
			if ($0 ~ /;[ \t]*$/) cand = ""
			next
		}
		cand != "" && /^\{/ {print cand, f; cand = ""; next}
		/;[ \t]*$/ || /^\}/ || /^$/ {cand = ""}
	' "$f"
done | sort -u >"$tmp/fns"
awk '{c[$1]++; l[$1] = l[$1] " " $2} END {for (k in c) if (c[k] > 1) print k l[k]}' "$tmp/fns" |
	sort >"$tmp/dups"
while read -r name files; do
	if awk -v x="$name" '$1 == "name" && $2 == x {f = 1} END {exit !f}' "$tmp/allowed"; then
		echo "allowed: $name in $files"
		continue
	fi
	echo "function $name is defined in more than one file: $files"
	bad=1
done <"$tmp/dups"

# file names: two files of one name are one name for two things as well
find lib src include -type f -name '*.[ch]' | awk -F/ '{n[$NF] = n[$NF] " " $0; c[$NF]++}
	END {for (k in c) if (c[k] > 1) print k n[k]}' | sort >"$tmp/samefiles"
while read -r name files; do
	echo "file name $name is used more than once: $files"
	bad=1
done <"$tmp/samefiles"

# an exception nothing needs any more
while read -r kind x y _; do
	case $kind in
	pair) grep -qx "$x $y" "$tmp/pairs" || grep -qx "$y $x" "$tmp/pairs" ||
		{ echo "callgraph-allow.txt: $x <-> $y no longer call each other: drop the line"; bad=1; } ;;
	name) awk -v x="$x" '$1 == x {f = 1} END {exit !f}' "$tmp/dups" ||
		{ echo "callgraph-allow.txt: $x is defined once now: drop the line"; bad=1; } ;;
	esac
done <"$tmp/allowed"
echo "$(wc -l <"$tmp/fns") functions in lib/, src/ and include/"
exit $bad
