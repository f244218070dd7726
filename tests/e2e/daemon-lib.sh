# SPDX-License-Identifier: Apache-2.0
# daemon-lib.sh - a `vramz daemon` for the e2e tests that read one
# (t6060, t8000, t8010, t8020), sourced after lib.sh: the runtime
# directory is $T/run, and every daemon a test started (its $T/*.pid
# files) is killed when the test ends.
export VRAMZ_RUNTIME_DIR="$T/run"
trap 'for f in "$T"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done; rm -rf "$T"' EXIT

# no libnvidia-ml anywhere: a reader that tried the driver would fail
nonvml() { env LD_LIBRARY_PATH= "$VRAMZ_BIN" "$@"; }
# starts a daemon and waits until a reader takes its segment
start_daemon() {
	# a step that failed half-way left its daemon: end it first
	[ -f "$T/daemon.pid" ] && kill -9 "$(cat "$T/daemon.pid")" 2>/dev/null
	rm -f "$T/daemon.pid" "$VRAMZ_RUNTIME_DIR/segment"
	"$VRAMZ_BIN" daemon "$@" 2>"$T/daemon.err" &
	echo $! >"$T/daemon.pid"
	for _ in $(seq 100); do
		# generation (header offset 136) above 0: a first snapshot is out
		python3 -c "import sys; h = open(sys.argv[1], \"rb\").read(144)
sys.exit(len(h) < 144 or int.from_bytes(h[136:144], \"little\") == 0)" \
			"$VRAMZ_RUNTIME_DIR/segment" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the daemon never published:"; cat "$T/daemon.err"; return 1
}
stop_daemon() {
	local pid
	pid=$(cat "$T/daemon.pid") && kill -TERM "$pid" && wait "$pid"
	rm -f "$T/daemon.pid"
}
