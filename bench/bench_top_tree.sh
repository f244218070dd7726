#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_top_tree.sh - `vramz top` over NPROCS real processes, each with a
# parent of its own that is on no GPU (bench/proctree.c): the shape that
# made the tree view (`t`) cubic (issue 35, item 9).  The fake NVML lists
# those pids on 8 GPUs; top (200x150, so that 8 GPUs leave room for rows; 1 Hz; its per-process histories on,
# as always) reads their parents, commands and states from /proc.
# Prints: processes made and how long that took, top's first frame, its
# CPU share over SECONDS in the flat view and in the tree, the time from
# `t` to the tree on screen, peak and current RSS, and the time from `q`
# to its exit.  Figures, not assertions (docs/performance.md has them).
#
#   bench/bench_top_tree.sh [BUILD_DIR] [NPROCS=100000] [SECONDS=10]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
nprocs=${2:-100000}
secs=${3:-10}
wait_s=${WAIT_S:-600} # for a frame, the tree
bin=$build/vramz
sock=vramz-bench-tree-$$
out=$(mktemp -d "${TMPDIR:-/tmp}/vramz-bench-tree.XXXXXX")
cleanup() {
	tmux -L $sock kill-server 2>/dev/null
	exec 7>&- # proctree's stdin: it kills its processes
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
now() { date +%s.%N; }
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
kib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
# cpu PID: its user + system time in clock ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
share() { awk -v a="$1" -v b="$2" -v s="$secs" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f %%", 100 * (b - a) / hz / s }'; }
screen() { tmux -L $sock capture-pane -p -t bench:top 2>/dev/null; }
# until: waits (10 min at most) for PATTERN on top's screen
until_screen() {
	for _ in $(seq $((wait_s * 10))); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

echo "pid_max $(cat /proc/sys/kernel/pid_max), ulimit -u $(ulimit -u), $(nproc) CPUs," \
	"$(awk '/^MemAvailable/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) available"
mkfifo "$out/hold"
t0=$(now)
"$build/bench/proctree" "$nprocs" <"$out/hold" >"$out/pids" &
exec 7>"$out/hold"
while [ "$(wc -l <"$out/pids")" -lt "$nprocs" ] && kill -0 $! 2>/dev/null; do
	sleep 0.2
done
made=$(wc -l <"$out/pids")
echo "processes: $made on GPUs, each with its own parent ($((2 * made)) in all), made in $(secs_since "$t0") s"
[ "$made" = "$nprocs" ] || exit 1

export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
export FAKE_NVML_SCENARIO=$out/tree.scn
# top keeps its choices (the tree view too) at quit: never the machine's
export XDG_CONFIG_HOME=$out/cfg
python3 - "$here/tests/scenarios/8gpu.scn" "$FAKE_NVML_SCENARIO" "$out/pids" <<'PY'
import sys
src, dst, pids = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().split()
lines = [l for l in open(src).read().splitlines() if not l.startswith("proc ")]
lines += ["proc gpu=%d pid=%s used=%dMiB type=compute sm=0 mem=0" % (k % 8, p, 64 + k % 977)
          for k, p in enumerate(pids)]
open(dst, "w").write("\n".join(lines) + "\n")
PY

echo "vramz top, 8 GPUs, 200x150, 1 Hz"
tmux -L $sock new-session -d -s bench -x 200 -y 150 "exec sleep 100000"
t0=$(now)
tmux -L $sock new-window -d -t bench -n top "LANG=C.UTF-8 exec $bin top -i 1s"
pid=$(tmux -L $sock list-windows -t bench -F "#{window_name} #{pane_pid}" | awk '$1 == "top" { print $2 }')
until_screen " gpujob" && echo "top: first frame with processes after $(secs_since "$t0") s" ||
	echo "top: no process row after $wait_s s"
c0=$(cpu "$pid") && sleep "$secs" && c1=$(cpu "$pid")
echo "top, flat view: $(share "$c0" "$c1") of a core over $secs s," \
	"RSS $(kib "$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")")"
t0=$(now)
tmux -L $sock send-keys -t bench:top t
# the tree draws only GPU processes: each one here, its parent on no GPU,
# is a root, found by looking its parent up (the lookup that was cubic)
until_screen "\[tree\].*" && until_screen " gpujob" && echo "top: t to the tree on screen $(secs_since "$t0") s" ||
	echo "top: no tree after $wait_s s"
c0=$(cpu "$pid") && sleep "$secs" && c1=$(cpu "$pid")
echo "top, tree view: $(share "$c0" "$c1") of a core over $secs s"
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
echo "top: peak RSS $(kib "$hwm"), RSS $(kib "$rss")"
screen >"$out/tree.txt"
t0=$(now)
tmux -L $sock send-keys -t bench:top q
while [ -e "/proc/$pid" ] && ! grep -q "^State:.*Z" "/proc/$pid/status" 2>/dev/null; do
	sleep 0.005
done
echo "top: q to exit $(secs_since "$t0") s"
echo "the tree's first rows:"
sed -n '/ PID USER/,$p' "$out/tree.txt" | head -4
