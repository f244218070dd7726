#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t4000-serve.sh - `vramz serve`: the /metrics body against fake-NVML
# scenarios (valid per promtool, values in base units, unknown values
# absent, lost GPUs and vanished processes), and the HTTP surface
# (/health, landing page, 404, 405, HEAD, oversized headers, bad --listen).
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/serve-lib.sh"

expect_success 'a two-GPU body passes promtool and says what the scenario says' '
	scenario_fleet two.scn 2 4 &&
	FAKE_NVML_SCENARIO=$T/two.scn vramz serve --once >m.txt &&
	promtool check metrics <m.txt &&
	has "^vramz_memory_total_bytes\{gpu=\"0\",uuid=\"GPU-10000000-[-0-9a-f]*\"\} 150754820096$" m.txt &&
	has "^vramz_utilization_gpu_ratio\{gpu=\"1\",uuid=\"GPU-10000001-[-0-9a-f]*\"\} 0.1$" m.txt &&
	has "^vramz_power_watts\{gpu=\"0\",[^}]*\} 300$" m.txt &&
	has "^vramz_clock_sm_hertz\{gpu=\"0\",[^}]*\} 1980000000$" m.txt &&
	has "^vramz_gpu_info\{gpu=\"1\",uuid=\"GPU-10000001-[-0-9a-f]*\",name=\"NVIDIA H200\",pci_bus_id=\"00000000:1A:00.0\",vendor=\"nvidia\",driver=\"580.159.04\"\} 1$" m.txt &&
	has "^vramz_clock_throttle_reason\{gpu=\"0\",[^}]*,reason=\"sw_power_cap\"\} 1$" m.txt &&
	has "^vramz_clock_throttle_reason\{gpu=\"0\",[^}]*,reason=\"hw_thermal\"\} 0$" m.txt &&
	has "^vramz_nvlink_active_links\{gpu=\"1\",[^}]*\} 18$" m.txt &&
	has "^vramz_processes\{gpu=\"0\",[^}]*\} 2$" m.txt &&
	has "^vramz_up 1$" m.txt &&
	has "^# TYPE vramz_energy_joules_total counter$" m.txt &&
	hasnt "^vramz_process_memory_used_bytes\{" m.txt &&
	hasnt "hostname" m.txt
'

expect_success 'eight GPUs and a hundred processes: one series per process, valid' '
	scenario_fleet eight.scn 8 100 &&
	FAKE_NVML_SCENARIO=$T/eight.scn vramz serve --once --procs >m.txt &&
	promtool check metrics <m.txt &&
	test "$(grep -c "^vramz_process_memory_used_bytes{" m.txt)" = 100 &&
	test "$(grep -c "^vramz_memory_used_bytes{" m.txt)" = 8 &&
	has "^vramz_process_memory_used_bytes\{gpu=\"3\",[^}]*,pid=\"4000011\"\} 116391936$" m.txt &&
	has "^vramz_process_sm_utilization_ratio\{gpu=\"3\",[^}]*,pid=\"4000011\"\} 0.11$" m.txt
'

expect_success 'a GPU that cannot report a reading has no sample for it (errors.scn)' '
	FAKE_NVML_SCENARIO=$SCENARIOS/errors.scn vramz serve --once --procs >m.txt &&
	promtool check metrics <m.txt &&
	has "^vramz_power_watts\{gpu=\"0\"" m.txt &&
	hasnt "^vramz_power_watts\{gpu=\"1\"" m.txt &&
	hasnt "^vramz_temperature_celsius\{gpu=\"1\"" m.txt &&
	hasnt "^vramz_energy_joules_total\{gpu=\"1\"" m.txt &&
	hasnt "^vramz_pcie_tx_bytes_per_second\{" m.txt &&
	hasnt "^vramz_process_memory_used_bytes\{[^}]*pid=\"4200602\"" m.txt &&
	has "^vramz_process_memory_used_bytes\{[^}]*pid=\"4200604\"\} 9663676416$" m.txt
'

expect_success 'a GPU that falls off the bus: vramz_gpu_lost 1, its readings gone, body valid' '
	export FAKE_NVML_SCENARIO=$SCENARIOS/lost.scn &&
	serve_start serve.log --interval 100ms &&
	wait_for sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q \"^vramz_gpu_lost{gpu=\\\"1\\\",[^}]*} 1\"" &&
	scrape /metrics >m.txt &&
	serve_stop &&
	promtool check metrics <m.txt &&
	has "^vramz_gpu_lost\{gpu=\"0\",[^}]*\} 0$" m.txt &&
	has "^vramz_memory_used_bytes\{gpu=\"0\"" m.txt &&
	hasnt "^vramz_memory_used_bytes\{gpu=\"1\"" m.txt &&
	has "^vramz_gpu_info\{gpu=\"1\"" m.txt &&
	has "^vramz_up 1$" m.txt
'

expect_success 'a process that exits loses its series at the next sample' '
	scenario_fleet live.scn 2 3 &&
	export FAKE_NVML_SCENARIO=$T/live.scn &&
	serve_start serve.log --interval 100ms --procs &&
	scrape /metrics >before.txt &&
	has "pid=\"4000002\"" before.txt &&
	scenario_fleet next.scn 2 2 && mv next.scn live.scn &&
	wait_for sh -c "! curl -s http://127.0.0.1:$PORT/metrics | grep -q pid=\\\"4000002\\\"" &&
	scrape /metrics >after.txt &&
	serve_stop &&
	hasnt "pid=\"4000002\"" after.txt &&
	has "pid=\"4000001\"" after.txt
'

expect_success 'HTTP: content type, HEAD, /health, landing page, 404, 405 with Allow, 431' '
	scenario_fleet two.scn 2 2 &&
	export FAKE_NVML_SCENARIO=$T/two.scn &&
	serve_start serve.log &&
	scrape /metrics -D h.txt -o /dev/null &&
	has "^Content-Type: text/plain; version=0.0.4; charset=utf-8" h.txt &&
	test -z "$(scrape /metrics -I -o /dev/null -w "%{size_download}")" -o \
	     "$(scrape /metrics -I -o /dev/null -w "%{size_download}")" = 0 &&
	test "$(scrape /health -o /dev/null -w "%{http_code}")" = 200 &&
	scrape /health | grep -qx ok &&
	scrape / | grep -q "href=\"/metrics\"" &&
	test "$(scrape /metrics/x -o /dev/null -w "%{http_code}")" = 404 &&
	test "$(scrape /nope -o /dev/null -w "%{http_code}")" = 404 &&
	test "$(scrape /metrics -X POST -d a=b -o /dev/null -w "%{http_code}")" = 405 &&
	scrape /metrics -X DELETE -D h2.txt -o /dev/null &&
	has "^Allow: GET, HEAD" h2.txt &&
	big=$(head -c 40000 /dev/zero | tr "\0" a) &&
	test "$(scrape /metrics -H "X-Big: $big" -o /dev/null -w "%{http_code}")" = 431 &&
	test "$(scrape /metrics -o /dev/null -w "%{http_code}")" = 200 &&
	serve_stop
'

expect_success 'a bad --listen is a usage error naming it; a taken port fails' '
	scenario_fleet two.scn 2 0 &&
	export FAKE_NVML_SCENARIO=$T/two.scn &&
	test "$(rc vramz serve --listen nonsense)" = 2 &&
	vramz serve --listen nonsense 2>err.txt; has "nonsense" err.txt &&
	test "$(rc vramz serve --listen 127.0.0.1:99999)" = 2 &&
	test "$(rc vramz serve --interval 1ms)" = 2 &&
	serve_start serve.log &&
	# bounded: a server that wrongly starts would otherwise run forever
	test "$(rc timeout 20 "$VRAMZ_BIN" serve --listen 127.0.0.1:$PORT)" = 1 &&
	serve_stop
'

expect_success 'IPv6 loopback works when the host has it' '
	if ! python3 -c "import socket; s=socket.socket(socket.AF_INET6); s.bind((\"::1\", 0))" 2>/dev/null; then
		echo "no IPv6 loopback here: skipped"; exit 0
	fi
	scenario_fleet two.scn 2 0 &&
	export FAKE_NVML_SCENARIO=$T/two.scn &&
	SERVE_LISTEN="[::1]:0" serve_start v6.log &&
	has "http://\[::1\]:$PORT/metrics" v6.log &&
	curl -sS -g "http://[::1]:$PORT/metrics" | grep -q "^vramz_up 1$" &&
	serve_stop
'

serve_cleanup
finish
