#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t6070-top-charts: the charts of `vramz top` fill the terminal and say
# what they show.  For 1, 2 and 8 GPUs at 80x24, 120x40 and 200x60 (tmux
# captures): at most 6 blank rows at 120x40 and 200x60 (issue 29: 50 of 60
# were blank); every chart's y labels sit on the rows their values fall
# in, from its labelled foot (0, or zoomed to the used range, issue 40:
# the value there) up to a ceiling that is the GPU's total (memory, drawn
# ─) or 100 %, or the used range's end (┈, the total above it);
# its newest point is as high as the scenario's used + reserved memory or
# utilization; the time labels stand where the points that long ago are.
# At 80x24 the screen is as useful as before the charts: every process
# row of 1 and 2 GPUs, 8 GPU lines and 11 process rows of 8.  More GPUs
# than blocks fit: one chart of all, a line and a legend entry per GPU.
# A finding is marked on the time axis where it began (the engine's
# first_seen, as `vramz analyze` reports it) and stays there as time
# passes.  ASCII: no Unicode anywhere.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
top() { top_session "$@"; }
export XDG_CONFIG_HOME=$T/cfg # no thresholds from the machine's config
cat >"$T/chartcheck.py" <<'PY'
# chartcheck.py SCREEN SCENARIO [STEP_MS]: the charts of a `vramz top`
# capture against the scenario's numbers.  For each chart (a ceiling row "LABEL
# ┤─", or "LABEL ┤┈" zoomed below the total): its labels sit on the rows
# their values fall in, the bottom row is labelled (0, or the zoomed
# range's foot), and the ceiling is its GPU's total (memory, ─) or 100 %
# (utilization), or a value above the GPU's memory (┈);
# the newest point's height is the GPU's used + reserved memory (an area)
# or its utilization (a line) within a dot; with STEP_MS (the time between
# ticks) each time label ("-2m") stands where the point that long ago is
# plotted, two points a braille cell.  Prints one line a chart; exits 1
# at the first mismatch.
import re, sys
screen = open(sys.argv[1], encoding="utf-8").read().split("\n")
GiB = 1 << 30
def size(v):
    m = re.fullmatch(r"([0-9.]+)(B|KiB|MiB|GiB|TiB)?", v)
    return float(m.group(1)) * {"B": 1, None: 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": GiB, "TiB": 1 << 40}[m.group(2)]
gpus, procs = {}, {}
for line in open(sys.argv[2]):
    line = line.split("#")[0].split()
    if not line:
        continue
    kv = dict(t.split("=", 1) for t in line[1:] if "=" in t)
    if line[0] == "gpu":
        gpus[int(line[1])] = kv
    elif line[0] == "proc" and kv.get("used", "0") != "na":
        g = int(kv["gpu"])
        procs[g] = procs.get(g, 0) + size(kv.get("used", "0"))
def truth(i):
    g = gpus[i]
    total, rsv = size(g["mem_total"]), size(g.get("mem_reserved", "0"))
    used = procs.get(i, 0) if g.get("mem_used", "auto") == "auto" else size(g["mem_used"])
    return total / GiB, (min(used, total - rsv) + rsv) / GiB, float(g.get("util", 0))
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
n = 0
for y, line in enumerate(screen):
    for m in re.finditer(r"([0-9.]+)( GiB|%) ┤([─┈])", line):
        ax = m.end() - 2                       # the axis column
        top, unit = float(m.group(1)), m.group(2).strip()
        zoomed = m.group(3) == "┈"
        # down the axis to the corner
        rows = []
        r = y + 1
        while r < len(screen) and len(screen[r]) > ax and screen[r][ax] in "┤│":
            rows.append(r)
            r += 1
        if r >= len(screen) or len(screen[r]) <= ax or screen[r][ax] != "└":
            fail("chart at %d,%d has no time axis" % (y, ax))
        ph = len(rows)
        nowx = screen[r].find("now", ax)
        pw = nowx + 3 - ax - 1
        if len(sys.argv) > 3:
            step = int(sys.argv[3])
            unit_s = {"s": 1, "m": 60, "h": 3600, "d": 86400}
            for t in re.finditer(r"-(\d+)([smhd])", screen[r][ax:nowx]):
                back = int(t.group(1)) * unit_s[t.group(2)] * 1000 // step
                col = (pw * 2 - 1 - back) // 2
                at = t.start() - 1          # the plot's column of the label's start
                if abs(at - (col - len(t.group(0)) // 2)) > 1:
                    fail("chart at %d: time label %s at column %d, %s ago is plotted at %d" % (y, t.group(0), at, t.group(0)[1:], col))
        labels = []
        for k, yy in enumerate(rows):
            lm = re.search(r"([0-9.]+)( GiB|%) [┤]$", screen[yy][:ax + 1])
            if lm:
                labels.append((k, float(lm.group(1))))
        if not labels or labels[-1][0] != ph - 1:
            fail("chart at %d: the bottom row is not labelled: %s" % (y, labels))
        foot = labels[-1][1]
        if foot != 0 and unit != "GiB":
            fail("chart at %d: a %s chart's foot is %g, not 0" % (y, unit, foot))
        for k, v in labels:
            want = max(0, ph - 1 - int((v - foot) / (top - foot) * ph + 1e-9))
            if want != k:
                fail("chart at %d: label %g on row %d, its value falls in row %d" % (y, v, k, want))
        # which GPU: the nearest "GPU N" left of the chart two rows above
        title = screen[y - 2] if y >= 2 else ""
        ids = [(t.start(), int(t.group(1))) for t in re.finditer(r"GPU (\d+)", title) if t.start() <= ax]
        if not ids:
            print("chart at %d,%d: %s%s over %d rows, %d labels (no GPU title)" % (y, ax, top, unit, ph, len(labels)))
            n += 1
            continue
        gi = ids[-1][1]
        total, mem, util = truth(gi)
        # the newest point: the rightmost column holding dots, its top cell
        col = None
        for x in range(ax + pw, ax, -1):
            if any(len(screen[yy]) > x and 0x2800 < ord(screen[yy][x]) <= 0x28FF for yy in rows):
                col = x
                break
        if col is None:
            fail("chart at %d (GPU %d): nothing plotted" % (y, gi))
        k = next(k for k, yy in enumerate(rows) if len(screen[yy]) > col and 0x2800 < ord(screen[yy][col]) <= 0x28FF)
        bits = ord(screen[rows[k]][col]) - 0x2800
        right = [0x08, 0x10, 0x20, 0x80]   # the newer point's column, top down
        dots = [i for i, b in enumerate(right) if bits & b]
        if not dots:
            fail("chart at %d: the newest column's top cell has no right dots" % y)
        if unit == "GiB":
            if not zoomed and abs(top - total) > 0.05:
                fail("GPU %d: ceiling %g GiB, its total is %.2f GiB" % (gi, top, total))
            if zoomed and not (foot < mem < top < total):
                fail("GPU %d: zoomed to %g-%g GiB, its memory %.2f of %.2f GiB" % (gi, foot, top, mem, total))
            level = (ph - 1 - k) * 4 + (4 - dots[0])
            want = round((mem - foot) / (top - foot) * ph * 4)
        else:
            if top != 100:
                fail("GPU %d: utilization ceiling %g%%" % (gi, top))
            level = (ph - 1 - k) * 4 + (3 - dots[0])
            want = round(util / 100 * (ph * 4 - 1))
        if abs(level - want) > 1:
            fail("GPU %d %s: the newest point is %d dots high, %s wants %d" % (gi, unit, level, "used+reserved" if unit == "GiB" else "util", want))
        print("GPU %d %s chart: %s over %d rows, %d labels, newest point %d dots (want %d)" % (gi, unit, "zoomed %g-%g" % (foot, top) if zoomed else "ceiling %g" % top, ph, len(labels), level, want))
        n += 1
if n == 0:
    fail("no chart on screen")
PY
charts() { python3 "$T/chartcheck.py" screen "$SCENARIOS/$1" ${2:-}; }
blank() { grep -c '^ *$' screen || true; }

for scn in 1gpu 2gpu-h200 8gpu; do
scenario $scn.scn
for size in "200 60" "120 40"; do
expect_success "$scn at ${size/ /x}: at most 6 blank rows, charts labelled to the scenario's values" '
	top '"$size"' &&
	wait_for "^ +4[23]00[0-9]{3} " && sleep 2.2 && $TM capture-pane -p >screen &&
	echo "blank rows: $(blank)" && test "$(blank)" -le 6 &&
	charts '$scn'.scn 1000
'
done
done

scenario 1gpu.scn
expect_success '1 GPU at 80x24: a chart of the card, the process row' '
	top 80 24 &&
	wait_for "4200001" && sleep 1.2 && $TM capture-pane -p >screen &&
	charts 1gpu.scn 1000 | grep -qE "GPU 0 GiB chart: zoomed [0-9.]+-[0-9.]+ over" &&
	has "^ 4200001 .* 4\.00 GiB" screen && test "$(blank)" -le 6
'

scenario 2gpu-h200.scn
expect_success '2 GPUs at 80x24: both charted, all three processes listed' '
	top 80 24 &&
	wait_for "4200301" && sleep 1.2 && $TM capture-pane -p >screen &&
	test "$(charts 2gpu-h200.scn | grep -cE "GiB chart: zoomed [0-9.]+-[0-9.]+ over")" = 2 &&
	test "$(grep -cE "^ +4200[123]01 " screen)" = 3
'

scenario 8gpu.scn
expect_success '8 GPUs at 80x24: a line per GPU and 11 process rows, as before the charts' '
	top 80 24 &&
	wait_for "4300001" && $TM capture-pane -p >screen &&
	for i in 0 1 2 3 4 5 6 7; do has "^ ?$i[ !] +[A-Z]" screen || exit 1; done &&
	test "$(grep -cE "^ +43[0-9]{5} " screen)" -ge 11
'

expect_success '8 GPUs at 120x40: one chart of all, a line and a legend entry each' '
	top 120 40 &&
	wait_for "4300001" && sleep 1.2 && $TM capture-pane -p >screen &&
	charts 8gpu.scn 1000 >out && cat out &&
	has "80\.0GiB over [0-9]+ rows" out && has "100\.0% over" out &&
	has "used\+rsv by GPU  ⣿ 0  ⣿ 1  ⣿ 2  ⣿ 3  ⣿ 4  ⣿ 5  ⣿ 6  ⣿ 7" screen
'

expect_success 'ASCII (--ascii): the same charts, no Unicode, each GPU line drawn with its index' '
	top 120 40 --ascii &&
	wait_for "4300001" && sleep 1.2 && $TM capture-pane -p >screen &&
	! grep -qP "[^\x00-\x7f]" screen &&
	has "^80\.0 GiB \+-+ used\+rsv by GPU  # 0  # 1" screen &&
	has "^ +0 GiB \+ " screen && has " now$" screen &&
	for i in 0 1 2 3 4 5 6 7; do sed -n "/^80\.0 GiB/,/^ *+-/p" screen | grep -q "$i" || exit 1; done
'

scenario 1gpu.scn
expect_success 'm hides the utilization chart and shows it again; -u asks for it on a narrow block' '
	top 200 60 &&
	wait_for "4200001" && has "100% ┤" screen &&
	keys m && sleep 0.5 && $TM capture-pane -p >screen && hasnt "100% ┤" screen &&
	keys m && wait_for "100% ┤" &&
	$TM kill-server && top 100 30 -u && wait_for "100% ┤"
'

# the replayed job of t6040 (top-lib.sh's job_log): pid 4200102 on GPU 0
# grows 64 MiB/s from its start, pid 4200201 on GPU 1 holds still; 150 s
# at 1 Hz
job_log

# the orphaned-memory findings (the pids are no process here, each named
# with its GPU) begin 01:01:00, as `vramz analyze` reports them; the
# leak's moment is the one its process page states
expect_success 'each finding is marked where it began, on its GPU, and on its process page' '
	{ vramz analyze --json "$T/job.csv" >an.json || test $? = 3; } &&
	TOP_ENV=TZ=UTC top 120 40 --replay "$T/job.csv" --speed 64 &&
	WAIT_FOR_TENTHS=150 wait_for "\[end\]" && sleep 0.3 && $TM capture-pane -p >screen &&
	has "CRIT (out of memory in about [^:]+: )?pid 4200102 on GPU 0 grows" screen &&
	keys Home Enter && wait_for "^PROCESS 4200102" && $TM capture-pane -p >page &&
	has "CRIT began 01:0[01]:[0-9]{2}  (out of memory in about [^:]+: )?pid 4200102 on GPU 0 grows" page &&
	python3 - <<-PY
	import datetime, json, re
	last = datetime.datetime(2026, 11, 30, 1, 2, 29)
	def ago(hms):
	    return int((last - datetime.datetime.strptime("2026-11-30 " + hms, "%Y-%m-%d %H:%M:%S")).total_seconds())
	began = {}
	for f in json.load(open("an.json"))["findings"]:
	    if f["kind"] == "orphaned":
	        began.setdefault(f["gpu"], []).append(ago(f["first_seen"][11:19]))
	leak = ago(re.search(r"CRIT began (\S+)  (?:out of memory in about [^:]+: )?pid 4200102", open("page", encoding="utf-8").read()).group(1))
	began[0].append(leak)
	def check(s, y, want_backs, what):
	    ax = s[y].index("└"); nowx = s[y].index("now", ax); pw = nowx + 3 - ax - 1
	    marks = sorted(x for x, c in enumerate(s[y]) if c == "▲" and x < nowx)
	    want = sorted(set(ax + 1 + (pw * 2 - 1 - b) // 2 for b in want_backs))
	    print("%s: marks at %s, want %s (%s ticks back)" % (what, marks, want, want_backs))
	    assert len(marks) == len(want) and all(abs(m - w) <= 1 for m, w in zip(marks, want))
	s = open("screen", encoding="utf-8").read().split("\n")
	axes = [y for y, l in enumerate(s) if "└" in l][0::2]   # the memory charts of GPU 0, 1
	for gpu, y in enumerate(axes):
	    check(s, y, began[gpu], "GPU %d" % gpu)
	p = open("page", encoding="utf-8").read().split("\n")
	check(p, [y for y, l in enumerate(p) if "└" in l][0], began[0], "its page") # both name it
	PY
'
# kept rows (fb_keep) with parts drawn again over them: GPU 0 holds its
# memory all along while its utilization moves; GPU 1 grows while its
# utilization holds.  Slowed to 1x, each new tick keeps the flat charts'
# cells and draws the others over their cleared region; paused, what the
# screen shows is what a full redraw (^L) shows.
python3 - "$T" <<'PY'
import csv, datetime, sys
d = sys.argv[1]
g = list(csv.DictReader(open(d + "/tpl.csv", newline="")))
cols = list(g[0].keys())
t0 = g[0]["time"]
gt = {r["gpu"]: r for r in g if r["time"] == t0}
base = datetime.datetime(2026, 11, 30, 2, 0, 0)
GiB, MiB = 1 << 30, 1 << 20
with open(d + "/parts.csv", "w", newline="") as f:
    w = csv.DictWriter(f, cols, lineterminator="\n"); w.writeheader()
    for s in range(400):
        t = (base + datetime.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        for gpu, used, util in (("0", 8 * GiB, 10 + s % 7 * 10), ("1", 2 * GiB + s * 64 * MiB, 50)):
            r = dict(gt[gpu]); r["time"] = t
            r["mem_used_bytes"] = str(used); r["util_gpu_pct"] = str(util)
            r["mem_free_bytes"] = str(int(r["mem_total_bytes"]) - int(r["mem_reserved_bytes"]) - used)
            w.writerow(r)
PY

expect_success 'charts kept beside charts drawn again: the same cells as a full redraw' '
	top 120 40 --replay "$T/parts.csv" --speed 64 &&
	sleep 3.5 && keys - - - - - - && wait_for " 1x " && sleep 2.5 && keys " " && wait_for "\[paused\]" &&
	sleep 0.3 && $TM capture-pane -p | sed 1d >kept &&
	keys C-l && sleep 0.5 && $TM capture-pane -p | sed 1d >fresh &&
	grep -q "⣿" kept && has "100% ┤" kept &&
	{ diff kept fresh || { echo "kept rows differ from a full redraw"; exit 1; }; }
'

finish
