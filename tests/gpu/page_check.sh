#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# page_check.sh - issue 31 on real GPUs: the live page of `vramz serve`
# beside nvtop at the same moment.  While busy.py keeps every GPU
# computing and leak_and_steady.py leaks 64 MiB/s on GPU 0, it serves at
# 1 Hz with --history 2m, waits 70 s, then within one second takes: the
# page's screenshot at 1280x800 (headless Chromium through tests/web/
# cdp.py, when chromium or $CHROMIUM is there), nvtop's screen (tmux
# capture-pane, with .carry/nvtop or $NVTOP), /api/v1/status and
# nvidia-smi's memory.used.  Checks the API's and the page's figures
# against nvidia-smi (64 MiB), that the page shows the leak finding, and
# measures the exporter's CPU with no stream and one at 1 Hz on these
# GPUs (bench/page.py, REAL=1).  Builds nothing; uses $VRAMZ (default
# .carry/vramz, tools/carry-build.sh).  Leaves in $OUT/page.tgz:
# web-h200-1280x800.png, nvtop-h200.txt, status.json, smi.csv, page.txt,
# bench.txt, logs.  From the repository root:
#     OUT=/tmp/out bash tests/gpu/page_check.sh      (~3 min)
set -u
C=$PWD/.carry; VZ=${VRAMZ:-$C/vramz}; OUT=${OUT:-$PWD/page-out}
W=$(mktemp -d /tmp/page_check.XXXXXX)
mkdir -p "$OUT"
# serve dlopen()s libmicrohttpd by soname: .carry/ holds one (tools/carry-build.sh)
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
declare -a RES
res() { RES+=("$(printf '%-56s %s' "$1" "$2")"); }
PIDS=""
sock=vramz-page-$$
trap 'tmux -L $sock kill-server 2>/dev/null; kill $PIDS 2>/dev/null' EXIT
NVTOP=${NVTOP:-$C/nvtop}
[ -x "$NVTOP" ] || NVTOP=$(command -v nvtop || true)
CHROME=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}

python3 tests/gpu/busy.py 4096 >$W/busy.out 2>&1 & PIDS="$PIDS $!"
python3 tests/gpu/leak_and_steady.py --gpu 0 --duration 240 --rate 64 >$W/leak.out 2>&1 & PIDS="$PIDS $!"
$VZ serve --listen 127.0.0.1:0 --interval 1s --history 2m 2>$W/serve.log & SP=$!; PIDS="$PIDS $SP"
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's|.*listening on http://.*:\([0-9]*\)/metrics.*|\1|p' $W/serve.log)
	[ -n "$PORT" ] && break; sleep 0.2
done
[ -n "$PORT" ] && res "serve listening" "ok (port $PORT)" || res "serve listening" "FAIL: $(head -c 200 $W/serve.log)"
if [ -n "$NVTOP" ]; then
	tmux -L $sock new-session -d -x 160 -y 50 "$NVTOP -d 10" && res "nvtop in tmux" ok || res "nvtop in tmux" FAIL
else
	res "nvtop in tmux" "SKIP: no nvtop (NVTOP=path)"
fi
sleep 70 # the page's charts fill, the leak is found

# the same moment: page, nvtop, API, nvidia-smi
cat >$W/shot.py <<'PY'
import json, os, sys, time
sys.path.insert(0, "tests/web")
import cdp
port, w = sys.argv[1], sys.argv[2]
with cdp.Browser() as browser:
    p = browser.open("http://127.0.0.1:%s/" % port, 1280, 800)
    p.wait("document.getElementById('state').textContent == 'live'")
    p.wait("document.querySelectorAll('#pbody tr').length > 0")
    time.sleep(1.5)
    os.system("tmux -L %s capture-pane -p > %s/nvtop-h200.txt 2>/dev/null" % (os.environ["SOCK"], w))
    os.system("curl -s http://127.0.0.1:%s/api/v1/status > %s/status.json" % (port, w))
    os.system("nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits > %s/smi.csv" % w)
    open(w + "/web-h200-1280x800.png", "wb").write(p.screenshot())
    page = p.eval("JSON.stringify({mem: Array.prototype.map.call(document.querySelectorAll('.gpu .mem'), function(e){return e.textContent}),"
                  " findings: Array.prototype.map.call(document.querySelectorAll('#findings li'), function(l){return l.dataset.kind + ': ' + l.textContent}),"
                  " rows: document.querySelectorAll('#pbody tr').length, errors: 0})")
    d = json.loads(page)
    d["errors"] = p.errors
    json.dump(d, open(w + "/page.json", "w"), indent=1)
PY
if [ -n "$CHROME" ]; then
	SOCK=$sock CHROMIUM=$CHROME timeout 60 python3 $W/shot.py "$PORT" "$W" >$W/shot.log 2>&1 &&
		res "page screenshot 1280x800" ok || res "page screenshot 1280x800" "FAIL: $(tail -1 $W/shot.log)"
else
	res "page screenshot 1280x800" "SKIP: no chromium (CHROMIUM=path)"
	tmux -L $sock capture-pane -p >$W/nvtop-h200.txt 2>/dev/null
	curl -s "http://127.0.0.1:$PORT/api/v1/status" >$W/status.json
	nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits >$W/smi.csv
fi
python3 - "$W" >$W/cmp.txt 2>&1 <<'PY'
import json, os, sys
w = sys.argv[1]
s = json.load(open(w + "/status.json"))
smi = {int(a): int(b) for a, b in (l.split(",") for l in open(w + "/smi.csv") if l.strip())}
api = {g["index"]: g["mem_used_bytes"] // 2**20 for g in s["gpus"]}
ok = api.keys() == smi.keys() and all(abs(api[i] - smi[i]) <= 64 for i in smi)
print("api", "ok" if ok else "FAIL %s vs %s" % (api, smi))
if os.path.exists(w + "/page.json"):
    p = json.load(open(w + "/page.json"))
    print("errors", "ok" if not p["errors"] else "FAIL %s" % p["errors"][:3])
    print("leak", "ok" if any(f.startswith("leak") for f in p["findings"]) else "FAIL %s" % p["findings"])
    print("gpus", "ok" if len(p["mem"]) == len(smi) else "FAIL %d cards, %d GPUs" % (len(p["mem"]), len(smi)))
PY
for k in "api:/api/v1/status used = nvidia-smi (64 MiB)" "errors:page: no console error" \
	"leak:page: the leak finding shown" "gpus:page: a card per GPU"; do
	v=$(awk -v k="${k%%:*}" '$1 == k {$1=""; print}' $W/cmp.txt)
	res "${k#*:}" "${v:-SKIP}"
done
kill $PIDS 2>/dev/null; wait 2>/dev/null; PIDS=""
# CPU with no stream and one, at 1 Hz on these GPUs (busy.py again, so
# the process lists are not empty)
python3 tests/gpu/busy.py 1024 >$W/busy2.out 2>&1 & PIDS="$!"
sleep 10
REAL=1 CHROMIUM=$CHROME timeout 200 python3 bench/page.py "$(dirname "$VZ")" 60 >$W/bench.txt 2>&1
res "bench/page.py (REAL=1, 60 s each)" "$(grep -o 'adds .*' $W/bench.txt || echo "FAIL: $(tail -1 $W/bench.txt)")"
kill $PIDS 2>/dev/null; wait 2>/dev/null; PIDS=""

cp $W/*.png $W/nvtop-h200.txt $OUT/ 2>/dev/null
tar -C $W -czf $OUT/page.tgz . 2>/dev/null
echo "== page_check ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
cat $W/bench.txt 2>/dev/null | head -6
printf '%s\n' "${RES[@]}"
rm -rf "$W"
