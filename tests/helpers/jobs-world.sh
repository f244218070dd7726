# SPDX-License-Identifier: Apache-2.0
# jobs-world.sh - sourced by the t5*-*.sh job tests: a live scenario the
# helper programs (holdmem, trainer) rewrite while vramz samples it.
#   jobs_world [EXTRA LINES...]: two 80 GiB H200s joined by NVLink, free
#   memory = 80 GiB - 512 MiB reserved - what the helpers hold.
HELPERS="$TESTS_SRC/helpers"
PATH="$HELPERS:$PATH"
export FAKE_NVML_SCENARIO="$T/world.scn"
jobs_world() {
	{
		echo 'driver 580.159.04'
		echo 'gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-0000-0000-000000000000 pci=00000000:19:00.0 mem_total=80GiB mem_reserved=512MiB mem_used=auto util=40 energy=1000000'
		echo 'gpu 1 name="NVIDIA H200" uuid=GPU-11111111-1111-1111-1111-111111111111 pci=00000000:3b:00.0 mem_total=80GiB mem_reserved=512MiB mem_used=auto util=40 energy=2000000'
		echo 'nvlink 0 1 18'
		for l in "$@"; do echo "$l"; done
	} >"$FAKE_NVML_SCENARIO.base"
	rm -rf "$FAKE_NVML_SCENARIO.d"
	cp "$FAKE_NVML_SCENARIO.base" "$FAKE_NVML_SCENARIO"
}
# waits (bounded) until FILE exists: a helper's "I am ready" mark
wait_for() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done; echo "timeout waiting for $1"; return 1; }
# Ends the holders a failed step left behind - only pids holdmem recorded,
# and only while they still run holdmem's sleep - and resets the world.
tidy_holders() {
	local p
	[ -f "$FAKE_NVML_SCENARIO.pids" ] || return 0
	while read -r p; do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q '^sleep 100000 $' && kill "$p"
	done <"$FAKE_NVML_SCENARIO.pids"
	rm -f "$FAKE_NVML_SCENARIO.pids"
	rm -rf "$FAKE_NVML_SCENARIO.d"
	cp "$FAKE_NVML_SCENARIO.base" "$FAKE_NVML_SCENARIO"
}
# waits (bounded) until each PID is in the scenario: holdmem records its pid
# after its lines are in place, so the fake lists it from the next call on
# (a fixed sleep was too short on a loaded machine)
wait_listed() {
	local p
	for p in "$@"; do
		for _ in $(seq 200); do
			grep -qx "$p" "$FAKE_NVML_SCENARIO.pids" 2>/dev/null && break
			sleep 0.05
		done
		grep -qx "$p" "$FAKE_NVML_SCENARIO.pids" || { echo "holder $p never listed"; return 1; }
	done
}
# true while pid runs (a zombie has ended: it only waits to be reaped)
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ sub(/.*\) /, ""); exit ($1 == "Z") ? 0 : 1 }' "/proc/$1/stat"; }
