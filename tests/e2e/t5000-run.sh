#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vramz run: peak VRAM of a command's whole process tree, exit status
# passed through, budgets, reports and their comparison.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
jobs_world

expect_success 'peak per GPU covers children, grandchildren and orphans' '
	vramz run -i 10ms --json --report r.json -- bash -c "
		holdmem 0 1GiB 0.6 &
		(holdmem 1 2GiB 0.6 &)
		sleep 0.2; holdmem 0 512MiB 0.3; wait" &&
	json r.json "[(g[\"index\"], g[\"peak_bytes\"]) for g in d[\"gpus\"]]" >peaks &&
	has "\(0, 1610612736\), \(1, 2147483648\)" peaks &&
	json r.json "d[\"peak_total_bytes\"]" >total && has "^3758096384$" total &&
	json r.json "d[\"exit_status\"], d[\"signal\"]" >st && has "^\(0, None\)$" st
'

expect_success 'memory of processes outside the command is not counted' '
	holdmem 0 7GiB 3 &
	sleep 0.3 &&
	vramz run -i 10ms --json --report r.json -- holdmem 0 1GiB 0.5 &&
	json r.json "d[\"gpus\"][0][\"peak_bytes\"]" >p && has "^1073741824$" p
'

expect_success 'the table names each GPU used, its peak and the total' '
	vramz run -i 10ms -- holdmem 1 3GiB 0.5 2>err &&
	has "^vramz run: exit 0 after" err &&
	has "^1 +GPU-11111111.* 3.00 GiB" err && hasnt "^0 +GPU-0000" err &&
	has "^total \(at once\) +3.00 GiB" err
'

expect_success 'the exit status passes through: code, 128+signal, 127' '
	test "$(rc vramz run -- sh -c "exit 7")" = 7 &&
	test "$(rc vramz run -- sh -c "kill -TERM \$\$")" = 143 &&
	test "$(rc vramz run -- /nonexistent/cmd)" = 127 &&
	vramz run -- /nonexistent/cmd 2>err; has "cannot run .*/nonexistent/cmd.*No such file" err
'

expect_success 'the command'"'"'s stdout is untouched; the report goes to stderr' '
	vramz run -- echo hello >out 2>err &&
	test "$(cat out)" = hello && has "vramz run: exit 0" err
'

expect_success '--max-vram: exit 3 when a GPU peaks above the budget' '
	test "$(rc vramz run -i 10ms --max-vram 1GiB -- holdmem 0 2GiB 0.4)" = 3 &&
	vramz run -i 10ms --max-vram 1GiB -- holdmem 0 2GiB 0.4 2>err;
	has "peak 2.00 GiB on GPU 0 exceeds --max-vram 1.00 GiB" err &&
	test "$(rc vramz run -i 10ms --max-vram 3GiB -- holdmem 0 2GiB 0.4)" = 0 &&
	test "$(rc vramz run -i 10ms --max-vram-total 3GiB -- holdmem 0 2GiB 0.4 1 2GiB)" = 3
'

expect_success 'a failing command keeps its own status over the budget' '
	test "$(rc vramz run -i 10ms --max-vram 1GiB -- bash -c "holdmem 0 2GiB 0.4; exit 5")" = 5
'

expect_success 'SIGTERM to vramz reaches the whole command group' '
	"$VRAMZ_BIN" run -- bash -c "sleep 30 & echo \$! >child; wait" 2>err &
	VZ=$! &&
	wait_for child && sleep 0.2 &&
	kill -TERM $VZ &&
	st=0; wait $VZ || st=$?;
	test $st = 143 &&
	! alive "$(cat child)"
'

expect_success '--compare prints the change per GPU and in total' '
	vramz run -i 10ms --json --report a.json -- holdmem 0 4GiB 0.4 &&
	vramz run -i 10ms --json --report b.json -- holdmem 0 2GiB 0.4 &&
	vramz run --compare a.json b.json >out &&
	has "^0 GPU-00000000.* 4.00 GiB +2.00 GiB +-2.00 GiB \(-50.0%\)" out &&
	has "^total \(at once\)" out &&
	vramz run --compare --json a.json b.json >c.json &&
	json c.json "d[\"gpus\"][0][\"change_bytes\"]" >ch && has "^-2147483648$" ch
'

expect_success '-o LOG: a standard log whose replay shows the run'"'"'s peak' '
	vramz run -i 10ms -o run.csv -- holdmem 1 3GiB 0.4 2>err &&
	has "^total \(at once\) +3.00 GiB" err &&
	head -1 run.csv >h && has "^time,gpu,uuid,name" h &&
	vramz replay --json run.csv >j &&
	python3 - <<PY
import json
t = [json.loads(l) for l in open("j")]
assert len(t) >= 3, len(t)
assert max(d["gpus"][1]["mem_used_bytes"] for d in t) == 3 << 30
assert max(d["gpus"][0]["mem_used_bytes"] for d in t) == 0
assert any(p["used_bytes"] == 3 << 30 and p["comm"] == "holdmem" for d in t for p in d["processes"])
PY
	vramz replay run.csv >out && has "^ +1 (NVIDIA )?H200 +3.00 GiB / 80.0 GiB" out
'

expect_success '-o LOG: analyze reads it; a second run appends to it' '
	vramz run -i 10ms -o run.csv -- holdmem 0 1GiB 0.3 2>/dev/null &&
	n1=$(wc -l <run.csv) &&
	vramz analyze run.csv >out && has "^run.csv: [0-9]+ ticks .*2 GPUs" out &&
	vramz run -i 10ms -o run.csv -- holdmem 0 1GiB 0.3 2>/dev/null &&
	test "$(grep -c "^time," run.csv)" = 1 && test "$(wc -l <run.csv)" -gt "$n1"
'

expect_success '-o to /dev/full or a foreign file: one line, exit 1, nothing run' '
	test "$(rc vramz run -o /dev/full -- touch ran)" = 1 && test ! -e ran &&
	{ vramz run -o /dev/full -- touch ran 2>err; true; } &&
	test "$(wc -l <err)" = 1 && has "^vramz: run: /dev/full: not a regular file, so no place for a .procs sibling" err &&
	echo "a,b" >other.csv &&
	{ vramz run -o other.csv -- touch ran 2>err; test $? = 1; } && test ! -e ran &&
	has "other.csv: exists with other columns" err && test "$(cat other.csv)" = "a,b" &&
	test "$(rc vramz run -o - -- true)" = 2
'

expect_success 'a log write failing mid-run stops the log, not the command' '
	( ulimit -f 2
	  vramz run -i 10ms -o small.csv -- sh -c "sleep 0.8; echo done >ran; exit 5" 2>err5; echo $? >rc5
	  vramz run -i 10ms -o small0.csv -- sleep 0.8 2>err0; echo $? >rc0 ) &&
	test "$(cat rc5)" = 5 && test "$(cat ran)" = done &&
	has "^vramz: run: log stopped after [0-9]+ samples: small.csv: write failed: File too large$" err5 &&
	has "^vramz run: exit 5 after" err5 &&
	test "$(cat rc0)" = 1 && has "small0.csv: write failed" err0 &&
	vramz replay --json small.csv >j && test "$(wc -l <j)" -ge 1
'

expect_success 'usage errors name the problem' '
	test "$(rc vramz run)" = 2 &&
	vramz run 2>err; has "no command given" err &&
	test "$(rc vramz run --compare a.json)" = 2 &&
	echo "{}" >x.json && test "$(rc vramz run --compare x.json x.json)" = 1 &&
	vramz run --compare x.json x.json 2>err; has "not a .vramz run --json. report" err
'

expect_success 'run --compare reads at most 16 MiB a file: /dev/zero is refused, not swallowed' '
	{ [ "${VRAMZ_SANITIZE:-0}" = 1 ] || ulimit -v 1048576; } &&
	{ timeout 60 "$VRAMZ_BIN" run --compare /dev/zero /dev/zero 2>err && r=0 || r=$?; } &&
	test "$r" = 1 &&
	has "^vramz: run: /dev/zero: larger than 16 MiB, not a .vramz run --json. report$" err
'

finish
