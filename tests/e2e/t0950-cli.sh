#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t0950-cli.sh - the command table and the CLI corners a user runs into:
# one table behind vramz -h, help CMD and dispatch; `vramz --json` on a
# terminal is status's JSON (not top's "unknown option"); run and fit stop
# at the command; run --json pipes; pick --empty / --max-util / --lock and
# its finding warning; the same JSON envelope from every --json command;
# script mode (status --csv, --fields, --units, -l); did you mean; bare
# percentages; --color.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn
cmds() { vramz -h | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 {print $1}'; }

expect_success 'vramz -h lists every command once, help CMD is CMD -h, exit code 3' '
	vramz -h >h &&
	has "3 a finding or a budget exceeded" h &&
	cmds >names && test "$(wc -l <names)" -ge 14 &&
	test "$(sort names | uniq -d | wc -l)" = 0 &&
	for c in $(cat names); do
		[ "$c" = help ] && continue
		vramz $c -h >a && vramz help $c >b && cmp a b &&
		has "^usage: vramz $c" a || exit 1
	done &&
	vramz help >c && cmp h c
'

expect_success 'a command this build left out says what it needs (exit 1), a typo exit 2' '
	for c in top serve; do
		vramz -h | grep -q "^  $c " && continue
		fails_with 1 "needs" $c || exit 1
	done &&
	fails_with 2 "'"'"'tpo'"'"' is not a command; did you mean '"'"'topo'"'"' or '"'"'top'"'"'?" tpo
'

# A typo earns the nearest name (Damerau-Levenshtein 2 at most: a swap of
# two neighbours is one), and a typo made without a command is the user's,
# not the default command's ("status: unknown option").
expect_success 'did you mean: commands, options, fields; a top-level typo said as such' '
	fails_with 2 "vramz: '"'"'statsu'"'"' is not a command; did you mean '"'"'status'"'"'?" statsu &&
	fails_with 2 "did you mean '"'"'status'"'"'?" help statsu &&
	fails_with 2 "vramz: '"'"'xyzzy'"'"' is not a command (see vramz -h)" xyzzy &&
	fails_with 2 "vramz: status: unknown option '"'"'--jsn'"'"'; did you mean '"'"'--json'"'"'?" status --jsn &&
	fails_with 2 "did you mean '"'"'--reverse'"'"'?" ps --revrese &&
	fails_with 2 "did you mean '"'"'--max-util'"'"'?" pick --max-utl 10 &&
	fails_with 2 "unknown option '"'"'--zz'"'"' (see vramz ps -h)" ps --zz &&
	fails_with 2 "vramz: unknown option '"'"'--jsn'"'"'; did you mean '"'"'--json'"'"'?" --jsn &&
	hasnt "status:" .fw.err &&
	fails_with 2 "vramz: '"'"'statsu'"'"' is not a command; did you mean '"'"'status'"'"'?" -g0 statsu &&
	fails_with 2 "vramz: '"'"'ps'"'"' is a command: it goes first (vramz ps [OPTIONS])" --json ps &&
	fails_with 2 "unknown option '"'"'--statsu'"'"'; did you mean the command '"'"'status'"'"'?" --statsu &&
	fails_with 2 "unknown field '"'"'mem_usd_bytes'"'"'; did you mean '"'"'mem_used_bytes'"'"'?" status --csv --fields mem_usd_bytes &&
	fails_with 2 "unknown field '"'"'used_btyes'"'"'; did you mean '"'"'used_bytes'"'"'?" ps --csv --fields used_btyes
'

expect_success 'a bare number is a percentage wherever one is taken (pick --max-util 50 = 50%)' '
	vramz pick --max-util 50% >a && vramz pick --max-util 50 >b && cmp a b && has "=GPU-8f3a61c2" b &&
	vramz pick --max-util 30 2>err >out; test $? = 1 && has "0 of 2 qualify" err &&
	vramz pick --max-util 37.5 >c && cmp a c &&
	fails_with 2 "bad PCT '"'"'101'"'"' for --max-util" pick --max-util 101
'

esc=$(printf "\033")
expect_success '--color=always colours a pipe (over NO_COLOR); never and auto do not; every command takes it' '
	vramz status --color=always >a && grep -q "$esc" a &&
	NO_COLOR=1 vramz status --color always >b && tail -n +2 a >a1 && tail -n +2 b >b1 && cmp a1 b1 &&
	vramz --color=always >c && grep -q "$esc" c &&
	vramz topo --color=always >d && grep -q "$esc" d &&
	NO_COLOR= vramz status --color=auto >e && ! grep -q "$esc" e &&
	NO_COLOR= vramz status --color=never >f && ! grep -q "$esc" f &&
	vramz status --color=always --no-color >g && ! grep -q "$esc" g &&
	sed "s/$esc\[[0-9;]*m//g" a | grep -v "^vramz " >a2 && vramz status | grep -v "^vramz " >plain &&
	cmp a2 plain &&
	fails_with 2 "bad value '"'"'purple'"'"' for --color: want one of auto always never" status --color=purple &&
	for c in $(cmds); do
		[ "$c" = help ] && continue
		vramz $c -h | grep -q -- "--color WHEN" || { echo "$c -h lacks --color"; exit 1; }
	done
'

expect_success 'vramz --json on a terminal is the status JSON, not top' '
	script -qec "$VRAMZ_BIN --json" /dev/null >out </dev/null &&
	tr -d "\r" <out >j && jassert j "d[\"kind\"] == \"status\" and len(d[\"gpus\"]) == 2"
'

expect_success 'vramz -P on a terminal: status takes it, top does not' '
	script -qec "$VRAMZ_BIN -P" /dev/null >out </dev/null &&
	has "^  1 H200" out && hasnt "PID +USER" out
'

expect_success 'run stops at the command: its options are the command'"'"'s; --json alone on stdout' '
	vramz run --json sh -c "echo child-out \"\$@\"" sh --bs 8 >r.json 2>err &&
	jassert r.json "d[\"kind\"] == \"run\" and d[\"command\"] == [\"sh\", \"-c\", \"echo child-out \\\"\$@\\\"\", \"sh\", \"--bs\", \"8\"]" &&
	has "^child-out --bs 8$" err
'

expect_success 'run and fit: an unknown option before the command hints at --' '
	fails_with 2 "options go before the command, or after --" run --bs 8 -- true &&
	fails_with 2 "options go before the command, or after --" fit --bs {} -- true
'

expect_success 'fit: the command after the options needs no -- (vramz fit CMD --bs {})' '
	. "$TESTS_SRC/helpers/jobs-world.sh" && jobs_world &&
	export TRAINER_A=$((2 << 30)) TRAINER_B=$((1 << 30)) TRAINER_HOLD=0.15 &&
	vramz fit -g 0 --json --sizes 1,2 --max-batch 8 trainer {} >a.json &&
	jassert a.json "d[\"kind\"] == \"fit\" and d[\"batch\"] == 8"
'

expect_success 'pick --empty and --max-util filter; --lock makes concurrent picks differ' '
	vramz pick --empty 2>err >out; test $? = 1 && has "0 of 2 qualify" err &&
	vramz pick --max-util 50% >out && has "=GPU-8f3a61c2" out &&
	vramz pick --max-util 30% 2>err >out; test $? = 1 &&
	fails_with 2 "bad PCT" pick --max-util lots &&
	export VRAMZ_LOCK_DIR=$T/locks &&
	vramz pick --lock >p1 && vramz pick --lock >p2 && ! cmp -s p1 p2 &&
	vramz pick --lock 2>err >p3; test $? = 1 && has "0 of 2 qualify" err &&
	vramz pick -v --lock 2>err >/dev/null; has "reserved by another pick" err &&
	ls locks | grep -c "^gpu-GPU-" >n && has "^2$" n &&
	rm -r locks &&
	sh -c "\"\$VRAMZ_BIN\" pick --lock; true" >q1 && sh -c "\"\$VRAMZ_BIN\" pick --lock; true" >q2 &&
	cmp q1 q2
'

expect_success 'pick warns when the GPU it chose has a finding (memory no process holds)' '
	BUSY_PID=$$ FAKE_NVML_SCENARIO=$SCENARIOS/diag-orphan.scn vramz pick >out 2>err &&
	has "^CUDA_VISIBLE_DEVICES=GPU-0c7e4a91" out &&
	has "pick: warning: GPU 0: 3\.0 GiB of .* held by no listed process" err
'

# Every command that lists --json in -h: one document (or one a line) that
# starts with the envelope.  A new --json command fails here until it has a
# recipe below - and its envelope.
# the version this build says it is (the envelope carries it)
ver=$("$VRAMZ_BIN" --version | awk '{print $2}')
expect_success 'every --json command writes the envelope: schema, vramz_version, kind' '
	cp "$TESTS_SRC/logs/demo.csv" "$TESTS_SRC/logs/demo.procs.csv" . &&
	. "$TESTS_SRC/helpers/jobs-world.sh" 2>/dev/null; scenario 2gpu-h200.scn &&
	n=0 &&
	for c in $(cmds); do
		[ $c = help ] && continue
		vramz $c -h | grep -q -- "--json" || continue
		case $c in
		status|ps|info|topo) vramz $c --json >$c.json ;;
		replay) vramz replay --fast --json demo.csv | head -1 >$c.json ;;
		analyze) vramz analyze --json demo.csv >$c.json || test $? = 3 ;;
		watch) BUSY_PID=$$ FAKE_NVML_SCENARIO=$SCENARIOS/diag-orphan.scn \
			vramz watch --json -i 100ms -d 3s --orphan-time 0 --report-after 0 | head -1 >$c.json ;;
		run) vramz run --json true >$c.json ;;
		fit) vramz fit --json --params 7e9 >$c.json ;;
		pick) vramz pick --json >$c.json ;;
		kill) vramz kill --json 4200101 >$c.json || true ;;
		*) echo "no --json recipe for $c: add one to t0950-cli.sh"; exit 1 ;;
		esac
		jassert $c.json "list(d)[:3] == [\"schema\", \"vramz_version\", \"kind\"] and d[\"schema\"] == 1 and d[\"vramz_version\"] == \"$ver\" and d[\"kind\"].split(\"-\")[0] == \"$c\"" || exit 1
		n=$((n + 1))
	done &&
	echo "$n commands" && test $n -ge 11
'

expect_success 'status --csv: the default columns, numbers as the JSON says, empty when unknown' '
	vramz status --csv >c &&
	has "^gpu,name,mem_used_bytes,mem_total_bytes,mem_reserved_bytes,util_gpu_pct,temp_c,power_mw$" c &&
	has "^0,NVIDIA H200,76235669504,150754820096,645922816,37,41,318000$" c &&
	test "$(wc -l <c)" = 3 &&
	vramz status --csv --no-header --fields gpu,fan_pct >d &&
	has "^0,$" d && has "^1,$" d && test "$(wc -l <d)" = 2
'

expect_success 'status --csv --units: values for people' '
	vramz status --csv --units --fields gpu,mem_used_bytes,power_mw,temp_c,util_gpu_pct >u &&
	has "^0,72704 MiB,318\.00 W,41 C,37 %$" u
'

expect_success 'status --fields help lists exactly the CSV log'"'"'s columns' '
	vramz status --fields help | awk "NR > 1 {print \$1}" | sort >fields &&
	vramz log --duration 1s -i 500ms -o l.csv &&
	head -1 l.csv | tr , "\n" | sort >cols &&
	diff fields cols
'

expect_success 'status --csv: bad names and stray options are usage errors' '
	fails_with 2 "unknown field '"'"'nope'"'"'" status --csv --fields gpu,nope &&
	fails_with 2 "go with --csv" status --fields gpu &&
	fails_with 2 "not both" status --csv --json &&
	fails_with 2 "10ms or more" status -l 1ms
'

# background a looping command, wait (bounded) for N lines matching RE,
# SIGINT it: its exit status
loop_until() {
	local n=$1 re=$2 out=$3 pid
	shift 3
	"$VRAMZ_BIN" "$@" >"$out" &
	pid=$!
	for _ in $(seq 600); do
		[ "$(grep -cE -- "$re" "$out")" -ge "$n" ] && break
		sleep 0.1
	done
	kill -INT $pid
	wait $pid
}

expect_success '-l: status and ps repeat until SIGINT, then exit 0' '
	loop_until 3 ",1$" loop status --csv --fields time,gpu -l 100ms &&
	test "$(grep -c "^time,gpu$" loop)" = 1 &&
	test "$(cut -d, -f1 loop | sort -u | wc -l)" -ge 4 &&
	loop_until 2 "^\{" pl ps --json -l 100ms &&
	head -2 pl | tail -1 >one && jassert one "d[\"kind\"] == \"ps\""
'

finish
