#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t2000-log.sh - `vramz log` against the fake NVML: what it records equals
# what `vramz status --json` sees, rows stay whole through kill -9, SIGTERM
# ends cleanly, existing files are appended to only under the same header,
# rotation bounds the files, /dev/full and a lost GPU are handled visibly.
. "$TESTS_SRC/e2e/lib.sh"
scenario 2gpu-h200.scn

# every data row has the header's column count and the file ends in \n
whole_rows() { python3 - "$@" <<'PY'
import csv, sys
for path in sys.argv[1:]:
    data = open(path, newline='').read()
    assert data.endswith('\n'), path + ': torn last line'
    rows = list(csv.reader(data.splitlines()))
    assert all(len(r) == len(rows[0]) for r in rows), path + ': ragged rows'
    print(path, len(rows) - 1, 'rows')
PY
}

expect_success 'a log holds the numbers status shows, readable by csv tools and by vramz' '
	vramz status --json >status.json &&
	vramz log -o l.csv --procs -i 50ms --duration 200ms 2>err &&
	has "^vramz: log: 8 rows \(4 ticks\) in .* to l.csv" err &&
	whole_rows l.csv l.procs.csv &&
	vramz replay --json l.csv >replay.jsonl &&
	test "$(wc -l <replay.jsonl)" = 4 &&
	python3 - <<PY
import csv, json
st = json.load(open("status.json"))
rows = list(csv.DictReader(open("l.csv")))
tick = json.loads(open("replay.jsonl").readline())
slow = {"pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s", "energy_mj", "pcie_gen", "pcie_width"}
for g, row, r in zip(st["gpus"], rows, tick["gpus"]):
    for k, v in g.items():
        if k in row and k not in slow and k != "lost":
            assert row[k] == ("" if v is None else str(v)), (k, row[k], v)
        if k in r and k not in slow and k != "system" and k != "vendor":
            assert r[k] == v, (k, r[k], v)
    assert r["vendor"] is None  # a log does not record the vendor (docs/csv.md)
sp = sorted((p["gpu"], p["pid"], p["used_bytes"]) for p in st["processes"])
rp = sorted((p["gpu"], p["pid"], p["used_bytes"]) for p in tick["processes"])
assert sp == rp, (sp, rp)
assert tick["system"]["backend"] == "replay"
print("ok", len(rows), "rows")
PY
'

expect_success 'kill -9 mid-run leaves only whole rows, and the log still reads' '
	"$VRAMZ_BIN" log -o k.csv --procs -i 10ms 2>/dev/null & pid=$! &&
	sleep 0.7 && kill -9 $pid && { wait $pid || true; } &&
	whole_rows k.csv k.procs.csv &&
	vramz replay --fast k.csv >/dev/null
'

expect_success 'SIGTERM finishes the tick, close the file and say so' '
	"$VRAMZ_BIN" log -o t.csv -i 20ms 2>err & pid=$! &&
	sleep 0.4 && kill -TERM $pid && wait $pid &&
	has "rows .* to t.csv, stopped by SIGTERM" err &&
	whole_rows t.csv
'
expect_success 'SIGINT (Ctrl-C) likewise' '
	"$VRAMZ_BIN" log -o i.csv -i 20ms 2>err & pid=$!
	sleep 0.4 && kill -INT $pid && wait $pid &&
	has "stopped by SIGINT" err && whole_rows i.csv
'

expect_success 'appending keeps one header; another header is refused and left untouched' '
	vramz log -o a.csv --duration 30ms -i 10ms 2>/dev/null &&
	vramz log -o a.csv --duration 30ms -i 10ms 2>/dev/null &&
	test "$(grep -c ^time a.csv)" = 1 && test "$(wc -l <a.csv)" = 13 &&
	printf "date,price\n2026-01-01,3\n" >x.csv && cp x.csv x.orig &&
	test "$(rc vramz log -o x.csv --duration 10ms)" = 1 &&
	vramz log -o x.csv --duration 10ms 2>err || true &&
	test "$(wc -l <err)" = 1 && has "x.csv: exists with other columns" err &&
	cmp x.csv x.orig
'

expect_success 'rotation keeps N files, each whole and under the size' '
	vramz log -o r.csv -i 10ms --duration 600ms --rotate 3KiB --keep 2 --procs 2>/dev/null &&
	test -f r.1.csv && test -f r.2.csv && test ! -e r.3.csv &&
	test -f r.1.procs.csv && test ! -e r.3.procs.csv &&
	for f in r.csv r.1.csv r.2.csv r.procs.csv r.1.procs.csv; do
		test "$(stat -c %s $f)" -le 3072 && head -1 $f | grep -q ^time,gpu, || exit 1
	done &&
	whole_rows r.csv r.1.csv r.2.csv r.procs.csv r.1.procs.csv
'

expect_success 'a full disk is one clear message and exit 1' '
	test "$(rc vramz log -o /dev/full --duration 10ms)" = 1 &&
	{ vramz log -o /dev/full --duration 10ms 2>err || true; } &&
	test "$(wc -l <err)" = 1 && has "^vramz: /dev/full: write failed: No space left on device$" err
'

expect_success 'a GPU lost mid-run gets lost rows while the other keeps logging' '
	scenario lost.scn &&
	vramz log -o lost.csv -i 10ms --duration 60ms 2>/dev/null &&
	python3 - <<PY
import csv
rows = list(csv.DictReader(open("lost.csv")))
g1 = [r for r in rows if r["gpu"] == "1"]
g0 = [r for r in rows if r["gpu"] == "0"]
assert len(g0) == len(g1) == 6, (len(g0), len(g1))
assert g1[-1]["lost"] == "1" and g1[-1]["mem_used_bytes"] == "", g1[-1]
assert all(r["lost"] == "0" and r["mem_used_bytes"] for r in g0)
PY
'

expect_success 'a second logger on a file being logged refuses with one line; the first goes on' '
	"$VRAMZ_BIN" log -o two.csv --procs -i 50ms --duration 30s 2>err1 & pid=$! &&
	# the lock is taken before the header is written: a header means held
	for _ in $(seq 100); do [ -s two.csv ] && break; sleep 0.1; done &&
	test -s two.csv &&
	{ vramz log -o two.csv --procs -i 50ms --duration 200ms 2>err2; test $? = 1; } &&
	test "$(wc -l <err2)" = 1 &&
	has "^vramz: two.csv: another vramz is writing this log \(it holds its lock\); refusing to write it too$" err2 &&
	{ vramz run -o two.csv -- true 2>err3; test $? = 1; } &&
	has "^vramz: run: two.csv: another vramz is writing this log" err3 &&
	kill -0 $pid && kill -TERM $pid && wait $pid &&
	has "to two.csv, stopped by SIGTERM" err1 &&
	whole_rows two.csv two.procs.csv &&
	test "$(grep -c "^time," two.csv)" = 1 &&
	vramz log -o two.csv --procs -i 50ms --duration 100ms 2>/dev/null
'

expect_success 'bad usage is exit 2 with one line' '
	test "$(rc vramz log -i 5ms)" = 2 &&
	test "$(rc vramz log --procs)" = 2 &&
	test "$(rc vramz log --rotate 1MiB)" = 2 &&
	test "$(rc vramz log stray)" = 2 &&
	vramz log -h | grep -q -- --rotate
'
finish
