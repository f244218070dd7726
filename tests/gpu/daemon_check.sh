#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# daemon_check.sh - issue 14 on real GPUs, in about 2 minutes, from the
# repository root with .carry/ built by tools/carry-build.sh (vramz with top):
#   1. one-shots: `vramz status --json` from a live daemon vs
#      `nvidia-smi --query-gpu=memory.used,memory.total --format=csv` and vs
#      `vramz status --json --live`: median wall time, peak RSS, and whether
#      libnvidia-ml was loaded at all (LD_DEBUG=libs);
#   2. the daemon's own CPU at 1 Hz with --procs, over 30 s, while hold.py
#      holds memory on each GPU (targets: <= 0.1 % of a core);
#   3. ten `vramz top` reading the daemon vs one `vramz top --live` sampling
#      alone, 20 s each, total CPU (target: ten <= 2x one); and ten
#      bench/wakefloor processes, which only wake once a second and write
#      a frame's bytes: the floor under any ten readers on this machine.
#   bash tests/gpu/daemon_check.sh      (SECS=40: longer windows for 3.;
#                                        ROUNDS=3: three pairs, summed)
# Prints a table at the end.  Kills only what it started.
set -u
C=$PWD/.carry; VZ=$C/vramz
export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0
D=$(mktemp -d /tmp/vramz-daemon-check.XXXXXX)
export VRAMZ_RUNTIME_DIR=$D/run
sock=vzd-$$
cleanup() {
	tmux -L $sock-10 kill-server 2>/dev/null; tmux -L $sock-1 kill-server 2>/dev/null
	[ -n "${DP:-}" ] && kill "$DP" 2>/dev/null
	[ -n "${H:-}" ] && kill "$H" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT
# CPU nanoseconds of a process, all its threads (schedstat: ns, where
# /proc/PID/stat's clock ticks are 10 ms, too coarse for 0.1 % over 30 s)
cpu_ns() { cat /proc/$1/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
# per thread: "tid:comm ns" lines
cpu_threads() { for t in /proc/$1/task/*; do echo "${t##*/}:$(cat $t/comm) $(awk '{print $1}' $t/schedstat)"; done; }

# 2 GiB on GPU 0, 1 GiB on each other GPU there is (hold.py exits if asked
# for a GPU the machine lacks)
n=$(nvidia-smi -L | wc -l); mibs="2048"; for _ in $(seq 2 "$n"); do mibs="$mibs 1024"; done
timeout 90 python3 tests/gpu/hold.py $mibs >$D/h.out 2>&1 & H=$!
for _ in $(seq 120); do grep -q ready $D/h.out && break; kill -0 $H 2>/dev/null || break; sleep 0.5; done

"$VZ" daemon -i 1s --procs 2>$D/daemon.err & DP=$!
for _ in $(seq 50); do [ -s "$VRAMZ_RUNTIME_DIR/segment" ] && break; sleep 0.2; done
sleep 2
"$VZ" status
echo "--- daemon's snapshot vs the driver (GPU memory, processes):"
"$VZ" status --json >$D/d.json; "$VZ" status --json --live >$D/l.json
python3 - $D/d.json $D/l.json <<'PY'
import json, sys
d, l = (json.load(open(p)) for p in sys.argv[1:3])
print("source", d["source"], "age_ms", d["age_ms"], "| live source", l["source"])
print("gpus match:", [g["uuid"] for g in d["gpus"]] == [g["uuid"] for g in l["gpus"]])
print("procs daemon", sorted((p["gpu"], p["pid"], p["used_bytes"]) for p in d["processes"]))
print("procs live  ", sorted((p["gpu"], p["pid"], p["used_bytes"]) for p in l["processes"]))
# the slow readings as published: PCIe throughput from the byte counters
# (or NVML's 20 ms sample on drivers without them), energy
print("slow readings (pcie tx, rx B/s, energy mJ):",
      [(g["pcie_tx_bytes_per_s"], g["pcie_rx_bytes_per_s"], g["energy_mj"]) for g in d["gpus"]])
PY
nvml_loaded=$(LD_DEBUG=libs "$VZ" status --json 2>&1 >/dev/null | grep -c "libnvidia-ml.so")
echo "--- one-shot wall time and RSS (30 runs each)"
timeout 60 python3 bench/oneshot.py 30 \
	"nvidia-smi=nvidia-smi --query-gpu=memory.used,memory.total --format=csv" \
	"status-daemon=$VZ status --json" \
	"status-live=$VZ status --json --live" \
	"vramz-h=$VZ -h" "true=/bin/true" | tee $D/oneshot.txt

echo "--- peak RSS (median of 9; /bin/true is this measure's floor)"
for c in "/bin/true" "$VZ -h" "$VZ status --json" "$VZ status --json --live" \
	 "nvidia-smi --query-gpu=memory.used,memory.total --format=csv"; do
	echo "$($C/peakrss 9 $c) $c"
done | tee $D/rss.txt
echo "--- the daemon's CPU at 1 Hz with processes (40 s), by thread"
cpu_threads $DP >$D/thr0
c0=$(cpu_ns $DP); read -r t0 _ </proc/uptime
sleep 40
c1=$(cpu_ns $DP); read -r t1 _ </proc/uptime
cpu_threads $DP >$D/thr1
join <(sort $D/thr0) <(sort $D/thr1) | awk -v t=40 '{printf "  thread %-16s %.4f %% of a core\n", $1, 100*($3-$2)/1e9/t}'
daemon_pct=$(awk -v a=$c0 -v b=$c1 -v t0=$t0 -v t1=$t1 'BEGIN{printf "%.4f", 100*(b-a)/1e9/(t1-t0)}')
daemon_rss=$(awk '/VmRSS/{print $2}' /proc/$DP/status)

# top_cpu N ENV SECONDS [CMD]: N tops (or CMDs) in one private tmux, their
# total CPU %
top_cpu() {
	local n=$1 env=$2 secs=$3 cmd=${4:-$VZ top -i 1s} i pids=() c0=0 c1=0 s=$sock-$1
	tmux -L $s -f /dev/null new-session -d -s b -n hold -x 200 -y 60 "exec sleep 100000"
	tmux -L $s set -g remain-on-exit on >/dev/null
	for i in $(seq $n); do
		tmux -L $s new-window -d -t b -n "t$i" "env TERM=xterm-256color LANG=C.UTF-8 $env $cmd"
	done
	sleep 4
	# a top that died shows why, instead of a silent low figure
	tmux -L $s list-panes -s -t b -F "#{window_name} #{pane_dead} #{pane_pid}" >$D/panes.$n
	awk '$1 != "hold" && $2 == 1 {print $1}' $D/panes.$n | while read -r w; do
		echo "top window $w exited:" >&2; tmux -L $s capture-pane -p -t "b:$w" | tail -5 >&2
	done
	pids=($(awk '$1 != "hold" && $2 == 0 {print $3}' $D/panes.$n))
	for i in "${pids[@]}"; do c0=$((c0 + $(cpu_ns $i))); done
	# user and system time apart (clock ticks: coarse, summed over all)
	local us0 us1
	us0=$(for i in "${pids[@]}"; do awk '{print $14, $15}' /proc/$i/stat; done | awk '{u+=$1; s+=$2} END {print u+0, s+0}')
	# wake-ups: voluntary context switches of every thread of them
	local w0 w1
	w0=$(for i in "${pids[@]}"; do cat /proc/$i/task/*/status; done | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}')
	local ta tb; read -r ta _ </proc/uptime
	sleep "$secs"
	for i in "${pids[@]}"; do c1=$((c1 + $(cpu_ns $i))); done
	us1=$(for i in "${pids[@]}"; do awk '{print $14, $15}' /proc/$i/stat; done | awk '{u+=$1; s+=$2} END {print u+0, s+0}')
	w1=$(for i in "${pids[@]}"; do cat /proc/$i/task/*/status; done | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s + 0}')
	read -r tb _ </proc/uptime
	tmux -L $s kill-server 2>/dev/null
	echo "top x$n: wake-ups (voluntary context switches, all threads) over ${secs}s: $((w1 - w0))" >&2
	echo "top x$n: user/system clock ticks over ${secs}s: $(echo $us0 $us1 | awk '{print $3-$1 " / " $4-$2}')" >&2
	awk -v a=$c0 -v b=$c1 -v t0=$ta -v t1=$tb -v n=${#pids[@]} \
		'BEGIN{printf "%.4f %d", 100*(b-a)/1e9/(t1-t0), n}'
}
echo "--- ten tops on the daemon, then one top sampling alone (${SECS:-20} s each, ${ROUNDS:-1} rounds)"
secs=${SECS:-20}
# ROUNDS=N: N pairs, ten then one; the figures are the rounds' sums (one
# sampling top varies by a fifth from one window to the next on the H200)
ten_pct=0 one_pct=0 rounds=""
for r in $(seq "${ROUNDS:-1}"); do
	read -r t ten_n < <(top_cpu 10 "" "$secs")
	read -r o one_n < <(top_cpu 1 "VRAMZ_NO_DAEMON=1" "$secs")
	rounds="$rounds $(awk -v a="$t" -v b="$o" 'BEGIN{printf "%.2f", (b > 0 ? a/b : -1)}')"
	ten_pct=$(awk -v a="$ten_pct" -v b="$t" 'BEGIN{printf "%.4f", a + b}')
	one_pct=$(awk -v a="$one_pct" -v b="$o" 'BEGIN{printf "%.4f", a + b}')
done
ten_pct=$(awk -v a="$ten_pct" -v n="${ROUNDS:-1}" 'BEGIN{printf "%.4f", a / n}')
one_pct=$(awk -v a="$one_pct" -v n="${ROUNDS:-1}" 'BEGIN{printf "%.4f", a / n}')
echo "--- ten processes that only wake once a second and write 160 bytes ($secs s)"
read -r floor_pct floor_n < <(top_cpu 10 "" "$secs" "$C/wakefloor 160")

smi=$(awk '$1=="nvidia-smi"{print $2}' $D/oneshot.txt)
dm=$(awk '$1=="status-daemon"{print $2, $5}' $D/oneshot.txt)
lv=$(awk '$1=="status-live"{print $2, $5}' $D/oneshot.txt)
hh=$(awk '$1=="vramz-h"{print $2}' $D/oneshot.txt); tr=$(awk '$1=="true"{print $2}' $D/oneshot.txt)
echo
echo "=== daemon_check results ($(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l))"
printf "%-44s %s\n" "metric" "value (target)"
printf "%-44s %s\n" "nvidia-smi --query-gpu wall, ms" "$smi"
printf "%-44s %s\n" "status --json from daemon: wall ms" "${dm%% *} (<= 0.1x smi)"
printf "%-44s %s\n" "status --json --live: wall ms" "${lv%% *}"
printf "%-44s %s\n" "daemon / nvidia-smi wall ratio" "$(awk -v a="${dm%% *}" -v b="$smi" 'BEGIN{printf "%.3f", a/b}') (<= 0.1)"
printf "%-44s %s\n" "libnvidia-ml loads in status from daemon" "$nvml_loaded (0)"
printf "%-44s %s\n" "daemon CPU at 1 Hz --procs, % of a core" "$daemon_pct (<= 0.1); RSS $daemon_rss KiB"
printf "%-44s %s\n" "ten tops on the daemon, total CPU %" "$ten_pct ($ten_n running)"
printf "%-44s %s\n" "one top sampling alone, CPU %" "$one_pct ($one_n running)"
printf "%-44s %s\n" "ten wakefloor 160 (bare wake-ups), CPU %" "$floor_pct ($floor_n running)"
printf "%-44s %s\n" "ten tops / ten bare wake-ups" "$(awk -v a="$ten_pct" -v b="$floor_pct" 'BEGIN{printf "%.2f", (b > 0 ? a/b : -1)}')"
printf "%-44s %s\n" "ten / one, each round" "$rounds"
printf "%-44s %s\n" "ten / one" "$(awk -v a="$ten_pct" -v b="$one_pct" 'BEGIN{printf "%.2f", (b > 0 ? a/b : -1)}') (<= 2)"
printf "%-44s %s\n" "vramz -h vs /bin/true, ms" "$hh vs $tr ($(awk -v a="$hh" -v b="$tr" 'BEGIN{printf "%.2f", a/b}')x)"
printf "%-44s %s\n" "peak RSS KiB: true, -h, status daemon, live, smi" "$(awk '{printf "%s ", $1}' $D/rss.txt)(status from daemon <= 8192)"
cat $D/daemon.err
rm -rf "$D"
