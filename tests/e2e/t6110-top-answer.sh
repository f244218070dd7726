#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6110-top-answer: what `vramz top` says first (issue 40).  A finding's
# line puts the answer - out of memory in about 23m - before the subject
# and the statistics, which come last, so at 80x24 the answer is on the
# screen and "(95% CI ..., tau ...)" is what the edge cuts; COMMAND names
# the script a Python interpreter runs, not the interpreter's path; the
# header has the host's CPU, memory and load when live, a GPU's block its
# fan and clocks, and its PCIe throughput where the GPU reports it (the
# sample has no encoder/decoder utilization: none is shown).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
WAIT_FOR_TENTHS=200
export XDG_CONFIG_HOME=$T/cfg

# ten minutes of a job leaking 3.75 GiB/min from 14 GiB on a 140 GiB H200:
# about 23 minutes of memory left at the end
python3 "$TESTS_SRC/helpers/leaklog.py" "$T/fast" 600 14 3.75 || exit 1

expect_success '80x24: the time to out of memory leads the finding line' '
	top_session 80 24 --replay "$T/fast.csv" --speed 64 &&
	wait_for "\[end\]" &&
	wait_for "^(CRIT|WARN) out of memory in about 2[0-9]m: pid 4300101 " &&
	hasnt "^(CRIT|WARN) .*95% CI" screen
'

expect_success '200 columns: the statistics last, after the advice' '
	top_session 200 40 --replay "$T/fast.csv" --speed 64 &&
	wait_for "\[end\]" &&
	wait_for "out of memory in about 2[0-9]m: pid 4300101 .*grows 3840\.0 MiB/min for [0-9]+m, now [0-9.]+ GiB\.  Look for" &&
	hasnt "grows [0-9.]+ MiB/min \(95% CI" screen
'

# a Python trainer started by the interpreter's full path, with a script
# by its full path: COMMAND says "python3 train.py --bs 64"
PY=$(python3 -c "import os, sys; print(os.path.realpath(sys.executable))")
mkdir -p "$T/proj"
printf "import time\ntime.sleep(120)\n" >"$T/proj/train.py"
"$PY" "$T/proj/train.py" --bs 64 &
TRAIN_PID=$!
export TRAIN_PID
trap 'kill $TRAIN_PID 2>/dev/null; rm -rf "$T"' EXIT
cat >"$T/py.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000 fan=60 sm_clock=1980 mem_clock=3201
proc gpu=0 pid=env:TRAIN_PID used=12GiB type=compute sm=50
SCN

expect_success 'COMMAND: the script and its arguments, not the interpreter path' '
	export FAKE_NVML_SCENARIO=$T/py.scn &&
	top_session 120 30 -i 200ms &&
	wait_for "^ +$TRAIN_PID " &&
	has "^ +$TRAIN_PID .* python3[0-9.]* train\.py --bs 64 *$" screen &&
	has "^GPU 0 H200 .*PCIe -  fan 60%  clocks 1980/3201 MHz" screen &&
	hasnt "^ +$TRAIN_PID .*/" screen
'

# top reads no PCIe throughput itself (a slow NVML call); a replayed log
# (or the daemon's samples) that has it shows it in the GPU header
expect_success 'the GPU header: PCIe throughput after the clocks, where known' '
	sed "s/mem_clock=3201\$/mem_clock=3201 pcie_gen=5 pcie_width=16 pcie_tx=1000 pcie_rx=204800/" \
		"$T/py.scn" >"$T/io.scn" && grep -q pcie_rx "$T/io.scn" &&
	FAKE_NVML_SCENARIO=$T/io.scn vramz log -o "$T/io.csv" -i 200ms --duration 3s --slow-interval 1s 2>/dev/null &&
	top_session 160 30 --replay "$T/io.csv" --speed 4 &&
	wait_for "^GPU 0 H200 .*PCIe 5x16  fan 60%  clocks 1980/3201 MHz  PCIe rx 200(\.0)? MiB/s tx 1000 KiB/s" &&
	export FAKE_NVML_SCENARIO=$T/io.scn &&
	top_session 160 30 -i 200ms &&
	wait_for "^GPU 0 H200 .*PCIe 5x16  fan 60%  clocks 1980/3201 MHz *$"
'

expect_success 'the host line: CPU, memory and load in the header, live only' '
	export FAKE_NVML_SCENARIO=$T/py.scn &&
	top_session 120 30 -i 200ms &&
	wait_for "^vramz top .* cpu [0-9]+%  mem [0-9.]+/[0-9.]+G  load [0-9.]+ +[0-9]{2}:[0-9]{2}:[0-9]{2}$" &&
	top_session 120 30 --replay "$T/fast.csv" --speed 64 &&
	wait_for "\[end\]" && hasnt "load [0-9.]+" screen
'
finish
