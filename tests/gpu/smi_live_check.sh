#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# smi_live_check.sh - issue 38 on a real GPU (about 90 s): vramz's nvidia-smi
# query interface beside nvidia-smi itself, read in the same second, while
# a PyTorch process holds 1 GiB (tests/gpu/hold.py):
#   - every name `vramz status --help-query-gpu` answers, alone: the header
#     must equal nvidia-smi's to the byte; the value too, or differ only
#     for a reading that moves (power, temperature, clocks, utilization,
#     timestamp) -- each differing name is listed with both values;
#   - the DESIGN row (t1050's Q) and the apps' query, byte for byte apart
#     from those readings;
#   - the cost of a one-shot query and of -lms 100 for 10 s, as ratios to
#     nvidia-smi and to NVML's own floor (../shared/bench-ref, carried).
# Changes no GPU setting.  From the repository root with .carry/ built
# (tools/carry-build.sh):  bash tests/gpu/smi_live_check.sh $OUT
set -u
ROOT=$PWD
C=$ROOT/.carry; export LD_LIBRARY_PATH=$C
VZ=${VRAMZ:-$C/vramz}
OUT=${1:-${OUT:-/tmp/smilive}}; mkdir -p "$OUT"
W=$(mktemp -d /tmp/smilive.XXXXXX)
S=nvidia-smi
$S --version | sed -n '1,3p'
python3 "$ROOT/tests/gpu/hold.py" 1024 >"$W/hold.out" 2>&1 & HP=$!
trap 'kill $HP 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 120); do grep -q ready "$W/hold.out" 2>/dev/null && break; kill -0 $HP 2>/dev/null || break; sleep 0.5; done

# a reading that may move between two reads a few ms apart
moving='^(timestamp|power\.|temperature\.|clocks\.(current\.)?(sm|mem|memory|gr|graphics|video)$|clocks\.(sm|mem|gr|video)$|utilization\.|fan\.|clocks_event_reasons\.|clocks_throttle_reasons\.|enforced\.power|memory\.(used|free)|pstate)'
"$VZ" status --help-query-gpu | sed -n '/^answered by vramz:/,/^nvidia-smi/p' |
	sed -n 's/^  \([^ ]*\).*/\1/p' >"$W/names"
echo "== $(wc -l <"$W/names") names vramz answers, each alone, -i 0"
: >"$OUT/each.tsv"
for n in $(cat "$W/names"); do
	a=$($S --query-gpu="$n" --format=csv -i 0 2>&1)
	b=$("$VZ" status --query-gpu="$n" --format=csv -i 0 2>&1)
	ha=$(sed -n 1p <<<"$a"); hb=$(sed -n 1p <<<"$b")
	va=$(sed -n 2p <<<"$a"); vb=$(sed -n 2p <<<"$b")
	h=same; [ "$ha" = "$hb" ] || h=DIFF
	if [ "$va" = "$vb" ]; then v=same
	elif grep -qE "$moving" <<<"$n"; then v=moves
	else v=DIFF; fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$h" "$v" "$va" "$vb" "$ha" "$hb" >>"$OUT/each.tsv"
done
awk -F'\t' '$2 != "same" || $3 != "same" {printf "  %-40s header %-4s value %-5s  smi [%s]  vramz [%s]\n", $1, $2, $3, $4, $5}' "$OUT/each.tsv"

Q=index,uuid,pci.bus_id,memory.total,memory.reserved,memory.used,memory.free,temperature.gpu,power.draw,power.limit,enforced.power.limit,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.memory,persistence_mode,ecc.mode.current,mig.mode.current,utilization.gpu
A=pid,process_name,used_gpu_memory,gpu_uuid,gpu_bus_id,gpu_name,gpu_serial
{
	for f in csv csv,noheader csv,nounits; do
		echo "== --query-gpu=Q --format=$f"
		$S --query-gpu=$Q --format=$f; "$VZ" status --query-gpu=$Q --format=$f
	done
	echo "== --query-compute-apps=$A"
	$S --query-compute-apps=$A --format=csv; "$VZ" ps --query-compute-apps=$A --format=csv
	echo "== --query-compute-apps=pid,used_memory nounits"
	$S --query-compute-apps=pid,used_memory --format=csv,nounits
	"$VZ" ps --query-compute-apps=pid,used_memory --format=csv,nounits
	echo "== -l 1 for 2.5 s (header once)"
	timeout 2.5 $S --query-gpu=timestamp,index --format=csv -l 1
	timeout --foreground 2.5 "$VZ" status --query-gpu=timestamp,index --format=csv -l 1
	echo "== bad -i 7"
	$S --query-gpu=index --format=csv -i 7; echo "rc=$?"
	"$VZ" status --query-gpu=index --format=csv -i 7; echo "rc=$?"
} >"$OUT/side.txt" 2>&1
# the Q row: columns that must agree (not the moving ones: 8 9 16 17 23)
python3 - "$OUT/side.txt" <<'PY' >"$OUT/row.txt"
import sys
t = open(sys.argv[1]).read().split("== ")
moving = {7, 8, 15, 16, 22, 5, 6}  # temp, power, clocks, util, used, free (0-based)
for block in t[1:4]:
    lines = block.splitlines()
    title, rows = lines[0], [l for l in lines[1:] if l]
    smi, vz = rows[:len(rows) // 2], rows[len(rows) // 2:]
    for a, b in zip(smi, vz):
        if a.startswith("index"):
            print(title, "header", "same" if a == b else "DIFF")
            continue
        ca, cb = a.split(", "), b.split(", ")
        bad = [(i, x, y) for i, (x, y) in enumerate(zip(ca, cb)) if x != y and i not in moving]
        mv = [(i, x, y) for i, (x, y) in enumerate(zip(ca, cb)) if x != y and i in moving]
        print(title, "row", "same" if not bad and len(ca) == len(cb) else "DIFF %s" % bad,
              "| moving:", mv)
PY
cat "$OUT/row.txt"
apps_same=no
sed -n '/^== --query-compute-apps=pid,process/,/^== --query-compute-apps=pid,used/p' "$OUT/side.txt" |
	sed '1d;$d' >"$W/apps"
n=$(wc -l <"$W/apps"); [ "$n" -ge 2 ] && [ "$(head -n $((n / 2)) "$W/apps")" = "$(tail -n $((n / 2)) "$W/apps")" ] && apps_same=yes

echo "== cost: one-shot query of Q, 20 runs each, alternating"
python3 - "$S" "$VZ" "$Q" "$C/bench-ref" <<'PY' | tee "$OUT/cost.txt"
import os, statistics, subprocess, sys, time
smi, vz, q, ref = sys.argv[1:5]
phases = None
if os.path.exists(ref + "/nvml_phases.c"):
    subprocess.run(["gcc", "-O2", ref + "/nvml_phases.c", "-o", "/tmp/phases", "-ldl"], check=False)
    phases = "/tmp/phases"
def run(cmd):
    t0 = time.perf_counter(); r = os.times()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r2 = os.times()
    return time.perf_counter() - t0, (r2.children_user - r.children_user) + (r2.children_system - r.children_system)
cmds = {"nvidia-smi": [smi, "--query-gpu=" + q, "--format=csv"],
        "vramz": [vz, "status", "--query-gpu=" + q, "--format=csv"]}
if phases:
    cmds["nvml floor (phases)"] = [phases]
res = {k: [] for k in cmds}
for _ in range(20):
    for k, c in cmds.items():
        res[k].append(run(c))
for k, v in res.items():
    w = statistics.median(x[0] for x in v) * 1000; cpu = statistics.median(x[1] for x in v) * 1000
    print(f"{k:<22} wall {w:7.1f} ms  cpu {cpu:7.1f} ms (median of 20)")
w = {k: statistics.median(x[0] for x in v) for k, v in res.items()}
print(f"vramz / nvidia-smi wall: {w['vramz'] / w['nvidia-smi']:.2f}")
if phases:
    print(f"vramz / NVML floor wall: {w['vramz'] / w['nvml floor (phases)']:.2f}")
# -lms 100 for 10 s: the CPU each spends looping
for k, c in (("nvidia-smi -lms 100", [smi, "--query-gpu=" + q, "--format=csv", "-lms", "100"]),
             ("vramz -lms 100", [vz, "status", "--query-gpu=" + q, "--format=csv", "-lms", "100"])):
    r = os.times()
    p = subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(10); p.terminate(); out = p.communicate()[0]; r2 = os.times()
    cpu = (r2.children_user - r.children_user) + (r2.children_system - r.children_system)
    print(f"{k:<22} 10 s: {len(out.splitlines()) - 1} rows, CPU {cpu * 1000:.0f} ms ({cpu / 10 * 100:.2f} % of a core)")
PY

same_h=$(awk -F'\t' '$2 == "same"' "$OUT/each.tsv" | wc -l)
same_v=$(awk -F'\t' '$3 == "same"' "$OUT/each.tsv" | wc -l)
moves=$(awk -F'\t' '$3 == "moves"' "$OUT/each.tsv" | wc -l)
diff_v=$(awk -F'\t' '$3 == "DIFF"' "$OUT/each.tsv" | wc -l)
tar -C "$OUT" -czf "$OUT/smilive.tgz" each.tsv side.txt row.txt cost.txt 2>/dev/null
echo
echo "== summary"
printf '%-44s %s\n' "names answered by vramz" "$(wc -l <"$W/names")"
printf '%-44s %s\n' "headers equal to nvidia-smi's" "$same_h"
printf '%-44s %s\n' "values equal" "$same_v"
printf '%-44s %s\n' "values of moving readings that differed" "$moves"
printf '%-44s %s\n' "values that differed otherwise (DIFF)" "$diff_v"
printf '%-44s %s\n' "apps query byte for byte" "$apps_same"
grep -h "wall:" "$OUT/cost.txt" | sed 's/^/  /'
