#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1000-status.sh - `vramz` / `vramz status`: the GPU table and its JSON,
# numbers as the scenario defines them (used = the processes' sum, reserved
# apart), unknowns as "-" and null.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

expect_success 'table: header and one row per GPU with the scenario numbers' '
	vramz status >out &&
	has "^vramz 0\.2\.0 +driver 580\.159\.04 +CUDA 13\.0 +2 of 2 GPUs" out &&
	has "^GPU NAME +MEMORY USED / TOTAL +USE% +RESERVED +UTIL +TEMP +POWER / LIMIT" out &&
	has "^  0 H200 +71\.0 GiB / 140\.4 GiB +50\.6% +616 MiB +37% +41C +318 / 700 W$" out &&
	has "^  1 H200 +85\.0 GiB / 140\.4 GiB +60\.5% +616 MiB +64% +47C +455 / 700 W$" out
'

expect_success 'table: the processes under the GPUs, by GPU then pid' '
	vramz status >out &&
	has "^GPU +PID +USER +CONTAINER/JOB +VRAM +SM% +COMMAND" out &&
	grep -E "^  [01]  42" out >rows &&
	test "$(wc -l <rows)" -eq 4 &&
	sed -n 1p rows | grep -qE "^  0  4200101 .* 10\.0 GiB +12 " &&
	sed -n 2p rows | grep -qE "^  0  4200301 .* 61\.0 GiB +55 " &&
	sed -n 4p rows | grep -qE "^  1  4200301 .* 63\.0 GiB +58 "
'

expect_success 'no subcommand is status' '
	vramz >a && vramz status >b && has "^  1 H200" a &&
	grep -v "^vramz " a >a2 && grep -v "^vramz " b >b2 && cmp a2 b2
'

expect_success 'json: schema, system and every GPU field' '
	vramz status --json >j &&
	jassert j "d[\"schema\"] == 1 and d[\"vramz_version\"] == \"0.2.0\"" &&
	jassert j "d[\"time\"].endswith(\"Z\") and isinstance(d[\"time_ms\"], int)" &&
	jassert j "d[\"system\"] == {\"backend\": \"nvml\", \"driver_version\": \"580.159.04\", \"nvml_version\": \"13.580.159.04\", \"cuda_driver_version\": \"13.0\"}" &&
	jassert j "[g[\"index\"] for g in d[\"gpus\"]] == [0, 1]" &&
	jassert j "all(set(g) >= {\"index\",\"uuid\",\"name\",\"pci_bus_id\",\"lost\",\"mem_total_bytes\",\"mem_reserved_bytes\",\"mem_used_bytes\",\"mem_free_bytes\",\"unattributed_bytes\",\"util_gpu_pct\",\"util_mem_pct\",\"temp_c\",\"temp_mem_c\",\"power_mw\",\"power_limit_mw\",\"clock_sm_mhz\",\"clock_mem_mhz\",\"throttle_reasons\",\"pcie_gen\",\"pcie_width\",\"pcie_tx_bytes_per_s\",\"pcie_rx_bytes_per_s\",\"energy_mj\",\"fan_pct\",\"mem_used_pct\",\"process_count\"} for g in d[\"gpus\"])" &&
	jassert j "d[\"gpus\"][1][\"uuid\"] == \"GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48\" and d[\"gpus\"][1][\"pci_bus_id\"] == \"00000000:3B:00.0\""
'

expect_success 'json: memory as nvidia-smi counts it, reserved apart' '
	vramz status --json >j &&
	jassert j "all(g[\"mem_used_bytes\"] == sum(p[\"used_bytes\"] for p in d[\"processes\"] if p[\"gpu\"] == g[\"index\"]) for g in d[\"gpus\"])" &&
	jassert j "d[\"gpus\"][0][\"mem_used_bytes\"] == 71 * 2**30" &&
	jassert j "all(g[\"mem_reserved_bytes\"] == 616 * 2**20 and g[\"mem_total_bytes\"] == 143771 * 2**20 for g in d[\"gpus\"])" &&
	jassert j "all(g[\"mem_free_bytes\"] == g[\"mem_total_bytes\"] - g[\"mem_reserved_bytes\"] - g[\"mem_used_bytes\"] for g in d[\"gpus\"])" &&
	jassert j "[g[\"mem_used_pct\"] for g in d[\"gpus\"]] == [50.6, 60.5]" &&
	jassert j "[g[\"unattributed_bytes\"] for g in d[\"gpus\"]] == [0, 0]" &&
	jassert j "[g[\"process_count\"] for g in d[\"gpus\"]] == [2, 2]" &&
	jassert j "d[\"gpus\"][1][\"throttle_reasons\"] == 1 and d[\"gpus\"][0][\"power_mw\"] == 318000"
'

expect_success 'json: what was not read or not reported is null, not 0' '
	vramz status --json >j &&
	jassert j "all(g[\"fan_pct\"] is None for g in d[\"gpus\"])" &&
	jassert j "all(g[\"energy_mj\"] is None and g[\"pcie_tx_bytes_per_s\"] is None for g in d[\"gpus\"])" &&
	jassert j "all(p[\"user\"] is None and p[\"command\"] is None and p[\"visible\"] is False for p in d[\"processes\"])"
'

expect_success 'json: processes of both GPUs with kind and SM' '
	vramz status --json >j &&
	jassert j "len(d[\"processes\"]) == 4" &&
	jassert j "sorted((p[\"gpu\"], p[\"pid\"], p[\"used_bytes\"] >> 30, p[\"sm_pct\"]) for p in d[\"processes\"]) == [(0, 4200101, 10, 12), (0, 4200301, 61, 55), (1, 4200201, 22, 40), (1, 4200301, 63, 58)]" &&
	jassert j "all(p[\"type\"] == [\"compute\"] for p in d[\"processes\"])"
'

expect_success '--no-procs: GPUs only' '
	vramz status --no-procs >out && hasnt "COMMAND" out && has "^  0 H200 " out &&
	vramz -P --json >j && jassert j "\"processes\" not in d and len(d[\"gpus\"]) == 2"
'

expect_success 'one GPU: 4 GiB of 140.4 GiB' '
	scenario 1gpu.scn && vramz >out &&
	has "1 of 1 GPUs" out &&
	has "^  0 H200 +4\.00 GiB / 140\.4 GiB +2\.8% +616 MiB +0% +31C +76 / 700 W$" out &&
	has "^  0  4200001 " out
'

expect_success 'unattributed memory gets its own row' '
	scenario core-merge.scn && vramz >out &&
	has "^  0 +- +- +- +100 MiB +- +\(used by no listed process" out &&
	vramz --json >j &&
	jassert j "d[\"gpus\"][0][\"unattributed_bytes\"] == 100 * 2**20 and d[\"gpus\"][1][\"unattributed_bytes\"] is None"
'

expect_success 'an older driver: no reserved figure, shown as - and null' '
	LD_LIBRARY_PATH=$FAKE_NVML_ROOT/legacy vramz >out &&
	has "^  0 H200 +71\.6 GiB / 140\.4 GiB +51\.0% +- " out &&
	LD_LIBRARY_PATH=$FAKE_NVML_ROOT/legacy vramz --json >j &&
	jassert j "all(g[\"mem_reserved_bytes\"] is None for g in d[\"gpus\"])"
'

expect_success 'fields a GPU refuses read "-" in the table' '
	scenario errors.scn && vramz >out &&
	has "^  1 L40S +12\.0 GiB / 45\.0 GiB +26\.7% +461 MiB +50% +- +-$" out &&
	has "^  1  4200602 .* +- +-  " out
'

expect_success 'no colour: NO_COLOR, --no-color, or not a terminal' '
	vramz >a && ! grep -q "$(printf "\033")" a &&
	NO_COLOR= vramz >b && ! grep -q "$(printf "\033")" b &&
	NO_COLOR= vramz --no-color >c && ! grep -q "$(printf "\033")" c
'

expect_success 'VRAMZ_PROFILE_NVML: the driver calls on stderr, stdout unchanged; off by default' '
	vramz status >plain 2>plain.err && test ! -s plain.err &&
	VRAMZ_PROFILE_NVML=1 vramz status >prof 2>prof.err &&
	tail -n +2 plain >p1 && tail -n +2 prof >p2 && cmp p1 p2 && # line 1 holds the time
	has "^vramz: NVML calls \(VRAMZ_PROFILE_NVML\)" prof.err &&
	has "^  nvmlDeviceGetMemoryInfo_v2 +2 " prof.err &&
	has "^  NVML calls [0-9.]+ ms of CPU; the whole process [0-9.]+ ms" prof.err &&
	VRAMZ_PROFILE_NVML=0 vramz status >z 2>z.err && test ! -s z.err
'

# nvidia-smi's own text on the H100 it was read from: t1050-smi-query.sh
expect_success '--query-gpu and --format=csv[,noheader][,nounits]: as nvidia-smi prints them' '
	vramz status --query-gpu=index,name,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw,clocks.sm --format=csv >a &&
	has "^index, name, memory\.used \[MiB\], memory\.total \[MiB\], utilization\.gpu \[%\], temperature\.gpu, power\.draw \[W\], clocks\.current\.sm \[MHz\]$" a &&
	has "^0, NVIDIA H200, 72704 MiB, 143771 MiB, 37 %, 41, 318\.00 W, 1980 MHz$" a &&
	test "$(wc -l <a)" = 3 &&
	vramz status --query-gpu=index,memory.used,power.draw --format=csv,nounits >b &&
	has "^index, memory\.used \[MiB\], power\.draw \[W\]$" b && has "^1, 87040, 455\.00$" b &&
	vramz status --query-gpu=index,memory.used --format=csv,noheader,nounits >c &&
	test "$(cat c)" = "$(printf "0, 72704\n1, 87040")" &&
	vramz status --query-gpu=memory.free --format=csv,noheader >d && has "^70451 MiB$" d &&
	usage_err "bad --format '"'"'json'"'"'" status --query-gpu=index --format=json &&
	usage_err "bad --format '"'"'csv,nounit'"'"'" status --query-gpu=index --format=csv,nounit &&
	usage_err "not both" status --format=csv --json &&
	usage_err "--query-gpu takes nvidia-smi'"'"'s --format, not --csv" status --query-gpu=index --csv &&
	usage_err "go with --csv" status --fields gpu
'

expect_success '--units renames the header with the values: mem_used [MiB], not mem_used_bytes' '
	vramz status --csv --units --fields gpu,mem_used_bytes,power_mw,temp_c,util_gpu_pct,clock_mem_mhz,pcie_tx_bytes_per_s,energy_mj >u &&
	has "^gpu,mem_used \[MiB\],power \[W\],temp \[C\],util_gpu \[%\],clock_mem \[MHz\],pcie_tx \[MiB/s\],energy \[J\]$" u &&
	has "^0,72704 MiB,318\.00 W,41 C,37 %,3201 MHz,," u &&
	vramz status --csv --fields gpu,mem_used_bytes,power_mw >r &&
	has "^gpu,mem_used_bytes,power_mw$" r && has "^0,76235669504,318000$" r
'

expect_success 'status -h and a stray argument' '
	vramz status -h >out && has "^usage: vramz status" out && has "--gpus LIST" out &&
	has "--json" out && has "--no-procs" out &&
	usage_err "unexpected argument '"'"'now'"'"'" status now
'

finish
