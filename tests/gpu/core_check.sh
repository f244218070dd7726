#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# core_check.sh - issue 13 on real GPUs: a program built against vramz 0.1's
# headers (tests/abi/v0) runs against this libvramz and sees what
# nvidia-smi sees; a program using every 0.2 header too; each GPU says
# vendor "nvidia" in JSON and Prometheus.  Builds libvramz.so.0 from the
# sources with gcc (no cmake needed there), while hold.py holds 2 and
# 1 GiB.  From the repository root, with .carry/ built
# (tools/carry-build.sh):   bash tests/gpu/core_check.sh     (~40 s)
set -u
C=$PWD/.carry; VZ=$C/vramz; W=$(mktemp -d /tmp/core_check.XXXXXX)
export NCCL_NVLS_ENABLE=0
declare -a RES
res() { RES+=("$(printf '%-52s %s' "$1" "$2")"); }

# 1. the library from source, as CMake would build it (lib/**/*.c)
SRCS=$(ls lib/*.c lib/backend/*.c lib/diagnose/*.c lib/log/*.c 2>/dev/null)
if timeout 180 gcc -O2 -std=c11 -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE \
	-Iinclude -Ilib $SRCS -Wl,-soname,libvramz.so.0 \
	-o $W/libvramz.so.0 -ldl -lpthread -lm 2>$W/build.err; then
	res "libvramz.so.0 built from source" ok
else
	res "libvramz.so.0 built from source" "FAIL ($(head -c 200 $W/build.err))"
fi
ln -sf libvramz.so.0 $W/libvramz.so
# 2. an 0.1 program (examples/embed.c against the 0.1 headers), a 0.2 one
timeout 60 gcc -O2 -std=c11 -Itests/abi/v0 examples/embed.c -L$W -lvramz \
	-Wl,-rpath,$W -o $W/embed_v0 2>>$W/build.err && res "0.1-header program built" ok ||
	res "0.1-header program built" FAIL
timeout 60 gcc -O2 -std=c11 -Iinclude tests/install/use_all.c -L$W -lvramz \
	-Wl,-rpath,$W -o $W/use_all 2>>$W/build.err && res "0.2 program (every header) built" ok ||
	res "0.2 program (every header) built" FAIL

python3 tests/gpu/hold.py 2048 1024 > $W/h.out 2>&1 & H=$!
for _ in $(seq 120); do grep -q ready $W/h.out && break; kill -0 $H 2>/dev/null || break; sleep 0.5; done

# 3. the 0.1 program's figures against nvidia-smi's
timeout 30 $W/embed_v0 > $W/v0.out 2>&1; rc=$?
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,nounits > $W/smi.gpu
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits > $W/smi.apps
python3 - "$W" "$rc" <<'EOF' > $W/cmp.txt
import re, sys
w, rc = sys.argv[1], int(sys.argv[2])
v0 = open(w + "/v0.out").read()
gpus = {int(m[0]): (int(m[1]), int(m[2])) for m in re.findall(r"GPU (\d+) .*?: (\d+) of (\d+) MiB used", v0)}
smi = {}
for line in open(w + "/smi.gpu"):
    i, used, total = [int(x) for x in line.split(",")]
    smi[i] = (used, total)
ok_gpus = rc == 0 and gpus.keys() == smi.keys() and all(
    gpus[i][1] == smi[i][1] and abs(gpus[i][0] - smi[i][0]) <= 64 for i in smi)
apps = {}
for line in open(w + "/smi.apps"):
    if line.strip():
        pid, used = [int(x) for x in line.split(",")]
        apps[pid] = apps.get(pid, 0) + used
seen = {}
for pid, mib in re.findall(r"pid (\d+) .*?: (\d+) MiB", v0):
    seen[int(pid)] = seen.get(int(pid), 0) + int(mib)
ok_apps = bool(apps) and all(seen.get(p) == m for p, m in apps.items())
print("gpus", "ok" if ok_gpus else "FAIL %s vs %s" % (gpus, smi))
print("apps", "ok" if ok_apps else "FAIL %s vs %s" % (seen, apps))
EOF
res "0.1 program: GPUs' used/total = nvidia-smi (64 MiB)" "$(awk '/^gpus/ {$1=""; print}' $W/cmp.txt)"
res "0.1 program: processes' MiB = nvidia-smi's" "$(awk '/^apps/ {$1=""; print}' $W/cmp.txt)"

# 4. the 0.2 program: backends and vendors (a log of this machine first)
timeout 20 $VZ log -i 200ms --duration 2s -o $W/l.csv >/dev/null 2>&1
timeout 30 $W/use_all $W/l.csv > $W/use_all.out 2>&1 &&
	grep -q "^backend nvml vendor nvidia driver [0-9]" $W/use_all.out &&
	! grep "^gpu " $W/use_all.out | grep -vq "vendor=nvidia backend=nvml" &&
	res "0.2 program: backend nvml, every GPU vendor nvidia" ok ||
	res "0.2 program: backend nvml, every GPU vendor nvidia" "FAIL: $(head -3 $W/use_all.out)"

# 5. the tool: JSON vendor and backend, Prometheus label
timeout 30 $VZ status --json > $W/s.json 2>/dev/null
python3 -c "
import json,sys; d=json.load(open('$W/s.json'))
ok = d['system']['backend'] == 'nvml' and d['gpus'] and all(g['vendor'] == 'nvidia' for g in d['gpus'])
print('ok' if ok else 'FAIL %s' % [g.get('vendor') for g in d['gpus']])" > $W/j.txt 2>&1
res "status --json: system.backend nvml, gpus' vendor" "$(cat $W/j.txt)"
timeout 30 $VZ serve --once > $W/m.txt 2>/dev/null
grep -q '^vramz_gpu_info{.*vendor="nvidia"' $W/m.txt && res "metrics: vramz_gpu_info vendor=\"nvidia\"" ok ||
	res "metrics: vramz_gpu_info vendor=\"nvidia\"" "FAIL or no serve in this build"

kill $H 2>/dev/null; wait $H 2>/dev/null
echo "== core_check ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
printf '%s\n' "${RES[@]}"
echo "--- the 0.1 program printed:"; head -8 $W/v0.out
rm -rf "$W"
