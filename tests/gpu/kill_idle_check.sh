#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kill_idle_check.sh - `kill --idle` with named PIDs on real GPUs: an idle
# holder and a computing process this script started are both named; the
# idle one must be listed "would terminate" and the busy one refused, then
# --yes ends the idle one and its memory comes back.  Only these two
# processes are ever named.   bash tests/gpu/kill_idle_check.sh
set -u
C=$PWD/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=$C/vramz; H=tests/gpu
python3 $H/jobs_idle.py 4096 > /tmp/idle.out 2>&1 & IDLE=$!
python3 $H/busy.py 1024 > /tmp/busy.out 2>&1 & BUSY=$!
for _ in $(seq 120); do grep -q ready /tmp/idle.out && grep -q ready /tmp/busy.out && break; sleep 0.5; done
sleep 2
echo "== dry run, both named: the idle one would go, the busy one is refused"
timeout 60 $VZ kill --idle 5s -i 500ms -g 0 $IDLE $BUSY; echo "exit $?"
echo "== --yes, the idle one only"
timeout 60 $VZ kill --idle 5s -i 500ms -g 0 --yes $IDLE; echo "exit $?"
sleep 0.5; kill -0 $IDLE 2>/dev/null && { echo "FAIL: idle alive"; kill $IDLE; } || echo "idle holder ended"
kill $BUSY; wait $BUSY 2>/dev/null; echo done
