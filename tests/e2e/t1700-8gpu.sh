#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1700-8gpu.sh - a shared 8-GPU box of four models and about a hundred
# processes: every GPU's numbers agree with its processes, percentages with
# the bytes, and the table with the JSON.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 8gpu.scn

expect_success 'table: eight rows, names and memory' '
	vramz -P >out &&
	has "8 of 8 GPUs" out &&
	test "$(grep -cE "^  [0-7] [A-Z]" out)" -eq 8 &&
	has "^  0 H100 80GB HBM3 +53\.5 GiB / 79\.6 GiB +67\.2% +523 MiB +99% +63C +602 / 700 W$" out &&
	has "^  4 GeForce RTX 4090 +23\.2 GiB / 24\.0 GiB +96\.7% +0 B +37% +42C +201 / 450 W$" out &&
	has "^  6 L40S .* 461 MiB " out
'

expect_success 'json: used is the sum of the processes where all are known' '
	vramz --json >j &&
	jassert j "len(d[\"gpus\"]) == 8 and len(d[\"processes\"]) == 100" &&
	jassert j "all(g[\"mem_used_bytes\"] == sum(p[\"used_bytes\"] or 0 for p in d[\"processes\"] if p[\"gpu\"] == g[\"index\"]) for g in d[\"gpus\"])" &&
	jassert j "all(g[\"process_count\"] == sum(1 for p in d[\"processes\"] if p[\"gpu\"] == g[\"index\"]) for g in d[\"gpus\"])" &&
	jassert j "all(g[\"mem_used_pct\"] == round(100 * g[\"mem_used_bytes\"] / g[\"mem_total_bytes\"], 1) for g in d[\"gpus\"])" &&
	jassert j "[g[\"unattributed_bytes\"] is None for g in d[\"gpus\"]] == [False] * 6 + [True, True]" &&
	jassert j "[g[\"fan_pct\"] for g in d[\"gpus\"]][3:6] == [None, 48, 30]"
'

expect_success 'table percentages match the JSON' '
	vramz -P >out && vramz -P --json >j &&
	python3 -c "
import json, re, sys
d = json.load(open(\"j\"))
rows = {int(m.group(1)): m.group(2) for m in re.finditer(r\"^ +(\d) [A-Z].*? (\d+\.\d)% \", open(\"out\").read(), re.M)}
want = {g[\"index\"]: \"%.1f\" % g[\"mem_used_pct\"] for g in d[\"gpus\"]}
sys.exit(0 if rows == want else print(rows, want) or 1)"
'

expect_success 'a process on all eight GPUs is listed once per GPU' '
	vramz ps --json >j &&
	jassert j "sorted(p[\"gpu\"] for p in d[\"processes\"] if p[\"pid\"] == 4300001) == list(range(8))" &&
	jassert j "[p[\"type\"] for p in d[\"processes\"] if p[\"pid\"] == 4340002] == [[\"compute\", \"graphics\"]]" &&
	jassert j "[p[\"used_bytes\"] for p in d[\"processes\"] if p[\"pid\"] in (4350009, 4350010)] == [None, None]"
'

expect_success 'ps on a subset, sorted by SM' '
	vramz ps -g 6-7 -s sm >out &&
	test "$(grep -cE "^  [67] " out)" -eq "$(grep -cE "gpu=[67] " "$FAKE_NVML_SCENARIO")" &&
	hasnt "^  [0-5] +4" out &&
	grep -E "^  [67] " out | head -1 | grep -qE " 66  \("
'

expect_success 'info and topo over eight GPUs' '
	vramz info >out && test "$(grep -c "^GPU [0-7]: " out)" -eq 8 &&
	has "^GPU 2: NVIDIA A100-SXM4-80GB$" out && has "^  NVLinks active +12$" out &&
	vramz topo >out && test "$(grep -cE "^GPU[0-7] " out)" -eq 8
'

finish
