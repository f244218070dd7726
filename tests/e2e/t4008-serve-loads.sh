#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4008-serve-loads.sh - libmicrohttpd (and the TLS stack behind it, and
# zlib and libcrypt) is loaded by `vramz serve` alone (issue 14: the
# one-shot path loads nothing it does not use): a serving process maps it,
# any other command does not.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
export VRAMZ_RUNTIME_DIR="$T/run"

expect_success 'serve maps libmicrohttpd; the daemon, another long-running command, does not' '
	scenario_fleet f.scn 2 2 && export FAKE_NVML_SCENARIO=$T/f.scn &&
	serve_start serve.log &&
	scrape /metrics -o m.txt && has "^vramz_up 1$" m.txt &&
	cat /proc/$SERVE_PID/maps >serve.maps && serve_stop &&
	has "libmicrohttpd" serve.maps &&
	{ "$VRAMZ_BIN" daemon -i 200ms 2>d.err & echo $! >d.pid; } &&
	for _ in $(seq 50); do [ -e run/segment ] && break; sleep 0.1; done &&
	cat /proc/$(cat d.pid)/maps >daemon.maps &&
	kill -TERM $(cat d.pid) && wait $(cat d.pid) &&
	has "libvramz|vramz" daemon.maps &&
	hasnt "libmicrohttpd|libgnutls" daemon.maps
'

expect_success 'the binary does not link libmicrohttpd or GnuTLS (so -h and one-shots never load them)' '
	ldd "$VRAMZ_BIN" >ldd.txt &&
	hasnt "microhttpd|gnutls" ldd.txt
'

expect_success 'nor zlib and libcrypt (gzip, bcrypt): serve loads them with libmicrohttpd' '
	ldd "$VRAMZ_BIN" >ldd.txt && hasnt "libz\.so|libcrypt\.so" ldd.txt &&
	scenario_fleet f.scn 1 1 && export FAKE_NVML_SCENARIO=$T/f.scn &&
	serve_start serve.log && cat /proc/$SERVE_PID/maps >serve.maps && serve_stop &&
	has "libz\.so" serve.maps && has "libcrypt\.so" serve.maps
'

serve_cleanup
finish
