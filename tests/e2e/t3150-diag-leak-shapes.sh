#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t3150-diag-leak-shapes.sh - issue 36 live, against the fake NVML at
# watch's default settings (-i 500ms): a leak from its process's first
# sample is reported within 45 s of it, a staircase of 512 MiB segments
# within 120 s and named as one, a steady job never; `analyze` of a
# `log --procs` of the same says the same.  About 90 s, so once: the
# sanitizer build's run of the same engine is bench.leak_corpus's job's
# (skipped there too).
if [ "${VRAMZ_SANITIZE:-0}" = 1 ]; then
	echo "skip - 90 s of wall time; the plain build's run checks the same code"
	exit 0
fi
. "$TESTS_SRC/e2e/lib.sh"

sleep 200 & STEADY_PID=$!
sleep 200 & LEAK_PID=$!
sleep 200 & STAIRS_PID=$!
export STEADY_PID LEAK_PID STAIRS_PID
trap 'kill $STEADY_PID $LEAK_PID $STAIRS_PID 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg"

expect_success 'watch: the leak from the start within 45 s, the staircase within 120 s, the steady job never' '
	scenario leak-shapes.scn &&
	export FAKE_NVML_EPOCH=$(date +%s.%N) &&
	{ vramz log -o "$T/shapes.csv" --procs -i 1s --duration 88s 2>/dev/null & lp=$!; } &&
	vramz watch -i 500ms -d 88s --json >out.jsonl &&
	wait $lp &&
	python3 - out.jsonl <<PY
import datetime, json, os, sys
t0 = float(os.environ["FAKE_NVML_EPOCH"])
def at(s):
    return datetime.datetime.strptime(s.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
first = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    f = e["finding"]
    if e["event"] == "new" and f["kind"] == "leak":
        first.setdefault(f["pid"], (at(f["last_update"]) - t0, f))
leak, stairs, steady = int("$LEAK_PID"), int("$STAIRS_PID"), int("$STEADY_PID")
print({p: round(v[0], 1) for p, v in first.items()})
assert leak in first and first[leak][0] <= 45, first.get(leak)
assert stairs in first and first[stairs][0] <= 120, first.get(stairs)
f = first[stairs][1]
assert f["series"] == "nvml" and f["count"] >= 4 and f["ref_value"] == 512 * 2**20, f
assert abs(f["value"] - 10) <= 2, f
assert "in 512 MiB steps every 1" in f["summary"], f["summary"]
assert steady not in first, first.get(steady)
PY
'

expect_success 'analyze of the log: the same two leaks, each from its onset' '
	{ vramz analyze --json "$T/shapes.csv" >an.json; test $? = 3; } &&
	python3 - an.json <<PY
import json, sys
fs = {f["pid"]: f for f in json.load(open(sys.argv[1]))["findings"] if f["kind"] == "leak"}
assert sorted(fs) == sorted([int("$LEAK_PID"), int("$STAIRS_PID")]), sorted(fs)
assert abs(fs[int("$LEAK_PID")]["rate_bytes_per_s"] - 20 * 2**20) <= 0.1 * 20 * 2**20, fs
assert fs[int("$STAIRS_PID")]["count"] >= 4, fs
PY
'

finish
