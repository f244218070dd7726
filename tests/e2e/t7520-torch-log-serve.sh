#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7520-torch-log-serve.sh - the PyTorch agent's figures in `vramz log
# --procs` (CSV columns torch_*, outside_allocator_bytes) and `vramz serve
# --procs` (vramz_process_torch_* series): a process with an agent (the
# stub torch of tests/python) has its figures, one without has empty cells
# and no series (never 0); a replayed log gives the torch object back, and
# an old log without the columns still reads.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch-lib.sh"
# NVML says the trainer holds 6 GiB on GPU 0 (1 GiB outside the allocator)
start_trainer 1
cat > "$T/m.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB util=50
proc gpu=0 pid=env:AGENT_PID used=6GiB follow
proc gpu=0 pid=4200999 used=1GiB
SCN
export FAKE_NVML_SCENARIO="$T/m.scn"
export VRAMZ_NO_DAEMON=1

# the cell of column $2 in the first process row of pid $3 (EMPTY: empty)
cat > "$T/cell.py" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["pid"] == sys.argv[3]]
print((rows[0][sys.argv[2]] or "EMPTY") if rows else "no-row")
PYEOF
cell() { python3 "$T/cell.py" "$@"; }

expect_success 'the agent published its figures' '
	has "^ready" "$T/train.out"
'

expect_success 'log --procs: the torch columns in the header, after the old ones' '
	vramz log -o g.csv --procs -i 100ms --duration 350ms &&
	head -1 g.procs.csv > hdr &&
	has "^time,gpu,uuid,pid,.*,comm,command,torch_allocated_bytes,torch_reserved_bytes,torch_inactive_split_bytes,torch_alloc_retries,torch_ooms,outside_allocator_bytes,pod,namespace,container_name,outside_context_bytes,outside_libraries_bytes,outside_nccl_bytes,outside_other_bytes,outside_nccl_comms$" hdr
'

expect_success 'log --procs: the agent process has its figures in the cells' '
	vramz log -o g.csv --procs -i 100ms --duration 350ms &&
	test "$(cell g.procs.csv torch_allocated_bytes $AGENT)" = $((4*GiB)) &&
	test "$(cell g.procs.csv torch_reserved_bytes $AGENT)" = $((5*GiB)) &&
	test "$(cell g.procs.csv torch_inactive_split_bytes $AGENT)" = 536870912 &&
	test "$(cell g.procs.csv torch_alloc_retries $AGENT)" = 3 &&
	test "$(cell g.procs.csv torch_ooms $AGENT)" = 1 &&
	test "$(cell g.procs.csv outside_allocator_bytes $AGENT)" = $((1*GiB))
'

expect_success 'log --procs: a process without an agent has empty cells, not 0' '
	vramz log -o g.csv --procs -i 100ms --duration 350ms &&
	for c in torch_allocated_bytes torch_reserved_bytes torch_inactive_split_bytes torch_alloc_retries torch_ooms outside_allocator_bytes; do
		test "$(cell g.procs.csv $c 4200999)" = EMPTY || { echo "$c not empty"; exit 1; }
	done
'

expect_success 'a replayed log gives the torch object back; null without an agent' '
	vramz log -o g.csv --procs -i 100ms --duration 350ms &&
	vramz status --replay g.csv --json > st.json &&
	test "$(json st.json "[p[\"torch\"][\"reserved_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = $((5*GiB)) &&
	test "$(json st.json "[p[\"torch\"][\"alloc_retries\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = 3 &&
	test "$(json st.json "[p[\"torch\"][\"active_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = None &&
	test "$(json st.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = $((1*GiB)) &&
	test "$(json st.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==4200999][0]")" = None &&
	test "$(json st.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==4200999][0]")" = None
'

expect_success 'an old log without the torch columns still reads: no torch objects' '
	vramz status --replay "$TESTS_SRC/logs/demo.csv" --json > old.json &&
	json old.json "len(d[\"processes\"]) > 0 and all(p[\"torch\"] is None and p[\"outside_allocator_bytes\"] is None for p in d[\"processes\"])" > got &&
	echo True > want && diff want got
'

expect_success 'serve --procs: torch series for the agent process, valid per promtool' '
	vramz serve --once --procs > m.txt &&
	promtool check metrics < m.txt &&
	has "^vramz_process_torch_allocated_bytes\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} $((4*GiB))$" m.txt &&
	has "^vramz_process_torch_reserved_bytes\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} $((5*GiB))$" m.txt &&
	has "^vramz_process_torch_inactive_split_bytes\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} 536870912$" m.txt &&
	has "^vramz_process_torch_alloc_retries_total\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} 3$" m.txt &&
	has "^vramz_process_torch_ooms_total\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} 1$" m.txt &&
	has "^vramz_process_outside_allocator_bytes\{gpu=\"0\",[^}]*pid=\"$AGENT\"[^}]*\} $((1*GiB))$" m.txt &&
	has "^# TYPE vramz_process_torch_alloc_retries_total counter$" m.txt &&
	has "^# TYPE vramz_process_torch_reserved_bytes gauge$" m.txt
'

expect_success 'serve --procs: no torch sample for a process without an agent' '
	vramz serve --once --procs > m.txt &&
	has "^vramz_process_memory_used_bytes\{[^}]*pid=\"4200999\"" m.txt &&
	hasnt "^vramz_process_(torch_[a-z_]*|outside_allocator_bytes)\{[^}]*pid=\"4200999\"" m.txt
'

expect_success 'serve without --procs: no torch series at all' '
	vramz serve --once > m.txt &&
	hasnt "^vramz_process_torch" m.txt
'

expect_success 'from a vramz daemon (its segment carries no agent figures): joined by the reader' '
	(unset VRAMZ_NO_DAEMON
	"$VRAMZ_BIN" daemon -i 100ms --procs 2> "$T/daemon.err" & D=$!
	trap "kill $D 2>/dev/null" EXIT
	for _ in $(seq 100); do [ -s "$VRAMZ_RUNTIME_DIR/segment" ] && vramz status --json > st.json &&
		json st.json "d[\"source\"]" | grep -qx daemon && break; sleep 0.1; done &&
	test "$(json st.json "d[\"source\"]")" = daemon &&
	test "$(json st.json "[p[\"torch\"][\"reserved_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = $((5*GiB)) &&
	test "$(json st.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = $((1*GiB)) &&
	vramz log -o d.csv --procs -i 100ms --duration 350ms 2> log.err &&
	test "$(cell d.procs.csv torch_reserved_bytes $AGENT)" = $((5*GiB)) &&
	test "$(cell d.procs.csv torch_reserved_bytes 4200999)" = EMPTY)
'

touch "$T/stop"
finish
