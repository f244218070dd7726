#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4036-serve-net-packaging.sh - what the packaging ships is safe on a
# network as it stands: the systemd unit listens on loopback (and the
# drop-in its comment gives for a network parses), the Kubernetes
# DaemonSet, which listens on the pod network, serves through the web
# config it mounts and does not turn on --procs; the web.yml its comment
# shows is one vramz accepts.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
P=$TESTS_SRC/../packaging
scenario 2gpu-h200.scn

expect_success 'the unit listens on loopback; every ExecStart with another address has --web-config' '
	sed -n "s/^#* *ExecStart=\(.\)/\1/p" "$P/vramz-serve.service" >execs && cat execs &&
	test "$(wc -l <execs)" = 2 &&
	sed -n "s/^ExecStart=//p" "$P/vramz-serve.service" >main &&
	has "--listen 127\.0\.0\.1:9963" main &&
	while read -r line; do
		case "$line" in
		*"--listen 127.0.0.1:"* | *"--listen [::1]:"*) ;;
		*) case "$line" in *"--web-config "*) ;; *) echo "open without web config: $line"; exit 1 ;; esac ;;
		esac
	done <execs
'

expect_success 'the drop-in the unit'"'"'s comment gives parses (systemd-analyze verify)' '
	mkdir -p root/usr/bin root/etc/systemd/system/vramz-serve.service.d root/usr/lib/systemd root/etc/vramz &&
	cp -r /lib/systemd/system root/usr/lib/systemd/ &&
	cp "$VRAMZ_BIN" root/usr/bin/vramz && cp "$P/vramz-serve.service" root/etc/systemd/system/ &&
	touch root/etc/vramz/web.yml root/etc/vramz/tls.pem root/etc/vramz/tls.key &&
	sed -n "/^#   \[Service\]/,/^#   ExecStart=\/usr/p" "$P/vramz-serve.service" | sed "s/^#   //" |
		grep -v "^#" >root/etc/systemd/system/vramz-serve.service.d/net.conf &&
	cat root/etc/systemd/system/vramz-serve.service.d/net.conf &&
	has "^LoadCredential=web.yml:" root/etc/systemd/system/vramz-serve.service.d/net.conf &&
	systemd-analyze verify --root="$T/root" --man=no /etc/systemd/system/vramz-serve.service >out 2>&1 &&
	{ ! test -s out || { cat out; false; }; }
'

expect_success 'the DaemonSet: HTTPS and basic auth from the mounted web config, no --procs' '
	python3 - "$P/k8s-daemonset.yaml" <<-"PY"
	import sys, yaml
	docs = list(yaml.safe_load_all(open(sys.argv[1])))
	ds = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]
	c = ds["spec"]["containers"][0]
	args = c["args"]
	assert "--procs" not in args and "-p" not in args, args
	listen = args[args.index("--listen") + 1]
	conf = args[args.index("--web-config") + 1]
	mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
	vols = {v["name"]: v for v in ds["spec"]["volumes"]}
	name = [n for n, p in mounts.items() if conf.startswith(p + "/")][0]
	items = [i["path"] for i in vols[name]["secret"]["items"]]
	assert conf.rsplit("/", 1)[1] in items, (conf, items)
	assert ds["metadata"]["annotations"]["prometheus.io/scheme"] == "https"
	sm = [d for d in docs if d["kind"] == "ServiceMonitor"][0]["spec"]["endpoints"][0]
	assert sm["scheme"] == "https" and "basicAuth" in sm, sm
	print("listen", listen, "web config", conf, "from secret", vols[name]["secret"]["secretName"])
	PY
'

expect_success 'the web.yml the DaemonSet'"'"'s comment shows is accepted by vramz' '
	sed -n "/^# with web.yml:/,/^# Per-process/p" "$P/k8s-daemonset.yaml" | sed -n "s/^#   //p" |
		sed "s|BCRYPT-HASH-OF-PASSWORD|$WEB_HASH|" >web.yml && cat web.yml &&
	make_cert . && vramz serve --web-config web.yml --once >m.txt && has "^vramz_up 1$" m.txt
'

finish
