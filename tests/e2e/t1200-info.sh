#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1200-info.sh - `vramz info`: the hardware facts of each GPU (memory type
# from the model table, bus width, bandwidth, PCIe now and at most, NVLink,
# modes, limits) and the software versions.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

expect_success 'table: the H200 facts' '
	vramz info -g 0 >out &&
	has "^Driver 580\.159\.04 +NVML 13\.580\.159\.04 +CUDA \(driver API\) 13\.0$" out &&
	has "^GPU 0: NVIDIA H200$" out &&
	has "^  UUID +GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19$" out &&
	has "^  PCI bus id +00000000:19:00\.0$" out &&
	has "^  Architecture +Hopper$" out &&
	has "^  Compute capability +9\.0$" out &&
	has "^  Memory size +140\.4 GiB$" out &&
	has "^  Memory type +HBM3e$" out &&
	has "^  Memory bus width +6144 bit$" out &&
	has "^  Max memory clock +3201 MHz$" out &&
	has "^  Bandwidth +4916\.7 GB/s \(theoretical\)$" out &&
	has "^  PCIe link +Gen5 x16 \(max Gen5 x16\)$" out &&
	has "^  NVLinks active +18$" out &&
	has "^  MIG mode +disabled$" out &&
	has "^  ECC mode +enabled$" out &&
	has "^  Persistence mode +enabled$" out &&
	has "^  Power limit +700 W \(default 700 W, range 200-700 W\)$" out &&
	has "^  Temperature limits +slowdown 92C shutdown 95C gpu max 90C memory max 95C$" out &&
	hasnt "GPU 1:" out
'

expect_success 'json: the same facts as numbers' '
	vramz info --json >j &&
	jassert j "d[\"schema\"] == 1 and len(d[\"gpus\"]) == 2 and d[\"system\"][\"driver_version\"] == \"580.159.04\"" &&
	jassert j "all(g[\"mem_type\"] == \"HBM3e\" and g[\"mem_bus_width_bits\"] == 6144 and g[\"bandwidth_bytes_per_s\"] == 4916736000000 for g in d[\"gpus\"])" &&
	jassert j "abs(d[\"gpus\"][0][\"bandwidth_bytes_per_s\"] / 1e9 - 4917) < 1" &&
	jassert j "d[\"gpus\"][0][\"architecture\"] == \"Hopper\" and d[\"gpus\"][0][\"compute_capability\"] == \"9.0\"" &&
	jassert j "(d[\"gpus\"][0][\"pcie_gen\"], d[\"gpus\"][0][\"pcie_width\"], d[\"gpus\"][0][\"pcie_max_gen\"], d[\"gpus\"][0][\"pcie_max_width\"], d[\"gpus\"][0][\"pcie_below_max\"]) == (5, 16, 5, 16, False)" &&
	jassert j "d[\"gpus\"][1][\"nvlink_count\"] == 18 and d[\"gpus\"][1][\"mig_enabled\"] is False and d[\"gpus\"][1][\"ecc_enabled\"] is True" &&
	jassert j "d[\"gpus\"][1][\"serial\"] == \"1650124000002\" and d[\"gpus\"][1][\"mem_total_bytes\"] == 143771 * 2**20" &&
	jassert j "d[\"gpus\"][0][\"power_limit_mw\"] == 700000 and d[\"gpus\"][0][\"temp_slowdown_c\"] == 92 and d[\"gpus\"][0][\"bar1_total_bytes\"] == 256 * 2**30" &&
	jassert j "all(g[\"lost\"] is False for g in d[\"gpus\"])"
'

expect_success 'memory types of other models' '
	scenario 8gpu.scn && vramz info --json >j &&
	jassert j "[g[\"mem_type\"] for g in d[\"gpus\"]] == [\"HBM3\", \"HBM3\", \"HBM2e\", \"HBM2e\", \"GDDR6X\", \"GDDR6X\", \"GDDR6\", \"GDDR6\"]" &&
	jassert j "d[\"gpus\"][4][\"bandwidth_bytes_per_s\"] == 10501 * 10**6 * 2 * 384 // 8" &&
	vramz info -g 4 >out && has "^  Bandwidth +1008\.1 GB/s" out && has "^  NVLinks active +-$" out
'

expect_success 'a link trained below its maximum is flagged' '
	write_scn slow.scn <<-EOS &&
	gpu 0 name="NVIDIA H200" uuid=GPU-c0a1e910-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB pcie_gen=3 pcie_width=8 pcie_max_gen=5 pcie_max_width=16
	EOS
	vramz info >out && has "^  PCIe link +Gen3 x8 \(max Gen5 x16\) below max" out &&
	vramz info --json >j && jassert j "d[\"gpus\"][0][\"pcie_below_max\"] is True"
'

expect_success 'facts a GPU does not report: - and null' '
	scenario errors.scn && vramz info -g 1 >out &&
	has "^  Serial +-$" out && has "^  Power limit +-$" out && has "^  Temperature limits +-$" out &&
	has "^  Max memory clock +-$" out && has "^  Bandwidth +-$" out &&
	vramz info --json -g 1 >j &&
	jassert j "[d[\"gpus\"][0][k] for k in (\"serial\", \"power_limit_mw\", \"power_default_limit_mw\", \"temp_shutdown_c\", \"max_mem_clock_mhz\", \"bandwidth_bytes_per_s\", \"pcie_max_gen\", \"pcie_below_max\", \"nvlink_count\")] == [None] * 9" &&
	jassert j "d[\"gpus\"][0][\"persistence_mode\"] is False and d[\"gpus\"][0][\"vbios\"] == \"95.02.66.00.01\""
'

expect_success 'info -h' '
	vramz info -h >out && has "^usage: vramz info" out && has "--gpus LIST" out && has "--json" out
'

finish
