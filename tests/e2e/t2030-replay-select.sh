#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2030-replay-select.sh - `-g` on a replayed log names the log's own GPU
# indices (issue 12 item 9): on a log of GPUs 0 and 5, `-g 3` says which
# GPUs the log has, and `-g 0-5` is GPUs 0 and 5, not four empty ones
# between them.
. "$TESTS_SRC/e2e/lib.sh"

cat >"$T/g.csv" <<'CSV'
time,gpu,uuid,name,lost,proc_count,mem_used_bytes
2026-11-30T01:00:00.000Z,0,GPU-a,H200,0,,100
2026-11-30T01:00:00.000Z,5,GPU-f,H200,0,,500
2026-11-30T01:00:01.000Z,0,GPU-a,H200,0,,110
2026-11-30T01:00:01.000Z,5,GPU-f,H200,0,,510
CSV

expect_success 'replay -g 3 on a log of GPUs 0 and 5: says which GPUs it has' '
	{ vramz replay --fast -g 3 g.csv >out 2>err && r=0 || r=$?; } &&
	test "$r" = 2 &&
	has "^vramz: -g: no GPU with index .3. in the log \(it has GPUs 0, 5\)$" err &&
	{ vramz replay --fast -g 1-4 g.csv >out 2>err && r=0 || r=$?; } &&
	test "$r" = 2 &&
	has "no GPU in range .1-4. in the log \(it has GPUs 0, 5\)" err
'

expect_success 'replay -g 0-5: GPUs 0 and 5 only, no phantom GPUs 1-4' '
	vramz replay --fast --json -g 0-5 g.csv >j &&
	test "$(grep -o "\"index\": *[0-9]*" j | tr -d " " | sort -u | tr "\n" " ")" = "\"index\":0 \"index\":5 " &&
	vramz replay --fast -g 0-5 g.csv >t &&
	test "$(grep -cE "^ +[0-9] +H200" t)" = 4 &&
	vramz replay --fast --json -g 5 g.csv >j5 &&
	has "\"index\": *5" j5 && hasnt "\"index\": *0" j5
'

expect_success 'the header counts the GPUs the log has (2), not the indices up to 5' '
	vramz replay --fast g.csv >all &&
	has "replay of a log  2 of 2 GPUs" all &&
	vramz replay --fast -g 5 g.csv >one &&
	has "replay of a log  1 of 2 GPUs" one
'

finish
