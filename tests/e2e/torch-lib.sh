# SPDX-License-Identifier: Apache-2.0
# torch-lib.sh - the PyTorch agent tests' (t75xx) trainer, sourced after
# lib.sh: a Python process on the stub torch of tests/python that attaches
# vramz.torch and holds still.  Its allocator: 4 GiB of tensors in 5 GiB
# reserved, 512 MiB of it split and free, 3 retries, OOMS out-of-memory
# errors.  The agent's files go to $T/run.
PY="$TESTS_SRC/python"
export PYTHONPATH="$PY/stub:$TESTS_SRC/../python" PYTHONDONTWRITEBYTECODE=1
export VRAMZ_RUNTIME_DIR="$T/run"
mkdir -p "$VRAMZ_RUNTIME_DIR"
GiB=1073741824

# start_trainer OOMS: starts it, waits until its agent has published; sets
# AGENT and exports AGENT_PID (for a scenario's pid=env:AGENT_PID); it
# stops when $T/stop appears, or at the test's exit
start_trainer() {
	cat > "$T/train.py" <<'PYEOF'
import os, sys, time
import torch, vramz.torch
s = torch.cuda._stub
s.alloc(3 << 30, reserve=4 << 30)
s.alloc(1 << 30)
s.dev[0].update(inactive_split=512 << 20, retries=3, ooms=int(sys.argv[3]))
a = vramz.torch.attach(interval=0.05)
while not os.path.exists(a.path):
    time.sleep(0.01)
print("ready", a.path, flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end and not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
PYEOF
	python3 "$T/train.py" 600 "$T/stop" "$1" > "$T/train.out" 2>&1 &
	AGENT=$!
	trap 'kill $AGENT 2>/dev/null; rm -rf "$T"' EXIT
	for _ in $(seq 600); do grep -q ready "$T/train.out" && break; sleep 0.1; done
	export AGENT_PID=$AGENT
}

# oom_job FILE: a stub-torch job of the OOM tests (t5010, t7540), up to its
# model loaded: under a cap (25 % of the GPU), attached with history=True,
# 20 GiB held by load() (HOLDER-LINE); forward() asks 20 GiB more, which
# the cap refuses (OOM-LINE).  The test appends the job's ending.  Sets
# OOM_LINE and HOLDER_LINE.
oom_job() {
	cat > "$1" <<'PYEOF'
import os, subprocess, sys, time
import torch, vramz.torch
torch.cuda.set_per_process_memory_fraction(0.25)
a = vramz.torch.attach(interval=0.2, quiet=True, history=True)
kept = [torch.cuda._stub.alloc(1 << 20)]  # CUDA up: the agent publishes
def load():
    kept.append(torch.cuda._stub.alloc(20 << 30))  # HOLDER-LINE
def forward():
    return torch.cuda._stub.alloc(20 << 30)  # OOM-LINE
while not os.path.exists(a.path):
    time.sleep(0.01)
time.sleep(0.3)  # CUDA is up: allocation history is on from here
load()
PYEOF
	OOM_LINE=$(grep -n OOM-LINE "$1" | cut -d: -f1)
	HOLDER_LINE=$(grep -n HOLDER-LINE "$1" | cut -d: -f1)
}
