#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# smoke.sh - a 20-second check of a fresh build on a lent GPU machine, from the
# repository root with .carry/ built (tools/carry-build.sh): status, ps
# against nvidia-smi's process list, info, topo, the NVML call profile, a
# 3 s log and its replay, and the systemd units (validate_units.sh), while
# hold.py holds 2 and 1 GiB.   bash tests/gpu/smoke.sh
set -u
C=$PWD/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=$C/vramz
python3 tests/gpu/hold.py 2048 1024 > /tmp/h.out 2>&1 & H=$!
for _ in $(seq 120); do grep -q ready /tmp/h.out && break; kill -0 $H 2>/dev/null || break; sleep 0.5; done
$VZ status; echo "status rc=$?"
$VZ ps --json | python3 -c "import json,sys; d=json.load(sys.stdin); print('ps procs', [(p['pid'], p['gpu'], p['used_bytes']) for p in d['processes']])"
nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader
$VZ info -g 0 | head -12
$VZ topo
VRAMZ_PROFILE_NVML=1 $VZ status 2>&1 >/dev/null | head -4
timeout 20 $VZ log --procs -i 100ms --duration 3s -o /tmp/s.csv; echo "log rc=$?"; wc -l /tmp/s.csv /tmp/s.procs.csv
$VZ replay --fast /tmp/s.csv | tail -4
timeout 60 bash tests/gpu/validate_units.sh $C /tmp/u 2>&1 | tail -14
kill $H
