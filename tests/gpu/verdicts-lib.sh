# SPDX-License-Identifier: Apache-2.0
# verdicts-lib.sh - what tests/gpu/verdicts_check.sh and
# verdicts_log_check.sh share (sourced from the repository root): the
# carried build, a work directory with its own runtime directory, the
# jobs of verdicts_jobs.py under the agent, and OOM scenarios 1-3.
# Sets ROOT C VZ H OUT W and PIDS; `cleanup` kills only what was started.
ROOT=$PWD
C=$ROOT/.carry; export LD_LIBRARY_PATH=$C NCCL_NVLS_ENABLE=0; VZ=${VRAMZ:-$C/vramz}; H=$ROOT/tests/gpu
OUT=${1:-${OUT:-/tmp/$VERDICTS_NAME}}; mkdir -p "$OUT"
W=$(mktemp -d "/tmp/$VERDICTS_NAME.XXXXXX")
export PYTHONPATH=$ROOT/python PYTHONDONTWRITEBYTECODE=1
export VRAMZ_RUNTIME_DIR=$W/run; mkdir -p "$VRAMZ_RUNTIME_DIR"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
T0=$(date +%s); since() { echo $(( $(date +%s) - T0 )); }
job() { # NAME MODE ARGS...: under the agent, in the background
	local name=$1; shift
	timeout "${JOB_TIMEOUT:-200}" python3 -m vramz.torch -i 0.5 --history "$H/verdicts_jobs.py" "$@" \
		> "$W/$name.json" 2> "$W/$name.err" &
	PIDS+=($!)
}
ready() { for _ in $(seq 240); do grep -q '"ready"' "$W/$1.json" 2>/dev/null && return 0; sleep 0.25; done; return 1; }

# scenarios 1-3, each job's wait before its ending in seconds:
#   oom_scenarios UNCAUGHT FILL GREEDY CAUGHT
oom_scenarios() {
	echo "== [$(since)s] 1. uncaught OOM under a cap"
	job uncaught uncaught --cap-gib 8 --hold-gib 5 --ask-gib 6 --wait "$1"
	ready uncaught; wait "${PIDS[-1]}"; echo "uncaught rc=$?"
	sleep 3
	echo "== [$(since)s] 2. an OOM between two processes filling the GPU"
	local free hold
	free=$(nvidia-smi -i 0 --query-gpu=memory.free --format=csv,noheader,nounits | tr -d ' ')
	hold=$(python3 -c "print(max(1, ($free - 6144) / 1024))")  # leave ~6 GiB
	job fill fill --hold-gib "$hold" --wait "$2"
	ready fill
	job greedy greedy --ask-gib 12 --wait "$3"
	ready greedy; wait "${PIDS[-1]}"; echo "greedy rc=$?"
	wait "${PIDS[-2]}"; echo "fill rc=$?"
	sleep 3
	echo "== [$(since)s] 3. caught OOM, normal exit"
	job caught caught --cap-gib 8 --hold-gib 5 --wait "$4"
	ready caught; wait "${PIDS[-1]}"; echo "caught rc=$?"
}
