# SPDX-License-Identifier: Apache-2.0
# serve-lib.sh - helpers for the `vramz serve` end-to-end tests (t4*-serve*.sh):
# writing fake-NVML scenarios, starting the exporter on a free loopback
# port and stopping it.  Sourced after lib.sh.

# gpu_line IDX [extra key=value...]: an H200 like the measured machine's.
gpu_line() {
	local i=$1
	shift
	printf 'gpu %d name="NVIDIA H200" uuid=GPU-%08x-1c35-4f8a-b6d2-7e90a15c3f48 pci=00000000:%02X:00.0 arch=hopper cc=9.0 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=%d mem_util=10 temp=%d power=300000 power_limit=700000 sm_clock=1980 mem_clock=3201 pcie_gen=5 pcie_width=16 pcie_max_gen=5 pcie_max_width=16 pcie_tx=1000 pcie_rx=2000 nvlinks=18 throttle=0x4 energy=123456789 %s\n' \
		"$i" "$((0x10000000 + i))" "$((0x19 + i))" "$((i * 10 % 100))" "$((40 + i))" "$*"
}

# scenario_fleet FILE NGPUS NPROCS: NGPUS GPUs, NPROCS processes spread over them.
scenario_fleet() {
	local f=$1 n=$2 np=$3 i
	{
		printf 'driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n'
		for i in $(seq 0 $((n - 1))); do gpu_line "$i"; done
		# NVLinks pair the GPUs as on an HGX board's neighbours
		for i in $(seq 0 2 $((n - 2))); do printf 'nvlink %d %d 18\n' "$i" "$((i + 1))"; done
		for i in $(seq 0 $((np - 1))); do
			printf 'proc gpu=%d pid=%d used=%dMiB type=compute sm=%d mem=3\n' \
				"$((i % n))" "$((4000000 + i))" "$((100 + i))" "$((i % 100))"
		done
	} >"$f"
}

# serve_start LOG [serve options]: starts vramz serve on $SERVE_LISTEN
# (127.0.0.1:0, a free port) in the background; sets SERVE_PID and PORT
# once it listens.  SERVE_WRAP, when set, is a command prefix (a sandbox).
serve_start() {
	local log=$1 i
	shift
	# an old log of the same name would be read before the new process
	# truncates it: the port of a server that is gone
	rm -f "$log"
	# shellcheck disable=SC2086 # SERVE_WRAP is a word list
	${SERVE_WRAP:-} "$VRAMZ_BIN" serve --listen "${SERVE_LISTEN:-127.0.0.1:0}" "$@" 2>"$log" &
	SERVE_PID=$!
	echo "$SERVE_PID" >>"$T/.serve-pids"
	for i in $(seq 1 100); do
		PORT=$(sed -n 's|.*listening on https\?://.*:\([0-9]*\)/metrics.*|\1|p' "$log" 2>/dev/null)
		[ -n "$PORT" ] && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$log"; return 1; }
		sleep 0.1
	done
	echo "vramz serve did not start:"; cat "$log"
	return 1
}

serve_stop() {
	kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID"
}

# scrape PATH [curl options]: the body of http://127.0.0.1:$PORT/PATH
scrape() {
	local p=$1
	shift
	curl -sS --max-time 10 "$@" "http://127.0.0.1:$PORT$p"
}

# rss_kib PID: resident set size from /proc
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# wait_for CMD...: retries CMD for up to 10 s (state that needs a few samples)
wait_for() {
	local i
	for i in $(seq 1 100); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	"$@"
}

# serve_cleanup: stops every exporter a step started, even one whose step
# failed before its serve_stop.  Call before finish.
serve_cleanup() {
	local p
	[ -f "$T/.serve-pids" ] || return 0
	for p in $(cat "$T/.serve-pids"); do kill "$p" 2>/dev/null; done
	rm -f "$T/.serve-pids"
}

# ---- --web-config (t403x-serve-*.sh) ------------------------------------
# One password and bcrypt hashes of it, made once with Python's crypt
# module (libxcrypt): cost 4 for speed, cost 10 and 12 (~0.3 s and ~1 s a
# check here) where the cost itself is under test.  OTHER_HASH is another password's.
WEB_PASS=s3cret
WEB_HASH='$2b$04$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O'
WEB_HASH10='$2b$10$gRGXXcTwXo2CN6It4PkxR..pPCnlJoA2Ej0YN3fjpaBq5Tx9z6Vf6'
WEB_HASH12='$2b$12$mcCNSEAp2lHFl/cjZFdlMOV5ZMhVTiwvlqoMHNmTYn.zRB2h2d4rW'
OTHER_HASH='$2b$04$MK/O16Ue55ukwPf6PtQDdO0VJ0eyO4abaXNivjQqXA2XvvM3BBrma'

# make_cert DIR [NAME]: a self-signed certificate for 127.0.0.1 and
# localhost, DIR/NAME.pem and DIR/NAME.key (NAME defaults to tls), valid
# for 30 days: beyond the 14 in which serve warns of its expiry
make_cert() {
	local n=${2:-tls}
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=localhost \
		-addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
		-keyout "$1/$n.key" -out "$1/$n.pem" 2>/dev/null
}

# scrape_tls PATH [curl options]: like scrape, over https, trusting $T/tls.pem
scrape_tls() {
	local p=$1
	shift
	curl -sS --max-time 10 --cacert "$T/tls.pem" "$@" "https://127.0.0.1:$PORT$p"
}
# cost 14, the highest vramz takes (~1 s a check here): shutdown under a check
WEB_HASH14='$2b$14$d1/T1obAwJvU9JbGG7jsQuGnD8VhxTTyWeK2b5/af8bn3UY8Vt.X6'

# make_clients: in the current directory, a CA (ca.pem) and a client it
# signed (client.pem, client.key); a self-signed client nobody trusts
# (stranger.pem, stranger.key): client_auth_type (t4033, t4039)
make_clients() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=test-ca -addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign -keyout ca.key -out ca.pem 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=prometheus \
		-keyout client.key -out client.csr 2>/dev/null &&
	openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
		-out client.pem 2>/dev/null &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=stranger -keyout stranger.key -out stranger.pem 2>/dev/null
}
