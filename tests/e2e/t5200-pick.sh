#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vramz pick: the freest GPUs, NVLink-joined sets preferred, UUIDs out.
. "$TESTS_SRC/e2e/lib.sh"
cat >"$T/pick.scn" <<'SCN'
gpu 0 name="NVIDIA H200" uuid=GPU-aaaa0000 pci=00000000:19:00.0 mem_total=80GiB mem_reserved=0 mem_used=10GiB
gpu 1 name="NVIDIA H200" uuid=GPU-aaaa1111 pci=00000000:3b:00.0 mem_total=80GiB mem_reserved=0 mem_used=5GiB
gpu 2 name="NVIDIA H200" uuid=GPU-aaaa2222 pci=00000000:4c:00.0 mem_total=80GiB mem_reserved=0 mem_used=1GiB
gpu 3 name="NVIDIA H200" uuid=GPU-aaaa3333 pci=00000000:5d:00.0 mem_total=80GiB mem_reserved=0 mem_used=60GiB
nvlink 0 1 18
nvlink 2 3 18
SCN
export FAKE_NVML_SCENARIO="$T/pick.scn"

expect_success 'one GPU: the freest, by UUID' '
	vramz pick >out && test "$(cat out)" = "CUDA_VISIBLE_DEVICES=GPU-aaaa2222"
'

expect_success 'two GPUs: an NVLink-joined pair beats two freer unjoined ones' '
	vramz pick -n 2 >out && test "$(cat out)" = "CUDA_VISIBLE_DEVICES=GPU-aaaa0000,GPU-aaaa1111"
'

expect_success '--min-free rules out a GPU, and with it the NVLink pairs' '
	vramz pick -n 2 --min-free 72GiB >out &&
	test "$(cat out)" = "CUDA_VISIBLE_DEVICES=GPU-aaaa1111,GPU-aaaa2222"
'

expect_success '--json names the set, its free memory and whether NVLink joins it' '
	vramz pick -n 2 --json >p.json &&
	json p.json "[g[\"uuid\"] for g in d[\"gpus\"]], d[\"nvlink_joined\"]" >v &&
	has "GPU-aaaa0000.*GPU-aaaa1111.*True" v
'

expect_success 'exit 1 with a reason when no set qualifies' '
	test "$(rc vramz pick -n 4 --min-free 30GiB)" = 1 &&
	vramz pick -n 4 --min-free 30GiB 2>err;
	has "need 4 GPUs with at least 30.0 GiB free; 3 of 4 qualify" err
'

expect_success 'the output can be exported as is' '
	eval "export $(vramz pick -g 0,1)" && test "$CUDA_VISIBLE_DEVICES" = GPU-aaaa1111
'

expect_success 'bad -n is a usage error' '
	test "$(rc vramz pick -n 0)" = 2 && test "$(rc vramz pick -n x)" = 2
'

finish
