#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t7530-torch-rundir.sh - the audit's attack on the runtime directory, end
# to end (issue 25): root runs a job with VRAMZ_TORCH set (the .pth hook)
# and VRAMZ_RUNTIME_DIR inside a world-writable directory, where another
# user replaced `vramz` by a symbolic link to a root-only directory
# holding a dead agent's file.  Root's agent must write nothing there and
# delete nothing; nor through a parent linked by that user; a FIFO planted
# at its temporary name must not block it, and it says so once.  Readers
# and the daemon refuse the same directory.  The rule, case by case, is
# tests/rundir-cases.txt (unit tests in C and Python).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/torch-lib.sh"

# the .pth hook as an installed package has it: in a user site directory
# the interpreter processes at start
export PYTHONUSERBASE="$T/userbase"
SITE=$(python3 -c 'import site; print(site.getusersitepackages())')
mkdir -p "$SITE" && cp "$TESTS_SRC/../python/vramz-torch.pth" "$SITE/"
export PYTHONPATH="$PY/stub:$TESTS_SRC/../python"

# a job that initialises CUDA, lets its agent tick a while and exits
cat > "$T/job.py" <<'PYEOF'
import os, sys, time
import torch
if len(sys.argv) > 1:  # plant a FIFO at the agent's temporary name first, as uid 65534
    from vramz.torch import agent
    a = agent()
    tmp = os.path.join(sys.argv[1], "." + a.name + ".tmp")
    os.mkfifo(tmp)
    os.lchown(tmp, 65534, 65534)
    print("planted", tmp, flush=True)
torch.cuda._stub.alloc(1 << 30)
time.sleep(1.0)
print("done", flush=True)
PYEOF

# a dead agent's file, believable by content: only the directory rule saves it
dead_agent() { printf 'vramz-torch 1\nprocess pid=999999 start_time_ticks=1\n' > "$1/torch-999999-1"; }

W="$T/shared"
mkdir -p "$W" "$T/rootonly" && chmod 1777 "$W" && chmod 700 "$T/rootonly" && dead_agent "$T/rootonly"

expect_success 'setup: the hook attaches the agent in an ordinary directory' '
	VRAMZ_TORCH=0.05 VRAMZ_RUNTIME_DIR="$T/ok" python3 -c "
import os, time, torch
torch.cuda._stub.alloc(1 << 20)
for _ in range(500):
    if [n for n in os.listdir(os.environ[\"VRAMZ_RUNTIME_DIR\"]) if n.startswith(\"torch-\")]:
        print(\"published\"); break
    time.sleep(0.01)
" > out 2> err &&
	has "^published" out &&
	test "$(stat -c %a "$T/ok")" = "$([ "$(id -u)" = 0 ] && echo 755 || echo 700)"
'

expect_success 'a vramz directory replaced by a link to a root-only directory: nothing written, nothing deleted' '
	ln -s "$T/rootonly" "$W/vramz" &&
	{ [ "$(id -u)" != 0 ] || chown -h 65534:65534 "$W/vramz"; } &&
	VRAMZ_TORCH=0.05 VRAMZ_RUNTIME_DIR="$W/vramz" timeout 60 python3 "$T/job.py" > out 2> err &&
	has "^done" out &&
	has "vramz.torch: cannot publish in $W/vramz: not trusted: a symbolic link, not followed; publishing nothing" err &&
	test "$(ls -A "$T/rootonly")" = torch-999999-1 &&
	grep -q "pid=999999" "$T/rootonly/torch-999999-1" &&
	test "$(ls -A "$W")" = vramz
'

if [ "$(id -u)" = 0 ]; then
mkdir -p "$T/private/vramz" && chmod 700 "$T/private" "$T/private/vramz" && dead_agent "$T/private/vramz"
expect_success 'a parent linked by another user is not followed either' '
	ln -s "$T/private" "$W/p" && chown -h 65534:65534 "$W/p" &&
	VRAMZ_TORCH=0.05 VRAMZ_RUNTIME_DIR="$W/p/vramz" timeout 60 python3 "$T/job.py" > out 2> err &&
	has "^done" out &&
	has "not trusted: its parent p is a symbolic link owned by uid 65534, not followed" err &&
	test "$(ls -A "$T/private/vramz")" = torch-999999-1 &&
	rm "$W/p"
'

expect_success 'sticky shared directory: a FIFO at the temporary name is refused at once and said once; only own dead files swept' '
	rm "$W/vramz" &&
	dead_agent "$W" && chown 65534:65534 "$W/torch-999999-1" &&
	printf "vramz-torch 1\n" > "$W/torch-4194999-5" &&
	VRAMZ_TORCH=0.05 VRAMZ_RUNTIME_DIR="$W" timeout 20 python3 "$T/job.py" "$W" > out 2> err &&
	has "^planted" out && has "^done" out &&
	test "$(grep -c "refused: a FIFO owned by uid 65534 is at this temporary name" err)" = 1 &&
	has "not publishing: .*; trying again each interval" err &&
	ls -A "$W" > files &&
	has "^torch-999999-1$" files && hasnt "^torch-4194999-5$" files &&
	test "$(grep -c "^torch-" files)" = 1
'
fi

# readers: an agent file behind the link is not believed; the same file
# in the real directory is (so the refusal is the link's, not the file's)
rm -rf "$W"/* "$W"/.[!.]* 2>/dev/null
sleep 600 & HOLDER=$!
trap 'kill $HOLDER 2>/dev/null; rm -rf "$T"' EXIT
HSTART=$(awk '{print $22}' "/proc/$HOLDER/stat")
printf 'vramz-torch 1\nprocess pid=%s start_time_ticks=%s\ndevice cuda=0 uuid=GPU-00000000-0000-4000-8000-000000000000 allocated_bytes=7 reserved_bytes=9\n' \
	"$HOLDER" "$HSTART" > "$T/rootonly/torch-$HOLDER-$HSTART"
cat > "$T/m.scn" <<SCN
driver 580.159.04
gpu 0 name="NVIDIA H200" uuid=GPU-00000000-0000-4000-8000-000000000000 mem_total=143771MiB mem_reserved=616MiB util=50
proc gpu=0 pid=$HOLDER used=1GiB
SCN
export FAKE_NVML_SCENARIO="$T/m.scn"

expect_success 'readers: agent files behind a linked directory are ignored' '
	ln -sfn "$T/rootonly" "$W/vramz" &&
	VRAMZ_RUNTIME_DIR="$W/vramz" vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"] for p in d[\"processes\"] if p[\"pid\"]==$HOLDER][0]")" = None &&
	VRAMZ_RUNTIME_DIR="$T/rootonly" vramz ps --json > ps.json &&
	test "$(json ps.json "[p[\"torch\"][\"reserved_bytes\"] for p in d[\"processes\"] if p[\"pid\"]==$HOLDER][0]")" = 9
'

expect_success 'the daemon refuses a linked runtime directory' '
	test "$(rc vramz daemon --runtime-dir "$W/vramz")" = 1 &&
	{ vramz daemon --runtime-dir "$W/vramz" 2> derr || true; } &&
	has "daemon: $W/vramz: not trusted: a symbolic link, not followed" derr &&
	test "$(ls -A "$T/rootonly" | grep -vc torch-)" = 0
'
finish
