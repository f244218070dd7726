#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_log.sh - CPU of `vramz log` left running at 10 Hz, the figure issue 3
# sets a target for (< 0.5 % of one core on 2 real GPUs with processes).
# Runs, at the same time and each its own process, for SECONDS:
#   log --procs -i 100ms                      (the default slow readings, every 10 s)
#   log --procs -i 100ms --slow-interval 0    (no slow readings)
#   log -i 100ms --slow-interval 0            (GPUs only)
# and prints each one's share of a core over the whole run (rusage, start-up
# included) and in steady state (from 5 s on, /proc clock ticks).
#
#   bench/bench_log.sh [BUILD_DIR] [SECONDS]
#
# By default against the fake NVML with tests/scenarios/8gpu.scn (8 GPUs,
# 100 processes); BENCH_REAL=1 uses the machine's libnvidia-ml (what
# tests/gpu/validate_cost.sh does on the lent H200s, beside serve and watch).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
secs=${2:-65}
bin=$build/vramz
if [ "${BENCH_REAL:-0}" != 1 ]; then
	export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
	export FAKE_NVML_SCENARIO=${FAKE_NVML_SCENARIO:-$here/tests/scenarios/8gpu.scn}
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpu_of=$here/tests/gpu/cpu_of.py
echo "vramz log at 10 Hz for ${secs} s, ${FAKE_NVML_SCENARIO:-real NVML}"
python3 "$cpu_of" "procs, slow every 10 s" "$secs" "$bin" log --procs -i 100ms -o "$out/a.csv" >"$out/a.txt" 2>&1 &
p1=$!
python3 "$cpu_of" "procs, no slow readings" "$secs" "$bin" log --procs -i 100ms --slow-interval 0 -o "$out/b.csv" >"$out/b.txt" 2>&1 &
p2=$!
python3 "$cpu_of" "GPUs only, no slow" "$secs" "$bin" log -i 100ms --slow-interval 0 -o "$out/c.csv" >"$out/c.txt" 2>&1 &
p3=$!
wait $p1 $p2 $p3
# cpu_of's own line, without the log's summary on stderr
grep -h "core_pct=" "$out"/[abc].txt | sed 's/^/  /'
echo "target: < 0.5 % of a core at 10 Hz with processes, 2 real GPUs (issue 3)"
