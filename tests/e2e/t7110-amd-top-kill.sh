#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7110-amd-top-kill.sh - `vramz top`, `kill`, `log`, `replay` and `analyze`
# on AMD GPUs (issue 19: every view the same on amdgpu), through the fixture
# trees of
# tests/helpers/amd-fixture.  For kill, a real process this test starts is
# given an amdgpu DRM client in the fixture's procfs (its stat copied from
# the real /proc, so its start time is the real one); a watcher plays the
# kernel: once the process is gone, its fdinfo goes and the card's used
# VRAM drops.  Only processes this test started are ever signalled.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/top-lib.sh"
FIX="$TESTS_SRC/helpers/amd-fixture"
amd_env() { echo "LD_LIBRARY_PATH= VRAMZ_SYSFS_ROOT=$T/$1/sys VRAMZ_PROCFS_ROOT=$T/$1/proc"; }
amd() { env $(amd_env "$1") "$VRAMZ_BIN" "${@:2}"; }
bash "$FIX" mi300x "$T/mi" || exit 1
GiB=1073741824

expect_success 'top on eight MI300X: every GPU, its memory, the amdgpu driver, the processes' '
	TOP_ENV="$(amd_env mi)" top_session 200 60 -i 200ms &&
	wait_for "4101 .*python3 train\.py" &&
	test "$(grep -oE "GPU [0-7] AMD Instinct MI300X" screen | sort -u | wc -l)" = 8 &&
	has "^vramz top  amdgpu driver 6\.8\.0-45-generic  8 GPUs" screen &&
	has "60\.0 GiB" screen &&
	has "4102 .*serve\.py" screen &&
	hasnt "4104|glxgears" screen &&
	hasnt "vramz-exited" screen
'

# adopt PID CARD_SLOT VRAM_GIB: the fixture lists the real process PID as
# an amdgpu client holding VRAM_GIB on that card, and card 3's used memory
# includes it
adopt() {
	local pid=$1 slot=$2 gib=$3 P=$T/mi/proc
	mkdir -p "$P/$pid/fd" "$P/$pid/fdinfo"
	for f in stat status cmdline cgroup; do cat "/proc/$pid/$f" >"$P/$pid/$f"; done
	ln -sf /dev/dri/renderD131 "$P/$pid/fd/3"
	printf "pos:\t0\ndrm-driver:\tamdgpu\ndrm-client-id:\t77\ndrm-pdev:\t%s\ndrm-memory-vram:\t%d KiB\ndrm-engine-gfx:\t0 ns\ndrm-engine-compute:\t0 ns\n" \
		"$slot" $((gib * 1048576)) >"$P/$pid/fdinfo/3"
	echo $(( (10 + gib) * GiB )) >"$T/mi/sys/class/drm/card3/device/mem_info_vram_used"
}
# the kernel's part: when PID is gone, so are its fdinfo and its VRAM
reaper() {
	local pid=$1 gib=$2
	while [ -e "/proc/$pid" ]; do sleep 0.05; done
	rm -rf "$T/mi/proc/$pid"
	echo $((10 * GiB)) >"$T/mi/sys/class/drm/card3/device/mem_info_vram_used"
}

expect_success 'log, replay and analyze of an amdgpu leak: the leaker named on its GPU' '
	f=$T/mi/proc/4103/fdinfo/4; used=$T/mi/sys/class/drm/card3/device/mem_info_vram_used
	cp "$f" fdinfo.saved && cp "$used" used.saved || exit 1
	# pid 4103 on GPU 3 grows by 64 MiB every 100 ms (alone in the
	# background: "a && b &" would run the whole list there)
	{ for i in $(seq 70); do
		sed -i "s/^drm-memory-vram:.*/drm-memory-vram:\t$(( (8 * 1024 + 64 * i) * 1024 )) KiB/" "$f"
		echo $(( (10 * 1024 + 64 * i) * 1048576 )) >"$used"
		sleep 0.1
	  done; } &
	amd mi log --procs -i 100ms --duration 6s -o leak.csv 2>/dev/null && wait &&
	cp fdinfo.saved "$f" && cp used.saved "$used" &&
	vramz replay --fast -g 3 leak.csv >r.txt && has "^ +3 AMD Instinct MI300X" r.txt &&
	{ vramz analyze --window 200ms --leak-warmup 1s --leak-min-span 3s leak.csv >a.txt; test $? = 3; } &&
	cat a.txt &&
	has "leak +pid 4103 .*on GPU 3 grows" a.txt
'

expect_success 'kill --yes on an amdgpu process: terminated, 4 GiB back on that card' '
	{ (sleep 300 >/dev/null 2>&1 & echo $! >victim.pid); } && V=$(cat victim.pid) &&
	adopt $V 0000:5c:00.0 4 &&
	amd mi ps >ps && has "^ +3 +$V " ps &&
	{ reaper $V 4 & } &&
	amd mi kill --yes $V >out &&
	cat out &&
	has "^$V .*terminated \(SIGTERM\)" out &&
	has "^3 +14\.0 GiB +10\.0 GiB +4\.00 GiB" out &&
	! kill -0 $V 2>/dev/null
'

expect_success 'kill refuses a fixture pid that is no real process of that start time' '
	{ amd mi kill --yes 4103 >out 2>&1; test $? -ne 0 || ! grep -q "terminated" out; } &&
	cat out &&
	hasnt "terminated \(SIGTERM\)" out
'

expect_success 'top: k on our own amdgpu process terminates it' '
	{ (sleep 300 >/dev/null 2>&1 & echo $! >victim2.pid); } && V=$(cat victim2.pid) &&
	adopt $V 0000:5c:00.0 4 &&
	{ reaper $V 4 & } &&
	TOP_ENV="$(amd_env mi)" top_session 200 60 -i 200ms &&
	wait_for "$V .*sleep" &&
	keys / && keys $V Enter && wait_for "filter: /$V" &&
	keys k && wait_for "signal for pid $V" &&
	keys Enter && wait_for "pid $V.*[?]" &&
	keys y &&
	for _ in $(seq 50); do kill -0 $V 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $V 2>/dev/null
'

finish
