/* SPDX-License-Identifier: Apache-2.0 */
/* memtypes.c - memory type per GPU model, and theoretical bandwidth.
 *
 * NVML reports the memory clock and bus width but not the memory type, so
 * this table, keyed by substrings of the product name, supplies it (see
 * docs/memory-types.md).  The first match wins, so more specific names come
 * first.  transfers_per_clk is what multiplies NVML's reported max memory
 * clock into the data rate: HBM reports the real clock and moves data on
 * both edges (2); NVML reports GDDR6 / GDDR6X clocks so that 2 also gives
 * the effective rate (a 4090: 10501 MHz x 2 x 384 bit = 1008 GB/s).
 */
#include "memtypes.h"

#include <string.h>
#include <strings.h>

static const struct {
	const char *match;
	struct memtype mt;
} table[] = {
	{"GH200", {"HBM3e", 2}},      /* 96 GB GH200 is HBM3, 144 GB HBM3e */
	{"H200", {"HBM3e", 2}},
	{"H100 PCIe", {"HBM2e", 2}},
	{"H100 NVL", {"HBM3", 2}},
	{"H100", {"HBM3", 2}},
	{"H800", {"HBM3", 2}},
	{"H20", {"HBM3", 2}},
	{"B200", {"HBM3e", 2}},
	{"B100", {"HBM3e", 2}},
	{"GB200", {"HBM3e", 2}},
	{"A100-SXM4-80GB", {"HBM2e", 2}},
	{"A100 80GB", {"HBM2e", 2}},
	{"A100", {"HBM2", 2}},        /* 40 GB parts */
	{"A800", {"HBM2e", 2}},
	{"A30", {"HBM2", 2}},
	{"V100", {"HBM2", 2}},
	{"P100", {"HBM2", 2}},
	{"MI300", {"HBM3", 2}},
	{"L40", {"GDDR6", 2}},       /* L40, L40S */
	{"L20", {"GDDR6", 2}},
	{"L4", {"GDDR6", 2}},
	{"A40", {"GDDR6", 2}},
	{"A10", {"GDDR6", 2}},        /* A10, A10G */
	{"A16", {"GDDR6", 2}},
	{"A2", {"GDDR6", 2}},
	{"T4", {"GDDR6", 2}},
	{"RTX 6000 Ada", {"GDDR6", 2}},
	{"RTX A6000", {"GDDR6", 2}},
	{"RTX 5090", {"GDDR7", 2}},
	{"RTX 5080", {"GDDR7", 2}},
	{"RTX 4090", {"GDDR6X", 2}},
	{"RTX 4080", {"GDDR6X", 2}},
	{"RTX 4070 Ti", {"GDDR6X", 2}},
	{"RTX 3090", {"GDDR6X", 2}},
	{"RTX 3080", {"GDDR6X", 2}},
	{"RTX 3070 Ti", {"GDDR6X", 2}},
	{"TITAN V", {"HBM2", 2}},
	{"RTX", {"GDDR6", 2}},        /* other GeForce/Quadro RTX parts */
};

const struct memtype *memtype_for(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcasestr(name, table[i].match))
			return &table[i].mt;
	return NULL;
}

uint64_t memtype_bandwidth(const struct memtype *mt, unsigned mem_clock_mhz,
			   unsigned bus_width_bits)
{
	if (!mt || !mem_clock_mhz || !bus_width_bits)
		return 0;
	return (uint64_t)mem_clock_mhz * 1000000ull * mt->transfers_per_clk *
	       bus_width_bits / 8;
}
