#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# page_record.sh - issue 31's H200 screenshot where the GPU machine has no
# browser: records what the live page is made of there, at one moment,
# beside nvtop's screen of that moment; tests/web/replay_page.py then
# draws that page here in headless Chromium from the recording.
#
# While busy.py computes and leak_and_steady.py leaks 64 MiB/s on GPU 0,
# `vramz serve` samples at 1 Hz (--history 2m); after 70 s, within a
# second: nvtop's screen (tmux, 200x60), GET / with its headers (the page
# and its CSP), 3 s of GET /api/v1/events (the history a new stream gets
# first, then live ticks), GET /api/v1/status, and nvidia-smi.
#     OUT=/tmp/out bash tests/gpu/page_record.sh     (~90 s, repository root)
# Uses $VRAMZ (default .carry/vramz) and .carry/nvtop; leaves
# $OUT/page-record.tgz.  Builds nothing, kills only what it started.
set -u
OUT=${OUT:?set OUT}
VZ=${VRAMZ:-$PWD/.carry/vramz}
C=$(dirname "$VZ")
W=$(mktemp -d)
PIDS=""
sock=vramz-rec-$$
trap 'tmux -L $sock kill-server 2>/dev/null; kill $PIDS 2>/dev/null' EXIT
export PATH=$C:$PATH LD_LIBRARY_PATH=$C${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python3 tests/gpu/busy.py 4096 >$W/busy.out 2>&1 & PIDS="$PIDS $!"
python3 tests/gpu/leak_and_steady.py --gpu 0 --duration 200 --rate 64 >$W/leak.out 2>&1 & PIDS="$PIDS $!"
$VZ serve --listen 127.0.0.1:0 --interval 1s --history 2m 2>$W/serve.log & PIDS="$PIDS $!"
PORT=
for _ in $(seq 100); do
	PORT=$(sed -n 's|.*listening on http://.*:\([0-9]*\)/metrics.*|\1|p' $W/serve.log)
	[ -n "$PORT" ] && break
	sleep 0.2
done
tmux -L $sock new-session -d -x 200 -y 60 "LANG=C.UTF-8 nvtop -d 10"
sleep 70
U=http://127.0.0.1:$PORT
date -u +%FT%TZ >$W/when.txt
curl -s -N --max-time 3 $U/api/v1/events >$W/events.txt &
tmux -L $sock capture-pane -p >$W/nvtop-h200.txt
curl -s -D $W/page.headers $U/ >$W/page.html
curl -s $U/api/v1/status >$W/status.json
nvidia-smi --query-gpu=index,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits >$W/smi.csv
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >>$W/smi.csv
wait %% 2>/dev/null
sleep 3.2
kill $PIDS 2>/dev/null
wait 2>/dev/null
PIDS=""
tar -C $W -czf $OUT/page-record.tgz .
echo "== page_record: port $PORT, $(wc -c <$W/page.html) B page, $(grep -c '^event:\|^data:' $W/events.txt) event lines, smi: $(head -1 $W/smi.csv)"
