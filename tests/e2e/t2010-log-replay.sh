#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2010-log-replay.sh - `vramz replay` (and `vramz log --replay`, `vramz
# status --replay`) on a log in the documented format, with no GPU needed;
# malformed logs are refused with FILE:LINE.
. "$TESTS_SRC/e2e/lib.sh"
scenario 2gpu-h200.scn
DEMO=$TESTS_SRC/logs/demo.csv

expect_success 'replay prints every tick as status does, with recorded users and commands' '
	vramz replay "$DEMO" >out &&
	test "$(grep -c "^GPU NAME" out)" = 3 &&
	has "H200 +12.0 GiB / 140.4 GiB" out &&
	has "lost" out &&
	has "alice .*python3 train.py --layers=\"12,24\" --leak" out
'

expect_success 'JSON lines: one document per tick, in order' '
	vramz replay --json "$DEMO" >j &&
	test "$(wc -l <j)" = 3 &&
	python3 - <<PY
import json
t = [json.loads(l) for l in open("j")]
assert [d["time"] for d in t] == ["2026-11-30T01:00:0%d.000Z" % i for i in range(3)]
assert t[2]["gpus"][1]["lost"] is True and t[2]["gpus"][1]["mem_used_bytes"] is None
assert t[1]["gpus"][0]["pcie_tx_bytes_per_s"] == 1024000
assert t[0]["processes"][0]["used_bytes"] == 10737418240
PY
'

expect_success 'aliases and selection: log --replay, status --replay, -g by UUID' '
	vramz log --replay "$DEMO" --fast >a && test "$(grep -c "^GPU NAME" a)" = 3 &&
	vramz status --replay "$DEMO" -g GPU-2d94 >s &&
	has "^ +1 (NVIDIA )?H200" s && hasnt "^ +0 " s
'

expect_success '--speed paces by the recorded times' '
	start=$(date +%s%N) && vramz replay --speed 10 "$DEMO" >/dev/null &&
	test $(( ($(date +%s%N) - start) / 1000000 )) -ge 180
'

expect_success 'malformed logs: exit 1 and FILE:LINE: reason' '
	head -3 "$DEMO" >bad.csv && echo "2026-11-30T01:00:09.000Z,0,x,y,z,0,,12x,,,,,,,,,,,,,,,,,,,," >>bad.csv &&
	test "$(rc vramz replay bad.csv)" = 1 &&
	{ vramz replay bad.csv >/dev/null 2>err || true; } &&
	has "^vramz: bad.csv:4: bad mem_total_bytes .12x.$" err &&
	: >empty.csv && { vramz replay empty.csv 2>err2 || true; } && has "empty.csv:1: empty file" err2 &&
	head -1 "$DEMO" >hdr.csv && { vramz replay hdr.csv 2>err3 || true; } && has "holds no samples" err3 &&
	test "$(rc vramz replay missing.csv)" = 1 &&
	test "$(rc vramz replay)" = 2
'

expect_success 'a torn last line is the end of the log' '
	head -c -40 "$DEMO" >torn.csv &&
	vramz replay --json torn.csv >j && test "$(wc -l <j)" = 3
'
finish
