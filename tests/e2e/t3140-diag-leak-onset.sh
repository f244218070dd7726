#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3140-diag-leak-onset.sh - `vramz analyze` of the real H100 recording
# (tests/recordings/h100-leaks.*, its truth in the README there): the
# leaks behind 512 MiB allocator steps with and without the agent, the
# steep one and the one from its process's start are all named, each on
# the series it was judged on, from its onset; growth that stops and a
# steady holder are not (issue 36).
. "$TESTS_SRC/e2e/lib.sh"
R=$TESTS_SRC/recordings/h100-leaks.csv

expect_success 'the four leaks of the recording, and only those' '
	{ vramz analyze "$R" >out; test $? = 3; } &&
	has "leak +pid 504 \(python3\) on GPU 0 grew 1[12][0-9]{2}\.[0-9] MiB/min .*\(judged on PyTorch.s allocated bytes\)" out &&
	has "leak +pid 505 \(python3\) on GPU 0 grew .*; in 512 MiB steps every 2[4-8]s" out &&
	has "leak +pid 506 \(python3\) on GPU 0 grew 1[78][0-9]{3}\.[0-9] MiB/min .*\(judged on PyTorch.s allocated bytes\)" out &&
	has "leak +pid 507 \(python3\) on GPU 0 grows 1[45][0-9]{2}\.[0-9] MiB/min" out &&
	hasnt "leak +pid 50[89]" out
'

expect_success 'in JSON: the series, the onset and the steps' '
	{ vramz analyze --json "$R" >out.json; test $? = 3; } &&
	python3 - out.json <<PY
import json, sys
fs = {f["pid"]: f for f in json.load(open(sys.argv[1]))["findings"] if f["kind"] == "leak"}
assert sorted(fs) == [504, 505, 506, 507], sorted(fs)
assert fs[504]["series"] == "allocator" and fs[506]["series"] == "allocator", fs
assert fs[505]["series"] == "nvml" and fs[507]["series"] == "nvml", fs
# onsets against the truth (README): 504 from 11:02:37.8, 506 from 11:02:39.1,
# 507 from its start at 11:02:08; 505 from its first 512 MiB step
assert "11:02:3" in fs[504]["onset"] or "11:02:4" in fs[504]["onset"], fs[504]["onset"]
assert "11:02:3" in fs[506]["onset"] or "11:02:4" in fs[506]["onset"], fs[506]["onset"]
assert fs[507]["onset"][11:16] in ("11:02", "11:03"), fs[507]["onset"]
assert fs[505]["count"] >= 4 and 20 <= fs[505]["value"] <= 30 and fs[505]["ref_value"] == 512 * 2**20, fs[505]
PY
'

finish
