#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t8020-segment-trust.sh - issue 25, item 7: a segment whose header is in
# a state no vramz writes, or whose snapshot is stamped in the future of
# this machine's CLOCK_MONOTONIC (another machine's, or forged: it would
# read as 0 s old for ever), is refused with one line by the C readers and
# the Python reader alike, and the readers go to the driver.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn
export PYTHONPATH="$TESTS_SRC/../python" PYTHONDONTWRITEBYTECODE=1

. "$TESTS_SRC/e2e/daemon-lib.sh"

# the Python reader's answer for the segment: its error, or "ok"
pyread() {
	python3 -c "
import sys, vramz._segment as s
try:
    s.read_file(sys.argv[1]); print(\"ok\")
except s.SegmentError as e:
    print(e)" run/segment
}

expect_success 'a header in a state no vramz writes: refused by C and Python' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	pyread >py && has "^ok$" py &&
	stop_pid "$pid" &&
	python3 -c "
import mmap, os
fd = os.open(\"run/segment\", os.O_RDWR); m = mmap.mmap(fd, 0)
m[40:44] = (7).to_bytes(4, \"little\")" &&
	vramz status -P --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	test "$(wc -l <err)" -eq 1 && has "unknown state 7 \(1 live, 2 stopped, 3 replaced\): not trusted" err &&
	pyread >py && has "unknown state 7" py &&
	kill -CONT "$pid" && stop_daemon
'

expect_success 'a snapshot stamped 100 s in the future: refused by C and Python' '
	start_daemon -i 100ms --procs && pid=$(cat "$T/daemon.pid") &&
	stop_pid "$pid" &&
	python3 -c "
import mmap, os, struct, time, zlib
fd = os.open(\"run/segment\", os.O_RDWR); m = mmap.mmap(fd, 0)
future = time.monotonic_ns() + 100 * 10**9
for off in struct.unpack_from(\"<QQ\", m, 112):
    n = struct.unpack_from(\"<I\", m, off + 20)[0]
    struct.pack_into(\"<q\", m, off + 24 + 8, future)
    struct.pack_into(\"<I\", m, off + 16, zlib.crc32(m[off + 24:off + 24 + n]))" &&
	vramz status -P --json 2>err >j && jassert j "d[\"source\"] == \"nvml\"" &&
	has "stamped (99|100)\.[0-9] s in the future \(CLOCK_MONOTONIC\): not this machine.s daemon, or forged" err &&
	pyread >py && has "stamped (99|100)\.[0-9] s in the future" py &&
	kill -CONT "$pid" && stop_daemon
'

finish
