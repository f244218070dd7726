#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1600-mig.sh - an A100 in MIG mode: its instances listed under it with
# their own memory, their processes with instance ids, and MIG UUIDs
# accepted by -g.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario mig.scn

expect_success 'status lists each instance under its GPU' '
	vramz >out &&
	has "^  0 A100-SXM4-80GB +44\.0 GiB / 80\.0 GiB" out &&
	has "^ +MIG 0 \(GI 1 CI 0\) +32\.0 GiB / 39\.2 GiB$" out &&
	has "^ +MIG 1 \(GI 5 CI 0\) +12\.0 GiB / 19\.5 GiB$" out &&
	has "^ +MIG 2 \(GI 13 CI 0\) +1\.00 GiB / 9\.50 GiB$" out
'

expect_success 'json: instances and their processes' '
	vramz --json >j &&
	jassert j "[m[\"gpu_instance_id\"] for m in d[\"gpus\"][0][\"mig\"]] == [1, 5, 13]" &&
	jassert j "[m[\"uuid\"] for m in d[\"gpus\"][0][\"mig\"]][1] == \"MIG-a1b2c3d4-0005-5e6f-8a9b-0c1d2e3f4a55\"" &&
	jassert j "[(m[\"mem_total_bytes\"] >> 20, m[\"mem_used_bytes\"] >> 30) for m in d[\"gpus\"][0][\"mig\"]] == [(40192, 32), (19968, 12), (9728, 1)]" &&
	jassert j "all(m[\"compute_instance_id\"] == 0 and m[\"mem_free_bytes\"] is not None for m in d[\"gpus\"][0][\"mig\"])" &&
	jassert j "sorted((p[\"pid\"], p[\"gpu_instance_id\"], p[\"compute_instance_id\"]) for p in d[\"processes\"]) == [(4200401, 1, 0), (4200402, 1, 0), (4200403, 5, 0)]"
'

expect_success 'a GPU without MIG has no mig key' '
	scenario 2gpu-h200.scn && vramz --json >j &&
	jassert j "all(\"mig\" not in g for g in d[\"gpus\"])" &&
	jassert j "all(\"gpu_instance_id\" not in p for p in d[\"processes\"])"
'

expect_success 'info: MIG mode enabled' '
	vramz info >out && has "^  MIG mode +enabled$" out &&
	vramz info --json >j && jassert j "d[\"gpus\"][0][\"mig_enabled\"] is True"
'

expect_success '-g takes a MIG instance UUID and selects its GPU' '
	vramz ps -g MIG-a1b2c3d4-0005 >out && has "^  0  4200403 " out &&
	vramz -P -g MIG-a1b2c3d4-000d-5e6f-8a9b-0c1d2e3f4a5d >out && has "1 of 1 GPUs" out &&
	usage_err "'"'"'MIG-a1b2c3d4'"'"'" -g MIG-a1b2c3d4 &&
	usage_err "'"'"'MIG-a1b2c3d4-0003'"'"'" -g MIG-a1b2c3d4-0003
'

finish
