#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1130-ps-kube.sh - Kubernetes names of GPU processes from the kubelet's
# log directories, in every view: a fake host /proc (VRAMZ_PROCFS_ROOT)
# puts the fake driver's pids in pods (systemd driver with containerd,
# cgroupfs driver with CRI-O ids), a fake /var/log (VRAMZ_KUBE_LOG_ROOT)
# names them; `ps` shows NAMESPACE/POD, `--json`, the log and the
# exporter's pod / namespace / container labels carry the names, and a pod
# whose logs are gone keeps its uid, never a guessed name (nor a
# container name that a link of another pod gives).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/daemon-lib.sh" # one step reads a daemon
scenario 2gpu-h200.scn

CA=3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f
CB=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
CC=cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
P1=8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2d
P2=11111111-2222-3333-4444-555555555555
P3=99999999-8888-7777-6666-555555555555

# fake_proc PID CGROUP: the files attribution reads
fake_proc() {
	mkdir -p proc/$1 &&
	echo "$1 (python3) S 1 $1 $1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 777 1 1 1" >proc/$1/stat &&
	printf "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t%s\t1\n" "$1" >proc/$1/status &&
	printf "python3\0train.py\0" >proc/$1/cmdline &&
	printf "%s\n" "$2" >proc/$1/cgroup
}
# kubelet NS POD UID CONTAINER ID: what the kubelet writes for a container
kubelet() {
	mkdir -p "log/pods/$1_$2_$3/$4" && echo "{}" >"log/pods/$1_$2_$3/$4/0.log" &&
	ln -s "/var/log/pods/$1_$2_$3/$4/0.log" "log/containers/$2_$1_$4-$5.log"
}

expect_success 'a fake node: three pods, one without logs' '
	mkdir -p proc/1/ns log/pods log/containers &&
	ln -s "pid:[4026531836]" proc/1/ns/pid &&
	fake_proc 4200101 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${P1//-/_}.slice/cri-containerd-$CA.scope" &&
	fake_proc 4200201 "0::/kubepods/pod$P3/$CC" &&
	fake_proc 4200301 "11:memory:/kubepods/besteffort/pod$P2/crio-$CB.scope" &&
	kubelet ml-team trainer-7f9c $P1 pytorch $CA &&
	kubelet ml-team trainer-7f9c $P1 sidecar $CC &&
	kubelet vision resnet-0 $P2 main $CB
'
export VRAMZ_PROCFS_ROOT=$T/proc VRAMZ_KUBE_LOG_ROOT=$T/log

expect_success 'ps: NAMESPACE/POD, the container where it fits, the uid of a pod without logs' '
	vramz ps -s pid >out &&
	has "^  0  4200101 root +ml-team/trainer-7f9c +10\.0 GiB" out &&
	has "^  [01]  4200301 root +vision/resnet-0 \(main\) " out &&
	has "^  1  4200201 root +pod:99999999 " out &&
	vramz ps -s pid --wide >w &&
	has "^  0  4200101 root +ml-team/trainer-7f9c \(pytorch\) " w
'

expect_success 'status and --json: pod, namespace, container_name; null when unnamed' '
	vramz status >st && has "ml-team/trainer-7f9c" st &&
	vramz ps --json >j &&
	python3 - j <<PY
import json, sys
procs = {p["pid"]: p for p in json.load(open(sys.argv[1]))["processes"]}
a, b, c = procs[4200101], procs[4200201], procs[4200301]
assert (a["namespace"], a["pod"], a["container_name"]) == ("ml-team", "trainer-7f9c", "pytorch"), a
assert a["pod_uid"] == "$P1" and a["container"] == "$CA", a
# its pod has no logs, and its container id'"'"'s link names another pod:
# nothing is named, not even the container
assert (b["pod"], b["namespace"], b["container_name"]) == (None, None, None), b
assert b["pod_uid"] == "$P3", b
assert (c["namespace"], c["pod"], c["container_name"]) == ("vision", "resnet-0", "main"), c
PY
'

expect_success 'the exporter: dcgm-exporter'"'"'s pod, namespace and container labels, promtool-clean' '
	vramz serve --once --procs >m.txt &&
	has "^vramz_process_memory_used_bytes\{gpu=\"0\",uuid=\"[^\"]*\",pid=\"4200101\",user=\"root\",container_id=\"$CA\",pod_uid=\"$P1\",comm=\"python3\",pod=\"trainer-7f9c\",namespace=\"ml-team\",container=\"pytorch\"\} " m.txt &&
	has "^vramz_process_memory_used_bytes\{gpu=\"1\",uuid=\"[^\"]*\",pid=\"4200201\",user=\"root\",container_id=\"$CC\",pod_uid=\"$P3\",comm=\"python3\"\} " m.txt &&
	promtool check metrics <m.txt
'

expect_success 'recording rules: memory per pod and GPU, per pod, its GPUs, per namespace (promtool test rules)' '
	cp "$TESTS_SRC/../packaging/prometheus-recording.yml" . &&
	u0=$(sed -n "s/^vramz_gpu_info{gpu=\"0\",uuid=\"\([^\"]*\)\".*/\1/p" m.txt) && test -n "$u0" &&
	u1=$(sed -n "s/^vramz_gpu_info{gpu=\"1\",uuid=\"\([^\"]*\)\".*/\1/p" m.txt) && test -n "$u1" &&
	at="instance=\"gpu-node-7:9963\",job=\"vramz\"" &&
	{
		printf "rule_files: [prometheus-recording.yml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n"
		python3 "$TESTS_SRC/helpers/prom_series.py" m.txt
		echo "    promql_expr_test:"
		# the 2gpu-h200 scenario: 4200101 holds 10 GiB on GPU 0; 4200301
		# (vision/resnet-0) 61 GiB on GPU 0 and 63 GiB on GPU 1; 4200201
		# is in no named pod and in no series here
		q() { printf "      - expr: %s\n        eval_time: 5m\n        exp_samples:\n" "$1"; }
		s() { printf "          - labels: %s\n            value: %s\n" "$(printf "%s" "$1" | sed "s/.*/'"'"'&'"'"'/")" "$2"; }
		q namespace_pod_gpu:vramz_process_memory_used_bytes:sum
		s "namespace_pod_gpu:vramz_process_memory_used_bytes:sum{gpu=\"0\",uuid=\"$u0\",namespace=\"ml-team\",pod=\"trainer-7f9c\",$at}" 10737418240
		s "namespace_pod_gpu:vramz_process_memory_used_bytes:sum{gpu=\"0\",uuid=\"$u0\",namespace=\"vision\",pod=\"resnet-0\",$at}" 65498251264
		s "namespace_pod_gpu:vramz_process_memory_used_bytes:sum{gpu=\"1\",uuid=\"$u1\",namespace=\"vision\",pod=\"resnet-0\",$at}" 67645734912
		q namespace_pod:vramz_process_memory_used_bytes:sum
		s "namespace_pod:vramz_process_memory_used_bytes:sum{namespace=\"ml-team\",pod=\"trainer-7f9c\",$at}" 10737418240
		s "namespace_pod:vramz_process_memory_used_bytes:sum{namespace=\"vision\",pod=\"resnet-0\",$at}" 133143986176
		q namespace_pod:vramz_process_memory_used_bytes:count_gpus
		s "namespace_pod:vramz_process_memory_used_bytes:count_gpus{namespace=\"ml-team\",pod=\"trainer-7f9c\",$at}" 1
		s "namespace_pod:vramz_process_memory_used_bytes:count_gpus{namespace=\"vision\",pod=\"resnet-0\",$at}" 2
		q namespace:vramz_process_memory_used_bytes:sum
		s "namespace:vramz_process_memory_used_bytes:sum{namespace=\"ml-team\"}" 10737418240
		s "namespace:vramz_process_memory_used_bytes:sum{namespace=\"vision\"}" 133143986176
	} >pods.test.yml &&
	promtool test rules pods.test.yml &&
	# and the test can fail: a pod summed over the wrong GPUs is caught
	sed "s/value: 133143986176$/value: 65498251264/" pods.test.yml >bad.test.yml &&
	! promtool test rules bad.test.yml >out 2>&1 && has "namespace_pod:vramz_process_memory_used_bytes:sum" out
'

expect_success 'the log: pod, namespace and container_name columns, read back by replay' '
	vramz log -o l.csv --procs -i 50ms --duration 120ms 2>err &&
	python3 - <<PY &&
import csv
rows = list(csv.DictReader(open("l.procs.csv")))
a = [r for r in rows if r["pid"] == "4200101"][0]
assert (a["namespace"], a["pod"], a["container_name"]) == ("ml-team", "trainer-7f9c", "pytorch"), a
assert [r for r in rows if r["pid"] == "4200201"][0]["pod"] == ""
PY
	env -u VRAMZ_PROCFS_ROOT -u VRAMZ_KUBE_LOG_ROOT "$VRAMZ_BIN" ps --replay l.csv >r &&
	has "ml-team/trainer-7f9c" r &&
	# the report'"'"'s process table: the job column as ps has it
	env -u VRAMZ_PROCFS_ROOT -u VRAMZ_KUBE_LOG_ROOT "$VRAMZ_BIN" report l.csv -o r.html 2>/dev/null &&
	has "<td class=\"n\">4200101</td><td>root</td><td>ml-team/trainer-7f9c \(pytorch\)</td>" r.html &&
	has "<td class=\"n\">4200201</td><td>root</td><td>pod:99999999</td>" r.html
'

expect_success 'behind a daemon: its readers name the pods too (the segment carries the ids)' '
	start_daemon -i 200ms --procs &&
	nonvml ps -s pid >d &&
	has "^\(from vramz daemon pid" d &&
	has "^  0  4200101 root +ml-team/trainer-7f9c +10\.0 GiB" d &&
	has "^  1  4200201 root +pod:99999999 " d &&
	nonvml ps --json >dj &&
	python3 - dj <<PY &&
import json, sys
procs = {p["pid"]: p for p in json.load(open(sys.argv[1]))["processes"]}
assert (procs[4200101]["namespace"], procs[4200101]["pod"], procs[4200101]["container_name"]) == ("ml-team", "trainer-7f9c", "pytorch"), procs[4200101]
assert procs[4200201]["pod"] is None and procs[4200201]["pod_uid"] == "$P3", procs[4200201]
PY
	stop_daemon
'

expect_success 'a finding names the pod and the container: pid (comm) in pod NS/NAME (container C)' '
	sed "s/^proc gpu=0 pid=4200101 .*/&\ngrow gpu=0 pid=4200101 rate=+64MiB\/s/" "$SCENARIOS/2gpu-h200.scn" >leak.scn &&
	grep -q "^grow gpu=0 pid=4200101" leak.scn &&
	FAKE_NVML_SCENARIO=$T/leak.scn vramz watch -i 100ms --window 200ms --leak-warmup 1s --leak-min-span 3s \
		--report-after 1s -d 6s --json >w.jsonl &&
	python3 - w.jsonl <<PY
import json, sys
fs = [json.loads(l)["finding"] for l in open(sys.argv[1]) if l.strip()]
leak = [f for f in fs if f["kind"] == "leak" and f["pid"] == 4200101]
assert leak, [f["kind"] for f in fs]
f = leak[-1]
assert f["job"] == "pod:ml-team/trainer-7f9c" and f["container_name"] == "pytorch", f
assert f["summary"].startswith("pid 4200101 (python3) in pod ml-team/trainer-7f9c (container pytorch) on GPU 0 grows"), f["summary"]
# a finding of a process in no named pod has no container
assert all(x["container_name"] is None for x in fs if x.get("pid") == 4200201), fs
PY
'

expect_success 'hostile names come out sanitized, never as terminal controls' '
	rm -rf log/pods/ml-team_trainer-7f9c_$P1 log/containers/trainer-7f9c_ml-team_* &&
	kubelet "ev$(printf "\033")[2Jil" "po$(printf "\033")]0;x$(printf "\007")d" $P1 pytorch $CA &&
	vramz ps -s pid >out &&
	has "ev\?\[2Jil/po\?\]0;x\?d" out &&
	! grep -q "$(printf "\033")" out &&
	vramz ps --json >j && ! grep -q "$(printf "\033")" j
'

expect_success 'the DaemonSet mounts the kubelet'"'"'s log directories read-only where vramz reads them' '
	python3 - "$TESTS_SRC/../packaging/k8s-daemonset.yaml" <<-"PY"
	import sys, yaml
	docs = list(yaml.safe_load_all(open(sys.argv[1])))
	spec = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
	assert spec["hostPID"] is True
	c = spec["containers"][0]
	env = {e["name"]: e.get("value") for e in c.get("env", [])}
	root = env.get("VRAMZ_KUBE_LOG_ROOT") or "/var/log"
	mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
	vols = {v["name"]: v for v in spec["volumes"]}
	for d in ("pods", "containers"):
	    m = mounts[root + "/" + d]
	    assert m.get("readOnly") is True, m
	    assert vols[m["name"]]["hostPath"]["path"] == "/var/log/" + d, vols[m["name"]]
	print("mounted under", root)
	PY
'

finish
