#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6060-top-daemon: `vramz top` reading a live daemon takes its ticks on
# the UI thread (src/tui/sampler.c: no sampler thread, one wake-up a
# frame): with no NVML reachable it shows the daemon's GPUs and processes
# and keeps up with them; when the daemon stops, it goes on sampling the
# driver on a thread of its own, the screen still current, says so on its
# status line (not on stderr, which would be drawn over the screen), and
# quits.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
. "$TESTS_SRC/e2e/daemon-lib.sh"

cat >"$T/grow.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=37 temp=41 power=318000 power_limit=700000
proc gpu=0 pid=4200101 used=10GiB type=compute sm=50
grow gpu=0 pid=4200101 rate=+1GiB/s
SCN
export FAKE_NVML_SCENARIO=$T/grow.scn
# the process's VRAM on screen, in GiB
vram() { tm capture-pane -p | grep -oE "^ +4200101 .*" | grep -oE "[0-9.]+ GiB" | head -1 | cut -d" " -f1; }

grows() { python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not (b - a > 0.8))" "$1" "$2"; }

expect_success 'top on a daemon with no NVML reachable follows the daemon' '
	start_daemon -i 200ms --procs &&
	TOP_ENV="LD_LIBRARY_PATH= VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR" top_session 120 40 -i 200ms &&
	wait_for "4200101" && a=$(vram) && sleep 1.5 && b=$(vram) &&
	{ grows "$a" "$b" || { echo "VRAM on screen did not follow the daemon: $a then $b"; exit 1; }; } &&
	keys q && wait_for "vramz-exited rc=0" && stop_daemon
'

expect_success 'when the daemon stops, top samples the driver and stays current' '
	start_daemon -i 200ms --procs &&
	TOP_ENV="VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR" top_session 120 40 -i 200ms &&
	wait_for "4200101" && sleep 0.5 && stop_daemon &&
	wait_for "^ *top: .*stopped; sampling the driver from now on" &&
	hasnt "vramz: top:" screen &&
	sleep 1 && a=$(vram) && sleep 1.5 && b=$(vram) &&
	{ grows "$a" "$b" || { echo "VRAM on screen stopped with the daemon: $a then $b"; tm capture-pane -p; exit 1; }; } &&
	keys q && wait_for "vramz-exited rc=0"
'

# A snapshot is stamped when its sampling starts and published when it
# ends; a reader that woke at the stamp's phase would look again and again
# until the publish (2, 4, 8 ms ... apart: about 7 times a frame here),
# while ticker.c learns the delay instead.  Voluntary context switches of
# top's main thread count its wake-ups: one a frame (12 in 6 s), a few more
# while it learns.
expect_success 'a daemon that publishes 150 ms after its stamp: top still wakes about once a frame' '
	sed "s/^grow .*/latency nvmlDeviceGetComputeRunningProcesses_v3 150ms/" "$T/grow.scn" >"$T/late.scn" &&
	export FAKE_NVML_SCENARIO=$T/late.scn &&
	start_daemon -i 500ms --procs &&
	TOP_ENV="VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR" top_session 120 40 -i 500ms &&
	wait_for "4200101" && sleep 2 &&
	pid=$(pgrep -P "$(tm list-panes -F "#{pane_pid}")" -x vramz) &&
	n0=$(awk "/^voluntary_ctxt_switches/ {print \$2}" /proc/$pid/status) &&
	sleep 6 &&
	n1=$(awk "/^voluntary_ctxt_switches/ {print \$2}" /proc/$pid/status) &&
	echo "top woke $((n1 - n0)) times in 6 s (12 frames)" &&
	test $((n1 - n0)) -ge 6 && test $((n1 - n0)) -le 24 &&
	keys q && wait_for "vramz-exited rc=0" && stop_daemon
'
# A top with no thresholds of its own shows the daemon's findings: its
# engine has watched the machine since the daemon started, and ten tops on
# one daemon run no engine.  The daemon here reports orphaned memory after
# 1 s; a top's own engine (default: 60 s) could not say it within seconds.
# A top with a threshold of its own in its config file runs its own engine.
expect_success 'top shows the daemon'"'"'s findings, unless it has thresholds of its own' '
	export FAKE_NVML_SCENARIO=$SCENARIOS/diag-orphan.scn BUSY_PID=$$ &&
	mkdir -p "$T/dcfg/vramz" "$T/tcfg" "$T/own/vramz" &&
	printf "orphan-time = 1s\nreport-after = 0s\n" >"$T/dcfg/vramz/config" &&
	printf "mem-temp-max = 96\n" >"$T/own/vramz/config" &&
	XDG_CONFIG_HOME=$T/dcfg start_daemon -i 200ms --procs &&
	sleep 2 &&
	TOP_ENV="VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR XDG_CONFIG_HOME=$T/tcfg" top_session 160 30 -i 200ms &&
	wait_for "WARN +GPU 0: 3\.0+ GiB of .* used is held by no listed process" &&
	keys q && wait_for "vramz-exited rc=0" &&
	TOP_ENV="VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR XDG_CONFIG_HOME=$T/own" top_session 160 30 -i 200ms &&
	wait_for "$BUSY_PID" && sleep 3 &&
	hasnt "held by no listed process" screen &&
	keys q && wait_for "vramz-exited rc=0" && stop_daemon
'
# Rows whose inputs have not changed are kept from the frame before, not
# drawn again (render.c, fb_keep): a process row, and a memory chart that
# has been one value all along (at 80 columns, 138 frames: two a braille
# cell; 7 s at 50 ms, until its first column is filled).  They must
# still follow the machine: when the process's memory moves, its row and
# the plot change at once; and what was kept is what a full redraw (^L)
# draws.
expect_success 'rows kept from frame to frame follow the machine, and match a full redraw' '
	sleep 300 & echo $! >"$T/steady.pid" && STEADY=$(cat "$T/steady.pid") &&
	scn() { printf "%s\n" "driver 580.159.04" \
		"gpu 0 name=\"NVIDIA H200\" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000" \
		"proc gpu=0 pid=$STEADY used=$1 type=compute sm=50" >"$T/steady.tmp" && mv "$T/steady.tmp" "$T/steady.scn"; } &&
	scn 4GiB && export FAKE_NVML_SCENARIO=$T/steady.scn &&
	start_daemon -i 50ms --procs &&
	TOP_ENV="VRAMZ_RUNTIME_DIR=$VRAMZ_RUNTIME_DIR" top_session 80 24 -i 50ms &&
	wait_for "^ +$STEADY .* 4\.00 GiB" && WAIT_FOR_TENTHS=300 wait_for "│⣿" && sleep 0.5 &&
	tm capture-pane -p | sed 1d >"$T/kept" &&
	keys C-l && sleep 0.5 && tm capture-pane -p | sed 1d >"$T/fresh" &&
	{ diff "$T/kept" "$T/fresh" || { echo "kept rows differ from a full redraw"; exit 1; }; } &&
	plot() { tm capture-pane -p | sed -En "/GiB ┤[─┈]/,/└/p"; } &&
	plot >"$T/plot.before" && test -s "$T/plot.before" &&
	scn 60GiB && wait_for "^ +$STEADY .* 60\.0 GiB" && sleep 0.5 && plot >"$T/plot.after" &&
	{ ! cmp -s "$T/plot.before" "$T/plot.after" || { echo "the plot did not follow:"; cat "$T/plot.after"; exit 1; }; } &&
	keys q && wait_for "vramz-exited rc=0" && stop_daemon && kill "$STEADY"
'
finish
