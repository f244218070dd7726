#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vramz fit: the largest batch that fits, against a pretend trainer whose
# memory is a + b*batch (+ c*batch^2) and which OOMs above a limit.  The
# true answers are computed here; vramz must land within one step.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
jobs_world
export TRAINER_A=$((2 << 30)) TRAINER_B=$((100 << 20)) TRAINER_HOLD=0.15
# budget: GPU 0 free (80 GiB - 512 MiB reserved) minus the margin
truth() { python3 -c "
import sys
a, b, c, lim, margin, step = (float(x) for x in sys.argv[1:])
budget = int(79.5 * 2**30 * (1 - margin))
best = 0
for x in range(int(step), 100000, int(step)):
    m = a + b * x + c * x * x
    if m > lim or m > budget: break
    best = x
print(best)" "$TRAINER_A" "$TRAINER_B" "${TRAINER_C:-0}" "${1:-1e30}" "${2:-0.1}" "${3:-1}"; }
answer() { json "$1" "d[\"batch\"]"; }
within_one() { test $(( $1 - $2 )) -ge -${3:-1} && test $(( $1 - $2 )) -le 0; }

expect_success 'linear memory: the prediction is the answer' '
	vramz fit -g 0 --json -- trainer {} >f.json &&
	want=$(truth) && got=$(answer f.json) &&
	echo "want $want got $got" && within_one "$got" "$want" &&
	json f.json "d[\"nonlinear\"]" >nl && has "^False$" nl
'

expect_success 'an OOM limit below the budget: backs off to the last size that ran' '
	export TRAINER_LIMIT=$((30 << 30)) &&
	vramz fit -g 0 --json -- trainer {} >f.json &&
	want=$(truth $TRAINER_LIMIT) && got=$(answer f.json) &&
	echo "want $want got $got" && within_one "$got" "$want" &&
	json f.json "[t[\"result\"] for t in d[\"trials\"]]" >r && has "oom" r
'

expect_success '--margin and --step are honoured' '
	vramz fit -g 0 --margin 50% --step 8 --json -- trainer {} >f.json &&
	want=$(truth 1e30 0.5 8) && got=$(answer f.json) &&
	echo "want $want got $got" && within_one "$got" "$want" 8 &&
	test $((got % 8)) = 0
'

expect_success 'non-linear memory: warned about, and the answer still checked' '
	export TRAINER_C=$((1 << 20)) &&
	vramz fit -g 0 -- trainer {} >out &&
	has "warning: memory is not linear" out &&
	got=$(sed -n "s/^largest batch that fits: //p" out) && want=$(truth) &&
	echo "want $want got $got" && within_one "$got" "$want"
'

expect_success 'the table shows every trial and the answer' '
	vramz fit -g 0 -- trainer {} >out &&
	has "^ +1 +probe +fits" out && has "^ +8 +probe +fits" out &&
	has "^GPU 0: memory = 2.00 GiB \+ 100 MiB x batch" out &&
	has "^largest batch that fits: [0-9]+$" out
'

expect_success 'even the smallest size failing is an error, with its output' '
	export TRAINER_LIMIT=1 &&
	test "$(rc vramz fit -g 0 -- trainer {})" = 1 &&
	vramz fit -g 0 -- trainer {} 2>err >/dev/null;
	has "even batch 1 does not fit" err
'

expect_success 'a command that fails without OOM is reported as broken' '
	test "$(rc vramz fit -- sh -c "echo boom {}; exit 4")" = 1 &&
	vramz fit -- sh -c "echo boom {} >&2; exit 4" 2>err >/dev/null;
	has "failed at batch 1 \(exit 4\) without an out-of-memory sign" err && has "boom 1" err
'

expect_success 'usage: a command needs {}' '
	test "$(rc vramz fit -- trainer 8)" = 2 &&
	vramz fit -- trainer 8 2>err; has "no \{\} to put the batch size in" err
'

expect_success 'offline estimate: 16 bytes/parameter for bf16 + AdamW, labelled' '
	vramz fit --params 7e9 --dtype bf16 --optimizer adamw >out &&
	has "^ESTIMATE" out && has "total +104.3 GiB +\(16.0 bytes/parameter\)" out &&
	vramz fit --params 7B --dtype fp16 --optimizer none --json >e.json &&
	json e.json "d[\"estimate\"], d[\"total_bytes\"]" >v && has "True, 14000000000" v &&
	test "$(rc vramz fit --params 7e9 --dtype fp12)" = 2
'

finish
