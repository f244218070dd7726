/* fields.c - the table of per-GPU sample fields (see fields.h).  Order is
 * the CSV column order and the JSON key order: append new fields at the
 * end so old logs keep reading. */
#include "fields.h"

#include <string.h>

#define OFF(m) offsetof(vramz_gpu_sample, m)
#define TYPE_OF(m) _Generic(((vramz_gpu_sample *)0)->m, uint64_t: FT_U64, unsigned: FT_UINT, int: FT_INT)
#define F(name, bit, member, prom, scale, ptype, help) \
	{name, bit, TYPE_OF(member), OFF(member), prom, scale, ptype, help}

const struct field gpu_fields[] = {
	F("mem_total_bytes", VRAMZ_F_MEM, mem_total_bytes, "memory_total_bytes", 1, "gauge",
	  "Total framebuffer memory."),
	F("mem_reserved_bytes", VRAMZ_F_MEM_RESERVED, mem_reserved_bytes, "memory_reserved_bytes", 1, "gauge",
	  "Memory the driver sets aside, in neither used nor free."),
	F("mem_used_bytes", VRAMZ_F_MEM, mem_used_bytes, "memory_used_bytes", 1, "gauge",
	  "Memory in use (nvidia-smi memory.used)."),
	F("mem_free_bytes", VRAMZ_F_MEM, mem_free_bytes, "memory_free_bytes", 1, "gauge",
	  "Memory free for allocation."),
	F("unattributed_bytes", VRAMZ_F_UNATTRIBUTED, unattributed_bytes, "memory_unattributed_bytes", 1, "gauge",
	  "Used memory no listed process accounts for."),
	F("util_gpu_pct", VRAMZ_F_UTIL, util_gpu_pct, "utilization_gpu_ratio", 0.01, "gauge",
	  "Share of time a kernel was running."),
	F("util_mem_pct", VRAMZ_F_UTIL, util_mem_pct, "utilization_memory_ratio", 0.01, "gauge",
	  "Share of time device memory was read or written."),
	F("temp_c", VRAMZ_F_TEMP, temp_c, "temperature_celsius", 1, "gauge",
	  "GPU core temperature."),
	F("temp_mem_c", VRAMZ_F_TEMP_MEM, temp_mem_c, "memory_temperature_celsius", 1, "gauge",
	  "Memory temperature."),
	F("power_mw", VRAMZ_F_POWER, power_mw, "power_watts", 0.001, "gauge",
	  "Power draw."),
	F("power_limit_mw", VRAMZ_F_POWER_LIMIT, power_limit_mw, "power_limit_watts", 0.001, "gauge",
	  "Enforced power limit."),
	F("clock_sm_mhz", VRAMZ_F_CLK_SM, clock_sm_mhz, "clock_sm_hertz", 1e6, "gauge",
	  "SM clock."),
	F("clock_mem_mhz", VRAMZ_F_CLK_MEM, clock_mem_mhz, "clock_memory_hertz", 1e6, "gauge",
	  "Memory clock."),
	F("throttle_reasons", VRAMZ_F_THROTTLE, throttle_reasons, NULL, 1, "gauge",
	  "Clock event (throttle) reason bits, as NVML's."),
	F("pcie_gen", VRAMZ_F_PCIE_LINK, pcie_gen, "pcie_link_generation", 1, "gauge",
	  "Current PCIe link generation."),
	F("pcie_width", VRAMZ_F_PCIE_LINK, pcie_width, "pcie_link_width", 1, "gauge",
	  "Current PCIe link width (lanes)."),
	F("pcie_tx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_tx_bytes_per_s, "pcie_tx_bytes_per_second", 1, "gauge",
	  "PCIe transmit throughput."),
	F("pcie_rx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_rx_bytes_per_s, "pcie_rx_bytes_per_second", 1, "gauge",
	  "PCIe receive throughput."),
	F("energy_mj", VRAMZ_F_ENERGY, energy_mj, "energy_joules_total", 0.001, "counter",
	  "Energy used since the driver loaded."),
	F("fan_pct", VRAMZ_F_FAN, fan_pct, "fan_speed_ratio", 0.01, "gauge",
	  "Fan speed."),
};
const size_t gpu_field_count = sizeof gpu_fields / sizeof gpu_fields[0];

int64_t field_get(const struct field *f, const vramz_gpu_sample *s)
{
	const char *p = (const char *)s + f->offset;
	switch (f->type) {
	case FT_U64: return (int64_t)*(const uint64_t *)p;
	case FT_UINT: return *(const unsigned *)p;
	case FT_INT: return *(const int *)p;
	}
	return 0;
}

void field_set(const struct field *f, vramz_gpu_sample *s, int64_t v)
{
	char *p = (char *)s + f->offset;
	switch (f->type) {
	case FT_U64: *(uint64_t *)p = (uint64_t)v; break;
	case FT_UINT: *(unsigned *)p = (unsigned)v; break;
	case FT_INT: *(int *)p = (int)v; break;
	}
	s->valid |= f->valid_bit;
}

int field_valid(const struct field *f, const vramz_gpu_sample *s)
{
	return !s->lost && (s->valid & f->valid_bit) == f->valid_bit;
}

const struct field *field_by_name(const char *name)
{
	for (size_t i = 0; i < gpu_field_count; i++)
		if (!strcmp(gpu_fields[i].name, name))
			return &gpu_fields[i];
	return NULL;
}
