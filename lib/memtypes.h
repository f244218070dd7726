/* SPDX-License-Identifier: Apache-2.0 */
/* memtypes.h - facts NVML does not report: memory type by GPU model, and
 * the data rate that turns a memory clock and bus width into bandwidth. */
#ifndef VRAMZ_MEMTYPES_H
#define VRAMZ_MEMTYPES_H
#include <stdint.h>

struct memtype {
	const char *type;          /* "HBM3e" */
	unsigned transfers_per_clk; /* data transfers per reported memory clock */
};

/* The entry for a product name ("NVIDIA H200"), or NULL when unknown. */
const struct memtype *memtype_for(const char *name);

/* Theoretical bandwidth in bytes/s, or 0 when an input is unknown. */
uint64_t memtype_bandwidth(const struct memtype *mt, unsigned mem_clock_mhz,
			   unsigned bus_width_bits);
#endif
