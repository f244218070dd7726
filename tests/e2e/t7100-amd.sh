#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# AMD GPUs (issue 19): the amdgpu backend on fixture trees written from the
# kernel's amdgpu sysfs and DRM usage-stats documentation
# (tests/helpers/amd-fixture), through VRAMZ_SYSFS_ROOT / VRAMZ_PROCFS_ROOT:
# an 8 x MI300X server, a Radeon desktop with a display, garbage files, and
# a mixed box where the fake NVML's H200 and the Radeon are one list.
. "$TESTS_SRC/e2e/lib.sh"
FIX="$TESTS_SRC/helpers/amd-fixture"
NV_LIBS=$LD_LIBRARY_PATH
# AMD alone: NVML is not on the library path, so it is skipped quietly
amd() { LD_LIBRARY_PATH= VRAMZ_SYSFS_ROOT="$T/$1/sys" VRAMZ_PROCFS_ROOT="$T/$1/proc" "$VRAMZ_BIN" "${@:2}"; }
bash "$FIX" mi300x "$T/mi" && bash "$FIX" radeon "$T/rx" && bash "$FIX" broken "$T/bad" || exit 1

expect_success 'mi300x: eight GPUs, the amdgpu driver, junction temperature' '
	amd mi status >out &&
	has "amdgpu driver 6\.8\.0-45-generic +8 of 8 GPUs" out &&
	test "$(grep -c "AMD Instinct MI300X" out)" = 8 &&
	has "^ +0 AMD Instinct MI300X.* 60\.0 GiB / 192\.0 GiB .* 97% +50C +300 / 750 W" out &&
	hasnt "NVML|CUDA" out
'

expect_success 'mi300x --json: vendor, memory, sensors; unknowns are null' '
	amd mi status --json >s.json &&
	json s.json "sorted(set(g[\"vendor\"] for g in d[\"gpus\"]))" >v && has "^\[.amd.\]$" v &&
	json s.json "[(g[\"mem_used_bytes\"], g[\"temp_c\"], g[\"temp_mem_c\"], g[\"clock_sm_mhz\"], g[\"mem_reserved_bytes\"]) for g in d[\"gpus\"]][0]" >g0 &&
	has "^\(64424509440, 50, 40, 1420, None\)$" g0
'

expect_success 'mi300x processes: one client counted once, two clients summed, others ignored' '
	amd mi ps --json >p.json &&
	json p.json "sorted((p[\"pid\"], p[\"gpu\"], p[\"used_bytes\"] >> 30, p[\"sm_pct\"]) for p in d[\"processes\"])" >procs &&
	has "^\[\(4101, 0, 40, None\), \(4101, 1, 20, None\), \(4102, 2, 18, None\), \(4103, 3, 8, None\)\]$" procs &&
	amd mi ps >ps.out && has "python3 train.py --rank 0" ps.out && hasnt "glxgears|weird" ps.out
'

expect_success 'mi300x -g: indices, UUID prefixes, PCI bus ids' '
	amd mi status -g AMD-5a1d0000c0de0003 --json >a.json &&
	json a.json "[g[\"index\"] for g in d[\"gpus\"]]" >i && has "^\[3\]$" i &&
	amd mi status -g 9f:00.0,6-7 --json >b.json &&
	json b.json "[g[\"index\"] for g in d[\"gpus\"]]" >i && has "^\[4, 6, 7\]$" i &&
	test "$(rc amd mi status -g 8)" = 2
'

expect_success 'mi300x info: memory type and bus width from the table, PCIe, limits' '
	amd mi info -g 0 >info &&
	has "^amdgpu driver 6\.8\.0-45-generic$" info &&
	has "Memory type +HBM3$" info && has "Memory bus width +8192 bit" info &&
	has "PCIe link +Gen5 x16 \(max Gen5 x16\)" info &&
	has "Architecture +CDNA 3" info && has "UUID +AMD-5a1d0000c0de0000" info
'

expect_success 'mi300x: topology from NUMA nodes, pick the freest, serve with a vendor label' '
	amd mi topo >topo && has "NODE" topo && has "SYS" topo &&
	amd mi pick -n 2 >pick && has "^CUDA_VISIBLE_DEVICES=AMD-5a1d0000c0de000[4-7],AMD-5a1d0000c0de000[4-7]$" pick &&
	{ ! amd mi serve -h >/dev/null 2>&1 || {
		amd mi serve --once >m.txt &&
		has "^vramz_gpu_info\{.*vendor=\"amd\"" m.txt &&
		has "^vramz_memory_used_bytes\{gpu=\"0\"[^}]*\} 64424509440" m.txt; }; }
'

expect_success 'radeon desktop: connectors and the Intel iGPU are not GPUs; name from the device id' '
	amd rx status --json >r.json &&
	json r.json "[(g[\"name\"], g[\"pci_bus_id\"], g[\"temp_c\"], g[\"power_mw\"], g[\"power_limit_mw\"]) for g in d[\"gpus\"]]" >g &&
	has "^\[\(.AMD Radeon RX 7900 XTX / XT., .0000:03:00\.0., 41, 45000, 327000\)\]$" g &&
	amd rx ps --json >rp.json &&
	json rp.json "sorted((p[\"pid\"], p[\"used_bytes\"] >> 20) for p in d[\"processes\"])" >p &&
	has "^\[\(5001, 512\), \(5002, 1024\)\]$" p
'

expect_success 'engine share between samples: a client busy about half the time' '
	{ for i in $(seq 25); do
		sed -i "s/^drm-engine-gfx:.*/drm-engine-gfx:\t$((20000000000 + i * 100000000)) ns/" "$T/rx/proc/5002/fdinfo/20"
		sleep 0.2
	  done; } &
	amd rx log --procs -i 250ms --duration 4s -o l.csv 2>/dev/null && wait &&
	awk -F, "\$4 == 5002 && \$12 != \"\" && \$12 + 0 >= 15 && \$12 + 0 <= 100 { n++ } END { exit !(n >= 3) }" l.procs.csv &&
	awk -F, "\$4 == 5001 && \$12 != \"\" && \$12 + 0 > 0 { bad++ } END { exit bad > 0 }" l.procs.csv
'

expect_success 'garbage in every file: unknown fields, no crash, no made-up number' '
	amd bad status --json >b.json &&
	json b.json "[(g[\"mem_used_bytes\"], g[\"util_gpu_pct\"], g[\"temp_c\"], g[\"clock_sm_mhz\"]) for g in d[\"gpus\"]]" >g &&
	has "^\[\(None, None, None, None\)\]$" g &&
	amd bad info >/dev/null && amd bad ps >/dev/null
'

expect_success 'no amdgpu and no NVML: a clear error, exit 1' '
	mkdir -p empty/sys/class/drm &&
	LD_LIBRARY_PATH= VRAMZ_SYSFS_ROOT=$T/empty/sys "$VRAMZ_BIN" status >out 2>err; test $? = 1 &&
	has "no GPU|not found" err
'

expect_success 'mixed box: the fake NVML'"'"'s H200 and the Radeon in one list' '
	export FAKE_NVML_SCENARIO=$SCENARIOS/1gpu.scn &&
	mix() { LD_LIBRARY_PATH=$NV_LIBS VRAMZ_SYSFS_ROOT=$T/rx/sys VRAMZ_PROCFS_ROOT=$T/rx/proc "$VRAMZ_BIN" "$@"; } &&
	mix status --json >m.json &&
	json m.json "[(g[\"index\"], g[\"vendor\"]) for g in d[\"gpus\"]]" >g &&
	has "^\[\(0, .nvidia.\), \(1, .amd.\)\]$" g &&
	mix status >out && has "driver [0-9.]+ +CUDA [0-9.-]+ +amdgpu driver 6\.8\.0-45-generic +2 of 2 GPUs" out &&
	mix status -g 1 --json >one.json &&
	json one.json "[g[\"name\"] for g in d[\"gpus\"]]" >n && has "Radeon" n &&
	mix log -i 100ms --duration 300ms -o mixed.csv 2>/dev/null &&
	cut -d, -f2 mixed.csv | sort -u | tr "\n" " " >gpus && has "^0 1 gpu $" gpus &&
	mix analyze mixed.csv >a.out; test $? -le 3
'

expect_success 'mixed box serve: each GPU labelled with its own driver' '
	{ ! "$VRAMZ_BIN" serve -h >/dev/null 2>&1 || {
		LD_LIBRARY_PATH=$NV_LIBS FAKE_NVML_SCENARIO=$SCENARIOS/1gpu.scn VRAMZ_SYSFS_ROOT=$T/rx/sys \
			VRAMZ_PROCFS_ROOT=$T/rx/proc "$VRAMZ_BIN" serve --once >m.txt &&
		has "^vramz_gpu_info\{gpu=\"0\".*vendor=\"nvidia\",driver=\"[0-9.]+\"\} 1$" m.txt &&
		has "^vramz_gpu_info\{gpu=\"1\".*vendor=\"amd\",driver=\"6\.8\.0-45-generic\"\} 1$" m.txt; }; }
'

expect_success 'mixed box behind a daemon: no GPU labelled with another vendor'"'"'s driver' '
	{ ! "$VRAMZ_BIN" serve -h >/dev/null 2>&1 || {
		export LD_LIBRARY_PATH=$NV_LIBS FAKE_NVML_SCENARIO=$SCENARIOS/1gpu.scn VRAMZ_SYSFS_ROOT=$T/rx/sys \
			VRAMZ_PROCFS_ROOT=$T/rx/proc VRAMZ_RUNTIME_DIR=$T/run &&
		{ "$VRAMZ_BIN" daemon -i 200ms --procs 2>daemon.err & echo $! >daemon.pid; } &&
		ok=0 && for _ in $(seq 50); do
			"$VRAMZ_BIN" status >st 2>&1 || true
			grep -q "from vramz daemon" st && { ok=1; break; }
			sleep 0.1
		done &&
		{ [ $ok = 1 ] && "$VRAMZ_BIN" serve --once >m.txt 2>serve.err; r=$?; } ;
		kill -TERM "$(cat daemon.pid)" && wait "$(cat daemon.pid)";
		[ $ok = 1 ] || { cat st daemon.err; false; } &&
		test "$r" = 0 &&
		has "^vramz_gpu_info\{gpu=\"1\".*vendor=\"amd\"" m.txt &&
		hasnt "^vramz_gpu_info\{gpu=\"1\".*driver=\"5" m.txt; }; }
'

finish
