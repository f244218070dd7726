#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# stress-tests.sh - runs ctest tests N times each in the ASan build beside
# a CPU load (one `yes >/dev/null` per core), to catch the races a quiet
# machine hides (issue 35, item 10: t8010 failed 1 run in 3 under ASan).
# Prints a table: test, passes, failures.  Exit 1 when any run failed.
#
#   tools/stress-tests.sh [-n N] [-b BUILD_DIR] [-j JOBS] TEST...
#     TEST   a ctest name regex, e.g. t8010 or e2e.t6010-top-keys
#     -n N   runs of each (default 30)
#     -b DIR the build (default build-asan: cmake -DVRAMZ_SANITIZE=ON)
#     -j J   tests run at a time (default 1); each round is one ctest of them all
#     -k     keep each failed run's output (DIR/stress-logs)
set -u
usage() { sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'; }
here=$(cd "$(dirname "$0")/.." && pwd)
n=30 build=$here/build-asan jobs=1 keep=0
while getopts "hn:b:j:k" o; do
	case $o in
	h) usage; exit 0 ;;
	n) n=$OPTARG ;;
	b) build=$OPTARG ;;
	j) jobs=$OPTARG ;;
	k) keep=1 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "stress-tests: no test named (-h for help)" >&2; exit 2; }
case $n in '' | *[!0-9]*) echo "stress-tests: -n '$n': a number" >&2; exit 2 ;; esac
[ -f "$build/CTestTestfile.cmake" ] || { echo "stress-tests: $build: not a build directory" >&2; exit 2; }

load=""
stop_load() { [ -z "$load" ] || kill $load 2>/dev/null; wait 2>/dev/null; }
trap stop_load EXIT
for _ in $(seq "$(nproc)"); do
	yes >/dev/null &
	load="$load $!"
done

logs=$build/stress-logs
mkdir -p "$logs"
# rounds: one ctest a round runs every named test (-j J of them at a time),
# so a slow test shares the load with the others instead of waiting its
# turn; each test's line in ctest's output counts for it
declare -A pass fail
re=""
for t in "$@"; do
	pass[$t]=0 fail[$t]=0
	re="$re${re:+|}$t"
done
for i in $(seq "$n"); do
	ctest --test-dir "$build" -j "$jobs" -R "$re" --output-on-failure >"$logs/last.txt" 2>&1
	for t in "$@"; do
		lines=$(grep -E "Test +#[0-9]+: " "$logs/last.txt" | grep -E -- "$t") || lines=""
		if [ -n "$lines" ] && ! grep -qvE " Passed " <<<"$lines"; then
			pass[$t]=$((pass[$t] + 1))
		else
			fail[$t]=$((fail[$t] + 1))
			[ $keep = 1 ] && cp "$logs/last.txt" "$logs/$(echo "$t" | tr -c 'A-Za-z0-9.\n-' _).$i.txt"
		fi
	done
	echo "round $i of $n: $(date -u +%H:%M:%S)" >&2
done
stop_load
load=""
bad=0
printf "%-28s %6s %8s\n" test passes failures
for t in "$@"; do
	printf "%-28s %6d %8d\n" "$t" "${pass[$t]}" "${fail[$t]}"
	[ "${fail[$t]}" = 0 ] || bad=1
done
exit $bad
