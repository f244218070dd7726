#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# callgrind_top.sh - instructions per tick of `vramz top`, split by where
# they go, counted by valgrind's callgrind (instruction counts do not
# depend on what else the machine runs, unlike CPU time on a shared box).
#
#   bench/callgrind_top.sh [BUILD_DIR] [TICKS]
#
# For each of 2 GPUs (2gpu-h200.scn, 3 processes: the measured H200 box)
# and 8 GPUs (8gpu.scn, 100 processes) at 200x60 and 80x24, it starts top
# under callgrind at 250 ms in a private tmux, waits out the start-up,
# zeroes the counters, lets TICKS ticks pass (default 40), dumps, and
# prints the instructions per tick: all of them, and those of the UI
# thread's parts (model, arrange, render incl. curses' refresh) and of the
# sampler thread (vramz_sample + the copy; the diagnosis engine apart).
# WARM=SECONDS waits longer first: WARM=30 lets the plots fill, so only
# what changes from tick to tick is drawn (a steady machine).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
ticks=${2:-40}
bin=$build/vramz
export LD_LIBRARY_PATH=$build/tests/fake-nvml/full
sock=vramz-cg-$$
work=$(mktemp -d)
trap 'tmux -L $sock kill-server 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
interval_ms=250

# calls made to function $2 in callgrind output $1
calls() {
	awk -v want="$2" '
		/^c?fn=\(/ { id = $1; sub(/^c?fn=/, "", id); if (NF > 1) name[id] = $2
			      cur = ($1 ~ /^cfn/) ? id : "" }
		/^calls=/ && cur != "" { n = $1; sub(/^calls=/, "", n); c[cur] += n }
		END { for (i in c) if (name[i] == want) t += c[i]; print t + 0 }' "$1"
}

# inclusive cost of function $2 in callgrind output $1 (0 when absent)
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '{ n=$1; gsub(",", "", n); for (i = 2; i <= NF; i++)
			if ($i ~ ("[:]" f "$") || $i ~ ("[:]" f " ")) { print n; exit } }' |
		head -1 | grep . || echo 0
}

run() {
	local scn=$1 w=$2 h=$3
	export FAKE_NVML_SCENARIO=$here/tests/scenarios/$scn
	tmux -L $sock kill-server 2>/dev/null
	sleep 0.2
	rm -f "$work"/cg.*
	[ -n "${KEEP:-}" ] && echo "callgrind output in $work"
	tmux -L $sock new-session -d -x "$w" -y "$h" \
		"LANG=C.UTF-8 exec valgrind --tool=callgrind --callgrind-out-file=$work/cg.%p \
		 $bin top -i ${interval_ms}ms 2>$work/vg.log"
	sleep "${WARM:-8}" # valgrind start-up, NVML init, the first frames (WARM=s)
	local vpid
	vpid=$(tmux -L $sock display -p "#{pane_pid}")
	callgrind_control -z "$vpid" >/dev/null 2>&1
	sleep "$(awk -v t="$ticks" -v i=$interval_ms 'BEGIN { print t * i / 1000 }')"
	callgrind_control -d "$vpid" >/dev/null 2>&1
	sleep 1
	tmux -L $sock send-keys q
	sleep 2
	local f
	f=$(ls "$work"/cg.*.1 2>/dev/null | head -1)
	if [ -z "$f" ]; then
		echo "$scn ${w}x$h: no dump"; cat "$work/vg.log"; return
	fi
	local n total ui render model find arr sample
	n=$(calls "$f" vramz_sample)
	total=$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
	ui=$(incl "$f" take_snapshots)
	render=$(incl "$f" render_screen)
	model=$(incl "$f" model_feed)
	find=$(( $(incl "$f" vramz_diag_feed) + $(incl "$f" vramz_diag_findings) ))
	arr=$(incl "$f" model_arrange)
	sample=$(( $(incl "$f" vramz_sample) + $(incl "$f" snap_copy) ))
	awk -v s="$scn" -v w="$w" -v h="$h" -v n="${n:-0}" -v t="$total" -v u="$ui" \
		-v r="$render" -v m="$model" -v f="$find" -v a="$arr" -v p="$sample" \
		'BEGIN { if (n < 1) n = 1;
		printf "%-14s %3dx%-2d %3d ticks  total %8.0f/tick  render %8.0f  model %7.0f  diag %7.0f  arrange %6.0f  sampler %7.0f\n",
		s, w, h, n, t / n, r / n, m / n, f / n, a / n, p / n }'
}

echo "instructions per tick of vramz top (callgrind, fake NVML, ${interval_ms} ms interval)"
for scn in ${SCENARIOS:-2gpu-h200.scn 8gpu.scn}; do
	for size in ${SIZES:-200x60 80x24}; do
		run "$scn" ${size%x*} ${size#*x}
	done
done
