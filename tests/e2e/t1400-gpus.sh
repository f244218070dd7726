#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1400-gpus.sh - -g/--gpus on every core command: each spelling a user
# copies from nvidia-smi, CUDA or lspci selects the GPU meant, in the order
# given; each typo is exit 2 with one line naming it and nothing on stdout.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

# the GPU indices a status --json reports for a -g spec
sel() { vramz status -P --json -g "$1" | python3 -c 'import json,sys; print(" ".join(str(g["index"]) for g in json.load(sys.stdin)["gpus"]))'; }

expect_success 'indices, ranges, order, duplicates' '
	test "$(sel 1)" = 1 && test "$(sel 1,0)" = "1 0" && test "$(sel 0-1)" = "0 1" &&
	test "$(sel 1,0-1,1)" = "1 0" && test "$(sel all)" = "0 1" && test "$(sel " 1 , 0 ")" = "1 0"
'

expect_success 'UUID prefixes and PCI bus ids, any case' '
	test "$(sel GPU-2d94)" = 1 && test "$(sel gpu-2D94B7E0-1c35-4f8a-b6d2-7e90a15c3f48)" = 1 &&
	test "$(sel 00000000:3B:00.0)" = 1 && test "$(sel 0000:3b:00.0)" = 1 &&
	test "$(sel 3B:00.0,19:00.0)" = "1 0"
'

expect_success 'every command takes -g and --gpus=' '
	vramz status -g 1 >out && has "1 of 2 GPUs" out && hasnt "^  0 H200" out &&
	vramz -g GPU-8f3a >out && has "^  0 H200" out && hasnt "^  1 H200" out &&
	vramz ps --gpus=1 >out && hasnt "^  0  42" out && has "^  1  4200201" out &&
	vramz info -g 3b:00.0 >out && has "^GPU 1: " out && hasnt "^GPU 0: " out &&
	vramz topo --gpus 1,0 >out && has "^ +GPU1 +GPU0 *$" out
'

expect_success 'malformed lists: exit 2, one line naming the item, no stdout' '
	for cmd in status ps info topo; do
		usage_err "empty GPU list" $cmd -g "" &&
		usage_err "'"'"','"'"'" $cmd -g , &&
		usage_err "'"'"'0,'"'"'" $cmd -g 0, &&
		usage_err "'"'"'0,,1'"'"'" $cmd --gpus=0,,1 &&
		usage_err "'"'"'1-0'"'"'" $cmd -g 1-0 &&
		usage_err "'"'"'1-'"'"'" $cmd -g 1- &&
		usage_err "'"'"'-1'"'"'" $cmd -g -1 &&
		usage_err "'"'"'x'"'"'" $cmd -g x &&
		usage_err "'"'"'0x1'"'"'" $cmd -g 0x1 &&
		usage_err "'"'"'1 0'"'"'" $cmd -g "1 0" || exit 1
	done
'

expect_success 'GPUs that do not exist: exit 2, named' '
	for cmd in status ps info topo; do
		usage_err "'"'"'2'"'"'" $cmd -g 2 &&
		usage_err "'"'"'99'"'"'" $cmd -g 0,99 &&
		usage_err "'"'"'99999999999999999999999'"'"'" $cmd -g 99999999999999999999999 &&
		usage_err "'"'"'0-2'"'"'" $cmd -g 0-2 &&
		usage_err "'"'"'GPU-ffff'"'"'" $cmd -g GPU-ffff &&
		usage_err "'"'"'MIG-ffff'"'"'" $cmd -g MIG-ffff &&
		usage_err "'"'"'GPU-'"'"'" $cmd -g GPU- &&
		usage_err "'"'"'5e:00.0'"'"'" $cmd -g 5e:00.0 &&
		usage_err "'"'"'3b:00.0x'"'"'" $cmd -g 3b:00.0x || exit 1
	done
'

expect_success '--json does not change how a bad -g fails' '
	usage_err "'"'"'7'"'"'" status --json -g 7 &&
	usage_err "-g needs a value" ps -g
'

finish
