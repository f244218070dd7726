#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4003-serve-packaging.sh - the packaging files for the exporter: the alert
# rules load and their unit tests pass (a leak must fire, a flat GPU must
# not), the dashboard is valid JSON, and every vramz_ metric the alert
# rules, the recording rules and the dashboard name is one the exporter
# really serves, so a renamed metric cannot silently empty a panel, an
# alert or a DCGM series.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
P=$TESTS_SRC/../packaging

expect_success 'alert rules pass promtool check rules and promtool test rules' '
	promtool check rules "$P/prometheus-alerts.yml" &&
	promtool test rules "$P/prometheus-alerts.test.yml"
'

expect_success 'the leak test really guards the alert: without the leak it fails' '
	sed "s/42949672960-1073741824x40/42949672960+0x40/" "$P/prometheus-alerts.test.yml" >flat.test.yml &&
	cp "$P/prometheus-alerts.yml" . &&
	! promtool test rules flat.test.yml >out.txt 2>&1 &&
	has "VramzGpuMemoryWillRunOut" out.txt
'

expect_success 'dashboard and DaemonSet parse' '
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"panels\"]" "$P/grafana-dashboard.json" &&
	python3 -c "import yaml,sys; docs=list(yaml.safe_load_all(open(sys.argv[1]))); assert docs[0][\"kind\"]==\"DaemonSet\"" "$P/k8s-daemonset.yaml" 2>/dev/null ||
	grep -q "^kind: DaemonSet" "$P/k8s-daemonset.yaml"
'

expect_success 'the DaemonSet, Dockerfile and docs name this version'"'"'s image' '
	v=$(vramz --version | sed -n "s/^vramz \([0-9][0-9.]*\) .*/\1/p") && test -n "$v" &&
	grep -oh "vramz/vramz:[A-Za-z0-9._-]*\|vramz_[0-9][^ ]*_amd64\.deb" "$P/k8s-daemonset.yaml" "$P/Dockerfile" \
		"$TESTS_SRC/../docs/exporter.md" "$TESTS_SRC/../README.md" | sort -u >tags &&
	grep -q "^vramz/vramz:" tags &&
	{ ! grep -v "^vramz/vramz:$v\$\|^vramz_${v}_amd64\.deb\$" tags || { echo "not $v"; false; }; }
'

expect_success 'every metric the dashboard and alerts use is served' '
	scenario_fleet f.scn 2 2 &&
	FAKE_NVML_SCENARIO=$T/f.scn vramz serve --once --procs >m.txt &&
	sed -n "s/^# TYPE \(vramz_[a-z_]*\) .*/\1/p" m.txt >served.txt &&
	# findings series come from prom_render_findings (tests/unit/test_prom.c)
	printf "%s\n" vramz_leak_rate_bytes_per_second vramz_time_to_oom_seconds \
		vramz_idle_holder_bytes vramz_orphan_memory_bytes vramz_oom_ended_bytes >>served.txt &&
	grep -oh "vramz_[a-z_]*" "$P/grafana-dashboard.json" "$P/prometheus-alerts.yml" "$P/prometheus-recording.yml" |
		grep -v "^vramz_gpu_memory$" | sort -u >used.txt &&
	test -s used.txt &&
	missing=$(grep -vxFf served.txt used.txt || true) &&
	{ [ -z "$missing" ] || { echo "not served: $missing"; false; }; }
'

finish
