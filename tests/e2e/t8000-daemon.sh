#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t8000-daemon.sh - `vramz daemon` and its readers: what they print from a
# daemon's segment is what the driver says, with no NVML loadable at all;
# a stopped, killed, slower, partial, untrusted or malformed publisher is
# never taken for a live one; a full disk does not stop the sampling.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

. "$TESTS_SRC/e2e/daemon-lib.sh"

expect_success 'a daemon publishes; vramz --json reads it with no NVML reachable' '
	start_daemon -i 200ms --procs &&
	vramz status --json --live >live.json &&
	nonvml --json >d.json &&
	jassert d.json "d[\"source\"] == \"daemon\" and 0 <= d[\"age_ms\"] <= 400 and d[\"system\"][\"driver_version\"] == \"580.159.04\"" &&
	python3 - <<PY &&
import json
live, d = json.load(open("live.json")), json.load(open("d.json"))
assert [(g["uuid"], g["vendor"], g["mem_used_bytes"], g["mem_total_bytes"]) for g in live["gpus"]] == \
       [(g["uuid"], g["vendor"], g["mem_used_bytes"], g["mem_total_bytes"]) for g in d["gpus"]], (live["gpus"], d["gpus"])
assert all(g["vendor"] == "nvidia" for g in d["gpus"]), d["gpus"]
key = lambda p: (p["gpu"], p["pid"], p["used_bytes"], p["visible"])
assert sorted(map(key, live["processes"])) == sorted(map(key, d["processes"])) and d["processes"]
assert live["source"] == "nvml"
PY
	nonvml status >st &&
	has "from vramz daemon pid $(cat "$T/daemon.pid"), snapshot [0-9.]+ s old" st &&
	has "^  1 H200 +85\.0 GiB / 140\.4 GiB" st &&
	nonvml ps >ps && has "^\(from vramz daemon pid" ps && has "^  1  4200301 " ps &&
	nonvml info >info && has "H200" info &&
	nonvml topo >topo && has "^GPU0 +X +NV18 " topo &&
	nonvml pick >pick && has "^CUDA_VISIBLE_DEVICES=GPU-" pick &&
	{ nonvml status --live >o 2>e; test $? -eq 1; } && has "libnvidia-ml" e && test ! -s o &&
	stop_daemon
'

expect_success 'one publisher per directory: the second says who holds it, exit 1' '
	start_daemon -i 200ms &&
	pid=$(cat "$T/daemon.pid") &&
	{ vramz daemon -i 200ms 2>err2; test $? -eq 1; } &&
	has "is already published by pid $pid" err2 &&
	stop_daemon
'

expect_success 'SIGTERM: no segment is left; readers go to the driver or fail clearly' '
	start_daemon -i 200ms --procs &&
	stop_daemon &&
	has "stopped; .*/segment removed" "$T/daemon.err" &&
	test ! -e run/segment &&
	vramz status --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" && test ! -s err &&
	{ nonvml status >/dev/null 2>err; test $? -eq 1; } && has "libnvidia-ml" err
'

expect_success 'kill -9: the segment stays, and readers see its daemon is gone' '
	start_daemon -i 200ms --procs &&
	pid=$(cat "$T/daemon.pid") && kill -9 "$pid" && { wait "$pid" || true; } && rm -f "$T/daemon.pid" &&
	test -e run/segment &&
	vramz status --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	test "$(wc -l <err)" -eq 1 &&
	has "ignoring .*/run/segment: its daemon \(pid $pid\) is gone; reading the driver" err &&
	{ nonvml status >/dev/null 2>err; test $? -eq 1; }
'

expect_success 'log, watch, serve read a live daemon; a daemon that stops is replaced by the driver' '
	start_daemon -i 100ms --procs &&
	nonvml log -i 200ms --duration 1s --procs -o l.csv 2>lerr &&
	has "10 rows \(5 ticks\)" lerr && test "$(grep -c ",GPU-" l.csv)" -eq 10 &&
	nonvml watch -d 1s >w 2>werr && test ! -s werr &&
	{ ! nonvml serve -h >/dev/null 2>&1 || { nonvml serve --once >m && has "^vramz_memory_used_bytes\{gpu=\"1\"" m; }; } &&
	{ vramz log -i 100ms --duration 3s -o l2.csv 2>l2err & lp=$!; } &&
	sleep 1 && stop_daemon && wait $lp &&
	has "log: .*its daemon \(pid [0-9]+\) stopped; sampling the driver from now on" l2err &&
	has "60 rows \(30 ticks\)" l2err
'

expect_success 'a daemon slower than the reader, on other GPUs or without processes is not used' '
	start_daemon -i 2s -g 0 &&
	vramz status -P --json >j && jassert j "d[\"source\"] == \"nvml\"" &&
	nonvml status -P -g 0 --json >j && jassert j "d[\"source\"] == \"daemon\" and len(d[\"gpus\"]) == 1" &&
	{ nonvml status -g 0 >/dev/null 2>&1; test $? -eq 1; } &&
	{ nonvml log -g 0 -i 500ms --duration 1s >/dev/null 2>&1; test $? -eq 1; } &&
	nonvml log -g 0 -i 2s --duration 2s >/dev/null 2>&1 &&
	stop_daemon
'

expect_success 'a segment of another layout, group-writable or not owned by us: ignored with one line' '
	start_daemon -i 200ms &&
	chmod g+w run/segment &&
	vramz status -P --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	test "$(wc -l <err)" -eq 1 && has "ignoring .*/run/segment: ignored: writable by its group" err &&
	chmod g-w run/segment &&
	if [ "$(id -u)" = 0 ]; then
		chown 65534 run/segment &&
		vramz status -P 2>err >/dev/null && has "owned by uid 65534, neither root nor you" err &&
		chown 0 run/segment
	fi &&
	python3 -c "
import mmap, os
fd = os.open(\"run/segment\", os.O_RDWR); m = mmap.mmap(fd, 0)
m[8:12] = (2).to_bytes(4, \"little\")" &&  # major 2, minor 0
	vramz status -P --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	has "segment layout 2\.0; this vramz reads layout 1\.x only" err &&
	stop_daemon
'

expect_success 'empty, random, truncated and foreign files: one line each, never a crash' '
	mkdir -p run &&
	: >run/segment &&
	vramz status -P --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	test "$(wc -l <err)" -eq 1 && has "run/segment: empty file, not a vramz segment" err &&
	head -c 70000 /dev/urandom >run/segment &&
	vramz status -P 2>err >/dev/null && has "wrong magic" err &&
	printf "VRAMZSEG\001\000" >run/segment &&
	vramz status -P 2>err >/dev/null && has "truncated" err &&
	rm run/segment
'

expect_success 'a segment it cannot write (full disk, size limit): said once, sampling goes on' '
	mkdir -p run &&
	{ (ulimit -f 4; exec "$VRAMZ_BIN" daemon -i 100ms 2>"$T/full.err") & echo $! >"$T/full.pid"; } &&
	sleep 1.5 && kill -0 "$(cat "$T/full.pid")" &&
	test "$(grep -c "cannot publish" "$T/full.err")" -eq 1 &&
	has "cannot publish: .*; still sampling, publishing again when it can" "$T/full.err" &&
	kill -TERM "$(cat "$T/full.pid")" && wait "$(cat "$T/full.pid")" && rm -f "$T/full.pid"
'

expect_success 'hidepid: other users read no command line; root reads segment.full' '
	if [ "$(id -u)" != 0 ]; then echo "(needs root, as CI runs)"; exit 0; fi
	sleep 300 & SLEEP_PID=$! && export SLEEP_PID &&
	write_scn vis.scn <<-EOS &&
	driver 580.159.04
	gpu 0 name="NVIDIA H200" uuid=GPU-c0a1e900-0000-4000-8000-000000000000 pci=00000000:19:00.0 mem_total=143771MiB mem_reserved=616MiB
	proc gpu=0 pid=env:SLEEP_PID used=3GiB type=compute sm=25
	EOS
	VRAMZ_TEST_HIDEPID=1 start_daemon -i 200ms --procs &&
	has "hidepid: other users. processes redacted" "$T/daemon.err" &&
	test "$(stat -c %a run/segment.full)" = 600 && test "$(stat -c %a run/segment)" = 644 &&
	python3 - "$SLEEP_PID" <<-PY &&
	import struct, sys
	pid = int(sys.argv[1])
	def procs(path):
	    b = open(path, "rb").read()
	    flags, = struct.unpack_from("<I", b, 44)
	    gen, = struct.unpack_from("<Q", b, 136)
	    slot, = struct.unpack_from("<Q", b, 112 + 8 * (gen % 2))
	    psize, gsize = struct.unpack_from("<I", b, 24)[0], struct.unpack_from("<I", b, 20)[0]
	    pl = slot + 24
	    ng, np = struct.unpack_from("<II", b, pl + 16)
	    out = {}
	    for i in range(np):
	        r = pl + 40 + ng * gsize + i * psize
	        p, = struct.unpack_from("<I", b, r + 4)
	        out[p] = b[r + 120:r + 376].split(b"\0")[0].decode()
	    return flags, out
	fl, pub = procs("run/segment")
	ff, full = procs("run/segment.full")
	assert fl & 2 and not ff & 2, (fl, ff)
	assert pub[pid] == "", pub
	assert full[pid] == "sleep 300", full
	PY
	nonvml ps >out && has " $SLEEP_PID root .* sleep 300$" out &&
	kill $SLEEP_PID && stop_daemon &&
	test ! -e run/segment && test ! -e run/segment.full
'

expect_success 'packaging/vramz-daemon.service parses with no warning, and its command line runs' '
	P=$TESTS_SRC/../packaging &&
	if command -v systemd-analyze >/dev/null; then
		mkdir -p root/usr/bin root/etc/systemd/system root/usr/lib/systemd &&
		cp -r /lib/systemd/system root/usr/lib/systemd/ &&
		cp "$VRAMZ_BIN" root/usr/bin/vramz &&
		cp "$P/vramz-daemon.service" root/etc/systemd/system/ &&
		systemd-analyze verify --root="$T/root" --man=no \
			/etc/systemd/system/vramz-daemon.service >out 2>&1 &&
		{ ! test -s out || { cat out; false; }; }
	fi &&
	cmd=$(sed -n "s/^ExecStart=//p" "$P/vramz-daemon.service" |
		sed -e "s|/usr/bin/vramz|$VRAMZ_BIN|" -e "s|/run/vramz|$T/unitrun|") &&
	mkdir -p unitrun && { $cmd 2>uerr & echo $! >"$T/unit.pid"; } &&
	sleep 1 && test -s unitrun/segment &&
	VRAMZ_RUNTIME_DIR=$T/unitrun nonvml ps --json >j && jassert j "d[\"source\"] == \"daemon\" and d[\"processes\"]" &&
	kill "$(cat "$T/unit.pid")" && wait "$(cat "$T/unit.pid")" && rm "$T/unit.pid"
'

expect_success 'bad usage: exit 2, one line' '
	usage_err "1ms" daemon -i 1ms && usage_err "for -i: want a duration from 10ms to 1h" daemon -i 1ms &&
	usage_err "'"'"'x'"'"'" daemon x &&
	usage_err "--slow-interval" daemon -i 2s --slow-interval 1s
'

finish
