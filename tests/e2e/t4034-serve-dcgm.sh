#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4034-serve-dcgm.sh - `vramz serve --dcgm-names` serves dcgm-exporter's
# series natively: the names, units and labels its dashboards query, with
# the same numbers the recording rules of packaging/prometheus-recording.yml
# derive (t4006 checks those rules against the same scenario), beside the
# vramz_ series, and nothing of it without the flag.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
scenario 2gpu-h200.scn
U0=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19
U1=GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48

# val FILE NAME GPU: the value of NAME{gpu="GPU",...} in a body
val() { sed -n "s/^$2{gpu=\"$3\",.*} \([0-9.]*\)$/\1/p" "$1"; }

expect_success 'the DCGM families, in MiB, %, degrees C, W, MHz and mJ, with the scenario values' '
	NODE_NAME=gpu-node-7 vramz serve --once --dcgm-names >m.txt &&
	for e in FB_TOTAL:143771:143771 FB_USED:72704:87040 FB_FREE:70451:56115 FB_RESERVED:616:616 \
		GPU_UTIL:37:64 MEM_COPY_UTIL:12:30 GPU_TEMP:41:47 MEMORY_TEMP:45:52 \
		POWER_USAGE:318:455 ENFORCED_POWER_LIMIT:700:700 SM_CLOCK:1980:1980 MEM_CLOCK:3201:3201 \
		PCIE_LINK_GEN:5:5 PCIE_LINK_WIDTH:16:16 CLOCK_THROTTLE_REASONS:0:1; do
		IFS=: read -r n v0 v1 <<<"$e"
		echo "$n $(val m.txt DCGM_FI_DEV_$n 0) $(val m.txt DCGM_FI_DEV_$n 1)"
		test "$(val m.txt DCGM_FI_DEV_$n 0)" = "$v0" && test "$(val m.txt DCGM_FI_DEV_$n 1)" = "$v1" ||
			{ echo "expected $v0 $v1"; exit 1; }
	done &&
	has "^# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter$" m.txt &&
	e0=$(val m.txt DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION 0) &&
	j0=$(sed -n "s/^vramz_energy_joules_total{gpu=\"0\".*} //p" m.txt) &&
	echo "energy $e0 mJ, $j0 J" && test "$e0" -ge 123456789 &&
	python3 -c "import sys; assert int(sys.argv[1]) == round(float(sys.argv[2]) * 1000)" "$e0" "$j0" &&
	has "^# TYPE DCGM_FI_DEV_FB_USED gauge$" m.txt &&
	has "^vramz_memory_used_bytes\{gpu=\"0\"" m.txt
'

expect_success 'dcgm-exporter'"'"'s labels: gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION' '
	mkdir -p proc/driver/nvidia/gpus/0000:19:00.0 &&
	printf "Model: \t\t NVIDIA H200\nBus Location: \t 0000:19:00.0\nDevice Minor: \t 3\nGPU Excluded:\t No\n" \
		>proc/driver/nvidia/gpus/0000:19:00.0/information &&
	NODE_NAME=gpu-node-7 VRAMZ_PROCFS_ROOT=$T/proc vramz serve --once --dcgm-names >m.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"0\",UUID=\"$U0\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia3\",modelName=\"NVIDIA H200\",Hostname=\"gpu-node-7\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"\} 72704$" m.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"1\",UUID=\"$U1\",pci_bus_id=\"00000000:3B:00.0\",modelName=\"NVIDIA H200\",Hostname=\"gpu-node-7\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"\} 87040$" m.txt &&
	env -u NODE_NAME "$VRAMZ_BIN" serve --once --dcgm-names >h.txt &&
	has "^DCGM_FI_DEV_GPU_TEMP\{gpu=\"0\",.*,Hostname=\"$(hostname)\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"\} 41$" h.txt
'

expect_success 'the device label from NVML'"'"'s minor number where the driver'"'"'s /proc file is unreadable' '
	sed "s/^gpu 1 /gpu 1 minor=5 /" "$SCENARIOS/2gpu-h200.scn" >minor.scn &&
	FAKE_NVML_SCENARIO=$T/minor.scn VRAMZ_PROCFS_ROOT=$T/proc vramz serve --once --dcgm-names >m.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"0\",UUID=\"$U0\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia3\"," m.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"1\",UUID=\"$U1\",pci_bus_id=\"00000000:3B:00.0\",device=\"nvidia5\",modelName=" m.txt &&
	FAKE_NVML_SCENARIO=$T/minor.scn VRAMZ_PROCFS_ROOT=$T/nothing vramz serve --once --dcgm-names >n.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"1\",.*device=\"nvidia5\"" n.txt &&
	hasnt "^DCGM_FI_DEV_FB_USED\{gpu=\"0\",.*device=" n.txt
'

expect_success '--dcgm-hostname-label: dcgm-exporter'"'"'s later name, hostname; a bad or taken name is a usage error' '
	NODE_NAME=gpu-node-7 vramz serve --once --dcgm-names --dcgm-hostname-label hostname >m.txt &&
	has "^DCGM_FI_DEV_POWER_USAGE\{gpu=\"0\",.*,modelName=\"NVIDIA H200\",hostname=\"gpu-node-7\",DCGM_FI_DRIVER_VERSION=" m.txt &&
	hasnt "Hostname=" m.txt &&
	test "$(rc vramz serve --once --dcgm-names --dcgm-hostname-label 1host)" = 2 &&
	test "$(rc vramz serve --once --dcgm-names --dcgm-hostname-label UUID)" = 2 &&
	test "$(rc vramz serve --once --dcgm-hostname-label node)" = 2 &&
	{ vramz serve --once --dcgm-hostname-label node 2>err.txt; true; } &&
	has "^vramz: serve: --dcgm-hostname-label needs --dcgm-names$" err.txt
'

# lint_expected BODY: the lines docs/metrics.md says promtool prints for
# BODY's DCGM series: one per sample (the label modelName), one per
# counter family with samples (no _total suffix), and one more for
# DCGM_FI_DEV_PCIE_REPLAY_COUNTER (its name says counter)
lint_expected() {
	python3 - "$1" <<'PY'
import re, sys
samples, counters, seen = 0, set(), set()
for line in open(sys.argv[1]):
    m = re.match(r"# TYPE (DCGM_FI_\w+) counter$", line)
    if m:
        counters.add(m.group(1))
    m = re.match(r"(DCGM_FI_\w+)\{", line)
    if m:
        samples += 1
        seen.add(m.group(1))
fams = counters & seen
print(samples + len(fams) + ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER" in fams))
PY
}

expect_success 'promtool: the vramz_ part is clean; the DCGM part only breaks dcgm-exporter'"'"'s own conventions, as many lines as the docs say' '
	for scn in 2gpu-h200 health; do
		FAKE_NVML_SCENARIO=$SCENARIOS/$scn.scn vramz serve --once --dcgm-names --procs >m.txt &&
		grep -v "DCGM_FI_" m.txt >vramz.txt && promtool check metrics <vramz.txt &&
		{ promtool check metrics <m.txt >lint.txt 2>&1; echo $? >rc; } &&
		test "$(cat rc)" = 3 &&
		grep -v "^DCGM_FI_[A-Z_]* label names should be written in .snake_case. not .camelCase.$" lint.txt |
			grep -v "^DCGM_FI_DEV_\(TOTAL_ENERGY_CONSUMPTION\|ECC_[SD]BE_\(VOL\|AGG\)_TOTAL\|PCIE_REPLAY_COUNTER\) counter metrics should have \"_total\" suffix$" |
			grep -v "^DCGM_FI_DEV_PCIE_REPLAY_COUNTER metric name should not include type .counter.$" >other.txt || true &&
		{ ! test -s other.txt || { cat other.txt; false; }; } &&
		test "$(grep -c camelCase lint.txt)" = "$(grep -c "^DCGM_FI_[A-Z_]*{" m.txt)" &&
		echo "$scn: $(wc -l <lint.txt) lint lines, expected $(lint_expected m.txt)" &&
		test "$(wc -l <lint.txt)" = "$(lint_expected m.txt)" || exit 1
	done &&
	has "ECC_SBE_VOL_TOTAL counter" lint.txt
'

expect_success 'without --dcgm-names: no DCGM series; a GPU that fell off the bus: none for it' '
	vramz serve --once >plain.txt && hasnt "DCGM_" plain.txt &&
	{ cat "$SCENARIOS/2gpu-h200.scn"; echo "lost gpu=1 after=0"; } >lost.scn &&
	FAKE_NVML_SCENARIO=$T/lost.scn vramz serve --once --dcgm-names >m.txt &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"0\"" m.txt && hasnt "^DCGM_FI_DEV_[A-Z_]*\{gpu=\"1\"" m.txt &&
	has "^vramz_gpu_lost\{gpu=\"1\".*\} 1$" m.txt
'

expect_success 'the DCGM series are served over HTTP too, gzipped like the rest' '
	serve_start serve.log --dcgm-names &&
	wait_for scrape /metrics -f -o /dev/null &&
	scrape /metrics --compressed -o m.txt && serve_stop &&
	has "^DCGM_FI_DEV_FB_USED\{gpu=\"1\".*\} 87040$" m.txt
'

finish
