#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4005-units.sh - the systemd units in packaging/: systemd parses them
# without a warning, and vramz runs its units' own command lines under the
# kernel-enforced parts of their sandboxes (no new privileges, no
# writable+executable memory, only the address families the unit allows),
# emulated by tests/helpers/unit_sandbox since CI has no systemd to start
# them.  tests/gpu/validate_units.sh repeats the check with the real NVML.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
P=$TESTS_SRC/../packaging
scenario 2gpu-h200.scn
SB=$UNIT_SANDBOX

# exec_start UNIT: the unit's ExecStart, with vramz and /var/log/vramz
# pointed into this test's directory
exec_start() {
	sed -n 's/^ExecStart=//p' "$P/$1" |
		sed -e "s|/usr/bin/vramz|$VRAMZ_BIN|" -e "s|/var/log/vramz|$T/varlog|g"
}

expect_success 'systemd-analyze verify: both units parse with no warning' '
	mkdir -p root/usr/bin root/etc/systemd/system root/usr/lib/systemd &&
	cp -r /lib/systemd/system root/usr/lib/systemd/ &&
	cp "$VRAMZ_BIN" root/usr/bin/vramz &&
	cp "$P/vramz-log.service" "$P/vramz-serve.service" root/etc/systemd/system/ &&
	systemd-analyze verify --root="$T/root" --man=no \
		/etc/systemd/system/vramz-log.service /etc/systemd/system/vramz-serve.service >out 2>&1 &&
	{ ! test -s out || { cat out; false; }; }
'

expect_success 'the check catches a bad setting (it is not silent)' '
	mkdir -p root/etc/systemd/system &&
	sed "s/^KillSignal=.*/KillSignal=SIGNOPE/" "$P/vramz-log.service" >root/etc/systemd/system/vramz-log.service &&
	systemd-analyze verify --root="$T/root" --man=no /etc/systemd/system/vramz-log.service >out 2>&1 ;
	has "SIGNOPE" out
'

expect_success 'the sandbox is real: W+X memory and an AF_INET socket are refused under the log unit' '
	"$SB" --unit "$P/vramz-log.service" -- python3 -c "
import mmap, socket, errno
try:
    mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    raise SystemExit(\"W+X mapping allowed\")
except PermissionError:
    pass
try:
    socket.socket(socket.AF_INET)
    raise SystemExit(\"AF_INET allowed\")
except OSError as e:
    assert e.errno == errno.EAFNOSUPPORT, e
socket.socket(socket.AF_UNIX)
print(\"refused as the unit says\")" >out &&
	has "refused as the unit says" out
'

expect_success 'vramz-log.service: its ExecStart logs GPUs and processes inside its sandbox' '
	mkdir -p varlog &&
	cmd=$(exec_start vramz-log.service) &&
	"$SB" --unit "$P/vramz-log.service" -- $cmd --duration 500ms 2>err &&
	has "^vramz: log: 2 rows \(1 ticks?\)" err &&
	test "$(wc -l <varlog/gpu.csv)" = 3 &&
	test "$(wc -l <varlog/gpu.procs.csv)" -ge 2
'

expect_success 'vramz-serve.service: the exporter serves metrics inside its sandbox' '
	SERVE_WRAP="$SB --unit $P/vramz-serve.service --" serve_start s.log --interval 1s &&
	wait_for scrape /metrics -f -o /dev/null &&
	scrape /metrics >m.txt &&
	has "^vramz_memory_used_bytes\{.*gpu=\"1\"" m.txt &&
	serve_stop
'

expect_success 'the exporter without AF_INET (the log unit'"'"'s families) fails with one clear line' '
	timeout 10 "$SB" --unit "$P/vramz-log.service" -- "$VRAMZ_BIN" serve --listen 127.0.0.1:0 2>err ;
	test $? = 1 && cat err && test "$(wc -l <err)" = 1 && has "^vramz: serve: .*127.0.0.1:0" err
'

expect_success 'the serve unit grants NVML read-write on the NVIDIA device nodes' '
	grep "^DeviceAllow=" "$P/vramz-serve.service" >dev &&
	has "^DeviceAllow=/dev/nvidiactl rw$" dev &&
	has "^DeviceAllow=char-nvidia-frontend rw$" dev && has "^DeviceAllow=char-nvidia rw$" dev
'
serve_cleanup
finish
