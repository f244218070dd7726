#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# py_check.sh - issue 15 on a real GPU (about 2.5 minutes), from the
# repository root with .carry/ built (tools/carry-build.sh) and torch
# installed; the package is used from python/ (PYTHONPATH), nothing is
# installed.   bash tests/gpu/py_check.sh [OUT]
#  1. the agent's cost on a real training step, as a ratio (py_cost.py);
#  2. NVML vs torch per process: a process holding 10 GiB under the agent;
#     vramz ps --json's torch.reserved_bytes against torch's own figure,
#     used_bytes against nvidia-smi, and the memory outside the allocator;
#  3. a training loop leaking at a known line (py_leak_train.py, with
#     history) and an allocator-fragmenting workload (py_frag.py) under the
#     agent while `vramz watch` runs: the leak's site must name that file
#     and line; py_frag.py fragments a 5 GiB pool and makes the allocator
#     retry, then holds still: torch's own inactive_split / num_alloc_retries
#     against `vramz ps --json` for that pid, and the fragmentation finding.
# Kills only the processes it started; NCCL_NVLS_ENABLE=0; every step
# bounded by timeout.  Prints a table of results at the end.
set -u
ROOT=$PWD
C=$ROOT/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=$C/vramz; H=$ROOT/tests/gpu
OUT=${1:-/tmp/py_check}; mkdir -p "$OUT"
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1
export VRAMZ_RUNTIME_DIR=$(mktemp -d /tmp/vramz-run.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$VRAMZ_RUNTIME_DIR"; }
trap cleanup EXIT
T0=$(date +%s); since() { echo $(( $(date +%s) - T0 )); }

echo "== [$(since)s] 1. agent cost on a training step"
timeout 80 python3 "$H/py_cost.py" > "$OUT/cost.json" 2> "$OUT/cost.err"; echo "cost rc=$?"

echo "== [$(since)s] 2. NVML vs torch"
timeout 40 python3 -m vramz.torch -i 0.5 "$H/py_hold.py" --gib 10 --seconds 15 > "$OUT/hold.json" 2> "$OUT/hold.err" &
HOLD=$!; PIDS+=($HOLD)
for _ in $(seq 120); do grep -q pid "$OUT/hold.json" && break; kill -0 $HOLD 2>/dev/null || break; sleep 0.25; done
sleep 1.5
timeout 10 "$VZ" ps --json > "$OUT/ps.json" 2> "$OUT/ps.err"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits > "$OUT/smi.csv" 2>&1
timeout 10 "$VZ" ps > "$OUT/ps.txt" 2>&1
kill $HOLD 2>/dev/null; wait $HOLD 2>/dev/null

echo "== [$(since)s] 3. leak at a known line + fragmentation, watched"
timeout 110 python3 -m vramz.torch --history -i 0.5 "$H/py_leak_train.py" --seconds 95 --leak-mib 16 \
	> "$OUT/leak.json" 2> "$OUT/leak.err" &
PIDS+=($!)
timeout 105 "$VZ" watch --json -i 500ms -d 95s --leak-warmup 5s --leak-min-span 20s --report-after 2s \
	> "$OUT/watch.json" 2> "$OUT/watch.err" &
WATCH=$!; PIDS+=($WATCH)
sleep 3 # watch sees py_frag before its retries start (after its --warmup)
# py_frag.py: a 5 GiB pool fragmented by mixed sizes freed every other,
# retries every 0.5 s for 18 s, then still for 15 s (phase "steady")
timeout 70 python3 -m vramz.torch -i 0.5 "$H/py_frag.py" --gib 5 --warmup 6 --retry-seconds 18 --hold 15 \
	> "$OUT/frag.json" 2> "$OUT/frag.err" &
FRAG=$!; PIDS+=($FRAG)
for _ in $(seq 240); do grep -q '"steady"' "$OUT/frag.json" && break; kill -0 $FRAG 2>/dev/null || break; sleep 0.25; done
sleep 2 # the agent publishes every 0.5 s: its file now holds the steady figures
timeout 10 "$VZ" ps --json > "$OUT/ps-frag.json" 2> "$OUT/ps-frag.err"
timeout 10 "$VZ" ps > "$OUT/ps-frag.txt" 2>&1
wait $FRAG; echo "frag rc=$?"
wait $WATCH; echo "watch rc=$?"
wait
echo "== [$(since)s] results"
python3 - "$OUT" <<'PYEOF'
import json, sys, os
out = sys.argv[1]
def lines(name):
    try:
        return [json.loads(l) for l in open(os.path.join(out, name)) if l.strip().startswith("{")]
    except (OSError, ValueError):
        return []
rows = []
cost = (lines("cost.json") or [{}])[0]
rows.append(("agent cost, step time ratio with/without (1 Hz)", cost.get("ratio_on"),
             "<= 1.01", cost.get("ratio_on") is not None and cost["ratio_on"] <= 1.01))
rows.append(("agent cost, ratio with history=True", cost.get("ratio_history"), "report", None))
rows.append(("step ms without agent / agent tick ms", f'{cost.get("step_ms_off")} / {cost.get("agent_tick_ms")}', "report", None))
hold = (lines("hold.json") or [{}])[0]
try:
    ps = json.load(open(os.path.join(out, "ps.json")))
except (OSError, ValueError):
    ps = {"processes": []}
mine = [p for p in ps["processes"] if p["pid"] == hold.get("pid")]
p = mine[0] if mine else {}
t = p.get("torch") or {}
smi = {}
for l in open(os.path.join(out, "smi.csv")):
    f = [x.strip() for x in l.split(",")]
    if len(f) == 2 and f[0].isdigit() and f[1].isdigit():
        smi[int(f[0])] = int(f[1]) << 20
rows.append(("torch.reserved_bytes (vramz) == torch.cuda.memory_reserved()", f'{t.get("reserved_bytes")} vs {hold.get("reserved")}',
             "equal", t.get("reserved_bytes") == hold.get("reserved") and hold.get("reserved") is not None))
rows.append(("torch.allocated_bytes (vramz) == memory_allocated()", f'{t.get("allocated_bytes")} vs {hold.get("allocated")}',
             "equal", t.get("allocated_bytes") == hold.get("allocated") and hold.get("allocated") is not None))
rows.append(("used_bytes (vramz) vs nvidia-smi", f'{p.get("used_bytes")} vs {smi.get(hold.get("pid"))}',
             "equal", p.get("used_bytes") is not None and p.get("used_bytes") == smi.get(hold.get("pid"))))
ob = p.get("outside_allocator_bytes")
rows.append(("outside the allocator (context, cuBLAS)", f'{ob / 2**20:.0f} MiB' if ob is not None else None,
             "300-2000 MiB", ob is not None and 300 << 20 <= ob <= 2000 << 20))
leak = (lines("leak.json") or [{}])[0]
ev = [e.get("finding", e) for e in lines("watch.json")]
leaks = [f for f in ev if f.get("kind") == "leak" and f.get("pid") == leak.get("pid")]
sited = [f for f in leaks if f.get("site")]
want = f'{os.path.basename(leak.get("file", "?"))}:{leak.get("line")} in {leak.get("func")}()'
rows.append(("leak found for the leaking loop", len(leaks), ">= 1", len(leaks) >= 1))
rows.append(("leak site named", sited[-1]["site"] if sited else None, want, bool(sited) and sited[-1]["site"] == want))
rows.append(("share of the growth at that line", sited[-1].get("site_share") if sited else None, ">= 0.8",
             bool(sited) and (sited[-1].get("site_share") or 0) >= 0.8))
frag = lines("frag.json")
steady = ([x for x in frag if x.get("phase") == "steady"] or [{}])[0]
fin = ([x for x in frag if x.get("final")] or [{}])[0]
fpid = steady.get("pid") or fin.get("pid")
try:
    psf = json.load(open(os.path.join(out, "ps-frag.json")))
except (OSError, ValueError):
    psf = {"processes": []}
vf = ([p for p in psf["processes"] if fpid is not None and p["pid"] == fpid and p["gpu"] == 0] or [{}])[0]
vt = vf.get("torch") or {}
mib = lambda b: None if b is None else f"{b / 2**20:.0f} MiB"
rows.append(("py_frag: torch's own inactive_split / reserved (steady)",
             f'{mib(steady.get("inactive_split"))} / {mib(steady.get("reserved"))}', ">= 1 GiB, 25 %",
             steady.get("inactive_split") is not None and steady["inactive_split"] >= 1 << 30
             and steady["inactive_split"] >= 0.25 * steady["reserved"]))
rows.append(("py_frag: torch's own num_alloc_retries / num_ooms (steady)",
             f'{steady.get("retries")} / {steady.get("ooms")} ({fin.get("fallback_cycles")} of {fin.get("cycles")} cycles fell back to an OOM)',
             ">= 10 retries", (steady.get("retries") or 0) >= 10))
rows.append(("vramz ps --json torch.inactive_split_bytes == torch's",
             f'{vt.get("inactive_split_bytes")} vs {steady.get("inactive_split")}', "equal",
             vt.get("inactive_split_bytes") is not None and vt.get("inactive_split_bytes") == steady.get("inactive_split")))
rows.append(("vramz ps --json torch.alloc_retries == torch's num_alloc_retries",
             f'{vt.get("alloc_retries")} vs {steady.get("retries")}', "equal",
             vt.get("alloc_retries") is not None and vt.get("alloc_retries") == steady.get("retries")))
rows.append(("vramz ps --json torch.ooms == torch's num_ooms",
             f'{vt.get("ooms")} vs {steady.get("ooms")}', "equal",
             vt.get("ooms") is not None and vt.get("ooms") == steady.get("ooms")))
frags = [f for f in ev if f.get("kind") == "fragmentation" and f.get("pid") == fpid and f.get("count") is not None]
rows.append(("fragmentation finding (watch, agent) for py_frag",
             f'{frags[-1]["count"]} retries, share {frags[-1].get("share")}' if frags else None,
             "appears", bool(frags)))
outside = [f for f in ev if f.get("kind") == "outside_allocator"]
rows.append(("outside_allocator findings", len(outside), "report", None))
w = max(len(r[0]) for r in rows)
print(f'{"check":<{w}}  {"got":<40}  {"want":<14}  ok')
for name, got, want_, ok in rows:
    print(f'{name:<{w}}  {str(got):<40}  {want_:<14}  {"-" if ok is None else ("PASS" if ok else "FAIL")}')
PYEOF
echo "== [$(since)s] done; files in $OUT"
