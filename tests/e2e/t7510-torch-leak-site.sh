#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7510-torch-leak-site.sh - the "locate the leaking code" step end to end:
# a Python process with the stub torch and vramz.torch attached with
# history=True allocates at a known line every step; the fake NVML lists it
# growing; `vramz watch` finds the leak, asks the agent (request file) for
# its live allocations by Python line, and names that line.
. "$(dirname "$0")/lib.sh"
export PYTHONPATH="$TESTS_SRC/python/stub:$TESTS_SRC/../python" PYTHONDONTWRITEBYTECODE=1
export VRAMZ_RUNTIME_DIR="$T/run"
mkdir -p "$VRAMZ_RUNTIME_DIR"

cat > "$T/leaky.py" <<'PYEOF'
import os, sys, time
import torch, vramz.torch
from vramz.torch import _agent
_agent.MIN_SITES_INTERVAL_S = 1   # the agent's own rate limit, shortened for the test
kept = []

def step():
    kept.append(torch.cuda._stub.alloc(64 << 20))  # THE-LEAK

def warm():
    return torch.cuda._stub.alloc(1 << 30)

w = warm()
a = vramz.torch.attach(interval=0.2, history=True)
end = time.time() + float(sys.argv[1])
while time.time() < end and not os.path.exists(sys.argv[2]):
    step()
    time.sleep(0.1)
PYEOF
LINE=$(grep -n "THE-LEAK" "$T/leaky.py" | cut -d: -f1)
python3 "$T/leaky.py" 600 "$T/stop" > "$T/leaky.out" 2>&1 &
AGENT=$!
trap 'touch "$T/stop"; kill $AGENT 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 300); do ls "$VRAMZ_RUNTIME_DIR" | grep -q "^torch-$AGENT-" && break; sleep 0.1; done
export AGENT_PID=$AGENT
cat > "$T/m.scn" <<'SCN'
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB util=50
proc gpu=0 pid=env:AGENT_PID used=2GiB sm=50 follow
grow gpu=0 pid=env:AGENT_PID rate=+640MiB/s
SCN
export FAKE_NVML_SCENARIO="$T/m.scn"

expect_success 'watch names the Python line where the leak grows' '
	# until the agent'"'"'s line is named (60 s at most), not 60 s in all
	{ timeout 120 "$VRAMZ_BIN" watch --json -i 250ms -d 60s --leak-warmup 1s --leak-min-span 5s \
		--report-after 1s > w.json 2> w.err & wp=$!; } &&
	for _ in $(seq 600); do
		grep -q "of the growth is allocated at leaky.py" w.json && break
		kill -0 $wp 2>/dev/null || break
		sleep 0.1
	done;
	kill $wp 2>/dev/null; wait $wp;
	has "\"kind\": ?\"leak\"" w.json &&
	has "\"site\": ?\"leaky.py:$LINE in step\(\)\"" w.json &&
	has "of the growth is allocated at leaky.py:$LINE in step\(\)" w.json
'

expect_success 'the agent answered in its files; at exit only its figures stay, as a tombstone' '
	touch "$T/stop" &&
	for _ in $(seq 300); do kill -0 $AGENT 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $AGENT 2>/dev/null && ls "$VRAMZ_RUNTIME_DIR" > files &&
	hasnt "^torch-.*[.]" files && has "^torch-$AGENT-[0-9]+\$" files
'
finish
