# SPDX-License-Identifier: Apache-2.0
# diag-lib.sh - the diagnosis scenarios' world, for the tests that record
# them with `vramz log` and read the logs back (t3110 analyze, t7000
# report); sourced after lib.sh.  The scenarios (tests/scenarios/diag-*)
# name their processes by these variables: real sleeps, so /proc
# attributes them.  Logs go to $L; rec SCENARIO NAME DURATION [log
# options] records one.
sleep 120 & STEADY_PID=$!
sleep 120 & LEAK_PID=$!
sleep 120 & IDLE_PID=$!
sleep 120 & BUSY_PID=$!
sleep 120 & OTHER_PID=$!
export STEADY_PID LEAK_PID IDLE_PID BUSY_PID OTHER_PID
trap 'kill $STEADY_PID $LEAK_PID $IDLE_PID $BUSY_PID $OTHER_PID 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg"
L="$T/logs"
mkdir -p "$L"
rec() { FAKE_NVML_SCENARIO="$SCENARIOS/$1" vramz log -o "$L/$2.csv" --procs -i 100ms --duration "$3" "${@:4}" 2>/dev/null; }
