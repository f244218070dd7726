#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1810-events-storm.sh - an Xid storm (800 a second for 5 s, which any
# user's faulting kernel can cause) does not grow the events file with
# the storm: repeats of one (GPU, Xid) are one row per merge interval
# with their count, a new kind still gets its row at once, every event
# is still counted (the rows' counts, the GPU file's xid_events, analyze),
# and the events file rotates with the log so analyze of the rotated set
# still finds every event (issue 35, item 8).
. "$TESTS_SRC/e2e/lib.sh"

cat >"$T/storm.scn" <<'EOF'
driver 580.159.04
nvml 13.580.159.04
cuda 13000
gpu 0 name="NVIDIA H100 80GB HBM3" uuid=GPU-5707a000-0000-4000-8000-000000000000 pci=00000000:18:00.0 arch=hopper cc=9.0 mem_total=81559MiB mem_reserved=523MiB mem_used=auto util=10 mem_util=2 temp=35 power=120000 power_limit=700000 sm_clock=1755 mem_clock=2619 throttle=0x0 ecc=1 ecc_sbe_vol=0 ecc_dbe_vol=0 events=0xb
gpu 1 name="NVIDIA H100 80GB HBM3" uuid=GPU-5707a001-0000-4000-8000-000000000000 pci=00000000:2A:00.0 arch=hopper cc=9.0 mem_total=81559MiB mem_reserved=523MiB mem_used=auto util=10 mem_util=2 temp=35 power=120000 power_limit=700000 sm_clock=1755 mem_clock=2619 throttle=0x0 ecc=1 ecc_sbe_vol=0 ecc_dbe_vol=0 events=0xb
proc gpu=0 pid=4181000 used=4GiB type=compute sm=10
at 1s gpu=0 xid=13 every=1250us times=4000
at 3s gpu=1 xid=79
EOF
export FAKE_NVML_SCENARIO=$T/storm.scn VRAMZ_NO_DAEMON=1

# the three logs, each a storm of its own, run side by side from here;
# each step checks its own (bg_wait)
bg_run storm vramz log -o g.csv -i 500ms --duration 8s
mkdir "$T/rot"
bg_run rot sh -c 'cd rot && exec "$VRAMZ_BIN" log -o g.csv -i 200ms --duration 8s --rotate 4KiB --keep 50'
bg_run old vramz log -o old.csv -i 500ms --duration 1s

# check_storm EVENTS...: the rows of the events files, bounded per kind
# per second, and every event of the storm counted by their counts
check_storm() { python3 - "$@" <<'PY'
import csv, sys
from collections import Counter, defaultdict
rows = [r for p in sys.argv[1:] for r in csv.DictReader(open(p))]
print(len(rows), "rows")
assert "count" in rows[0], rows[0]
total = Counter()
per_sec = defaultdict(Counter)
for r in rows:
    total[(r["gpu"], r["xid"])] += int(r["count"])
    per_sec[(r["gpu"], r["xid"])][r["time"][:19]] += 1
print(dict(total))
assert total[("0", "13")] == 4000, total
assert total[("1", "79")] == 1, total
# 5 s of storm at a 1 s merge interval: about 6 rows, not 4000
assert len(rows) <= 12, len(rows)
assert max(per_sec[("0", "13")].values()) <= 2, per_sec
PY
}

expect_success 'a storm of 4000 Xids: a row per second with its count, all counted' '
	bg_wait storm &&
	check_storm g.events.csv &&
	# the first Xid of the storm is on disk at once, with count 1
	sed -n 2p g.events.csv | grep -q ",xid,13,.*,1$" &&
	python3 -c "
import csv
rows = [r for r in csv.DictReader(open(\"g.csv\")) if r[\"gpu\"] == \"0\"]
assert rows[-1][\"xid_events\"] == \"4000\", rows[-1][\"xid_events\"]
" &&
	{ vramz analyze --no-color g.csv >a.txt; test $? -le 3; } &&
	has "^events: GPU 0: Xid 13 x 4000 " a.txt &&
	has "^events: GPU 1: Xid 79 x 1 " a.txt &&
	{ vramz analyze --json g.csv >a.json; test $? -le 3; } &&
	test "$(json a.json "[e[\"count\"] for e in d[\"driver_events\"] if e[\"xid\"] == 13][0]")" = 4000
'

expect_success 'the events file rotates with the log; analyze of the set counts every event' '
	bg_wait rot && cd rot &&
	test -e g.1.csv && test -e g.1.events.csv &&
	# each level that had events has its own events file with its header
	for f in g*.events.csv; do head -1 "$f" | grep -q "^time,gpu,uuid,event,.*,count$"; done &&
	check_storm g*.events.csv &&
	{ vramz analyze --json g.csv >a.json; test $? -le 3; } &&
	test "$(json a.json "[e[\"count\"] for e in d[\"driver_events\"] if e[\"xid\"] == 13][0]")" = 4000
'

expect_success 'an events file from before the count column still reads: a row is one event' '
	bg_wait old &&
	printf "%s\n" "time,gpu,uuid,event,xid,meaning" \
		"$(sed -n 2p old.csv | cut -d, -f1),0,GPU-5707a000-0000-4000-8000-000000000000,xid,31,x" \
		"$(sed -n 2p old.csv | cut -d, -f1),0,GPU-5707a000-0000-4000-8000-000000000000,xid,31,x" \
		>old.events.csv &&
	{ vramz analyze --no-color old.csv >o.txt; test $? -le 3; } &&
	has "^events: GPU 0: Xid 31 x 2 " o.txt
'

finish
