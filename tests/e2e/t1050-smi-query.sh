#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1050-smi-query.sh - nvidia-smi's query interface, byte for byte
# (docs/smi.md): on the fake of tests/scenarios/h100-smi.scn, whose figures
# are those of the H100 nvidia-smi 580.159.04 was read from, vramz prints
# what nvidia-smi printed there (tests/smi/): the same header and row, the
# same for the apps, noheader and nounits as nvidia-smi has them, [N/A],
# aliases printing the canonical name, every name nvidia-smi knows either
# answered or refused by name, and -l / -lms repeating rows, not headers.
. "$TESTS_SRC/e2e/lib.sh"
S=$TESTS_SRC/smi
# the process of the row: a real one whose argv[0] is python3, as
# nvidia-smi's 966 was (its pid differs: the one thing that cannot equal)
bash -c 'exec -a python3 sleep 300' & PY=$!
trap 'kill $PY 2>/dev/null; rm -rf "$T"' EXIT
export SMI_PID=$PY VRAMZ_NO_DAEMON=1 TZ=UTC
scenario h100-smi.scn
Q=index,uuid,pci.bus_id,memory.total,memory.reserved,memory.used,memory.free,temperature.gpu,power.draw,power.limit,enforced.power.limit,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.memory,persistence_mode,ecc.mode.current,mig.mode.current,utilization.gpu
export Q S

expect_success 'the H100 row: header and values equal nvidia-smi'"'"'s to the byte' '
	vramz status --query-gpu=$Q --format=csv >out 2>err &&
	cmp out "$S/h100-query.csv" && test ! -s err &&
	vramz status --query-gpu=$Q >nofmt && cmp nofmt "$S/h100-query.csv" # csv without --format, as nvidia-smi
'

expect_success 'noheader drops the header; nounits the values'"'"' units, not the header'"'"'s (as nvidia-smi)' '
	# nvidia-smi itself: csv and csv,nounits have the same header
	sed -n "/^== csv$/{n;p}" "$S/cases.txt" >h1 && sed -n "/^== csv,nounits$/{n;p}" "$S/cases.txt" >h2 &&
	cmp h1 h2 && cmp h1 <(head -1 "$S/h100-query.csv") &&
	vramz status --query-gpu=$Q --format=csv,noheader >nh &&
	cmp nh <(tail -n +2 "$S/h100-query.csv") &&
	vramz status --query-gpu=$Q --format=csv,nounits >nu &&
	cmp <(head -1 nu) h1 &&
	tail -n +2 "$S/h100-query.csv" | sed "s/ \(MiB\|W\|MHz\|%\)\(,\|$\)/\2/g" >want &&
	cmp <(tail -n +2 nu) want &&
	vramz status --query-gpu=$Q --format=csv,noheader,nounits >both && cmp both want
'

expect_success 'apps: pid, process_name, used_gpu_memory as nvidia-smi'"'"'s, and the GPU'"'"'s names' '
	vramz ps --query-compute-apps=pid,process_name,used_gpu_memory --format=csv >a &&
	sed "s/^966,/$SMI_PID,/" "$S/h100-apps.csv" >want && cmp a want &&
	vramz ps --query-compute-apps=pid,name,used_memory --format=csv,nounits >b &&
	has "^pid, process_name, used_gpu_memory \[MiB\]$" b && has "^$SMI_PID, python3, 10890$" b &&
	vramz ps --query-compute-apps=gpu_uuid,gpu_bus_id,gpu_name,gpu_serial --format=csv,noheader >g &&
	test "$(cat g)" = "GPU-71805b6f-2c4e-8a1d-3f52-9b0e6d47c3a1, 00000000:00:06.0, NVIDIA H100 80GB HBM3, 1650924056433" &&
	# headers as nvidia-smi prints each name alone
	for n in $(cut -f1 "$S/each-app.tsv"); do
		vramz ps --query-compute-apps=$n | head -1 >h &&
		test "$(cat h)" = "$(awk -F"\t" -v n=$n "\$1 == n {print \$3}" "$S/each-app.tsv")" ||
			{ echo "header of $n: $(cat h)"; exit 1; }
	done
'

expect_success 'every name vramz answers has nvidia-smi'"'"'s header; each of its names is answered or refused by name' '
	vramz status --help-query-gpu >help &&
	sed -n "/^answered by vramz:/,/^nvidia-smi/p" help | sed -n "s/^  \([^ ]*\).*/\1/p" >answered &&
	test "$(wc -l <answered)" -ge 60 &&
	for n in $(cat answered); do
		vramz status --query-gpu=$n >o 2>e && test "$(wc -l <o)" = 2 || { echo "$n: $(cat e)"; exit 1; }
		want=$(awk -F"\t" -v n=$n "\$1 == n {print \$3}" "$S/each-gpu.tsv")
		test "$(head -1 o)" = "$want" || { echo "$n: header $(head -1 o), nvidia-smi $want"; exit 1; }
	done &&
	# every name and alias of --help-query-gpu (not the compute_mode legend)
	grep "^\"" "$S/help-query-gpu.txt" | grep -v "^\"[0-9]:" | sed "s/\" or \"/ /g; s/\"//g" | tr " " "\n" >names &&
	test "$(wc -l <names)" -ge 200 &&
	for n in $(cat names); do
		if grep -qx -- "$n" answered; then continue; fi
		vramz status --query-gpu=$n >o 2>e; r=$?
		test $r = 0 -o $r = 2 || { echo "$n: exit $r"; exit 1; }
		test $r = 0 || grep -q "'"'"'$n'"'"' is nvidia-smi'"'"'s but vramz does not read it" e ||
			{ echo "$n: $(cat e)"; exit 1; }
	done
'

expect_success 'values of names the fake answers as the H100 did (its idle capture)' '
	for n in driver_version count name serial pci.bus_id pci.domain pci.bus pci.device vbios_version \
		compute_cap memory.total memory.reserved persistence_mode ecc.mode.current ecc.mode.pending \
		mig.mode.current mig.mode.pending power.limit enforced.power.limit power.default_limit \
		power.min_limit power.max_limit clocks.max.sm clocks.max.memory clocks.current.memory \
		pcie.link.gen.current pcie.link.width.current pcie.link.gen.max pcie.link.width.max \
		fan.speed retired_pages.single_bit_ecc.count retired_pages.double_bit.count retired_pages.pending \
		remapped_rows.correctable remapped_rows.uncorrectable remapped_rows.pending remapped_rows.failure \
		ecc.errors.corrected.volatile.total ecc.errors.uncorrected.aggregate.total \
		clocks_event_reasons.active clocks_event_reasons.gpu_idle clocks_event_reasons.sw_power_cap; do
		got=$(vramz status --query-gpu=$n --format=csv,noheader)
		want=$(awk -F"\t" -v n=$n "\$1 == n {print \$4}" "$S/each-gpu.tsv")
		test "$got" = "$want" || { echo "$n: vramz $got, nvidia-smi $want"; exit 1; }
	done
'

expect_success '[N/A] for what the GPU does not report, units or not' '
	vramz status --query-gpu=index,fan.speed,retired_pages.pending,utilization.gpu --format=csv >o &&
	test "$(cat o)" = "$(printf "index, fan.speed [%%], retired_pages.pending, utilization.gpu [%%]\n0, [N/A], [N/A], 14 %%")" &&
	vramz status --query-gpu=fan.speed --format=csv,noheader,nounits >n && test "$(cat n)" = "[N/A]"
'

expect_success 'MiB rounded up, as nvidia-smi: a live H100'"'"'s 1550.5 MiB used, 79528.5 MiB free' '
	# docs/validation.md (issue 38 on a real GPU): nvidia-smi printed 1551
	# and 79529 where NVML said 1550.5 and 79528.5 MiB; the total and the
	# reserved stay whole
	sed "s/mem_used=14513MiB mem_free=66567MiB/mem_used=1625817088 mem_free=83391676416/" \
		"$SCENARIOS/h100-smi.scn" >half.scn &&
	FAKE_NVML_SCENARIO=$T/half.scn vramz status --query-gpu=memory.total,memory.reserved,memory.used,memory.free \
		--format=csv,noheader >o &&
	test "$(cat o)" = "81559 MiB, 480 MiB, 1551 MiB, 79529 MiB"
'

expect_success 'aliases: taken, the header prints the canonical name' '
	vramz status --query-gpu=clocks.sm,clocks.mem,gpu_name,gpu_bus_id,gpu.power.current_limit,clocks_throttle_reasons.active,retired_pages.sbe >o &&
	test "$(head -1 o)" = "clocks.current.sm [MHz], clocks.current.memory [MHz], name, pci.bus_id, enforced.power.limit [W], clocks_event_reasons.active, retired_pages.single_bit_ecc.count" &&
	test "$(tail -1 o)" = "1980 MHz, 2619 MHz, NVIDIA H100 80GB HBM3, 00000000:00:06.0, 700.00 W, 0x0000000000000001, [N/A]"
'

expect_success 'an unknown name, a name vramz does not read, a bad format: exit 2, one line naming it, nothing on stdout' '
	vramz status --query-gpu=index,bogus.name >o 2>e; test $? = 2 && test ! -s o &&
	test "$(wc -l <e)" = 1 && has "'"'"'bogus\.name'"'"' is not a valid field to query" e &&
	grep -q "is not a valid field" <(sed -n "/^== unknown$/,/^rc=/p" "$S/cases.txt") &&
	vramz status --query-gpu="index, memory.used" >o 2>e; test $? = 2 && has "'"'"' memory\.used'"'"' is not a valid" e &&
	vramz status --query-gpu=index,pstate >o 2>e; test $? = 2 && test ! -s o && test "$(wc -l <e)" = 1 &&
	has "'"'"'pstate'"'"' is nvidia-smi'"'"'s but vramz does not read it" e &&
	vramz ps --query-compute-apps=pid,bogus >o 2>e; test $? = 2 && has "'"'"'bogus'"'"' is not a valid" e &&
	vramz status --query-gpu=index --format=csv,bogus >o 2>e; test $? = 2 && has "bad --format" e
'

expect_success 'timestamp: nvidia-smi'"'"'s local-time form with milliseconds' '
	vramz status --query-gpu=timestamp,index --format=csv >o &&
	test "$(head -1 o)" = "timestamp, index" &&
	has "^$(date +%Y/%m/%d) [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}, 0$" o &&
	sed -n "/^== timestamp$/{n;n;p}" "$S/cases.txt" | grep -qE "^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}, 0$"
'

expect_success '-i/--id selects as -g does' '
	vramz status --query-gpu=index,uuid -i 0 >a && vramz status --query-gpu=index,uuid --id=GPU-71805b6f >b &&
	vramz status --query-gpu=index,uuid -g 0 >c && cmp a c && cmp b c &&
	vramz status --query-gpu=index -i 7 >o 2>e; test $? = 2 && test "$(wc -l <e)" = 1
'

# SIGTERM to vramz alone (--foreground), not to timeout's whole group: in
# CI's ASan build a group-wide TERM once left the run waiting until ctest's
# 300 s limit; -k 20 turns any such wait into a failure with its exit code
expect_success '-l SEC and -lms MS: a row each interval, the header once (as nvidia-smi), until SIGTERM' '
	timeout --foreground -k 20 2.5 "$VRAMZ_BIN" status --query-gpu=timestamp,index -l 1 >l; test $? = 124 &&
	test "$(grep -c "^timestamp, index$" l)" = 1 && test "$(grep -c ", 0$" l)" -ge 2 &&
	timeout --foreground -k 20 1 "$VRAMZ_BIN" status --query-gpu=index -lms 300 >m; test $? = 124 &&
	test "$(head -1 m)" = index && test "$(grep -c "^0$" m)" -ge 3 &&
	timeout --foreground -k 20 1 "$VRAMZ_BIN" status --query-gpu=index --loop-ms=300 --format=csv,noheader >n; test $? = 124 &&
	test "$(grep -c "^0$" n)" -ge 3 && test "$(grep -vc "^0$" n)" = 0 &&
	timeout --foreground -k 20 2.5 "$VRAMZ_BIN" ps --query-compute-apps=pid -l 1 >p; test $? = 124 &&
	test "$(grep -c "^pid$" p)" = 1 && test "$(grep -c "^$SMI_PID$" p)" -ge 2 &&
	# nvidia-smi'"'"'s own: the header once with -l and with -lms
	sed -n "/^== -l 1 for 2.5 s$/,/^rc=/p" "$S/cases.txt" | grep -c "^timestamp, index$" | grep -qx 1 &&
	sed -n "/^== -lms 300 for 1 s$/,/^rc=/p" "$S/cases.txt" | grep -c "^index$" | grep -qx 1
'

expect_success 'docs/smi.md lists the names --help-query-gpu and --help-query-compute-apps answer' '
	D=$TESTS_SRC/../docs/smi.md &&
	sed -n "/smi-names: gpu -->/,/smi-names: end -->/p" "$D" | sed 1,2d | head -n -2 >doc &&
	vramz status --help-query-gpu | sed -n "/^answered by vramz:/,/^nvidia-smi/p" | sed "1d;\$d; s/^  //" >help &&
	cmp doc help &&
	sed -n "/smi-names: apps -->/,/smi-names: end -->/p" "$D" | sed 1,2d | head -n -2 >adoc &&
	vramz ps --help-query-compute-apps | sed "1,2d; s/^  //" >ahelp && cmp adoc ahelp &&
	n=$(vramz status --help-query-gpu | sed -n "/^nvidia-smi/,\$p" | tail -n +2 | wc -l) &&
	has "^$n of nvidia-smi 580.s $((n + $(wc -l <help))) " "$D"
'

finish
