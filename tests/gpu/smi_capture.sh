#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# smi_capture.sh - what nvidia-smi's query interface prints, kept as the
# fixtures of tests/e2e/t1050-smi-query.sh (tests/smi/): the names
# --help-query-gpu and --help-query-compute-apps list, each name's header
# and value alone (csv, then csv,nounits), the DESIGN row's fields, -l's
# and -lms's repeats, an unknown name and a bad -i.  Needs nvidia-smi
# only; changes no GPU setting.  Writes into $OUT (default /tmp/smi).
#   bash tests/gpu/smi_capture.sh
set -u
OUT=${OUT:-/tmp/smi}; mkdir -p "$OUT"
S=nvidia-smi
$S --version >"$OUT/version.txt" 2>&1
$S --help-query-gpu >"$OUT/help-query-gpu.txt" 2>&1
$S --help-query-compute-apps >"$OUT/help-query-compute-apps.txt" 2>&1
# every name alone: "name<TAB>rc<TAB>header<TAB>value<TAB>nounits value"
names=$(grep -o '^"[^"]*"' "$OUT/help-query-gpu.txt" | tr -d '"' | tr '\n' ' ')
for n in $names; do
	o=$($S --query-gpu="$n" --format=csv -i 0 2>&1); rc=$?
	h=$(printf '%s\n' "$o" | sed -n 1p); v=$(printf '%s\n' "$o" | sed -n 2p)
	nu=$($S --query-gpu="$n" --format=csv,noheader,nounits -i 0 2>&1 | head -1)
	printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$rc" "$h" "$v" "$nu"
done >"$OUT/each-gpu.tsv"
anames=$(grep -o '^"[^"]*"' "$OUT/help-query-compute-apps.txt" | tr -d '"' | tr '\n' ' ')
for n in $anames; do
	o=$($S --query-compute-apps="$n" --format=csv 2>&1); rc=$?
	printf '%s\t%s\t%s\n' "$n" "$rc" "$(printf '%s\n' "$o" | head -1)"
done >"$OUT/each-app.tsv"
# a process on the GPU for the apps' rows (torch, when there)
HP=
if python3 -c 'import torch' 2>/dev/null; then
	python3 tests/gpu/hold.py 1024 >"$OUT/hold.out" 2>&1 & HP=$!
	for _ in $(seq 60); do grep -q ready "$OUT/hold.out" 2>/dev/null && break; sleep 0.5; done
fi
trap '[ -n "$HP" ] && kill "$HP" 2>/dev/null' EXIT
Q=index,uuid,pci.bus_id,memory.total,memory.reserved,memory.used,memory.free,temperature.gpu,power.draw,power.limit,enforced.power.limit,pcie.link.gen.max,pcie.link.width.max,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.memory,persistence_mode,ecc.mode.current,mig.mode.current,utilization.gpu
{
	echo "== csv"; $S --query-gpu=$Q --format=csv; echo "rc=$?"
	echo "== csv,nounits"; $S --query-gpu=$Q --format=csv,nounits; echo "rc=$?"
	echo "== csv,noheader"; $S --query-gpu=$Q --format=csv,noheader; echo "rc=$?"
	echo "== timestamp"; $S --query-gpu=timestamp,index --format=csv; echo "rc=$?"
	echo "== unknown"; $S --query-gpu=index,bogus.name --format=csv; echo "rc=$?"
	echo "== bad -i"; $S --query-gpu=index --format=csv -i 7; echo "rc=$?"
	echo "== -i uuid prefix"; $S --query-gpu=index --format=csv -i "$($S --query-gpu=uuid --format=csv,noheader | head -1)"; echo "rc=$?"
	echo "== no format"; $S --query-gpu=index; echo "rc=$?"
	echo "== format csv twice-spaced"; $S --query-gpu="index, memory.used" --format=csv; echo "rc=$?"
	echo "== apps"; $S --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid,gpu_bus_id,gpu_name,gpu_serial,timestamp --format=csv; echo "rc=$?"
	echo "== apps nounits"; $S --query-compute-apps=pid,used_memory --format=csv,nounits; echo "rc=$?"
	echo "== -l 1 for 2.5 s"; timeout 2.5 $S --query-gpu=timestamp,index --format=csv -l 1; echo "rc=$?"
	echo "== -lms 300 for 1 s"; timeout 1 $S --query-gpu=index --format=csv -lms 300; echo "rc=$?"
	echo "== apps -l 1 for 2.5 s"; timeout 2.5 $S --query-compute-apps=pid --format=csv -l 1; echo "rc=$?"
} >"$OUT/cases.txt" 2>&1
