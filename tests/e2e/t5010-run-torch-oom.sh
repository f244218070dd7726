#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t5010-run-torch-oom.sh - `vramz run -o LOG` of a PyTorch job (the stub
# torch of tests/python, under the agent): the log ends with a closing
# tick that shows the job gone, and its events file keeps the agent's
# records, so `analyze LOG` of a job that died of an uncaught OOM says
# "died out of memory" at its line, and of a job that caught its OOM and
# exited, "carried on" and no death (issue 27, as t7540 for `log --procs`).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/torch-lib.sh"
. "$TESTS_SRC/helpers/jobs-world.sh"
# one H200 with the stub torch's UUID (its agent's device joins it);
# scn-set adds the job's line to this base
echo 'driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB mem_used=auto util=50' >"$FAKE_NVML_SCENARIO.base"
cp "$FAKE_NVML_SCENARIO.base" "$FAKE_NVML_SCENARIO"

# the job (torch-lib.sh's, its model loaded) puts itself in the fake's
# list (its own pid, while it lives), then ends as its argument says
oom_job "$T/job.py"
cat >> "$T/job.py" <<'PYEOF'
subprocess.run(["scn-set", "p%d" % os.getpid(),
                "proc gpu=0 pid=%d used=21GiB follow" % os.getpid()], check=True)
time.sleep(1)
if sys.argv[1] == "dies":
    forward()
try:
    forward()
except torch.OutOfMemoryError:
    pass
time.sleep(1)
sys.exit(0)
PYEOF

expect_success 'run -o of a job that dies of an uncaught OOM: analyze names the line' '
	{ vramz run -i 200ms -o dies.csv -- python3 "$T/job.py" dies 2>err; test $? = 1; } &&
	grep ",process_end," dies.events.csv > end.rows &&
	has ",exception,1,torch\.OutOfMemoryError,1,[^,]*job\.py:$OOM_LINE in forward\(\),21474836480," end.rows &&
	pid=$(cut -d, -f7 end.rows) &&
	python3 - "$pid" <<-PY &&
	import csv, sys
	ticks = [r["time"] for r in csv.DictReader(open("dies.csv"))]
	seen = [r["time"] for r in csv.DictReader(open("dies.procs.csv")) if r["pid"] == sys.argv[1]]
	assert seen and ticks[-1] > seen[-1], (ticks[-3:], seen[-3:])  # the closing tick
	PY
	{ vramz analyze dies.csv > out; test $? = 3; } &&
	has "CRITICAL +oom +pid $pid \(python3\) on GPU 0 died out of memory at job\.py:$OOM_LINE in forward\(\) asking 20\.0 GiB .*; [0-9]+ % of its memory was allocated at job\.py:$HOLDER_LINE in load\(\)" out &&
	hasnt "probably|carried on" out
'

expect_success 'run -o of a job that catches its OOM and exits 0: carried on, no death' '
	vramz run -i 200ms -o caught.csv -- python3 "$T/job.py" caught 2>err &&
	grep ",process_end," caught.events.csv > end.rows &&
	has ",exit,0,,0," end.rows &&
	pid=$(cut -d, -f7 end.rows) &&
	{ vramz analyze caught.csv > out; true; } &&
	has "WARNING +oom +pid $pid \(python3\) on GPU 0 ran out of memory 1 time and carried on; the last at job\.py:$OOM_LINE in forward\(\) asking 20\.0 GiB" out &&
	hasnt "died out of memory|ended out of memory|CRITICAL" out
'

finish
