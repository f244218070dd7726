#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7540-torch-oom-end.sh - verdicts at the moments that matter (issue 27),
# end to end on the stub torch of tests/python, whose OOMs go as PyTorch's
# do (the count, the observer in the allocating thread, then the
# exception), and `vramz watch` at 1 Hz on the fake NVML:
#  - a job that dies of an uncaught OutOfMemoryError under a per-process
#    cap, with most of the GPU free: "died out of memory" with the script's
#    file:line, the bytes asked and the line that held the memory, read
#    from the tombstone its agent left (`ps --json`'s "ended" too); the
#    tombstone is swept later;
#  - a job that catches an OOM and exits normally on a GPU NVML shows
#    nearly full: "ran out of memory 1 time and carried on", never a death,
#    live and in `analyze` of its --procs log (whose events file keeps the
#    agent's OOM and end records; without that file: probable at most);
#  - the death above in `analyze` and `report` of its --procs log, with
#    its line, as the watch said it;
#  - the exporter's series of such a death, with its line as a label;
#  - a fragmenting pool whose split share flaps while its retries climb:
#    one finding, never cleared and raised again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch-lib.sh"
. "$(dirname "$0")/serve-lib.sh"

# job J: waits for $T/go.J, then runs its ending; AGENT_PID its pid
start_job() {
	python3 "$T/$1.py" "$T/go.$1" > "$T/$1.out" 2>&1 &
	JOB=$!
	JOBS="${JOBS-} $JOB"
	trap 'kill $JOBS 2>/dev/null; rm -rf "$T"' EXIT
	for _ in $(seq 300); do grep -q ready "$T/$1.out" && break; sleep 0.1; done
	export AGENT_PID=$JOB
}
# the fake GPU: 143771 MiB; the job holds USED of it [in FILE, m.scn]
scn() {
	local f=$T/${2:-m.scn}
	cat > "$f" <<SCN
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB util=50
proc gpu=0 pid=env:AGENT_PID used=$1 sm=50 follow
SCN
	export FAKE_NVML_SCENARIO="$f"
}

oom_job "$T/dies.py"
cat >> "$T/dies.py" <<'PYEOF'
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
forward()
PYEOF

cat > "$T/probes.py" <<'PYEOF'
import os, sys, time
import torch, vramz.torch
torch.cuda.set_per_process_memory_fraction(0.25)
a = vramz.torch.attach(interval=0.2, quiet=True)
torch.cuda._stub.alloc(1 << 30)
def probe(n):
    return torch.cuda._stub.alloc(n << 30)  # PROBE-LINE
while not os.path.exists(a.path):
    time.sleep(0.01)
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
try:
    probe(64)
except torch.OutOfMemoryError:
    pass
time.sleep(3)
sys.exit(0)
PYEOF

cat > "$T/frag.py" <<'PYEOF'
import os, sys, time
import torch, vramz.torch
s = torch.cuda._stub
s.alloc(6 << 30, reserve=8 << 30)
a = vramz.torch.attach(interval=0.2, quiet=True)
while not os.path.exists(a.path):
    time.sleep(0.01)
print("ready", flush=True)
t0, retries = time.time(), 10
while not os.path.exists(sys.argv[1] + ".stop"):
    # 3 GiB of 8 split for 4 s, 0.5 GiB for 3 s; retries climb all along
    k = int(time.time() - t0) % 7
    retries += 1
    s.dev[0].update(inactive_split=(3 << 30) if k < 4 else (512 << 20), retries=retries)
    time.sleep(0.2)
PYEOF

# seen_alive PID TRACE PROCS: until the watch (the fake's trace of its
# calls, TRACE) has begun its second tick, so finished a first with PID
# alive, and the logger has a row of PID in PROCS (30 s).  A fixed 4 s
# could pass before either had sampled the job on a loaded machine, and a
# job gone before its first sample is never known to have died
seen_alive() {
	for _ in $(seq 300); do
		[ "$(grep -c "^nvmlDeviceGetComputeRunningProcesses_v3 " "$2" 2>/dev/null)" -ge 2 ] &&
			grep -qE "^[^,]*,[^,]*,[^,]*,$1," "$3" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the watch or the logger never sampled pid $1"
	return 1
}

# the events of kind K in watch's JSON lines: "EVENT SEVERITY summary"
events() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    f = e["finding"]
    if f["kind"] == sys.argv[2]:
        print(e["event"], f["severity"], json.dumps(f, sort_keys=True))
PY
}

PROBE_LINE=$(grep -n PROBE-LINE "$T/probes.py" | cut -d: -f1)

# the fragmenting pool's 25 s watch runs beside the other jobs' (its own
# GPU, its step checks it at the end)
start_job frag
scn 9GiB frag.scn
touch "$T/go.frag"
bg_run frag-watch "$VRAMZ_BIN" watch --json -i 1s -d 25s --report-after 1s

start_job dies
DIES=$JOB
scn 21GiB
"$VRAMZ_BIN" log -o "$T/dies.csv" --procs -i 500ms --duration 11s 2> "$T/dies-log.err" &
LOGGER=$!
FAKE_NVML_TRACE="$T/dies.trace" "$VRAMZ_BIN" watch --json -i 1s -d 12s --report-after 1s > "$T/dies.json" 2> "$T/dies.err" &
WATCH=$!
seen_alive $DIES "$T/dies.trace" "$T/dies.procs.csv"
touch "$T/go.dies"
wait $WATCH
wait $LOGGER

expect_success 'an uncaught OOM under a cap, most of the GPU free: died out of memory at its line' '
	events "$T/dies.json" oom > ev &&
	has "^(new|changed) critical .*\"evidence\": \[(\"agent\", )?\"ended\"\]" ev &&
	has "died out of memory at dies\.py:$OOM_LINE in forward\(\) asking 20\.0 GiB with [0-9.]+ GiB free \(its allocator.s limit 35\.1 GiB\); [0-9]+ % of its memory was allocated at dies\.py:$HOLDER_LINE in load\(\)" ev &&
	has "\"site\": \"dies\.py:$OOM_LINE in forward\(\)\"" ev &&
	has "\"requested_bytes\": 21474836480" ev &&
	has "\"holders\": \[\{\"bytes\": 21474836480, \"share\": 1\.0+, \"site\": \"dies\.py:$HOLDER_LINE in load\(\)\"\}" ev
'

# the same death in the log recorded with --procs: the logger wrote the
# tombstone's end as a process_end row of the events file, and analyze
# and report judge it as the watch did
DEATH="died out of memory at dies\.py:$OOM_LINE in forward\(\) asking 20\.0 GiB with [0-9.]+ GiB free \(its allocator(.|&#39;)s limit 35\.1 GiB\); [0-9]+ % of its memory was allocated at dies\.py:$HOLDER_LINE in load\(\)"
expect_success 'analyze and report of its --procs log: died out of memory at its line' '
	hasnt "not logged|cannot" "$T/dies-log.err" &&
	grep ",process_end," "$T/dies.events.csv" > end.rows &&
	test "$(wc -l < end.rows)" = 1 &&
	has ",$DIES,[0-9]+,[0-9]+,exception,1,torch\.OutOfMemoryError,1,[^,]*dies\.py:$OOM_LINE in forward\(\),21474836480," end.rows &&
	{ "$VRAMZ_BIN" analyze "$T/dies.csv" > out; test $? = 3; } &&
	has "CRITICAL +oom +pid $DIES \(python3\) on GPU 0 $DEATH" out &&
	hasnt "probably ended|carried on" out &&
	{ "$VRAMZ_BIN" analyze --json "$T/dies.csv" > a.json; true; } &&
	json a.json "\"|\".join(str(x) for f in d[\"findings\"] if f[\"kind\"] == \"oom\" for x in (f[\"severity\"], f[\"site\"], f[\"requested_bytes\"], f[\"holders\"][0][\"site\"]))" > got &&
	echo "critical|dies.py:$OOM_LINE in forward()|21474836480|dies.py:$HOLDER_LINE in load()" > want &&
	diff want got &&
	"$VRAMZ_BIN" report "$T/dies.csv" -o dies.html 2> report.err &&
	has "<title>#1 critical oom: pid $DIES \\(python3\\) on GPU 0 $DEATH</title>" dies.html
'

expect_success 'the tombstone stays for the readers, and the daemon sweeps it once old' '
	! kill -0 $DIES 2>/dev/null &&
	ls "$VRAMZ_RUNTIME_DIR" > files && has "^torch-$DIES-[0-9]+\$" files &&
	grep -q "^end .*oom=1" "$VRAMZ_RUNTIME_DIR"/torch-$DIES-* &&
	"$VRAMZ_BIN" ps --json > ps.json &&
	json ps.json "\"|\".join(str(x) for e in d[\"ended\"] if e[\"pid\"] == $DIES for x in (e[\"how\"], e[\"exception\"], e[\"oom\"], e[\"site\"], e[\"requested_bytes\"]))" > got &&
	echo "exception|torch.OutOfMemoryError|True|dies.py:$OOM_LINE in forward()|21474836480" > want &&
	diff want got &&
	"$VRAMZ_BIN" status --json > st.json &&
	json st.json "[e for e in d[\"ended\"] if e[\"pid\"] == $DIES]" > st.ended &&
	json ps.json "[e for e in d[\"ended\"] if e[\"pid\"] == $DIES]" > ps.ended &&
	diff ps.ended st.ended && test -s st.ended &&
	if [ "$VRAMZ_SANITIZE" != 1 ]; then # an ASan library cannot load into python
		VRAMZ_NO_DAEMON=1 VRAMZ_LIBRARY="$TESTS_BIN/../lib/libvramz.so.0" python3 -c "
import json, vramz
print(json.dumps(vramz.snapshot()[\"ended\"], sort_keys=True))" > py.ended &&
		json st.json "json.dumps(d[\"ended\"], sort_keys=True)" > c.ended &&
		diff c.ended py.ended
	fi &&
	touch -d "6 minutes ago" "$VRAMZ_RUNTIME_DIR"/torch-$DIES-* &&
	# the daemon sweeps as it starts: until the tombstone is gone (30 s),
	# not a fixed 3 s, which a loaded machine could spend starting it
	{ "$VRAMZ_BIN" daemon -i 200ms 2> daemon.err & daemon=$!; } &&
	for _ in $(seq 300); do
		ls "$VRAMZ_RUNTIME_DIR" > files && ! grep -q "^torch-$DIES-" files && break
		sleep 0.1
	done &&
	{ kill $daemon 2>/dev/null; wait $daemon; true; } &&
	ls "$VRAMZ_RUNTIME_DIR" > files && hasnt "^torch-$DIES-" files
'

start_job probes
scn 139GiB
"$VRAMZ_BIN" log -o "$T/probes.csv" --procs -i 500ms --duration 11s 2> "$T/log.err" &
LOGGER=$!
FAKE_NVML_TRACE="$T/probes.trace" "$VRAMZ_BIN" watch --json -i 1s -d 12s --report-after 1s > "$T/probes.json" 2> "$T/probes.err" &
WATCH=$!
seen_alive $JOB "$T/probes.trace" "$T/probes.procs.csv"
touch "$T/go.probes"
wait $WATCH
wait $LOGGER

expect_success 'a caught OOM then a normal exit on a full GPU: carried on, never a death' '
	events "$T/probes.json" oom > ev &&
	has "^new warning .*ran out of memory 1 time and carried on; the last at probes\.py:$PROBE_LINE in probe\(\) asking 64\.0 GiB" ev &&
	hasnt "died out of memory|ended out of memory|critical" ev &&
	grep -q "^end .*how=exit status=0" "$VRAMZ_RUNTIME_DIR"/torch-$JOB-*
'

# its --procs log keeps the caught OOM (a torch_oom row) and the normal
# exit (a process_end row): carried on, with its line, and no death
expect_success 'analyze of its --procs log: carried on at its line, never an OOM death' '
	grep -c ",torch_oom,.*probes\.py:$PROBE_LINE in probe()" "$T/probes.events.csv" &&
	grep ",process_end," "$T/probes.events.csv" > end.rows &&
	has ",$JOB,[0-9]+,[0-9]+,exit,0,,0,[^,]*probes\.py:$PROBE_LINE in probe\(\),68719476736," end.rows &&
	{ "$VRAMZ_BIN" analyze "$T/probes.csv" > out; true; } &&
	has "WARNING +oom +pid $JOB \(python3\) on GPU 0 ran out of memory 1 time and carried on; the last at probes\.py:$PROBE_LINE in probe\(\) asking 64\.0 GiB .*; it held 139\.0 GiB" out &&
	hasnt "died out of memory|ended out of memory|CRITICAL" out
'

# without its events file (a log of an older vramz, or without --procs'
# records) the full GPU at its end is NVML's "probably" (with the caught
# OOM counted as evidence), never a certain death
expect_success 'the same log without its events file: probable at most' '
	mkdir -p old && cp "$T/probes.csv" "$T/probes.procs.csv" old/ &&
	{ "$VRAMZ_BIN" analyze old/probes.csv > out; true; } &&
	has "WARNING +oom +pid [0-9]+ \(python3\) probably ended out of memory on GPU 0: .*; its allocator had counted out-of-memory errors" out &&
	hasnt "died out of memory|CRITICAL|[^y] ended out of memory" out
'

# the exporter: the death's series, labelled with the line that ran out
cp "$T/dies.py" "$T/dies2.py"
start_job dies2
scn 21GiB
expect_success 'serve: vramz_oom_requested_bytes with the site, vramz_oom_ended_bytes' '
	serve_start serve.log --procs --interval 1s &&
	# sampled alive before it dies (a fixed 3 s could pass first under load)
	wait_for sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q \"^vramz_process_memory_used_bytes{.*pid=.$JOB.\"" &&
	touch "$T/go.dies2" &&
	# the death itself: the requested bytes come with the OOM record,
	# which a loaded agent can publish while its process still unwinds;
	# the ended bytes only once the process is gone
	wait_for sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q \"^vramz_oom_ended_bytes{.*pid=.$JOB.\"" &&
	scrape /metrics > m.txt &&
	serve_stop &&
	has "^vramz_oom_requested_bytes\{gpu=\"0\",[^}]*pid=\"$JOB\",site=\"dies2\.py:$OOM_LINE in forward\(\)\"\} 21474836480$" m.txt &&
	has "^vramz_oom_ended_bytes\{gpu=\"0\",[^}]*pid=\"$JOB\"\} " m.txt
'
serve_cleanup

expect_success 'fragmentation that flaps while retries climb: one finding, never cleared' '
	bg_wait frag-watch; cp frag-watch.out frag.json &&
	touch "$T/go.frag.stop" &&
	events frag.json fragmentation > ev &&
	test "$(grep -c "^new " ev)" = 1 &&
	hasnt "^cleared " ev
'

finish
