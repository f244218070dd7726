#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# health_check.sh - issue 28 on real GPUs (docs/health.md), in about 90 s,
# from the repository root with .carry/ built by tools/carry-build.sh:
#   1. every VRAM health field of `vramz status --json` against
#      `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT` and the full
#      `-q`'s "Replays Since Reset" (there is no -d PCIE), read at the same
#      moment: numbers equal, "N/A" where vramz says null, never 0;
#   2. the same fields from `vramz info --json` and `serve --once
#      --dcgm-names` (DCGM's names present for what the GPU supports);
#   3. the event thread's cost: `vramz log` runs 65 s with no slow
#      readings; the "vramz-events" thread's voluntary context switches
#      (wake-ups) and CPU over 60 s, against the 60 its 1 s timeout
#      allows, and the events file it leaves (empty when no Xid came).
#   bash tests/gpu/health_check.sh     (OUT=dir: logs packed to $OUT/health.tgz)
# Builds nothing, changes no GPU setting, kills only what it started.
# Prints a table last.
set -u
C=$PWD/.carry; VZ=$C/vramz
export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0 VRAMZ_NO_DAEMON=1
OUT=${OUT:-/tmp}
D=$(mktemp -d /tmp/vramz-health-check.XXXXXX)
LP=
trap '[ -n "$LP" ] && kill "$LP" 2>/dev/null; wait 2>/dev/null' EXIT
declare -a RES
res() { RES+=("$(printf '%-52s %s' "$1" "$2")"); }

# 1. the same moment: vramz first, nvidia-smi right after (counters that
# move between the two reads would show as a mismatch, and be logged)
timeout 30 "$VZ" status --json >$D/status.json 2>$D/status.err
timeout 30 nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT >$D/smi.txt 2>&1
timeout 30 nvidia-smi -q >$D/smi-full.txt 2>&1
timeout 30 "$VZ" info --json >$D/info.json 2>$D/info.err
timeout 30 "$VZ" serve --once --dcgm-names >$D/metrics.txt 2>$D/serve.err
python3 - "$D" >$D/compare.txt 2>&1 <<'EOF'
import json, re, sys
d = sys.argv[1]

def blocks(path):
    """nvidia-smi -q: {gpu index: {"Section/Sub/Key": value}} by indentation."""
    out, gi, stack = {}, -1, []
    for line in open(path):
        if line.startswith("GPU "):
            gi += 1
            out[gi], stack = {}, []
            continue
        if gi < 0 or not line.strip():
            continue
        ind = len(line) - len(line.lstrip())
        key, _, val = line.strip().partition(":")
        key, val = key.strip(), val.strip()
        while stack and stack[-1][0] >= ind:
            stack.pop()
        if not val:
            stack.append((ind, key))
        else:
            out[gi]["/".join([k for _, k in stack] + [key])] = val
    return out

smi, full = blocks(d + "/smi.txt"), blocks(d + "/smi-full.txt")
st = json.load(open(d + "/status.json"))

def num(v):
    if v is None or v in ("N/A", "[N/A]", "Not Supported", "[Not Supported]"):
        return None
    if v in ("Enabled", "Yes"):
        return 1
    if v in ("Disabled", "No"):
        return 0
    m = re.match(r"^\d+", v)
    return int(m.group(0)) if m else v

def total(b, where, kind):
    """Sum of a counter class under ECC Errors/<where>: Correctable lines
    (SRAM + DRAM) or Uncorrectable ones; older drivers' Total lines."""
    vals = [num(v) for k, v in b.items() if k.startswith("ECC Errors/" + where + "/")
            and ((kind == "corr" and "Correctable" in k and "Uncorrectable" not in k) or
                 (kind == "unc" and "Uncorrectable" in k)) and "Total" not in k]
    vals = [v for v in vals if isinstance(v, int)]
    if vals:
        return sum(vals)
    bit = "Single Bit" if kind == "corr" else "Double Bit"
    return num(b.get("ECC Errors/" + where + "/" + bit + "/Total"))

def find(b, suffix):
    for k, v in b.items():
        if k.endswith(suffix):
            return num(v)
    return None

bad = 0
for g in st["gpus"]:
    i = g["index"]
    b, f = smi.get(i, {}), full.get(i, {})
    want = {
        "ecc_mode": find(b, "ECC Mode/Current"),
        "ecc_corrected_volatile": total(b, "Volatile", "corr"),
        "ecc_uncorrected_volatile": total(b, "Volatile", "unc"),
        "ecc_corrected_aggregate": total(b, "Aggregate", "corr"),
        "ecc_uncorrected_aggregate": total(b, "Aggregate", "unc"),
        "remap_correctable_rows": find(b, "Remapped Rows/Correctable Error"),
        "remap_uncorrectable_rows": find(b, "Remapped Rows/Uncorrectable Error"),
        "remap_pending": find(b, "Remapped Rows/Pending"),
        "remap_failure": find(b, "Remapped Rows/Remapping Failure Occurred"),
        "retired_sbe_pages": find(b, "Retired Pages/Single Bit ECC"),
        "retired_dbe_pages": find(b, "Retired Pages/Double Bit ECC"),
        "retired_pending": find(b, "Retired Pages/Pending Page Blacklist"),
        "pcie_replays": find(f, "Replays Since Reset"),
    }
    for k, w in want.items():
        got = g.get(k)
        ok = got == w
        bad += not ok
        print(f"GPU {i} {k:28} vramz={got!s:8} nvidia-smi={w!s:8} {'ok' if ok else 'MISMATCH'}")
    print(f"GPU {i} xid_last (status has no watcher)     vramz={g.get('xid_last')}")
info = json.load(open(d + "/info.json"))
same = all(info["gpus"][n]["health"][k] == st["gpus"][n][k]
           for n in range(len(st["gpus"])) for k in info["gpus"][n]["health"] if not k.startswith("xid"))
print("info health == status:", same)
print("MISMATCHES", bad, "INFO_SAME", int(same))
EOF
mism=$(awk '/^MISMATCHES/ {print $2}' $D/compare.txt)
isame=$(awk '/^MISMATCHES/ {print $4}' $D/compare.txt)
res "fields equal to nvidia-smi -q (all GPUs)" "$([ "$mism" = 0 ] && echo ok || echo "FAIL: ${mism:-?} mismatches")"
res "info --json health object equal to status" "$([ "$isame" = 1 ] && echo ok || echo FAIL)"
dc=$(grep -c "^DCGM_FI_DEV_\(ECC_SBE_VOL_TOTAL\|ECC_DBE_VOL_TOTAL\|ROW_REMAP_PENDING\|ROW_REMAP_FAILURE\|CORRECTABLE_REMAPPED_ROWS\|UNCORRECTABLE_REMAPPED_ROWS\|PCIE_REPLAY_COUNTER\){" $D/metrics.txt)
res "serve --dcgm-names health samples (7 a GPU)" "$dc for $(nvidia-smi -L | wc -l) GPUs"
res "no DCGM_FI_DEV_RETIRED_* where N/A (Hopper)" "$(grep -c '^DCGM_FI_DEV_RETIRED_' $D/metrics.txt) samples"

# 3. the event thread over 60 s: no slow readings, a tick every 10 s
"$VZ" log -o $D/l.csv -i 10s --slow-interval 0 2>$D/log.err & LP=$!
sleep 5
tid=
for t in /proc/$LP/task/*; do [ "$(cat $t/comm 2>/dev/null)" = vramz-events ] && tid=${t##*/}; done
if [ -n "$tid" ]; then
	w0=$(awk '/^voluntary_ctxt_switches/ {print $2}' /proc/$LP/task/$tid/status)
	n0=$(awk '/^nonvoluntary_ctxt_switches/ {print $2}' /proc/$LP/task/$tid/status)
	c0=$(awk '{print $1}' /proc/$LP/task/$tid/schedstat)
	p0=$(cat /proc/$LP/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}')
	sleep 60
	w1=$(awk '/^voluntary_ctxt_switches/ {print $2}' /proc/$LP/task/$tid/status)
	n1=$(awk '/^nonvoluntary_ctxt_switches/ {print $2}' /proc/$LP/task/$tid/status)
	c1=$(awk '{print $1}' /proc/$LP/task/$tid/schedstat)
	p1=$(cat /proc/$LP/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}')
	ls /proc/$LP/task | while read -r t; do echo "$t $(cat /proc/$LP/task/$t/comm)"; done >$D/threads.txt
	res "event thread wake-ups in 60 s (1 s timeout: ~60)" "$((w1 - w0)) voluntary, $((n1 - n0)) involuntary"
	res "event thread CPU in 60 s" "$(awk -v a=$c0 -v b=$c1 'BEGIN{printf "%.3f ms (%.5f %% of a core)", (b-a)/1e6, 100*(b-a)/1e9/60}')"
	res "whole log process wake-ups in 60 s (6 ticks)" "$((p1 - p0))"
else
	res "event thread" "FAIL: no vramz-events thread ($(head -c 200 $D/log.err))"
fi
kill $LP 2>/dev/null; wait $LP 2>/dev/null; LP=
res "events file after 65 s (no Xid expected)" "$(($(wc -l <$D/l.events.csv 2>/dev/null || echo 1) - 1)) events"
res "log columns end with the health fields" "$(head -1 $D/l.csv | grep -q ',xid_events,xid_last,xid_time_ms$' && echo ok || echo FAIL)"

tar -C "$D" -czf "$OUT/health.tgz" . 2>/dev/null
echo
cat $D/compare.txt
echo
echo "=== health_check results ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l)); logs: $OUT/health.tgz"
printf '%s\n' "${RES[@]}"
rm -rf "$D"
