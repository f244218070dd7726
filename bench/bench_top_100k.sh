#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_top_100k.sh - `vramz top` and `vramz report` with 100,000 processes
# (issue 25, item 3): the fake NVML with 8 GPUs of 12,500 processes each.
# Prints, for top (in a private tmux at 200x60): the time to its first
# frame, its peak and current RSS after SECONDS, and the time from `q` to
# its exit; for report and analyze of a log of that machine: wall time and
# peak RSS.  Figures, not assertions (docs/performance.md has them).
#
#   bench/bench_top_100k.sh [BUILD_DIR] [SECONDS=10] [PROCS=100000]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
secs=${2:-10}
nprocs=${3:-100000}
bin=$build/vramz
sock=vramz-bench-$$
out=$(mktemp -d "${TMPDIR:-/tmp}/vramz-bench-100k.XXXXXX")
trap 'tmux -L $sock kill-server 2>/dev/null; rm -rf "$out"' EXIT
export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
export FAKE_NVML_SCENARIO=$out/100k.scn
python3 - "$here/tests/scenarios/8gpu.scn" "$FAKE_NVML_SCENARIO" "$nprocs" <<'PY'
import sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = [l for l in open(src).read().splitlines() if not l.startswith("proc ")]
lines += ["proc gpu=%d pid=%d used=%dMiB type=compute sm=0 mem=0" % (k % 8, 3000000 + k, 64 + k % 977)
          for k in range(n)]
open(dst, "w").write("\n".join(lines) + "\n")
PY
now() { date +%s.%N; }
secs_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
kib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

echo "vramz top, 8 GPUs, $nprocs processes (fake NVML), 200x60, 1 Hz"
tmux -L $sock new-session -d -s bench -x 200 -y 60 "exec sleep 100000"
t0=$(now)
tmux -L $sock new-window -d -t bench -n top "LANG=C.UTF-8 exec $bin top -i 1s"
pid=$(tmux -L $sock list-windows -t bench -F "#{window_name} #{pane_pid}" | awk '$1 == "top" { print $2 }')
first=
for _ in $(seq 6000); do # up to 10 min
	if tmux -L $sock capture-pane -p -t bench:top 2>/dev/null | grep -qE " 30[0-9]{5} "; then # a process row
		first=$(secs_since "$t0")
		break
	fi
	sleep 0.1
done
echo "top: first frame with processes after ${first:-more than 600} s"
sleep "$secs"
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
echo "top: after $secs s more: peak RSS $(kib "$hwm"), RSS $(kib "$rss")"
t0=$(now)
tmux -L $sock send-keys -t bench:top q
while [ -e "/proc/$pid" ] && ! grep -q "^State:.*Z" "/proc/$pid/status" 2>/dev/null; do
	sleep 0.005
done
echo "top: q to exit $(secs_since "$t0") s"

# wall time and peak RSS of one command
measure() {
	python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
w = time.monotonic() - t
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("%.2f s wall, peak RSS %.1f MiB" % (w, peak / 1024))
PY
}
echo "a log of 3 ticks of that machine (--procs) ..."
"$bin" log --procs -i 1s --duration 3s -o "$out/big.csv" 2>/dev/null
echo "report: $(measure "$bin" report "$out/big.csv" -o "$out/big.html")"
echo "analyze: $(measure "$bin" analyze "$out/big.csv")"
