#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# verdicts_check.sh - issue 27 on a real GPU (about 4.5 minutes), from the
# repository root with .carry/ built (tools/carry-build.sh) and torch
# installed; the package is used from python/ (PYTHONPATH), nothing is
# installed.   bash tests/gpu/verdicts_check.sh [OUT]
# One `vramz watch --json` at 1 Hz with its defaults runs throughout, on
# GPU 0, while the workloads of verdicts_jobs.py run under the agent:
#  1. an uncaught OOM under set_per_process_memory_fraction with most of
#     the GPU free: "died out of memory" (critical, evidence "ended") at
#     forward()'s line, the bytes asked, load()'s line as the holder;
#  2. an OOM between two processes filling the GPU: the one that asked
#     dies of it (certain), the one that held is no OOM;
#  3. a caught OOM then a normal exit: "carried on" (warning), never a
#     death;
#  4. a fragmenting job whose retries climb for 100 s (py_frag.py): one
#     fragmentation finding, never cleared and raised again, its
#     "changed" events at most one per 10 s;
#  5. leaks of 20 MiB/s, 100 MiB/s and 1 GiB/s after 45 s of steady work,
#     side by side: the time from each one's start to its report.
# Kills only the processes it started; NCCL_NVLS_ENABLE=0; every step
# bounded by timeout.  Prints a table of results last; logs are packed
# into $OUT/verdicts.tgz.
set -u
VERDICTS_NAME=verdicts; . tests/gpu/verdicts-lib.sh "$@"

timeout 300 "$VZ" watch --json -g 0 -i 1s -d 285s > "$W/watch.json" 2> "$W/watch.err" &
WATCH=$!; PIDS+=($WATCH)
sleep 2

oom_scenarios 12 30 10 15

echo "== [$(since)s] 4 and 5. fragmentation (retries climbing 100 s) beside three leaks"
{ timeout 200 python3 -m vramz.torch -i 0.5 "$H/py_frag.py" --gib 5 --warmup 6 --retry-seconds 100 --hold 10 \
	> "$W/frag.json" 2> "$W/frag.err"; date +%s.%N > "$W/frag.end"; } &
PIDS+=($!)
job leak20 leak --rate-mib 20 --steady 45 --seconds 75
job leak100 leak --rate-mib 100 --steady 45 --seconds 75
job leak1g leak --rate-mib 1024 --steady 45 --seconds 45
wait "${PIDS[-4]}" "${PIDS[-3]}" "${PIDS[-2]}" "${PIDS[-1]}"
echo "== [$(since)s] watch ends"
wait $WATCH; echo "watch rc=$?"
# one file back (the device returns at most 8): the jobs' output, watch's
# findings and the agents' files (tombstones) from the runtime directory
tar -C "$W" -czf "$OUT/verdicts.tgz" . 2>/dev/null

echo "== [$(since)s] results"
H=$H python3 - "$W" <<'PYEOF'
import json, os, sys, datetime
w = sys.argv[1]
def lines(name):
    try:
        return [json.loads(l) for l in open(os.path.join(w, name)) if l.strip().startswith("{")]
    except (OSError, ValueError):
        return []
def first(name, **kv):
    return next((x for x in lines(name) if all(x.get(k) == v for k, v in kv.items())), {})
def t(e):
    return datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
ev = lines("watch.json")
def of(pid, kind):
    return [e for e in ev if "finding" in e and pid is not None and e["finding"].get("pid") == pid and e["finding"]["kind"] == kind]
sys.path.insert(0, os.environ["H"])
from checktable import Table
table = Table()
row = table.row

u = first("uncaught.json", event="ready")
at = u.get("oom_at", {})
site = f'{at.get("file")}:{at.get("line")} in {at.get("func")}()'
h = u.get("holder_at", {})
hsite = f'{h.get("file")}:{h.get("line")} in {h.get("func")}()'
oo = [e["finding"] for e in of(u.get("pid"), "oom")]
death = [f for f in oo if f["severity"] == "critical" and "ended" in (f.get("evidence") or [])]
d = death[-1] if death else {}
row("1. uncaught OOM under a cap: died out of memory (critical)", d.get("summary", "")[:70] or None,
    "a death", bool(death))
row("1. the line that ran out", d.get("site"), site, d.get("site") == site)
row("1. bytes asked", d.get("requested_bytes"), u.get("ask_bytes"),
    d.get("requested_bytes") is not None and d.get("requested_bytes") == u.get("ask_bytes"))
hs = [x.get("site") for x in d.get("holders") or []]
row("1. what held the memory", hs[0] if hs else None, hsite, bool(hs) and hs[0] == hsite)
g, fl = first("greedy.json", event="ready"), first("fill.json", event="ready")
gd = [e["finding"] for e in of(g.get("pid"), "oom") if e["finding"]["severity"] == "critical"]
row("2. OOM between two processes: the one that asked died of it", gd[-1].get("summary", "")[:70] if gd else None,
    "a death", bool(gd))
fo = [e for e in of(fl.get("pid"), "oom") if e["finding"]["severity"] == "critical"]
row("2. the one that held: no OOM death", len(fo), "0", fl.get("pid") is not None and len(fo) == 0)
c = first("caught.json", event="ready")
co = [e["finding"] for e in of(c.get("pid"), "oom")]
row("3. caught OOM: 'carried on' while it ran", next((f["summary"][:70] for f in co if "carried on" in f["summary"]), None),
    "carried on", any("carried on" in f["summary"] for f in co))
row("3. ... and its normal exit: no death", sum(f["severity"] == "critical" or "died" in f["summary"] for f in co),
    "0", c.get("pid") is not None and first("caught.json", event="exit") != {}
    and not any(f["severity"] == "critical" or "died" in f["summary"] for f in co))
fr = lines("frag.json")
fpid = next((x.get("pid") for x in fr if x.get("pid")), None)
fe = of(fpid, "fragmentation")
news = sum(e["event"] == "new" for e in fe)
cleared = [t(e) for e in fe if e["event"] == "cleared"]
changed = sum(e["event"] == "changed" for e in fe)
try:
    frag_end = float(open(os.path.join(w, "frag.end")).read())
except (OSError, ValueError):
    frag_end = None
# while it lived (its findings clear when it ends): a clear is a flap
early_clears = [x for x in cleared if frag_end is None or x < frag_end - 2]
span = (frag_end - t(fe[0])) if fe and frag_end else None
row("4. fragmentation: one finding while retries climb", f"{news} new, {len(early_clears)} cleared early", "1 new, 0 cleared",
    news == 1 and not early_clears)
row("4. its 'changed' events", changed, "<= 1 per 10 s",
    span is not None and changed <= span / 10 + 1)
lat = []
for name, rate in (("leak20", 20), ("leak100", 100), ("leak1g", 1024)):
    s = first(name + ".json", event="leak_start")
    le = [e for e in of(s.get("pid"), "leak") if e["event"] == "new"]
    dt = t(le[0]) - s["t"] if le and s else None
    seen = le[0]["finding"].get("rate_bytes_per_s") if le else None
    lat.append((rate, dt, seen))
    row(f"5. leak {rate} MiB/s reported within 60 s of its start",
        None if dt is None else f"{dt:.0f} s ({seen / 2**20:.0f} MiB/s seen)", "<= 60 s", dt is not None and 0 < dt <= 60)
print()
print("leak detection latency (docs/validation.md):")
print(f'{"rate MiB/s":>11} {"GiB/min":>8} {"reported after s":>17} {"rate seen MiB/s":>16}')
for rate, dt, seen in lat:
    print(f'{rate:>11} {rate * 60 / 1024:>8.2f} {"-" if dt is None else f"{dt:.0f}":>17} {"-" if seen is None else f"{seen / 2**20:.0f}":>16}')
print()
table.print()
PYEOF
rm -rf "$W"
