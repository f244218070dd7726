#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7500-torch-agent.sh - the PyTorch agent joined to NVML's view: a Python
# process (the stub torch of tests/python) attaches vramz.torch, the fake
# NVML lists that process's pid on the GPU whose UUID the agent names, and
# `vramz ps --json` / `status --json` show its "torch" object with the
# stub's numbers and the memory outside the allocator; stale and forged
# agent files are ignored.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch-lib.sh"
# NVML says the trainer holds 6 GiB on GPU 0 (1 GiB outside the allocator)
start_trainer 0
cat > "$T/m.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB util=50
gpu 1 name="NVIDIA H200" uuid=GPU-00000001-0000-4000-8000-000000000001 mem_total=143771MiB mem_reserved=616MiB util=0
proc gpu=0 pid=env:AGENT_PID used=6GiB follow
proc gpu=1 pid=env:AGENT_PID used=600MiB follow
proc gpu=0 pid=4200999 used=1GiB
SCN
export FAKE_NVML_SCENARIO="$T/m.scn"

expect_success 'the agent published its figures' '
	has "^ready" "$T/train.out" &&
	ls "$VRAMZ_RUNTIME_DIR" > files && has "^torch-$AGENT-[0-9]+$" files
'

expect_success 'ps --json: the torch object carries the agent figures' '
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"][\"allocated_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = $((4*GiB)) &&
	test "$(json ps.json "[p[\"torch\"][\"reserved_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = $((5*GiB)) &&
	test "$(json ps.json "[p[\"torch\"][\"inactive_split_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = 536870912 &&
	test "$(json ps.json "[p[\"torch\"][\"alloc_retries\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = 3 &&
	test "$(json ps.json "[p[\"torch\"][\"ooms\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = 0
'

expect_success 'ps: the agent columns appear, with its figures' '
	vramz ps > ps.txt &&
	has "T\.ALLOC +T\.RESERV +OUTSIDE +T\.SPLIT +RETRY +OOM" ps.txt &&
	has "^ +0 +$AGENT .* 4\.00 GiB +5\.00 GiB +1\.00 GiB +512 MiB +3 +0  " ps.txt &&
	has "^ +0 +4200999 .* - +- +- +- +- +-  " ps.txt
'

if command -v tmux >/dev/null && "$VRAMZ_BIN" top -h >/dev/null 2>&1; then
. "$TESTS_SRC/e2e/top-lib.sh"
expect_success 'top: the agent figures ahead of the command (summed over its two GPUs)' '
	top_session 200 40 -i 200ms &&
	WAIT_FOR_TENTHS=150 wait_for "\[torch 5\.00 GiB rsv, 1\.59 GiB outside\] .*train\.py" &&
	keys q
'
fi

expect_success 'memory outside the allocator = NVML used - torch reserved' '
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = $((1*GiB))
'

expect_success 'a GPU the allocator never used: all of it outside' '
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"][\"reserved_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==1][0]")" = 0 &&
	test "$(json ps.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==1][0]")" = 629145600
'

expect_success 'a process without an agent: torch null, outside unknown' '
	vramz status --json > st.json &&
	test "$(json st.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==4200999][0]")" = None &&
	test "$(json st.json "[p[\"outside_allocator_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==4200999][0]")" = None &&
	test "$(json st.json "[p[\"torch\"][\"allocated_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT and p[\"gpu\"]==0][0]")" = $((4*GiB))
'

if [ "$VRAMZ_SANITIZE" != 1 ]; then # an ASan library cannot load into python
expect_success 'vramz.snapshot() (libvramz through ctypes) has the same torch object' '
	VRAMZ_LIBRARY="$TESTS_BIN/../lib/libvramz.so.0" python3 -c "
import json, vramz
d = vramz.snapshot()
print(json.dumps([p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"] == $AGENT and p[\"gpu\"] == 0][0]))
" > py.json &&
	json py.json "d[\"allocated_bytes\"], d[\"reserved_bytes\"], d[\"alloc_retries\"]" > got &&
	echo "($((4*GiB)), $((5*GiB)), 3)" > want && diff want got
'
fi

F=$(ls "$VRAMZ_RUNTIME_DIR" | grep -E "^torch-$AGENT-[0-9]+\$")
START=${F##*-}
expect_success 'a file of the same pid with another start time (reused pid) is ignored' '
	stop_pid $AGENT && mv "$VRAMZ_RUNTIME_DIR/$F" "$T/saved" &&
	sed "s/start_time_ticks=$START/start_time_ticks=$((START+1))/" "$T/saved" > "$VRAMZ_RUNTIME_DIR/torch-$AGENT-$((START+1))" &&
	chmod 644 "$VRAMZ_RUNTIME_DIR/torch-$AGENT-$((START+1))" &&
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = None &&
	rm "$VRAMZ_RUNTIME_DIR/torch-$AGENT-$((START+1))" && mv "$T/saved" "$VRAMZ_RUNTIME_DIR/$F" && kill -CONT $AGENT
'

expect_success 'a group-writable file is not believed' '
	stop_pid $AGENT && chmod 664 "$VRAMZ_RUNTIME_DIR/$F" &&
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = None &&
	chmod 644 "$VRAMZ_RUNTIME_DIR/$F" && kill -CONT $AGENT
'

if [ "$(id -u)" = 0 ]; then
expect_success 'another user'"'"'s file claiming this process is not believed' '
	stop_pid $AGENT && chown 4242:4242 "$VRAMZ_RUNTIME_DIR/$F" &&
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==$AGENT][0]")" = None &&
	chown 0:0 "$VRAMZ_RUNTIME_DIR/$F" && kill -CONT $AGENT
'
fi

expect_success 'at a normal exit the agent leaves only its figures, ending in how it ended' '
	touch "$T/stop" &&
	for _ in $(seq 300); do kill -0 $AGENT 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $AGENT 2>/dev/null &&
	ls "$VRAMZ_RUNTIME_DIR" > files && hasnt "^torch-.*[.]" files && has "^$F\$" files &&
	tail -n 1 "$VRAMZ_RUNTIME_DIR/$F" > last && has "^end .*how=exit" last && hasnt "oom=1" last &&
	vramz ps --json > ps.json &&
	test "$(json ps.json "[p for p in d[\"processes\"] if p[\"pid\"]==$AGENT]")" = "[]"
'
finish
