#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4043-page-detail.sh - the live page's detail view of one GPU (issue 40),
# in headless Chromium (tests/web/page_detail.py): opened from the GPU's
# name by the keyboard, a large chart of every sensor the scenario gives
# with the values under the pointer and under the keyboard's cursor, the
# time range changed, three processes' memory stacked, Esc and Back
# closing it, light and dark at 1280x800 and 390x844 (screenshots; with
# VRAMZ_UPDATE_SCREENSHOT=1 copied into docs/).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
WEB=$TESTS_SRC/web

sleep 300 & P1=$!
sleep 300 & P2=$!
sleep 300 & P3=$!
export P1 P2 P3
trap 'serve_cleanup; kill $P1 $P2 $P3 2>/dev/null; rm -rf "$T"' EXIT

if ! command -v chromium >/dev/null && [ -z "${CHROMIUM:-}" ]; then
	echo "no chromium: tools/bootstrap.sh installs it" >&2
	exit 1
fi

expect_success 'the detail view: every sensor large, values under the pointer, range, processes stacked' '
	{
		printf "driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n"
		gpu_line 0 fan=60 temp_mem=55
		gpu_line 1 fan=45 temp_mem=50
		printf "proc gpu=0 pid=env:P1 used=8GiB type=compute sm=40\n"
		printf "proc gpu=0 pid=env:P2 used=4GiB type=compute sm=20\n"
		printf "proc gpu=0 pid=env:P3 used=2GiB type=compute sm=5\n"
		printf "grow gpu=0 pid=env:P3 rate=+1GiB/min\n"
		printf "proc gpu=1 pid=env:P1 used=3GiB type=compute sm=0\n"
	} >detail.scn &&
	export FAKE_NVML_SCENARIO=$T/detail.scn &&
	serve_start serve.log --interval 200ms --history 10m --slow-interval 1s &&
	python3 "$WEB/page_detail.py" "$PORT" "$T" &&
	serve_stop && hasnt "AddressSanitizer\|runtime error" serve.log &&
	if [ -n "${VRAMZ_UPDATE_SCREENSHOT:-}" ]; then
		for f in web-detail-1280x800.png web-detail-1280x800-dark.png \
			web-detail-390x844.png web-detail-390x844-dark.png; do
			cp "$f" "$TESTS_SRC/../docs/$f" || exit 1
		done
	fi
'
serve_cleanup
finish
