#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_daemon.sh - what reading a `vramz daemon` saves a one-shot command,
# here with the fake NVML (tests/gpu/daemon_check.sh measures it on real
# GPUs): wall time and peak RSS of `vramz status --json` from a live daemon
# against the same with --live (the driver), and `vramz -h` against
# /bin/true with the libraries the binary links (issue 14: the one-shot
# path should not pay for libmicrohttpd's TLS and ncurses).
#
#   bench/bench_daemon.sh [BUILD_DIR] [RUNS]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-50}
bin=$build/vramz
export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
export FAKE_NVML_SCENARIO=${FAKE_NVML_SCENARIO:-$here/tests/scenarios/8gpu.scn}
export VRAMZ_RUNTIME_DIR=$(mktemp -d /tmp/vramz-bench-daemon.XXXXXX)
"$bin" daemon -i 1s --procs 2>/dev/null & dp=$!
trap 'kill $dp 2>/dev/null; wait; rm -rf "$VRAMZ_RUNTIME_DIR"' EXIT
for _ in $(seq 50); do [ -s "$VRAMZ_RUNTIME_DIR/segment" ] && break; sleep 0.1; done
sleep 1.2
python3 "$here/bench/oneshot.py" "$runs" \
	"status-live=$bin status --json --live" \
	"status-daemon=$bin status --json" \
	"vramz-h=$bin -h" \
	"true=/bin/true"
echo
echo "libraries vramz links (each costs the one-shot path its loading):"
ldd "$bin" | awk '{print "  " $1}'
