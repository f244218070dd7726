#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1500-errors.sh - what a person sees when things go wrong: bad usage
# (exit 2), no library / broken library / driver errors (exit 1, one line
# naming the cause, nothing on stdout), a GPU that fell off the bus (its
# row says lost, the others are reported, exit 1); and -h / --version.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

expect_success 'unknown subcommand and unknown options: exit 2' '
	usage_err "'"'"'stauts'"'"' is not a command; did you mean '"'"'status'"'"'?" stauts &&
	usage_err "'"'"'--bogus'"'"'" --bogus &&
	usage_err "'"'"'--bogus'"'"'" status --bogus &&
	usage_err "'"'"'-q'"'"'" info -q &&
	usage_err "--json takes no value" topo --json=yes
'

expect_success '-h on every command, help CMD, --version: exit 0' '
	vramz -h >out && has "^usage: vramz \[COMMAND\]" out &&
	for c in status ps info topo; do has "^  $c " out || exit 1; done &&
	vramz --help >out2 && cmp out out2 &&
	for c in status ps info topo; do
		vramz $c -h >o && has "^usage: vramz $c" o && has "-h, --help" o &&
		vramz $c --help >o2 && cmp o o2 &&
		vramz help $c >o3 && cmp o o3 || exit 1
	done &&
	vramz --version >v && has "^vramz 0\.2\.0 \(library 0\.2\.0\)$" v
'

expect_success '-h needs no driver' '
	LD_LIBRARY_PATH= FAKE_NVML_SCENARIO= vramz status -h >out && has "^usage:" out
'

expect_success 'no NVIDIA library: exit 1, a neutral error naming libnvidia-ml.so.1' '
	for cmd in status ps info topo; do
		LD_LIBRARY_PATH=/nonexistent fails_with 1 "GPU management library not found: libnvidia-ml.so.1" $cmd &&
		LD_LIBRARY_PATH=/nonexistent fails_with 1 "GPU management library not found: libnvidia-ml.so.1" $cmd --json || exit 1
	done
'

expect_success 'a library without a required symbol: exit 1 naming it' '
	for cmd in status ps info topo; do
		LD_LIBRARY_PATH=$FAKE_NVML_ROOT/broken fails_with 1 "nvmlDeviceGetCount_v2" $cmd || exit 1
	done
'

expect_success 'driver errors at init: exit 1, one line' '
	for e in "DRIVER_NOT_LOADED:GPU driver is not loaded: nvmlInit: Driver Not Loaded" \
		 "LIB_RM_VERSION_MISMATCH:driver/library version mismatch" \
		 "NO_PERMISSION:insufficient permissions: nvmlInit" \
		 "UNKNOWN:management library error: nvmlInit" \
		 "GPU_IS_LOST:fallen off the bus"; do
		printf "init_error %s\n" "${e%%:*}" >"$T/init.scn" &&
		for cmd in status ps info topo; do
			FAKE_NVML_SCENARIO=$T/init.scn fails_with 1 "${e#*:}" $cmd || exit 1
		done || exit 1
	done
'

expect_success 'no driver at all, and a driver that sees no GPU' '
	FAKE_NVML_SCENARIO= fails_with 1 "Driver Not Loaded" status &&
	printf "driver 580.159.04\n" >"$T/none.scn" &&
	FAKE_NVML_SCENARIO=$T/none.scn fails_with 1 "no GPU found: nvml: the driver reports no GPUs" ps
'

expect_success 'a lost GPU: its row says so, the others are reported, exit 1' '
	scenario core-lost.scn &&
	vramz >out 2>err && rc=0 || rc=$? &&
	test "$rc" -eq 1 &&
	has "^  1 .*lost: fell off the bus" out &&
	has "^  0 H100 80GB HBM3 +8\.00 GiB / 79\.6 GiB" out &&
	has "^  2 H100 80GB HBM3 +2\.00 GiB / 79\.6 GiB" out &&
	has "^  2  4800003 " out && hasnt "4800002" out &&
	test "$(wc -l <err)" -eq 1 && has "1 GPU lost" err &&
	vramz --json >j 2>/dev/null || true &&
	jassert j "[g[\"lost\"] for g in d[\"gpus\"]] == [False, True, False]" &&
	jassert j "all(v is None for k, v in d[\"gpus\"][1].items() if k not in (\"index\", \"lost\", \"uuid\", \"name\", \"pci_bus_id\", \"vendor\"))" &&
	jassert j "d[\"gpus\"][2][\"mem_used_bytes\"] == 2 * 2**30"
'

expect_success 'ps with a lost GPU lists the others and exits 1 saying so' '
	scenario core-lost.scn &&
	vramz ps >out 2>err && rc=0 || rc=$? &&
	test "$rc" -eq 1 && has "^  2  4800003 " out && hasnt "4800002" out &&
	test "$(wc -l <err)" -eq 1 && has "1 GPU lost" err
'

expect_success 'only lost GPUs selected: still a table, exit 1' '
	scenario core-lost.scn &&
	vramz -g 1 >out 2>err && rc=0 || rc=$? &&
	test "$rc" -eq 1 && has "lost" out && has "1 GPU lost" err
'

expect_success 'info and topo with a lost GPU' '
	scenario core-lost.scn &&
	vramz info >out 2>/dev/null || true &&
	has "^GPU 1: .*" out && has "lost: fell off the bus" out && has "^  Memory type +HBM3$" out &&
	vramz topo >out && has "^GPU1 +\? +X +\? " out
'

finish
