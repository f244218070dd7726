#!/bin/bash
# bench_top.sh - CPU and memory of `vramz top` left running at 1 Hz, the
# figure issue 5 sets a target for (< 0.2 % of one core with 8 GPUs and
# 100 processes).  Runs it in a private tmux at 200x60 for SECONDS and
# reads utime+stime from /proc/PID/stat and VmRSS from /proc/PID/status.
#
#   bench/bench_top.sh [BUILD_DIR] [SECONDS]
#
# By default it uses the fake NVML with tests/scenarios/8gpu.scn (8 GPUs,
# 100 processes).  BENCH_REAL=1 uses the machine's libnvidia-ml instead
# (the H200 runs), and then also measures nvtop side by side when it is
# installed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
secs=${2:-60}
bin=$build/vramz
sock=vramz-bench-$$
trap 'tmux -L $sock kill-server 2>/dev/null' EXIT
if [ "${BENCH_REAL:-0}" != 1 ]; then
	export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
	export FAKE_NVML_SCENARIO=${FAKE_NVML_SCENARIO:-$here/tests/scenarios/8gpu.scn}
fi
hz=$(getconf CLK_TCK)

# measure NAME COMMAND...: runs it in the tmux pane and prints its cost
measure() {
	local name=$1
	shift
	tmux -L $sock kill-server 2>/dev/null
	sleep 0.2
	tmux -L $sock new-session -d -x 200 -y 60 "LANG=C.UTF-8 exec $*"
	sleep 2 # start-up (NVML init, first frame) is not the steady cost
	local pid
	pid=$(tmux -L $sock display -p "#{pane_pid}")
	local t0 c0 t1 c1
	read -r t0 _ </proc/uptime
	c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	sleep "$secs"
	read -r t1 _ </proc/uptime
	c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	local rss
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
	awk -v n="$name" -v c=$((c1 - c0)) -v hz="$hz" -v t0="$t0" -v t1="$t1" -v rss="$rss" \
		'BEGIN { printf "%-8s cpu %.3f %% of a core over %.0f s (%d ticks), RSS %.1f MiB\n",
			 n, 100 * c / hz / (t1 - t0), t1 - t0, c, rss / 1024 }'
}

echo "vramz top at 1 Hz, 200x60, ${FAKE_NVML_SCENARIO:-real NVML}"
measure "vramz" "$bin" top -i 1s
if [ "${BENCH_REAL:-0}" = 1 ] && command -v nvtop >/dev/null; then
	measure "nvtop" nvtop -d 10
fi
echo "target: < 0.2 % of a core (issue 5); clock ticks are 1/$hz s, so runs"
echo "shorter than a few minutes only bound the figure from above"
