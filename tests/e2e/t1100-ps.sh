#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1100-ps.sh - `vramz ps`: processes per GPU, sorted and filtered; a pid
# this machine can see shows its user and command, one it cannot is marked
# so, never given a guessed name.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

expect_success 'default: every process, biggest first' '
	vramz ps >out &&
	has "^GPU +PID +USER +CONTAINER/JOB +VRAM +SM% +COMMAND$" out &&
	grep -E "^  [01]  42" out | awk "{print \$1, \$2}" >rows &&
	printf "1 4200301\n0 4200301\n1 4200201\n0 4200101\n" >want && cmp rows want &&
	has "^  1  4200301 \? +\? +63\.0 GiB +58  \(not visible here" out
'

expect_success 'sort keys and reverse' '
	vramz ps -s pid | grep -E "^  [01]  42" | awk "{print \$2}" | tr "\n" " " >a &&
	test "$(cat a)" = "4200101 4200201 4200301 4200301 " &&
	vramz ps --sort=sm | grep -E "^  [01]  42" | awk "{print \$7}" | tr "\n" " " >b &&
	test "$(cat b)" = "58 55 40 12 " &&
	vramz ps -s gpu -r | grep -E "^  [01]  42" | awk "{print \$1}" | tr "\n" " " >c &&
	test "$(cat c)" = "1 1 0 0 " &&
	vramz ps -s vram -r | grep -E "^  [01]  42" | awk "{print \$2}" | head -1 | grep -qx 4200101
'

expect_success 'filters: --min, --user, -g' '
	vramz ps -m 20GiB >out && test "$(grep -cE "^  [01]  42" out)" -eq 3 && hasnt 4200101 out &&
	vramz ps --min=1TiB >out && has "no process holds GPU memory that matches the filters" out &&
	vramz ps -u nobody >out && has "that matches the filters" out &&
	vramz ps -g 1 >out && test "$(grep -cE "^  1  42" out)" -eq 2 && hasnt "^  0  " out
'

expect_success 'json: the filtered, sorted rows' '
	vramz ps --json -m 20GiB -s pid >j &&
	jassert j "d[\"schema\"] == 1 and \"gpus\" not in d" &&
	jassert j "[(p[\"pid\"], p[\"gpu\"]) for p in d[\"processes\"]] == [(4200201, 1), (4200301, 0), (4200301, 1)]" &&
	jassert j "all(set(p) >= {\"gpu\",\"gpu_uuid\",\"pid\",\"visible\",\"type\",\"used_bytes\",\"sm_pct\",\"mem_util_pct\",\"user\",\"uid\",\"command\",\"comm\",\"ppid\",\"pgid\",\"ns_pid\",\"start_time_ticks\",\"container\",\"pod_uid\",\"slurm_job\"} for p in d[\"processes\"])" &&
	jassert j "d[\"processes\"][0][\"gpu_uuid\"] == \"GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48\" and d[\"processes\"][0][\"mem_util_pct\"] == 18"
'

expect_success 'ps --csv: the table'"'"'s rows (filters and order too) as the process log'"'"'s columns' '
	vramz ps --csv >c &&
	test "$(head -1 c)" = "gpu,pid,user,used_bytes,sm_pct,command" &&
	tail -n +2 c | cut -d, -f1,2,4,5 >rows &&
	printf "1,4200301,67645734912,58\n0,4200301,65498251264,55\n1,4200201,23622320128,40\n0,4200101,10737418240,12\n" >want &&
	cmp rows want &&
	vramz ps --csv --no-header -m 20GiB -s pid --fields pid,gpu,type,mem_util_pct >f &&
	test "$(cat f)" = "$(printf "4200201,1,compute,18\n4200301,0,compute,20\n4200301,1,compute,21")" &&
	vramz ps --fields help | awk "NR > 1 {print \$1}" >fields &&
	vramz log --procs --duration 1s -i 500ms -o l.csv &&
	head -1 l.procs.csv | tr , "\n" >cols && cmp fields cols
'

# nvidia-smi's own text: t1050-smi-query.sh; here its names on this machine
expect_success 'ps --query-compute-apps: nvidia-smi'"'"'s names and text; --csv --units: vramz'"'"'s' '
	vramz ps --query-compute-apps=pid,used_memory,gpu_uuid --format=csv -s vram >q &&
	has "^pid, used_gpu_memory \[MiB\], gpu_uuid$" q &&
	has "^4200301, 64512 MiB, GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48$" q &&
	vramz ps --query-compute-apps=pid,used_gpu_memory --format=csv,noheader,nounits -s pid >n &&
	has "^4200101, 10240$" n && test "$(wc -l <n)" = 4 &&
	vramz ps --csv --units --fields gpu,used_bytes,sm_pct -s pid >u &&
	has "^gpu,used \[MiB\],sm \[%\]$" u && has "^0,10240 MiB,12 %$" u &&
	usage_err "go with --csv" ps --fields pid &&
	usage_err "not both" ps --csv --json &&
	usage_err "unknown field '"'"'nope'"'"' (vramz ps --fields help lists them)" ps --csv --fields pid,nope &&
	usage_err "'"'"'type'"'"' is not a valid field to query" ps --query-compute-apps=pid,type
'

expect_success 'ps: a visible process by its name (process_name, argv[0]) and command' '
	write_scn self.scn <<-EOS &&
	gpu 0 name="NVIDIA H200" uuid=GPU-c0a1e902-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB
	proc gpu=0 pid=self used=512MiB type=graphics
	EOS
	vramz ps --query-compute-apps=process_name,used_memory --format=csv,noheader >out &&
	test "$(cat out)" = "$VRAMZ_BIN, 512 MiB" &&
	vramz ps --csv --no-header --fields comm,user >c && test "$(cat c)" = "vramz,$(id -un)" &&
	vramz ps --csv --no-header --fields command >cmd && has "^[^,]*vramz ps --csv --no-header --fields command$" cmd
'

expect_success 'bad sort key, bad size, stray argument: exit 2, one line' '
	usage_err "'"'"'size'"'"'" ps -s size &&
	usage_err "'"'"'lots'"'"'" ps -m lots &&
	usage_err "-m needs a value" ps -m &&
	usage_err "'"'"'--colour'"'"'" ps --colour &&
	usage_err "'"'"'x'"'"'" ps x
'

expect_success 'a process visible here: its user and command' '
	sleep 300 & SLEEP_PID=$! && export SLEEP_PID &&
	write_scn vis.scn <<-EOS &&
	driver 580.159.04
	gpu 0 name="NVIDIA H200" uuid=GPU-c0a1e900-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB mem_reserved=616MiB
	proc gpu=0 pid=env:SLEEP_PID used=3GiB type=compute sm=25
	proc gpu=0 pid=4199999 used=1GiB type=compute sm=5
	EOS
	vramz ps >out; vramz ps --json >j; vramz ps -u "$(id -un)" >mine; kill $SLEEP_PID &&
	has "^  0 +$SLEEP_PID $(id -un | cut -c1-10) .* 3\.00 GiB +25  sleep 300$" out &&
	has "^  0  4199999 \? +\? +1\.00 GiB +5  \(not visible here: other PID namespace or exited\)$" out &&
	jassert j "[p[\"visible\"] for p in d[\"processes\"]] == [True, False]" &&
	jassert j "d[\"processes\"][0][\"command\"] == \"sleep 300\" and d[\"processes\"][0][\"comm\"] == \"sleep\"" &&
	jassert j "d[\"processes\"][0][\"user\"] == \"$(id -un)\" and d[\"processes\"][0][\"uid\"] == $(id -u)" &&
	jassert j "d[\"processes\"][0][\"pid\"] == $SLEEP_PID and isinstance(d[\"processes\"][0][\"start_time_ticks\"], int)" &&
	jassert j "d[\"processes\"][1][\"user\"] is None and d[\"processes\"][1][\"command\"] is None" &&
	test "$(grep -cE "^  0 " mine)" -eq 1 && has "sleep 300" mine
'

expect_success 'pid=self: vramz finds itself' '
	write_scn self.scn <<-EOS &&
	gpu 0 name="NVIDIA H200" uuid=GPU-c0a1e901-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB
	proc gpu=0 pid=self used=512MiB type=graphics
	EOS
	vramz ps --wide >out &&
	has "^  0 +[0-9]+ $(id -un | cut -c1-10) .* 512 MiB +0  .*vramz ps --wide$" out
'

expect_success 'merged lists: one row per process and GPU, unknown memory as -' '
	scenario core-merge.scn && vramz ps --json >j &&
	jassert j "len(d[\"processes\"]) == 5" &&
	jassert j "[p[\"type\"] for p in d[\"processes\"] if p[\"pid\"] == 4600001] == [[\"compute\", \"graphics\"]]" &&
	jassert j "[p[\"type\"] for p in d[\"processes\"] if p[\"pid\"] == 4600003] == [[\"mps\"]]" &&
	jassert j "[p[\"used_bytes\"] for p in d[\"processes\"] if p[\"pid\"] == 4600012] == [None]" &&
	jassert j "[p[\"sm_pct\"] for p in d[\"processes\"] if p[\"gpu\"] == 1] == [0, 0]" &&
	vramz ps -s pid >out && has "^  1  4600012 .* +- +0  " out
'

expect_success 'two hundred processes on one GPU' '
	scenario core-200procs.scn && vramz ps --json >j &&
	jassert j "len(d[\"processes\"]) == 200 and len({p[\"pid\"] for p in d[\"processes\"]}) == 200" &&
	jassert j "sum(p[\"used_bytes\"] for p in d[\"processes\"]) == 200 * 100 * 2**20" &&
	vramz ps >out && test "$(grep -cE "^  0  47" out)" -eq 200
'

expect_success 'ps -h' '
	vramz ps -h >out && has "^usage: vramz ps" out &&
	for o in --gpus --json --sort --reverse --user --min --wide; do has "$o" out || exit 1; done
'

finish
