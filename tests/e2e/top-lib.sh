# SPDX-License-Identifier: Apache-2.0
# top-lib.sh - the tmux harness of the `vramz top` tests (t60*-top-*.sh),
# sourced after lib.sh.  The dashboard needs a real terminal, so each step
# (a subshell) starts its own tmux server on a private socket, named when
# the step opens its session so that $(...) subshells reach it too, and
# kills it - and any processes the test listed in $KIDS - when the step ends.

# LeakSanitizer's exit-time check was seen to hang, spinning a core, when
# the pty closes under it (tmux killed right after vramz top quits), leaving
# processes behind in sanitizer runs; the dashboard's memory errors are still
# caught by ASan, its leaks by the library's own tests.
export ASAN_OPTIONS=detect_leaks=0
# top keeps its choices in $XDG_CONFIG_HOME/vramz/top.conf at quit: never
# the machine's, so a person's choices do not change what a test sees
export XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-$T/cfg}

tm() { tmux -L "$SOCK" "$@"; }
TM=tm
# tm_session W H COMMAND: this step's tmux server, one session running COMMAND
# (a fresh socket each time: a server just killed may still be exiting
# when the next session is asked of it, and tmux then says "server exited
# unexpectedly")
tm_session() {
	TM_N=$((${TM_N:-0} + 1))
	SOCK="vramz-test-$$-$BASHPID-$TM_N"
	SOCKS="${SOCKS-} $SOCK"
	trap 'for s in $SOCKS; do tmux -L "$s" kill-server 2>/dev/null || true; done; [ -z "${KIDS-}" ] || kill $KIDS 2>/dev/null' EXIT
	tm new-session -d -x "$1" -y "$2" "$3"
}
# top_session W H ARGS...: a session running vramz top ARGS in LANG
# $TOP_LANG (C.UTF-8 unless set) with $TOP_ENV in its environment; the
# pane stays to show how it exited
top_session() {
	local w=$1 h=$2
	shift 2
	tm_session "$w" "$h" \
		"LANG=${TOP_LANG:-C.UTF-8} ${TOP_ENV:+$TOP_ENV }$VRAMZ_BIN top $*; echo vramz-exited rc=\$?; sleep 30"
}
# shell W H: a session running a plain interactive shell
shell() {
	tm_session "$1" "$2" "env PS1='prompt\$ ' LANG=C.UTF-8 bash --norc --noprofile -i"
}
keys() { tm send-keys "$@"; }
# wait_for PATTERN: until the screen shows it (WAIT_FOR_TENTHS tenths of a
# second, 10 s unless set); screen in $T/screen
wait_for() {
	for _ in $(seq "${WAIT_FOR_TENTHS:-100}"); do
		tm capture-pane -p >"$T/screen" 2>/dev/null
		grep -qE -- "$1" "$T/screen" && return 0
		sleep 0.1
	done
	echo "screen never showed /$1/:"
	cat "$T/screen"
	return 1
}
# job_log: the replayed job of t6040 and t6070, a 150 s log at 1 Hz
# ($T/job.csv, $T/job.procs.csv) written from the rows `vramz log`
# records for two GPUs ($T/tpl.csv, its template): pid 4200201 ramps to
# 8 GiB on GPU 1 in 8 s and stays; pid 4200102 on GPU 0 starts at 2 GiB
# and grows 64 MiB/s throughout.
job_log() {
	cat >"$T/two.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000
gpu 1 name="NVIDIA H200" uuid=GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50 temp=41 power=318000 power_limit=700000
proc gpu=0 pid=4200102 used=2GiB type=compute sm=50
proc gpu=1 pid=4200201 used=8GiB type=compute sm=50
SCN
	FAKE_NVML_SCENARIO=$T/two.scn vramz log -o "$T/tpl.csv" --procs -i 50ms --duration 100ms 2>/dev/null
	python3 - "$T" <<'PY'
import csv, datetime, sys
d = sys.argv[1]
def rows(p):
    r = list(csv.DictReader(open(p, newline="")))
    return r, list(r[0].keys())
g, gcols = rows(d + "/tpl.csv")
p, pcols = rows(d + "/tpl.procs.csv")
t0 = g[0]["time"]
gt = {r["gpu"]: r for r in g if r["time"] == t0}
pt = {r["pid"]: r for r in p if r["time"] == t0}
base = datetime.datetime(2026, 11, 30, 1, 0, 0)
GiB, MiB = 1 << 30, 1 << 20
with open(d + "/job.csv", "w", newline="") as gf, open(d + "/job.procs.csv", "w", newline="") as pf:
    gw = csv.DictWriter(gf, gcols, lineterminator="\n"); gw.writeheader()
    pw = csv.DictWriter(pf, pcols, lineterminator="\n"); pw.writeheader()
    for s in range(150):
        t = (base + datetime.timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        used = {"4200102": 2 * GiB + s * 64 * MiB, "4200201": min(8, s + 1) * GiB}
        for pid, gpu in (("4200102", "0"), ("4200201", "1")):
            r = dict(pt[pid]); r["time"] = t; r["used_bytes"] = str(used[pid]); pw.writerow(r)
            r = dict(gt[gpu]); r["time"] = t
            r["mem_used_bytes"] = str(used[pid])
            r["mem_free_bytes"] = str(int(r["mem_total_bytes"]) - int(r["mem_reserved_bytes"]) - used[pid])
            gw.writerow(r)
PY
}
