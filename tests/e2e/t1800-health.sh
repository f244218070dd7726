#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1800-health.sh - VRAM health (docs/health.md) in every view, on the
# 4-GPU fake of tests/scenarios/health.scn: GPU 0 healthy; GPU 1 with
# corrected errors (12, 20 from 4 s) and a row remap pending; GPU 2 gets
# a double-bit error and Xid 48 at 4 s; GPU 3's remap failed, Xid 79 at
# 6 s, off the bus at 7 s.  status --json, info, the log's CSV and its
# events file, serve's metrics (and --dcgm-names), watch's and top's
# findings: each shows each state, the findings come in the scenario's
# order naming the processes that were on the GPU, and nothing is said
# of GPU 0.  Unsupported (retired pages on Hopper) is null, never 0.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
# serve-lib's wait_for (a command) under another name: top-lib's takes a pattern
eval "$(declare -f wait_for | sed '1s/wait_for/serve_wait_for/')"
. "$TESTS_SRC/e2e/top-lib.sh"

# real processes for GPU 2's and GPU 3's jobs, so /proc names them
sleep 300 & JOB2=$!
sleep 300 & JOB3=$!
trap 'kill $JOB2 $JOB3 2>/dev/null; serve_cleanup; rm -rf "$T"' EXIT
sed "s/pid=4180002/pid=$JOB2/; s/pid=4180003/pid=$JOB3/" "$SCENARIOS/health.scn" >"$T/health.scn"
export FAKE_NVML_SCENARIO=$T/health.scn VRAMZ_NO_DAEMON=1

# the fixed-length runs (the log's 9 s, the watches' 15 s and 9 s) go side
# by side from here; their steps check them (bg_wait)
bg_run log vramz log -o g.csv --procs -i 500ms --slow-interval 500ms --duration 9s
bg_run watch-json vramz watch --json -i 500ms -d 15s # health read at 0 and 10 s
bg_run watch-text vramz watch --no-color -i 500ms -d 9s

# g FILE GPU KEY: a GPU's key in a status/serve JSON document
g() { json "$1" "[x for x in d[\"gpus\"] if x[\"index\"]==$2][0][\"$3\"]"; }

expect_success 'status --json: each GPU state, unsupported null, no Xid without a watcher' '
	vramz status --json >s.json &&
	for k in ecc_mode:1:1:1:1 ecc_corrected_volatile:0:12:0:0 ecc_uncorrected_aggregate:0:0:0:2 \
		remap_correctable_rows:0:3:0:0 remap_uncorrectable_rows:0:0:0:1 remap_pending:0:1:0:0 \
		remap_failure:0:0:0:1 pcie_replays:0:7:0:0 retired_sbe_pages:None:None:None:None \
		retired_pending:None:None:None:None xid_last:None:None:None:None; do
		IFS=: read -r n a b c e <<<"$k"
		got="$(g s.json 0 $n):$(g s.json 1 $n):$(g s.json 2 $n):$(g s.json 3 $n)"
		echo "$n $got"
		test "$got" = "$a:$b:$c:$e" || { echo "expected $a:$b:$c:$e"; exit 1; }
	done
'

expect_success 'status: a HEALTH column, blank when healthy; --fail-on-health exits 4 naming each GPU' '
	vramz status --no-procs >t.txt &&
	has "^GPU NAME .*POWER / LIMIT  HEALTH$" t.txt &&
	has "^  0 H100 80GB HBM3 .* 120 / 700 W$" t.txt &&
	has "^  1 H100 80GB HBM3 .* 400 / 700 W  remap pending, ECC 12$" t.txt &&
	has "^  2 H100 80GB HBM3 .* 600 / 700 W$" t.txt &&
	has "^  3 H100 80GB HBM3 .* 500 / 700 W  REMAP FAILED$" t.txt &&
	vramz status --no-procs >plain 2>plain.err && test ! -s plain.err &&
	vramz status --no-procs --fail-on-health >f.txt 2>f.err; test $? = 4 &&
	cmp <(tail -n +2 f.txt) <(tail -n +2 plain) &&
	test "$(cat f.err)" = "$(printf "vramz: GPU 1: VRAM unhealthy: remap pending, ECC 12\nvramz: GPU 3: VRAM unhealthy: REMAP FAILED")" &&
	vramz status -g 0,2 --fail-on-health >/dev/null 2>g.err && test ! -s g.err &&
	vramz status -g 3 --fail-on-health >/dev/null 2>&1; test $? = 4 &&
	vramz status --fail-on-health -l 1 >/dev/null 2>l.err; test $? = 2 && has "not a --loop" l.err
'

expect_success 'info: a health object in JSON, the rows in text' '
	vramz info --json >i.json &&
	test "$(json i.json "d[\"gpus\"][1][\"health\"][\"remap_pending\"]")" = 1 &&
	test "$(json i.json "d[\"gpus\"][3][\"health\"][\"remap_failure\"]")" = 1 &&
	test "$(json i.json "d[\"gpus\"][0][\"health\"][\"retired_dbe_pages\"]")" = None &&
	vramz info --no-color >i.txt &&
	has "Remapped rows +3 correctable, 0 uncorrectable, pending yes, failure no" i.txt &&
	has "Remapped rows +0 correctable, 1 uncorrectable, pending no, failure yes" i.txt &&
	has "ECC errors \(volatile\) +12 corrected, 0 uncorrected" i.txt &&
	has "Retired pages +-$" i.txt &&
	has "PCIe replays +7$" i.txt
'

expect_success 'log: health columns appended, the states over time, the events file beside it' '
	bg_wait log &&
	head -1 g.csv >hdr &&
	has ",fan_pct,ecc_mode,ecc_corrected_volatile,ecc_uncorrected_volatile,ecc_corrected_aggregate,ecc_uncorrected_aggregate,remap_correctable_rows,remap_uncorrectable_rows,remap_pending,remap_failure,retired_sbe_pages,retired_dbe_pages,retired_pending,pcie_replays,xid_events,xid_last,xid_time_ms$" hdr &&
	python3 - <<-EOF
	import csv
	rows = list(csv.DictReader(open("g.csv")))
	by = {i: [r for r in rows if r["gpu"] == str(i)] for i in range(4)}
	# GPU 0: healthy throughout, no Xid
	assert all(r["ecc_uncorrected_volatile"] == "0" and r["xid_events"] == "0" and
	           r["remap_pending"] == "0" for r in by[0]), by[0][-1]
	assert all(r["retired_sbe_pages"] == "" for r in rows)  # Hopper: unsupported
	# GPU 1: corrected 12, then 20
	c1 = [r["ecc_corrected_volatile"] for r in by[1]]
	assert c1[0] == "12" and c1[-1] == "20" and "20" in c1, c1
	assert all(r["remap_pending"] == "1" for r in by[1])
	# GPU 2: the double-bit error and Xid 48 arrive mid-run
	assert by[2][0]["ecc_uncorrected_volatile"] == "0" and by[2][0]["xid_last"] == "0"
	assert by[2][-1]["ecc_uncorrected_volatile"] == "1" and by[2][-1]["xid_last"] == "48"
	# GPU 3: readable, then lost (its readings empty)
	assert by[3][0]["lost"] == "0" and by[3][0]["remap_failure"] == "1"
	assert by[3][-1]["lost"] == "1" and by[3][-1]["remap_failure"] == ""
	ev = list(csv.DictReader(open("g.events.csv")))
	got = [(e["gpu"], e["event"], e["xid"]) for e in ev]
	print(got)
	assert got == [("1", "ecc_sbe", ""), ("2", "ecc_dbe", ""), ("2", "xid", "48"),
	               ("3", "xid", "79")], got
	assert ev[2]["meaning"].startswith("double-bit ECC error")
	assert ev[3]["uuid"] == "GPU-4ea1f003-0000-4000-8000-000000000000"
	assert ev[2]["time"] < ev[3]["time"]
	EOF
	{ vramz analyze --no-color g.csv >a.txt; test $? = 3; } && # 3: findings
	has "CRITICAL xid +pid $JOB2 \(sleep\) on GPU 2: Xid 48" a.txt &&
	has "CRITICAL vram_errors +GPU 2: 1 new uncorrected ECC error" a.txt &&
	has "WARNING +vram_errors +GPU 1: corrected ECC errors rising \(8 new\)" a.txt &&
	has "CRITICAL gpu_lost +GPU 3 fell off the bus .*the last Xid before: 79" a.txt &&
	hasnt "GPU 0: |on GPU 0" a.txt
'

expect_success 'serve: the health metrics and dcgm-exporter'"'"'s names, Xid 48 once it came' '
	serve_start serve.log -i 500ms --slow-interval 500ms --dcgm-names &&
	# the Xid comes from the watcher, the counter from the next slow reading
	serve_wait_for sh -c "curl -s http://127.0.0.1:$PORT/metrics >m.txt &&
		grep -q \"^vramz_xid_last{gpu=\\\"2\\\".*} 48$\" m.txt &&
		grep -q \"^vramz_ecc_uncorrected_volatile_total{gpu=\\\"2\\\".*} 1$\" m.txt" &&
	serve_stop &&
	has "^# TYPE vramz_ecc_uncorrected_volatile_total counter$" m.txt &&
	has "^vramz_row_remap_pending\{gpu=\"1\",.*\} 1$" m.txt &&
	has "^vramz_row_remap_failure\{gpu=\"3\",.*\} 1$" m.txt &&
	has "^vramz_ecc_uncorrected_volatile_total\{gpu=\"2\",.*\} 1$" m.txt &&
	has "^vramz_xid_errors_total\{gpu=\"2\",.*\} 1$" m.txt &&
	has "^vramz_xid_last\{gpu=\"0\",.*\} 0$" m.txt &&
	hasnt "^vramz_retired_pages_sbe\{" m.txt &&
	has "^DCGM_FI_DEV_ROW_REMAP_PENDING\{gpu=\"1\",.*\} 1$" m.txt &&
	has "^DCGM_FI_DEV_ROW_REMAP_FAILURE\{gpu=\"3\",.*\} 1$" m.txt &&
	has "^DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS\{gpu=\"3\",.*\} 1$" m.txt &&
	has "^DCGM_FI_DEV_ECC_DBE_VOL_TOTAL\{gpu=\"2\",.*\} 1$" m.txt &&
	has "^DCGM_FI_DEV_PCIE_REPLAY_COUNTER\{gpu=\"1\",.*\} 7$" m.txt &&
	has "^DCGM_FI_DEV_XID_ERRORS\{gpu=\"2\",.*\} 48$" m.txt &&
	hasnt "^DCGM_FI_DEV_RETIRED_SBE\{" m.txt &&
	promtool check metrics <m.txt 2>&1 | tee lint.txt | { ! grep -q "error"; }
'

# daemon_saw_48: status --json reads the daemon, whose GPU 2 shows Xid 48
# and, from the next slow reading, its uncorrected error
daemon_saw_48() {
	vramz status --json >ds.json && python3 -c '
import json
d = json.load(open("ds.json"))
g = d["gpus"][2]
assert d["source"] == "daemon" and g["xid_last"] == 48 and g["ecc_uncorrected_volatile"] == 1'
}

expect_success 'daemon: its segment (layout 1.2) carries health and the Xid to status and to Python' '
	unset VRAMZ_NO_DAEMON && export VRAMZ_RUNTIME_DIR=$T/run && mkdir -m 700 run &&
	{ "$VRAMZ_BIN" daemon --procs -i 500ms --slow-interval 500ms 2>d.err & dp=$!; } &&
	echo "$dp" >>"$T/.serve-pids" &&
	serve_wait_for daemon_saw_48 &&
	test "$(g ds.json 1 remap_pending):$(g ds.json 0 retired_sbe_pages):$(g ds.json 0 xid_last)" = 1:None:0 &&
	PYTHONPATH=$TESTS_SRC/../python python3 -c "
import vramz
d = vramz.snapshot()
g = {x[\"index\"]: x for x in d[\"gpus\"]}
assert d[\"source\"] == \"daemon\" and g[2][\"xid_last\"] == 48, d[\"source\"]
assert g[1][\"remap_pending\"] == 1 and g[0][\"retired_sbe_pages\"] is None, g
" &&
	kill $dp && wait $dp
'

expect_success 'watch: the findings in order, naming whose job was hit; nothing on GPU 0' '
	bg_wait watch-json && cp watch-json.out w.jsonl &&
	python3 - "$JOB2" "$JOB3" <<-EOF &&
	import json, sys
	job2, job3 = int(sys.argv[1]), int(sys.argv[2])
	new = [json.loads(l)["finding"] for l in open("w.jsonl") if json.loads(l).get("event") == "new"]
	def one(kind, gpu, pid=None):
	    f = [x for x in new if x["kind"] == kind and x["gpu"] == gpu and (pid is None or x["pid"] == pid)]
	    assert len(f) == 1, (kind, gpu, pid, new)
	    return f[0]
	assert not [x for x in new if x["gpu"] == 0], "GPU 0 is healthy"
	pend, fail = one("row_remap", 1), one("row_remap", 3)
	assert pend["severity"] == "warning" and fail["severity"] == "critical"
	ve2, corr1 = one("vram_errors", 2), one("vram_errors", 1)
	assert ve2["severity"] == "critical" and corr1["severity"] == "warning"
	assert corr1["ref_count"] == 8, corr1
	x2, x3 = one("xid", 2, job2), one("xid", 3, job3)
	assert x2["value"] == 48 and x3["value"] == 79 and x2["comm"] == "sleep", x2
	assert not [x for x in new if x["kind"] == "xid" and x["pid"] not in (job2, job3)]
	lost = one("gpu_lost", 3)
	assert lost["value"] == 79, lost
	t = lambda f: f["first_seen"]
	assert t(pend) < t(x2) <= t(ve2) and t(x2) < t(x3) <= t(lost), [t(f) for f in (pend, x2, ve2, x3, lost)]
	EOF
	bg_wait watch-text && cp watch-text.out w.txt &&
	has "CRITICAL xid +pid $JOB2 \(sleep\) on GPU 2: Xid 48, double-bit ECC error" w.txt &&
	has "CRITICAL gpu_lost +GPU 3 fell off the bus .*the last Xid before: 79" w.txt
'

expect_success 'top: the findings panel names the lost GPU'"'"'s last Xid and Xid 48, and marks the job hit' '
	top_session 200 50 -i 500ms &&
	# 7 s into the scenario, after top has started: room for a loaded machine
	WAIT_FOR_TENTHS=300 wait_for "CRIT GPU 3 fell off the bus .*the last Xid before: 79" &&
	has "CRIT GPU 2: .*Xid 48: double-bit ECC error" screen &&
	has "CRIT GPU 3: a row remapping failed" screen &&
	has "^! *$JOB2 " screen &&
	hasnt "^! *4180000 |GPU 0: " screen
'

serve_cleanup
finish
