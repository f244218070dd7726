#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1560-out-of-range.sh - a driver answer out of its field's plausible range
# (lib/fields.c) is unknown, never a number: not 4294967295 % utilization,
# -1 degC, 4,294,967 W, a 4.29 PHz clock or 16384 PiB used.  GPU 1 of the
# scenario answers 0xFFFFFFFF (or a signed -1, or used above total) for
# every field; GPU 0 is sane and must stay so.  Checked in JSON, the
# table, the CSV log, the metrics, the process rows, and in a crafted log
# read back by replay and analyze.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
vramz() { timeout 30 "$VRAMZ_BIN" "$@"; }

write_scn raw.scn <<'EOF'
driver 580.159.04
nvml 13.580.159.04
cuda 13000
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=37 mem_util=5 temp=41 temp_mem=46 power=300000 power_limit=700000 sm_clock=1980 mem_clock=3201 throttle=0x0 pcie_gen=5 pcie_width=16 energy=1000
gpu 1 name="NVIDIA H200" uuid=GPU-11111111-1111-4111-8111-111111111111 pci=00000000:2A:00.0 mem_total=143771MiB mem_reserved=616MiB mem_used=0xFFFFFFFFFFFF0000 mem_raw=1 util=0xFFFFFFFF mem_util=0xFFFFFFFF temp=0xFFFFFFFF temp_mem=-1 power=0xFFFFFFFF power_limit=0xFFFFFFFF sm_clock=0xFFFFFFFF mem_clock=0xFFFFFFFF fan=0xFFFFFFFF pcie_gen=0xFFFFFFFF pcie_width=0xFFFFFFFF energy=0xFFFFFFFFFFFFFFFF throttle=0x4
proc gpu=0 pid=4200001 used=4GiB type=compute sm=12 mem=3
proc gpu=0 pid=4200002 used=0xFFFFFFFFFFFFFFFE type=compute sm=0xFFFFFFFF mem=0xFFFFFFFF
proc gpu=1 pid=4200003 used=2GiB type=compute sm=0xFFFFFFFF mem=0xFFFFFFFF
EOF

NULLS='["mem_total_bytes","mem_used_bytes","mem_free_bytes","mem_reserved_bytes","util_gpu_pct","util_mem_pct","temp_c","temp_mem_c","power_mw","power_limit_mw","clock_sm_mhz","clock_mem_mhz","fan_pct","mem_used_pct"]'

expect_success 'status --json: every out-of-range field of GPU 1 is null; GPU 0 is intact' '
	vramz status --json >s.json &&
	jassert s.json "all(d[\"gpus\"][1][k] is None for k in $NULLS)" &&
	jassert s.json "d[\"gpus\"][1][\"throttle_reasons\"] == 4" &&
	jassert s.json "d[\"gpus\"][0][\"util_gpu_pct\"] == 37 and d[\"gpus\"][0][\"temp_c\"] == 41" &&
	jassert s.json "d[\"gpus\"][0][\"temp_mem_c\"] == 46 and d[\"gpus\"][0][\"power_mw\"] == 300000" &&
	jassert s.json "d[\"gpus\"][0][\"clock_sm_mhz\"] == 1980 and d[\"gpus\"][0][\"mem_total_bytes\"] == 143771 << 20" &&
	hasnt "4294967295|18446744073709" s.json
'

expect_success 'processes: a used figure of 16 EiB and a 4294967295 % share are null' '
	vramz ps --json >p.json &&
	jassert p.json "{p[\"pid\"]: p[\"used_bytes\"] for p in d[\"processes\"]}[4200002] is None" &&
	jassert p.json "{p[\"pid\"]: p[\"used_bytes\"] for p in d[\"processes\"]}[4200001] == 4 << 30" &&
	hasnt "4294967295|18446744073709" p.json
'

expect_success 'the table shows - where the driver gave a sentinel' '
	vramz status >t.txt &&
	hasnt "4294967295|PHz|-1 ?C|-1C|4294967 ?W|16384 PiB|EiB" t.txt &&
	has "37 ?%" t.txt && has "41" t.txt
'

expect_success 'the CSV log leaves the cells empty' '
	vramz log -o l.csv --procs -i 50ms --duration 120ms 2>/dev/null &&
	python3 -c "
import csv, sys
rows = list(csv.DictReader(open(\"l.csv\")))
g1 = [r for r in rows if r[\"gpu\"] == \"1\"]
assert g1, rows
for r in g1:
    for k in (\"mem_used_bytes\", \"util_gpu_pct\", \"temp_c\", \"temp_mem_c\", \"power_mw\", \"clock_sm_mhz\", \"clock_mem_mhz\"):
        assert r[k] == \"\", (k, r[k])
g0 = [r for r in rows if r[\"gpu\"] == \"0\"]
assert g0[0][\"util_gpu_pct\"] == \"37\" and g0[0][\"temp_c\"] == \"41\", g0[0]
" &&
	hasnt "4294967295|18446744073709" l.csv && hasnt "4294967295|18446744073709" l.procs.csv
'

expect_success 'metrics: no sample for an unknown reading, GPU 0 still has its own' '
	vramz serve --once --procs >m.txt &&
	hasnt "^vramz_(utilization_gpu_ratio|temperature_celsius|memory_temperature_celsius|power_watts|clock_sm_hertz|memory_used_bytes)\{[^}]*gpu=\"1\"" m.txt &&
	has "^vramz_power_watts\{[^}]*gpu=\"0\"[^}]*\} 300" m.txt &&
	hasnt "4294967295|4\.29[0-9]*e\+?1[05]|1\.8[0-9]*e\+?19" m.txt
'

# A log as an older vramz (or a hand-edited file) could hold: used above
# total, 150 % utilization, -1 degC, a 4 PHz clock, a 300 % process share.
HDR="time,gpu,uuid,name,pci_bus_id,lost,proc_count,mem_total_bytes,mem_reserved_bytes,mem_used_bytes,mem_free_bytes,unattributed_bytes,util_gpu_pct,util_mem_pct,temp_c,temp_mem_c,power_mw,power_limit_mw,clock_sm_mhz,clock_mem_mhz"
PHDR="time,gpu,pid,used_bytes,sm_pct,mem_util_pct"

expect_success 'the log reader: out-of-range values read back unknown, the rest stays' '
	{ echo "$HDR"
	  echo "2026-11-30T01:00:00.000Z,0,GPU-a,H200,00000000:19:00.0,0,1,1000,0,18446744073709551000,0,0,150,5,-1,4294967295,4294967295,700000,4294967295,3201"
	  echo "2026-11-30T01:00:01.000Z,0,GPU-a,H200,00000000:19:00.0,0,1,1000,0,400,600,0,37,5,41,46,300000,700000,1980,3201"
	} >c.csv &&
	{ echo "$PHDR"
	  echo "2026-11-30T01:00:00.000Z,0,4200001,18446744073709551000,300,4294967295"
	  echo "2026-11-30T01:00:01.000Z,0,4200001,400,12,3"
	} >c.procs.csv &&
	vramz replay --json c.csv >r.json &&
	head -1 r.json >r1.json && sed -n 2p r.json >r2.json &&
	jassert r1.json "all(d[\"gpus\"][0][k] is None for k in [\"mem_used_bytes\",\"mem_total_bytes\",\"util_gpu_pct\",\"temp_c\",\"temp_mem_c\",\"power_mw\",\"clock_sm_mhz\"])" &&
	jassert r1.json "d[\"gpus\"][0][\"power_limit_mw\"] == 700000 and d[\"gpus\"][0][\"clock_mem_mhz\"] == 3201" &&
	jassert r1.json "d[\"processes\"][0][\"used_bytes\"] is None and d[\"processes\"][0][\"sm_pct\"] is None" &&
	jassert r2.json "d[\"gpus\"][0][\"mem_used_bytes\"] == 400 and d[\"gpus\"][0][\"temp_c\"] == 41" &&
	jassert r2.json "d[\"processes\"][0][\"used_bytes\"] == 400 and d[\"processes\"][0][\"sm_pct\"] == 12" &&
	vramz replay --fast c.csv >r.txt &&
	hasnt "4294967295|PiB|EiB|150 ?%|-1 ?C" r.txt &&
	vramz analyze c.csv >a.txt 2>&1; test $? -lt 2
'

finish
