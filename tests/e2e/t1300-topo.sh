#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# t1300-topo.sh - `vramz topo`: the GPU-to-GPU matrix in nvidia-smi topo -m
# notation, and its JSON.
. "$TESTS_SRC/e2e/lib.sh"
. "$TESTS_SRC/e2e/core.sh"
scenario 2gpu-h200.scn

expect_success 'two H200s joined by 18 NVLinks' '
	vramz topo >out &&
	has "^ +GPU0 +GPU1 *$" out &&
	has "^GPU0 +X +NV18 +00000000:19:00\.0$" out &&
	has "^GPU1 +NV18 +X +00000000:3B:00\.0$" out &&
	has "^  NV# += joined by # NVLinks$" out
'

expect_success 'json: GPUs and links' '
	vramz topo --json >j &&
	jassert j "d[\"schema\"] == 1 and \"time\" not in d" &&
	jassert j "d[\"gpus\"] == [{\"index\": 0, \"uuid\": \"GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19\", \"pci_bus_id\": \"00000000:19:00.0\"}, {\"index\": 1, \"uuid\": \"GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48\", \"pci_bus_id\": \"00000000:3B:00.0\"}]" &&
	jassert j "d[\"links\"] == [{\"a\": 0, \"b\": 1, \"link\": \"NV18\", \"nvlinks\": 18}, {\"a\": 1, \"b\": 0, \"link\": \"NV18\", \"nvlinks\": 18}]"
'

expect_success 'eight GPUs: NVLink pairs, PCIe switches, two sockets' '
	scenario 8gpu.scn && vramz topo >out &&
	has "^GPU0 +X +NV18 +NODE +NODE +SYS +SYS +SYS +SYS +00000000:18:00\.0$" out &&
	has "^GPU3 +NODE +NODE +NV12 +X +SYS +SYS +SYS +SYS " out &&
	has "^GPU4 +SYS +SYS +SYS +SYS +X +PIX +NODE +NODE " out &&
	has "^GPU7 +SYS +SYS +SYS +SYS +NODE +NODE +PIX +X +00000000:DB:00\.0$" out &&
	vramz topo --json >j &&
	jassert j "len(d[\"links\"]) == 56" &&
	jassert j "all(l[\"nvlinks\"] is None for l in d[\"links\"] if not l[\"link\"].startswith(\"NV\"))" &&
	jassert j "{(l[\"a\"], l[\"b\"]): l[\"link\"] for l in d[\"links\"]}[(6, 7)] == \"PIX\"" &&
	jassert j "{(l[\"a\"], l[\"b\"]): l[\"link\"] for l in d[\"links\"]}[(2, 5)] == \"SYS\"" &&
	jassert j "all(l[\"link\"] == m[\"link\"] for l in d[\"links\"] for m in d[\"links\"] if (l[\"a\"], l[\"b\"]) == (m[\"b\"], m[\"a\"]))"
'

expect_success 'selection keeps its order' '
	scenario 8gpu.scn && vramz topo -g 5,4 >out &&
	has "^ +GPU5 +GPU4 *$" out && has "^GPU5 +X +PIX " out && has "^GPU4 +PIX +X " out && hasnt "GPU0" out
'

expect_success 'topo -h' '
	vramz topo -h >out && has "^usage: vramz topo" out && has "--json" out
'

finish
