#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# reader_ab.sh - what a frame of `vramz top` reading a daemon costs, for
# several builds at once and beside the machine's floor (bench/wakefloor:
# a process that only wakes once a second and writes a frame's bytes).
# Each group is COPIES processes in one private tmux at 200x60, every group
# running at the same time, so each sees the same load and the same noise;
# a group's figure is its CPU (schedstat, ns) per process per second, i.e.
# per frame at 1 Hz, and its wake-ups (voluntary context switches) per
# frame.  Then each build's `top --live`, sampling the driver itself, alone
# for the same time: the denominator of issue 14's ten-readers ratio
# (READER_AB_ONE=0 leaves it out).
#
#   bench/reader_ab.sh SECONDS COPIES NAME=VRAMZ [NAME=VRAMZ ...]
#
# Needs a daemon publishing in $VRAMZ_RUNTIME_DIR (the caller starts it)
# and $WAKEFLOOR (the floor program).  Prints one line a group and ends
# with a table: us a frame, that over the floor, and the ten-readers ratio
# each build would give (10 x its reader frame / its sampling top).
set -u
secs=$1 copies=$2; shift 2
sock=reader-ab-$$
trap 'tmux -L $sock kill-server 2>/dev/null' EXIT
cpu_ns() { for p in "$@"; do cat /proc/$p/task/*/schedstat 2>/dev/null; done | awk '{s += $1} END {printf "%d", s}'; }
wakes() { for p in "$@"; do cat /proc/$p/task/*/status 2>/dev/null; done |
	awk '/^voluntary_ctxt_switches/ {s += $2} END {printf "%d", s}'; }
# group NAME: the pane pids of its windows
group() { tmux -L $sock list-panes -s -t S -F "#{window_name} #{pane_pid}" | awk -v g="$1" '$1 == g {print $2}'; }

tmux -L $sock -f /dev/null new-session -d -s S -n hold -x 200 -y 60 "exec sleep 100000"
names=(floor)
tmux_env="env TERM=xterm-256color LANG=C.UTF-8"
for _ in $(seq "$copies"); do
	tmux -L $sock new-window -d -t S: -n floor "$tmux_env $WAKEFLOOR 160"
done
for nv in "$@"; do
	n=${nv%%=*} v=${nv#*=}; names+=("$n")
	for _ in $(seq "$copies"); do
		tmux -L $sock new-window -d -t S: -n "$n" "$tmux_env $v top -i 1s"
	done
done
sleep 4
declare -A c0 w0 per wpf
for n in "${names[@]}"; do
	pids=$(group "$n")
	[ "$(echo "$pids" | wc -w)" = "$copies" ] || echo "group $n: only $(echo $pids | wc -w) of $copies running" >&2
	c0[$n]=$(cpu_ns $pids); w0[$n]=$(wakes $pids)
done
read -r t0 _ </proc/uptime
sleep "$secs"
read -r t1 _ </proc/uptime
for n in "${names[@]}"; do
	pids=$(group "$n")
	per[$n]=$(awk -v a="${c0[$n]}" -v b="$(cpu_ns $pids)" -v k="$copies" -v t0="$t0" -v t1="$t1" \
		'BEGIN {printf "%.1f", (b - a) / 1000 / k / (t1 - t0)}')
	wpf[$n]=$(awk -v a="${w0[$n]}" -v b="$(wakes $pids)" -v k="$copies" -v t0="$t0" -v t1="$t1" \
		'BEGIN {printf "%.2f", (b - a) / k / (t1 - t0)}')
	echo "group $n: ${per[$n]} us a frame, ${wpf[$n]} wake-ups a frame"
done
tmux -L $sock kill-server 2>/dev/null
# each build's top sampling the driver, alone (READER_AB_ONE=0: not)
declare -A one
for nv in "$@"; do
	[ "${READER_AB_ONE:-1}" = 0 ] && { one[${nv%%=*}]=0; continue; }
	n=${nv%%=*} v=${nv#*=} sock=reader-ab-$$-$n
	tmux -L $sock -f /dev/null new-session -d -s S -n hold -x 200 -y 60 "exec sleep 100000"
	tmux -L $sock new-window -d -t S: -n one "$tmux_env VRAMZ_NO_DAEMON=1 $v top -i 1s"
	sleep 4
	p=$(group one); a=$(cpu_ns $p); read -r t0 _ </proc/uptime
	sleep "$secs"
	b=$(cpu_ns $p); read -r t1 _ </proc/uptime
	one[$n]=$(awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" 'BEGIN {printf "%.1f", (b - a) / 1000 / (t1 - t0)}')
	echo "$n sampling alone: ${one[$n]} us a second"
	tmux -L $sock kill-server 2>/dev/null
done
echo
printf "%-10s %12s %12s %14s %16s\n" build "us/frame" "over floor" "sampling us/s" "ten/one (<= 2)"
printf "%-10s %12s %12s %14s %16s\n" floor "${per[floor]}" "-" "-" "-"
for nv in "$@"; do
	n=${nv%%=*}
	awk -v n="$n" -v r="${per[$n]}" -v f="${per[floor]}" -v o="${one[$n]}" \
		'BEGIN {printf "%-10s %12.1f %12.1f %14.1f %16.2f\n", n, r, r - f, o, o > 0 ? 10 * r / o : 0}'
done
