#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# run_oom_check.sh - `vramz run -o LOG` of PyTorch jobs on a real GPU
# (issue 27, about 40 s): the uncaught OOM and the caught OOM of
# verdicts_jobs.py under the agent, each run under `vramz run -o`, then
# `analyze` of each log against what the job says.  From the repository
# root with .carry/ built; a table last; logs in $OUT/runoom.tgz.
set -u
VERDICTS_NAME=runoom JOB_TIMEOUT=60; . tests/gpu/verdicts-lib.sh "$@"
for m in uncaught caught; do
	echo "== [$(since)s] vramz run -o $m.csv -- $m"
	timeout 90 "$VZ" run -g 0 -i 200ms -o "$W/$m.csv" -- python3 -m vramz.torch -i 0.5 --history \
		"$H/verdicts_jobs.py" "$m" --cap-gib 8 --hold-gib 5 --ask-gib 6 --wait 5 \
		> "$W/$m.json" 2> "$W/$m.err"
	echo "run rc=$?"
	"$VZ" analyze --json "$W/$m.csv" > "$W/$m.analyze.json" 2> "$W/$m.analyze.err"
	"$VZ" analyze "$W/$m.csv" > "$W/$m.analyze.txt" 2>> "$W/$m.analyze.err"
done
tar -C "$W" -czf "$OUT/runoom.tgz" --exclude=run . 2>/dev/null
H=$H python3 - "$W" <<'PYEOF'
import json, os, sys
sys.path.insert(0, os.environ["H"])
from checktable import Table
w = sys.argv[1]
t = Table()
def ready(m):
    for l in open(os.path.join(w, m + ".json")):
        if l.startswith("{") and json.loads(l).get("event") == "ready":
            return json.loads(l)
    return {}
def ooms(m, pid):
    try:
        fs = json.load(open(os.path.join(w, m + ".analyze.json")))["findings"]
    except (OSError, ValueError, KeyError):
        return []
    return [f for f in fs if f.get("kind") == "oom" and f.get("pid") == pid]
def site(at):
    return f'{at.get("file")}:{at.get("line")} in {at.get("func")}()'
u = ready("uncaught")
d = [f for f in ooms("uncaught", u.get("pid")) if f.get("severity") == "critical"]
t.row("run -o, uncaught OOM: analyze says died", (d[0]["summary"][:60] if d else None), "critical death", bool(d))
t.row("... at the line that ran out", d[0].get("site") if d else None, site(u.get("oom_at", {})),
      bool(d) and d[0].get("site") == site(u.get("oom_at", {})))
t.row("... asking", d[0].get("requested_bytes") if d else None, u.get("ask_bytes"),
      bool(d) and d[0].get("requested_bytes") == u.get("ask_bytes"))
c = ready("caught")
co = ooms("caught", c.get("pid"))
car = [f for f in co if "carried on" in (f.get("summary") or "")]
t.row("run -o, caught OOM then exit 0: carried on", (car[0]["summary"][:60] if car else None), "carried on", bool(car))
t.row("... and no death", sum(f.get("severity") == "critical" for f in co), "0",
      c.get("pid") is not None and not any(f.get("severity") == "critical" for f in co))
print()
t.print()
PYEOF
rm -rf "$W"
