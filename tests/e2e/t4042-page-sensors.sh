#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4042-page-sensors.sh - the live page as GPU-Z's sensor tab (issue 40),
# in headless Chromium (tests/web/page_sensors.py): the memory chart zoomed
# to the used range, so the fake's 1 GiB/min leak on a 140 GiB GPU climbs
# pixel rows; a row per sensor with its sparkline and now/min/max/avg;
# each GPU's VRAM health in the status table's words;
# findings by severity with INFO folded; aria-sort; a polite live region;
# light and dark at 1280x800 and 390x844 (screenshots; with
# VRAMZ_UPDATE_SCREENSHOT=1 copied into docs/).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"
WEB=$TESTS_SRC/web

sleep 300 & LEAK_PID=$!
export LEAK_PID
trap 'serve_cleanup; kill $LEAK_PID 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg"
mkdir -p "$XDG_CONFIG_HOME/vramz"
printf "window = 200ms\nleak-warmup = 1s\nleak-min-span = 3s\nreport-after = 1s\norphan-time = 1s\n" \
	>"$XDG_CONFIG_HOME/vramz/config"

if ! command -v chromium >/dev/null && [ -z "${CHROMIUM:-}" ]; then
	echo "no chromium: tools/bootstrap.sh installs it" >&2
	exit 1
fi

expect_success 'the page zoomed, with every sensor, light and dark, wide and narrow' '
	{
		printf "driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n"
		gpu_line 0 fan=60 temp_mem=55 ecc=1 ecc_sbe_vol=0 ecc_dbe_vol=0 remap_pending=0
		gpu_line 1 fan=45 temp_mem=50 ecc=1 ecc_sbe_vol=0 ecc_dbe_vol=2 remap_pending=1
		printf "proc gpu=0 pid=env:LEAK_PID used=14GiB type=compute sm=40\n"
		printf "grow gpu=0 pid=env:LEAK_PID rate=+1GiB/min\n"
		printf "proc gpu=1 pid=4000001 used=3GiB type=compute sm=0\n"
	} >sens.scn &&
	export FAKE_NVML_SCENARIO=$T/sens.scn &&
	serve_start serve.log --interval 100ms --history 20s --slow-interval 1s &&
	python3 "$WEB/page_sensors.py" "$PORT" "$T/sens.scn" "$T" &&
	serve_stop && hasnt "AddressSanitizer\|runtime error" serve.log &&
	if [ -n "${VRAMZ_UPDATE_SCREENSHOT:-}" ]; then
		for f in web-1280x800-dark.png web-390x844.png web-390x844-dark.png; do
			cp "$f" "$TESTS_SRC/../docs/$f" || exit 1
		done
	fi
'
serve_cleanup
finish
