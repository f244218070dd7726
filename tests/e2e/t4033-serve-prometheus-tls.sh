#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4033-serve-prometheus-tls.sh - a real Prometheus scrapes `vramz serve
# --web-config` over HTTPS with basic auth, as an operator configures it
# (scheme: https, tls_config with the CA file, basic_auth): up is 1 and the
# scenario's values come back, DCGM names included (--dcgm-names); a job
# with a wrong password is down.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
. "$TESTS_SRC/e2e/prom-lib.sh"

# prom_yml PORT: two jobs on the exporter, the right and a wrong password
prom_yml() {
	cat <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: vramz
    scheme: https
    tls_config: {ca_file: $T/tls.pem}
    basic_auth: {username: prom, password: $WEB_PASS}
    static_configs: [{targets: ["127.0.0.1:$1"]}]
  - job_name: vramz-wrong-password
    scheme: https
    tls_config: {ca_file: $T/tls.pem}
    basic_auth: {username: prom, password: not-it}
    static_configs: [{targets: ["127.0.0.1:$1"]}]
EOF
}

check_queries() {
	local ok=0 end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		if promql 'up{job="vramz"}' 2>/dev/null | grep -q " 1$" &&
			promql 'up{job="vramz-wrong-password"}' 2>/dev/null | grep -q " 0$"; then
			ok=1
			break
		fi
		sleep 0.1
	done
	[ $ok = 1 ] || { echo "Prometheus never saw both targets:"; tail -20 prom.log; return 1; }
	promql 'up' >up.txt && cat up.txt &&
	promql 'vramz_up{job="vramz"}' >vup.txt && has " 1$" vup.txt &&
	promql 'vramz_memory_total_bytes' >total.txt &&
	has "^__name__=vramz_memory_total_bytes,gpu=0,uuid=GPU-10000000-1c35-4f8a-b6d2-7e90a15c3f48 150754820096$" total.txt &&
	promql 'DCGM_FI_DEV_FB_TOTAL{gpu="0"}' >fb.txt && cat fb.txt &&
	has "Hostname=gpu-node-7,UUID=GPU-10000000-1c35-4f8a-b6d2-7e90a15c3f48,.*modelName=NVIDIA H200.* 143771$" fb.txt &&
	promql 'DCGM_FI_DEV_POWER_USAGE{gpu="1"}' >pw.txt && has " 300$" pw.txt &&
	promql 'count(vramz_up{job="vramz-wrong-password"})' >none.txt && ! test -s none.txt
}

expect_success 'Prometheus scrapes over TLS with basic auth: up 1, values; a wrong password: up 0' '
	make_cert . &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  min_version: TLS13\nbasic_auth_users:\n  prom: %s\n" "$WEB_HASH" >web.yml &&
	scenario_fleet fleet.scn 2 3 && export FAKE_NVML_SCENARIO=$T/fleet.scn &&
	NODE_NAME=gpu-node-7 serve_start serve.log --web-config web.yml --dcgm-names &&
	PPORT=$(free_port) && prom_yml "$PORT" >prom.yml &&
	promtool check config prom.yml &&
	rc=0 && { prom_check tsdb check_queries || rc=1; }
	serve_stop
	exit $rc
'

# issue 38, item 4: Prometheus's tls_config with cert_file and key_file
# against client_auth_type RequireAndVerifyClientCert
mtls_prom_yml() {
	cat <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: vramz-mtls
    scheme: https
    tls_config: {ca_file: $T/tls.pem, cert_file: $T/client.pem, key_file: $T/client.key}
    static_configs: [{targets: ["127.0.0.1:$1"]}]
  - job_name: vramz-no-cert
    scheme: https
    tls_config: {ca_file: $T/tls.pem}
    static_configs: [{targets: ["127.0.0.1:$1"]}]
EOF
}

check_mtls() {
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		if promql 'up{job="vramz-mtls"}' 2>/dev/null | grep -q " 1$" &&
			promql 'up{job="vramz-no-cert"}' 2>/dev/null | grep -q " 0$"; then
			promql 'vramz_up{job="vramz-mtls"}' | grep -q " 1$"
			return
		fi
		sleep 0.1
	done
	echo "Prometheus never saw both targets:"; tail -20 prom.log
	return 1
}

expect_success 'Prometheus scrapes with a client certificate (mTLS): up 1; without one: up 0' '
	scenario 2gpu-h200.scn &&
	{ [ -f tls.pem ] || make_cert .; } && make_clients &&
	printf "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" >web.yml &&
	serve_start serve.log --web-config web.yml &&
	PPORT=$(free_port) && mtls_prom_yml "$PORT" >prom.yml &&
	promtool check config prom.yml &&
	rc=0 && { prom_check tsdb2 check_mtls || rc=1; }
	serve_stop
	exit $rc
'

serve_cleanup
finish
