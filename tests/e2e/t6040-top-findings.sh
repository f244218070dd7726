#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6040-top-findings: the findings panel of `vramz top` is the diagnosis
# engine's (the one `vramz watch` and `analyze` use).  A replayed log in
# which a job allocates its 8 GiB in its first seconds and then holds it
# steady - the case the dashboard's old stand-in called "memory growing,
# full in 2h30m" - raises nothing on its GPU, while a process in the same
# log growing 64 MiB/s is named with its rate, its row and GPU marked '!'.
# Live, the engine's leak finding shows up the same way.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
WAIT_FOR_TENTHS=150
top() { top_session "$@"; }
export XDG_CONFIG_HOME=$T/cfg # no thresholds from the machine's config

# A 150 s log at 1 Hz ($T/job.csv, top-lib.sh's job_log): pid 4200201
# ramps to 8 GiB on GPU 1 in 8 s and stays; pid 4200102 on GPU 0 starts
# at 2 GiB and grows 64 MiB/s throughout.
job_log

expect_success 'replay: the start-up allocation raises nothing, the 64 MiB/s grower is named' '
	top 200 40 --replay "$T/job.csv" --speed 64 &&
	wait_for "\[end\]" &&
	wait_for "(CRIT|WARN) (out of memory in about [^:]+: )?pid 4200102 .*on GPU 0 grows 64\.0 MiB/s|(CRIT|WARN) (out of memory in about [^:]+: )?pid 4200102 .*on GPU 0 grows 3840\.0 MiB/min" &&
	has "^!4200102 " screen &&
	has "GPU 0! H200" screen &&
	hasnt "4200201 .*grow|GPU 1 .*grow|memory growing" screen &&
	has "^ 4200201 .* 8\.00 GiB" screen &&
	has "GPU 1 H200" screen
'

# real processes for the live scenario's pids, so /proc attributes them
sleep 120 & STEADY_PID=$!
sleep 120 & LEAK_PID=$!
export STEADY_PID LEAK_PID
trap 'kill $STEADY_PID $LEAK_PID 2>/dev/null; rm -rf "$T"' EXIT

expect_success 'live: the engine flags the leaker (thresholds from the config file), not the steady job' '
	mkdir -p cfg/vramz &&
	printf "window = 200ms\nleak-warmup = 1s\nleak-min-span = 3s\n" >cfg/vramz/config &&
	export FAKE_NVML_SCENARIO=$SCENARIOS/diag-leak.scn &&
	top 200 30 -i 100ms &&
	wait_for "(CRIT|WARN) (out of memory in about [^:]+: )?pid $LEAK_PID \(sleep\) on GPU 0 grows" &&
	has "^! +$LEAK_PID " screen &&
	has "^ +$STEADY_PID " screen &&
	hasnt "pid $STEADY_PID" screen &&
	has "driver 580\.159\.04" screen
'
finish
