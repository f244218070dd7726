#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2900-demo.sh - the README's build-and-run command on a machine with no
# GPU: `vramz` fails with one line naming the cause, and `vramz demo`
# replays the committed H200 recording through status and analyze, saying
# first that it is not live, and finds the real leak.
. "$TESTS_SRC/e2e/lib.sh"
unset FAKE_NVML_SCENARIO   # the fake then answers as a machine without a driver

expect_success 'no GPU: vramz exits 1 with one line, then the demo runs' '
	{ vramz || vramz demo; } >out 2>err &&
	test "$(wc -l <err)" -eq 1 && has "GPU driver is not loaded" err &&
	head -1 out >first && has "^vramz demo: not a live GPU; replaying .*examples/h200-leak.csv" first
'

expect_success 'the demo shows the recording and its leak with the measured rate' '
	vramz demo >out &&
	has "replay of a log  2 of 2 GPUs  recorded 2026-11-30T02:02:06" out &&
	has "^  0 H200 +15.0 GiB / 140.4 GiB" out &&
	has "CRITICAL leak +pid 593 \(python3\) on GPU 0 grows 3840.0 MiB/min" out
'

expect_success 'the demo finds its recording from VRAMZ_EXAMPLES too, and says when it cannot' '
	VRAMZ_EXAMPLES=$(dirname "$TESTS_SRC")/examples vramz demo >out && has "leak" out &&
	test "$(rc env VRAMZ_EXAMPLES=/nonexistent "$VRAMZ_BIN" demo)" = 1 &&
	{ VRAMZ_EXAMPLES=/nonexistent vramz demo 2>err; true; } && has "cannot find examples/h200-leak.csv" err
'
finish
