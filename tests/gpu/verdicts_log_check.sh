#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# verdicts_log_check.sh - issue 27 item 3 on a real GPU (about 90 s): the
# line that ran out in `analyze` and `report` of a log recorded with
# `vramz log --procs`, against what the jobs themselves say.  From the
# repository root with .carry/ built (tools/carry-build.sh) and torch
# installed; the package is used from python/ (PYTHONPATH).
#     bash tests/gpu/verdicts_log_check.sh [OUT]
# One `vramz log -o v.csv --procs -g 0 -i 1s` runs throughout, while the
# workloads of verdicts_jobs.py run under the agent:
#  1. an uncaught OOM under a cap with most of the GPU free;
#  2. an OOM between two processes filling the GPU (the one that asked);
#  3. a caught OOM then a normal exit.
# Then `analyze` (text and --json) and `report` of the log: 1 and 2 are
# critical deaths with forward()'s line and the bytes asked (1 with
# load()'s line as the holder), 3 is "carried on" with probe()'s line and
# no death, and the events file holds their rows.  Kills only what it
# started; NCCL_NVLS_ENABLE=0.  A table last; logs in $OUT/vlog.tgz.
set -u
VERDICTS_NAME=vlog JOB_TIMEOUT=120; . tests/gpu/verdicts-lib.sh "$@"

timeout 150 "$VZ" log -o "$W/v.csv" --procs -g 0 -i 1s > "$W/log.out" 2> "$W/log.err" &
LOGGER=$!; PIDS+=($LOGGER)
sleep 2

oom_scenarios 8 25 8 10
sleep 3
kill -INT $LOGGER; wait $LOGGER; echo "log rc=$?"
echo "== [$(since)s] analyze and report"
"$VZ" analyze "$W/v.csv" > "$W/analyze.txt" 2> "$W/analyze.err"; echo "analyze rc=$?"
"$VZ" analyze --json "$W/v.csv" > "$W/analyze.json" 2>> "$W/analyze.err"
"$VZ" report "$W/v.csv" -o "$W/v.html" 2> "$W/report.err"; echo "report rc=$?"
tar -C "$W" -czf "$OUT/vlog.tgz" --exclude=run . 2>/dev/null

echo "== [$(since)s] results"
H=$H python3 - "$W" <<'PYEOF'
import csv, html, json, os, sys
w = sys.argv[1]
def first(name, **kv):
    try:
        for l in open(os.path.join(w, name)):
            if l.strip().startswith("{"):
                x = json.loads(l)
                if all(x.get(k) == v for k, v in kv.items()):
                    return x
    except (OSError, ValueError):
        pass
    return {}
try:
    fs = json.load(open(os.path.join(w, "analyze.json")))["findings"]
except (OSError, ValueError, KeyError):
    fs = []
try:
    evs = list(csv.DictReader(open(os.path.join(w, "v.events.csv"))))
except OSError:
    evs = []
page = html.unescape(open(os.path.join(w, "v.html")).read()) if os.path.exists(os.path.join(w, "v.html")) else ""
sys.path.insert(0, os.environ["H"])
from checktable import Table
table = Table()
row = table.row
def site(at):
    return f'{at.get("file")}:{at.get("line")} in {at.get("func")}()'
def oom_of(pid):
    return [f for f in fs if f.get("kind") == "oom" and f.get("pid") == pid]
u, g, fl, c = (first(n + ".json", event="ready") for n in ("uncaught", "greedy", "fill", "caught"))
for label, j in (("1. uncaught OOM", u), ("2. OOM between two", g)):
    d = [f for f in oom_of(j.get("pid")) if f.get("severity") == "critical"]
    d = d[0] if d else {}
    row(f"{label}: analyze says died out of memory", (d.get("summary") or "")[:60] or None, "critical death", bool(d))
    row(f"{label}: the line that ran out", d.get("site"), site(j.get("oom_at", {})),
        d.get("site") == site(j.get("oom_at", {})))
    row(f"{label}: bytes asked", d.get("requested_bytes"), j.get("ask_bytes"),
        d.get("requested_bytes") == j.get("ask_bytes"))
    row(f"{label}: the report's marker", "in page" if d.get("summary") and d["summary"] in page else None,
        "in page", bool(d.get("summary")) and d["summary"] in page)
    e = [r for r in evs if r["event"] == "process_end" and r["pid"] == str(j.get("pid"))]
    row(f"{label}: process_end row", e[0]["meaning"][:40] if e else None, "oom=1", bool(e) and e[0]["oom"] == "1")
d = [f for f in oom_of(u.get("pid")) if f.get("severity") == "critical"]
hs = [h.get("site") for h in (d[0].get("holders") or [])] if d else []
row("1. what held the memory", hs[0] if hs else None, site(u.get("holder_at", {})),
    bool(hs) and hs[0] == site(u.get("holder_at", {})))
fo = [f for f in oom_of(fl.get("pid")) if f.get("severity") == "critical"]
row("2. the one that held: no OOM death", len(fo), "0", fl.get("pid") is not None and not fo)
co = oom_of(c.get("pid"))
carried = [f for f in co if "carried on" in (f.get("summary") or "")]
row("3. caught OOM: carried on, in the log", (carried[0]["summary"][:60] if carried else None), "carried on", bool(carried))
row("3. its line", carried[0].get("site") if carried else None, site(c.get("probe_at", {})),
    bool(carried) and carried[0].get("site") == site(c.get("probe_at", {})))
row("3. no death", sum(f.get("severity") == "critical" or "died" in (f.get("summary") or "") for f in co), "0",
    c.get("pid") is not None and not any(f.get("severity") == "critical" for f in co))
e = [r for r in evs if r["event"] == "process_end" and r["pid"] == str(c.get("pid"))]
row("3. process_end row: a normal exit", (e[0]["how"] + " " + e[0]["status"]) if e else None, "exit 0",
    bool(e) and e[0]["how"] == "exit" and e[0]["status"] == "0" and e[0]["oom"] == "0")
print()
table.print()
PYEOF
rm -rf "$W"
