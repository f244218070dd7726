#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# validate_units.sh - the systemd units of packaging/ with the real NVML, on
# a lent GPU machine where systemd cannot start them: each unit's own
# command line under the kernel-enforced parts of its sandbox
# (tests/helpers/unit_sandbox: no new privileges, no W+X memory, only the
# unit's address families), the exporter also as an unprivileged user
# (the unit's DynamicUser), and which /dev/nvidia* nodes NVML opens and in
# which mode (what the serve unit's DeviceAllow= must grant).
#   tests/gpu/validate_units.sh CARRY_DIR OUT_DIR
set -u
C=$1 OUT=$2
H=$(cd "$(dirname "$0")" && pwd)
P=$H/../../packaging
mkdir -p "$OUT"
# a copy every user can run (the checkout may not be readable by nobody)
B=$(mktemp -d /tmp/vzunit.XXXXXX)
cp "$C"/vramz "$C"/unit_sandbox "$B"/ && cp "$C"/*.so* "$B"/ 2>/dev/null
chmod -R a+rX "$B"
export LD_LIBRARY_PATH=$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
VZ=$B/vramz SB=$B/unit_sandbox
id | tee "$OUT/id.txt"
grep -i nvidia /proc/devices | tee "$OUT/proc-devices.txt"
ls -l /dev/nvidia* > "$OUT/dev.txt" 2>&1

python3 "$H/hold.py" 2048 2048 > /tmp/unit-hold.out 2>&1 &
HOLD=$!
for _ in $(seq 120); do grep -q ready /tmp/unit-hold.out && break; kill -0 $HOLD 2>/dev/null || break; sleep 0.5; done

echo "== which device nodes NVML opens, and how (fdinfo flags, octal; O_RDWR = 2)"
"$VZ" log --procs -i 1s --duration 10s -o /tmp/unit-fd.csv 2>/dev/null &
L=$! # vramz itself (not a timeout wrapper): its fds are read below
sleep 3
for fd in /proc/$L/fd/*; do
	t=$(readlink "$fd")
	case $t in /dev/nvidia*)
		f=$(awk '/^flags/ {print $2}' "/proc/$L/fdinfo/${fd##*/}")
		echo "$t flags=$f access=$(( 8#$f & 3 ))";;
	esac
done | sort | uniq -c | tee "$OUT/nvml-fds.txt"
kill $L 2>/dev/null; wait $L 2>/dev/null

echo "== vramz-log.service: its ExecStart in its sandbox (as root, like the unit)"
rm -rf /tmp/unit-varlog && mkdir -p /tmp/unit-varlog
cmd=$(sed -n 's/^ExecStart=//p' "$P/vramz-log.service" |
	sed -e "s|/usr/bin/vramz|$VZ|" -e "s|/var/log/vramz|/tmp/unit-varlog|g")
timeout 30 "$SB" --unit "$P/vramz-log.service" -- $cmd --duration 2s 2> "$OUT/log-unit.err"
echo "exit $?: $(cat "$OUT/log-unit.err")"
cp /tmp/unit-varlog/gpu.csv "$OUT/log-unit.csv" 2>/dev/null
cp /tmp/unit-varlog/gpu.procs.csv "$OUT/log-unit.procs.csv" 2>/dev/null
python3 - /tmp/unit-varlog/gpu.csv /tmp/unit-varlog/gpu.procs.csv "$HOLD" <<'PY'
import csv, sys
g = list(csv.DictReader(open(sys.argv[1])))
p = list(csv.DictReader(open(sys.argv[2])))
used = [r.get("mem_used_bytes") or r.get("mem_used_B") or "" for r in g]
print(f"log unit: {len(g)} GPU rows, used bytes {used}; {len(p)} process rows,",
      "holder listed" if any(r.get("pid") == sys.argv[3] for r in p) else "HOLDER MISSING")
PY

echo "== vramz-serve.service: in its sandbox, as an unprivileged user (DynamicUser)"
as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
$as_nobody true 2>/dev/null || { as_nobody=""; echo "(setpriv unavailable: running as $(id -un))"; }
$as_nobody "$SB" --unit "$P/vramz-serve.service" -- "$VZ" serve --listen 127.0.0.1:9975 --interval 1s 2> "$OUT/serve-unit.err" &
S=$!
sleep 4
curl -s --max-time 5 http://127.0.0.1:9975/metrics > "$OUT/serve-unit.metrics"
kill $S 2>/dev/null; wait $S 2>/dev/null
echo "serve unit: $(grep -c '^vramz_memory_used_bytes{' "$OUT/serve-unit.metrics") GPUs with memory.used served; stderr: $(head -c 300 "$OUT/serve-unit.err")"
grep '^vramz_memory_used_bytes{' "$OUT/serve-unit.metrics"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader

kill $HOLD; wait $HOLD 2>/dev/null
rm -rf "$B"
