#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6000-top-layout: `vramz top` drawn in a real terminal (tmux) for 1, 2 and
# 8 GPUs at 80x24 and 200x60: every GPU and its numbers are on screen, the
# process table shows the processes, and quitting gives the shell back.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
# top W H ARGS...: a fresh tmux session running vramz top
top() { top_session "$@"; }

scenario 1gpu.scn
expect_success '1 GPU at 80x24: memory split used / reserved / free, sensors, process' '
	top 80 24 &&
	wait_for "4200001" &&
	has "GPU 0 H200" screen &&
	has "used +4\.00 GiB +rsv +616 MiB +free +135\.8 GiB / 140\.4 GiB" screen &&
	has "util +0% +temp +31C mem 36C +power 76/700W +PCIe 5x16" screen &&
	has "4200001 .* 0 +4\.00 GiB +0 " screen &&
	has "\(other ns\)" screen &&
	has "qQuit" screen
'

expect_success '1 GPU at 200x60: history charts labelled, table below' '
	top 200 60 &&
	wait_for "4200001" &&
	has "^ *[0-9.]+ GiB ┤┈+ .*total 140G above" screen &&
	keys z && wait_for "^140\.4 GiB ┤─" && has "^ +0 GiB ┤" screen &&
	has "┤─+ +⣿ util" screen && has "now" screen &&
	has "PID +USER +JOB +GPU +VRAM" screen
'

scenario 2gpu-h200.scn
for size in "80 24" "200 60"; do
expect_success "2 GPUs at ${size/ /x}: both GPUs, the shared process on both" '
	top '"$size"' &&
	wait_for "4200301" &&
	has "GPU 0 H200" screen && has "GPU 1 H200" screen &&
	has "4200301 .* 0,1 +124\.0 GiB" screen &&
	has "4200201 .* 1 +22\.0 GiB" screen
'
done

scenario 8gpu.scn
expect_success '8 GPUs at 80x24: one line per GPU, all eight, table still there' '
	top 80 24 &&
	wait_for "4300001" &&
	for i in 0 1 2 3 4 5 6 7; do has "^ ?$i[ !] +[A-Z]" screen || exit 1; done &&
	has "^ 0  H100 80GB +\[.*\] +54G/80G +99% +63C +602/700W" screen &&
	has "^ 5  GeForce RT .*24G/24G +0% +30C" screen &&
	has "4300001 .* 0-7 +78\.0 GiB" screen &&
	test $(grep -cE "^ +43[0-9]{5} " screen) -ge 5 &&
	has "qQuit" screen
'

expect_success '8 GPUs at 200x60: a block per GPU with numbers' '
	top 200 60 &&
	wait_for "4300001" &&
	for i in 0 1 2 3 4 5 6 7; do has "GPU $i " screen || exit 1; done &&
	has "GPU 7 L40S +util +12%" screen &&
	test $(grep -oE "used +[0-9.]+ GiB +rsv" screen | wc -l) -eq 8 &&
	test $(grep -cE "^ +43[0-9]{5} " screen) -ge 10
'

expect_success 'ASCII locale and NO_COLOR: ASCII bar, still readable' '
	TOP_LANG=C top 80 24 &&
	wait_for "4300001" &&
	has "^ 0  H100 80GB +\[%#+\.+\]" screen &&
	hasnt "█" screen
'

expect_success 'resize from 200x60 to 80x24 switches to the compact layout' '
	top 200 60 &&
	wait_for "GPU 7 L40S" &&
	$TM resize-window -x 80 -y 24 &&
	wait_for "^ 7  L40S" &&
	hasnt "GPU 7 L40S +util" screen
'

expect_success 'not a terminal: one-line error, exit 1' '
	test "$(rc vramz top </dev/null)" = 1 &&
	vramz top </dev/null 2>err >/dev/null || true &&
	has "needs a terminal" err
'

finish
