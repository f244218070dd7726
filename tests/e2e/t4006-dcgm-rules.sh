#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4006-dcgm-rules.sh - packaging/prometheus-recording.yml turns what
# `vramz serve` really exposes into dcgm-exporter's names, units and labels
# (so DCGM dashboards work unchanged): a /metrics body captured from serve
# --once becomes promtool's input series, and `promtool test rules` checks
# each DCGM_FI_DEV_* sample against the scenario's numbers.
. "$TESTS_SRC/e2e/lib.sh"
P=$TESTS_SRC/../packaging
scenario 2gpu-h200.scn
U0=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19
U1=GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48

# sample NAME GPU UUID VALUE: one expected DCGM sample of the test file
sample() {
	cat <<EOF
          - labels: '$1{gpu="$2",UUID="$3",modelName="NVIDIA H200",Hostname="gpu-node-7",instance="gpu-node-7:9963",job="vramz"}'
            value: $4
EOF
}

expect_success 'promtool check rules: the recording rules parse' '
	promtool check rules "$P/prometheus-recording.yml"
'

expect_success 'captured /metrics -> DCGM names: MiB, W, C, %, MHz with gpu, UUID, modelName, Hostname' '
	vramz serve --once >metrics 2>/dev/null &&
	has "^vramz_gpu_info\{gpu=\"0\",uuid=\"$U0\",name=\"NVIDIA H200\"" metrics &&
	cp "$P/prometheus-recording.yml" . &&
	{
		echo "rule_files: [prometheus-recording.yml]"
		echo "evaluation_interval: 1m"
		echo "tests:"
		echo "  - interval: 1m"
		echo "    input_series:"
		python3 "$TESTS_SRC/helpers/prom_series.py" metrics
		echo "    promql_expr_test:"
		for m in FB_USED:72704:87040 FB_FREE:70451:56115 FB_RESERVED:616:616 GPU_TEMP:41:47 \
			POWER_USAGE:318:455 GPU_UTIL:37:64; do
			IFS=: read -r name v0 v1 <<<"$m"
			echo "      - expr: DCGM_FI_DEV_$name"
			echo "        eval_time: 5m"
			echo "        exp_samples:"
			sample DCGM_FI_DEV_$name 0 $U0 $v0
			sample DCGM_FI_DEV_$name 1 $U1 $v1
		done
	} >dcgm.test.yml &&
	promtool test rules dcgm.test.yml
'

expect_success 'the test can fail: a wrong unit is caught' '
	sed "s/value: 72704$/value: 76235669504/" dcgm.test.yml >bad.test.yml &&
	! promtool test rules bad.test.yml >out 2>&1 && has "DCGM_FI_DEV_FB_USED" out
'

finish
