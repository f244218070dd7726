/* SPDX-License-Identifier: Apache-2.0 */
/* fields.c - the table of per-GPU sample fields (see fields.h).  Order is
 * the CSV column order and the JSON key order: append new fields at the
 * end so old logs keep reading.  Each row ends with the field's plausible
 * range: the one place that decides when a driver's (or a log's) number
 * is no reading at all, so JSON, CSV, metrics and tables show it unknown.
 * Throttle reasons are a bit set: every value is one.  The number after
 * the member is the field's offset in the daemon's segment record
 * (docs/daemon.md, "Records"; lib/segment_codec.c walks the rows): a new
 * row takes the next free one, an old row's never changes.
 *
 * FD rows also name dcgm-exporter's series for the field (serve
 * --dcgm-names).  F rows have none: unattributed memory is vramz's own,
 * and DCGM's PCIe byte rates are profiling counters measured another way
 * (its NVML-based PCIE_TX/RX_THROUGHPUT fields are deprecated). */
#include "fields.h"

#include <string.h>

#include "text.h"

#include "vramz/vramz.h"

#define OFF(m) offsetof(vramz_gpu_sample, m)
#define TYPE_OF(m) _Generic(((vramz_gpu_sample *)0)->m, uint64_t: FT_U64, unsigned: FT_UINT, int: FT_INT)
/* a row: JSON key and CSV column, validity bit, struct member, offset in
 * the segment's record (append-only: the next free one), metric name,
 * scale to its base unit, metric type, help, plausible range */
#define F(name_, bit, m, seg, prom_, scale, ptype, help_, min_, max_)                    \
	{.name = name_, .valid_bit = bit, .type = TYPE_OF(m), .offset = OFF(m),         \
	 .seg_off = seg, .prom = prom_, .prom_scale = scale, .prom_type = ptype,        \
	 .help = help_, .min = min_, .max = max_, .member = #m, .bit_name = #bit}
/* a field dcgm-exporter also serves: F's columns, then DCGM's name and the
 * factor to its unit (fields.h).  A new field with a DCGM equivalent (an
 * ECC counter: DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, ...) is one FD row. */
#define FD(name_, bit, m, seg, prom_, scale, ptype, help_, min_, max_, dcgm_, dscale)    \
	{.name = name_, .valid_bit = bit, .type = TYPE_OF(m), .offset = OFF(m),         \
	 .seg_off = seg, .prom = prom_, .prom_scale = scale, .prom_type = ptype,        \
	 .help = help_, .min = min_, .max = max_, .dcgm = dcgm_, .dcgm_scale = dscale,  \
	 .member = #m, .bit_name = #bit}
#define MB FIELD_MAX_BYTES
#define MIB FIELD_DCGM_MIB

const struct field gpu_fields[] = {
	FD("mem_total_bytes", VRAMZ_F_MEM, mem_total_bytes, 16, "memory_total_bytes", 1, "gauge",
	  "Total framebuffer memory.", 0, MB,
	  "DCGM_FI_DEV_FB_TOTAL", MIB),
	FD("mem_reserved_bytes", VRAMZ_F_MEM_RESERVED, mem_reserved_bytes, 24, "memory_reserved_bytes", 1, "gauge",
	  "Memory the driver sets aside, in neither used nor free.", 0, MB,
	  "DCGM_FI_DEV_FB_RESERVED", MIB),
	FD("mem_used_bytes", VRAMZ_F_MEM, mem_used_bytes, 32, "memory_used_bytes", 1, "gauge",
	  "Memory in use (nvidia-smi memory.used).", 0, MB,
	  "DCGM_FI_DEV_FB_USED", MIB),
	FD("mem_free_bytes", VRAMZ_F_MEM, mem_free_bytes, 40, "memory_free_bytes", 1, "gauge",
	  "Memory free for allocation.", 0, MB,
	  "DCGM_FI_DEV_FB_FREE", MIB),
	F("unattributed_bytes", VRAMZ_F_UNATTRIBUTED, unattributed_bytes, 48, "memory_unattributed_bytes", 1, "gauge",
	  "Used memory no listed process accounts for.", 0, MB),
	FD("util_gpu_pct", VRAMZ_F_UTIL, util_gpu_pct, 56, "utilization_gpu_ratio", 0.01, "gauge",
	  "Share of time a kernel was running.", 0, FIELD_MAX_PCT,
	  "DCGM_FI_DEV_GPU_UTIL", 1),
	FD("util_mem_pct", VRAMZ_F_UTIL, util_mem_pct, 60, "utilization_memory_ratio", 0.01, "gauge",
	  "Share of time device memory was read or written.", 0, FIELD_MAX_PCT,
	  "DCGM_FI_DEV_MEM_COPY_UTIL", 1),
	FD("temp_c", VRAMZ_F_TEMP, temp_c, 64, "temperature_celsius", 1, "gauge",
	  "GPU core temperature.", 0, FIELD_MAX_TEMP_C,
	  "DCGM_FI_DEV_GPU_TEMP", 1),
	FD("temp_mem_c", VRAMZ_F_TEMP_MEM, temp_mem_c, 68, "memory_temperature_celsius", 1, "gauge",
	  "Memory temperature.", 0, FIELD_MAX_TEMP_C,
	  "DCGM_FI_DEV_MEMORY_TEMP", 1),
	FD("power_mw", VRAMZ_F_POWER, power_mw, 72, "power_watts", 0.001, "gauge",
	  "Power draw.", 0, FIELD_MAX_POWER_MW,
	  "DCGM_FI_DEV_POWER_USAGE", 0.001),
	FD("power_limit_mw", VRAMZ_F_POWER_LIMIT, power_limit_mw, 76, "power_limit_watts", 0.001, "gauge",
	  "Enforced power limit.", 0, FIELD_MAX_POWER_MW,
	  "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", 0.001),
	FD("clock_sm_mhz", VRAMZ_F_CLK_SM, clock_sm_mhz, 80, "clock_sm_hertz", 1e6, "gauge",
	  "SM clock.", 0, FIELD_MAX_CLOCK_MHZ,
	  "DCGM_FI_DEV_SM_CLOCK", 1),
	FD("clock_mem_mhz", VRAMZ_F_CLK_MEM, clock_mem_mhz, 84, "clock_memory_hertz", 1e6, "gauge",
	  "Memory clock.", 0, FIELD_MAX_CLOCK_MHZ,
	  "DCGM_FI_DEV_MEM_CLOCK", 1),
	FD("throttle_reasons", VRAMZ_F_THROTTLE, throttle_reasons, 88, NULL, 1, "gauge",
	  "Clock event (throttle) reason bits, as NVML's.", 0, UINT64_MAX,
	  "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", 1),
	FD("pcie_gen", VRAMZ_F_PCIE_LINK, pcie_gen, 96, "pcie_link_generation", 1, "gauge",
	  "Current PCIe link generation.", 1, FIELD_MAX_PCIE_GEN,
	  "DCGM_FI_DEV_PCIE_LINK_GEN", 1),
	FD("pcie_width", VRAMZ_F_PCIE_LINK, pcie_width, 100, "pcie_link_width", 1, "gauge",
	  "Current PCIe link width (lanes).", 1, FIELD_MAX_PCIE_WIDTH,
	  "DCGM_FI_DEV_PCIE_LINK_WIDTH", 1),
	F("pcie_tx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_tx_bytes_per_s, 104, "pcie_tx_bytes_per_second", 1, "gauge",
	  "PCIe transmit throughput.", 0, FIELD_MAX_PCIE_BYTES_PER_S),
	F("pcie_rx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_rx_bytes_per_s, 112, "pcie_rx_bytes_per_second", 1, "gauge",
	  "PCIe receive throughput.", 0, FIELD_MAX_PCIE_BYTES_PER_S),
	FD("energy_mj", VRAMZ_F_ENERGY, energy_mj, 120, "energy_joules_total", 0.001, "counter",
	  "Energy used since the driver loaded.", 0, FIELD_MAX_ENERGY_MJ,
	  "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", 1),
	FD("fan_pct", VRAMZ_F_FAN, fan_pct, 12, "fan_speed_ratio", 0.01, "gauge",
	  "Fan speed.", 0, FIELD_MAX_FAN_PCT,
	  "DCGM_FI_DEV_FAN_SPEED", 1),
	/* VRAM health (VRAMZ_SAMPLE_HEALTH, the slow path; docs/health.md) */
	F("ecc_mode", VRAMZ_F_ECC_MODE, ecc_mode, 136, "ecc_enabled", 1, "gauge",
	  "1 when ECC is on.", 0, 1),
	FD("ecc_corrected_volatile", VRAMZ_F_ECC_VOL, ecc_corrected_volatile, 144, "ecc_corrected_volatile_total", 1, "counter",
	  "Corrected (single-bit) ECC errors since the driver loaded.", 0, FIELD_MAX_ERRORS,
	  "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 1),
	FD("ecc_uncorrected_volatile", VRAMZ_F_ECC_VOL, ecc_uncorrected_volatile, 152, "ecc_uncorrected_volatile_total", 1, "counter",
	  "Uncorrected (double-bit) ECC errors since the driver loaded.", 0, FIELD_MAX_ERRORS,
	  "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1),
	FD("ecc_corrected_aggregate", VRAMZ_F_ECC_AGG, ecc_corrected_aggregate, 160, "ecc_corrected_aggregate_total", 1, "counter",
	  "Corrected ECC errors over the GPU's life.", 0, FIELD_MAX_ERRORS,
	  "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", 1),
	FD("ecc_uncorrected_aggregate", VRAMZ_F_ECC_AGG, ecc_uncorrected_aggregate, 168, "ecc_uncorrected_aggregate_total", 1, "counter",
	  "Uncorrected ECC errors over the GPU's life.", 0, FIELD_MAX_ERRORS,
	  "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", 1),
	FD("remap_correctable_rows", VRAMZ_F_REMAP, remap_correctable_rows, 140, "remapped_rows_correctable", 1, "gauge",
	  "Memory rows remapped for corrected errors.", 0, FIELD_MAX_ROWS,
	  "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", 1),
	FD("remap_uncorrectable_rows", VRAMZ_F_REMAP, remap_uncorrectable_rows, 176, "remapped_rows_uncorrectable", 1, "gauge",
	  "Memory rows remapped for uncorrected errors.", 0, FIELD_MAX_ROWS,
	  "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", 1),
	FD("remap_pending", VRAMZ_F_REMAP, remap_pending, 180, "row_remap_pending", 1, "gauge",
	  "1 when a row remapping waits for a GPU reset.", 0, 1,
	  "DCGM_FI_DEV_ROW_REMAP_PENDING", 1),
	FD("remap_failure", VRAMZ_F_REMAP, remap_failure, 184, "row_remap_failure", 1, "gauge",
	  "1 when a row remapping failed (no spare row left).", 0, 1,
	  "DCGM_FI_DEV_ROW_REMAP_FAILURE", 1),
	FD("retired_sbe_pages", VRAMZ_F_RETIRED, retired_sbe_pages, 188, "retired_pages_sbe", 1, "gauge",
	  "Pages retired for multiple single-bit ECC errors.", 0, FIELD_MAX_ROWS,
	  "DCGM_FI_DEV_RETIRED_SBE", 1),
	FD("retired_dbe_pages", VRAMZ_F_RETIRED, retired_dbe_pages, 192, "retired_pages_dbe", 1, "gauge",
	  "Pages retired for a double-bit ECC error.", 0, FIELD_MAX_ROWS,
	  "DCGM_FI_DEV_RETIRED_DBE", 1),
	FD("retired_pending", VRAMZ_F_RETIRED_PENDING, retired_pending, 196, "retired_pages_pending", 1, "gauge",
	  "1 when a page retirement waits for a reboot.", 0, 1,
	  "DCGM_FI_DEV_RETIRED_PENDING", 1),
	FD("pcie_replays", VRAMZ_F_PCIE_REPLAY, pcie_replays, 200, "pcie_replays_total", 1, "counter",
	  "PCIe replays (link-level retransmissions).", 0, FIELD_MAX_ERRORS,
	  "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 1),
	F("xid_events", VRAMZ_F_XID, xid_events, 204, "xid_errors_total", 1, "counter",
	  "Xid errors seen since the watcher started.", 0, FIELD_MAX_ERRORS),
	FD("xid_last", VRAMZ_F_XID, xid_last, 208, "xid_last", 1, "gauge",
	  "The code of the last Xid error (0: none yet).", 0, FIELD_MAX_XID,
	  "DCGM_FI_DEV_XID_ERRORS", 1),
	F("xid_time_ms", VRAMZ_F_XID, xid_time_ms, 216, "xid_last_timestamp_seconds", 0.001, "gauge",
	  "When the last Xid error came (0: none yet).", 0, FIELD_MAX_TIME_MS),
};
const size_t gpu_field_count = sizeof gpu_fields / sizeof gpu_fields[0];

/* the members that are no field (fields.h); bit: what says the member is
 * known, where something does */
#define FRAME(m, seg, bit)                                                              \
	{.name = #m, .valid_bit = bit, .type = TYPE_OF(m), .offset = OFF(m),            \
	 .seg_off = seg, .member = #m, .bit_name = #bit}
const struct field gpu_sample_frame[] = {
	FRAME(index, 0, 0),
	FRAME(valid, 4, 0),
	FRAME(lost, 8, 0),
	FRAME(proc_first, 128, VRAMZ_F_PROCS),
	FRAME(proc_count, 132, VRAMZ_F_PROCS),
};
const size_t gpu_sample_frame_count = sizeof gpu_sample_frame / sizeof gpu_sample_frame[0];

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

void field_put(const struct field *f, vramz_gpu_sample *s, int64_t v)
{
	char *p = (char *)s + f->offset;
	switch (f->type) {
	case FT_U64: *(uint64_t *)p = (uint64_t)v; break;
	case FT_UINT: *(unsigned *)p = (unsigned)v; break;
	case FT_INT: *(int *)p = (int)v; break;
	}
}

void field_set(const struct field *f, vramz_gpu_sample *s, int64_t v)
{
	field_put(f, s, v);
	s->valid |= f->valid_bit;
}

unsigned field_width(const struct field *f)
{
	return f->type == FT_U64 ? 8 : 4;
}

void field_copy_bits(vramz_gpu_sample *dst, const vramz_gpu_sample *src, uint32_t bits)
{
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if ((f->valid_bit & bits) && (src->valid & f->valid_bit))
			field_set(f, dst, field_get(f, src));
	}
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

int field_in_range(const struct field *f, int64_t v)
{
	if (f->type == FT_INT)
		return v >= f->min && (v < 0 || (uint64_t)v <= f->max);
	return (uint64_t)v >= (uint64_t)f->min && (uint64_t)v <= f->max;
}

int field_mem_ok(uint64_t total, uint64_t used, uint64_t free_bytes)
{
	return total >= 1 && total <= FIELD_MAX_BYTES && used <= total && free_bytes <= total;
}

uint32_t field_sanitize(vramz_gpu_sample *s)
{
	uint32_t bad = 0;
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if ((s->valid & f->valid_bit) && !field_in_range(f, field_get(f, s)))
			bad |= f->valid_bit;
	}
	/* memory: each part at most the total (v1 "used" includes reserved,
	 * v2 excludes it, so the parts' sum is not checked).  A total of 0 is
	 * a log without that column (its bit is shared with used and free);
	 * the live backend refuses a 0 total itself. */
	int total_ok = (s->valid & VRAMZ_F_MEM) && !(bad & VRAMZ_F_MEM) && s->mem_total_bytes;
	if (total_ok && !field_mem_ok(s->mem_total_bytes, s->mem_used_bytes, s->mem_free_bytes)) {
		bad |= VRAMZ_F_MEM;
		total_ok = 0;
	}
	if ((s->valid & VRAMZ_F_MEM_RESERVED) && total_ok && s->mem_reserved_bytes > s->mem_total_bytes)
		bad |= VRAMZ_F_MEM_RESERVED;
	if ((s->valid & VRAMZ_F_UNATTRIBUTED) && total_ok && s->unattributed_bytes > s->mem_total_bytes)
		bad |= VRAMZ_F_UNATTRIBUTED;
	bad &= s->valid;
	s->valid &= ~bad;
	return bad;
}

/* every char array of vramz_gpu_info, vramz_system_info and
 * vramz_backend_info: a member appended there is appended here */
#define TEXT(s, m) do { (s)->m[sizeof (s)->m - 1] = '\0'; text_sanitize((s)->m); } while (0)

void field_sanitize_info(vramz_gpu_info *gi)
{
	TEXT(gi, name);
	TEXT(gi, uuid);
	TEXT(gi, pci_bus_id);
	TEXT(gi, serial);
	TEXT(gi, vbios);
	TEXT(gi, arch);
	TEXT(gi, mem_type);
	TEXT(gi, vendor);
	TEXT(gi, backend);
}

void field_sanitize_system(vramz_system_info *si, vramz_backend_info *bi)
{
	if (si) {
		TEXT(si, driver_version);
		TEXT(si, nvidia.nvml_version);
		TEXT(si, backend);
	}
	if (bi) {
		TEXT(bi, name);
		TEXT(bi, vendor);
		TEXT(bi, driver_version);
	}
}

uint32_t field_sanitize_proc(vramz_proc_sample *p)
{
	uint32_t bad = 0;
	if ((p->valid & VRAMZ_P_USED) && p->used_bytes > FIELD_MAX_BYTES)
		bad |= VRAMZ_P_USED;
	if ((p->valid & VRAMZ_P_SM) && p->sm_pct > FIELD_MAX_PCT)
		bad |= VRAMZ_P_SM;
	if ((p->valid & VRAMZ_P_MEMUTIL) && p->mem_util_pct > FIELD_MAX_PCT)
		bad |= VRAMZ_P_MEMUTIL;
	p->valid &= ~bad;
	return bad;
}
