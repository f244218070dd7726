/* SPDX-License-Identifier: Apache-2.0 */
/* fields.h - one table describing every per-GPU sample field: its name
 * (with its unit), validity bit, place in vramz_gpu_sample, place in the
 * daemon's segment and its Prometheus metric.  JSON, CSV logs, the log
 * reader, the exporter and the segment's codec all walk this table, and
 * the Python package's copy (python/vramz/_gpufields.py) is generated from
 * it, so a field added here appears everywhere at once and the formats
 * cannot disagree about names, units or offsets.  docs/architecture.md,
 * "Adding a GPU field", is the recipe. */
#ifndef VRAMZ_FIELDS_H
#define VRAMZ_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

enum field_type { FT_U64, FT_UINT, FT_INT };

/* Plausible ranges (docs/csv.md, "Out of range is unknown"): a driver
 * answer outside them (0xFFFFFFFF, -1, a used above the total) is a
 * sentinel or garbage, and the field is unknown, never that number.
 * Wide enough for any GPU of the next decade, narrow enough that every
 * all-ones answer of a 32- or 64-bit call falls outside. */
#define FIELD_MAX_BYTES (1ull << 50)         /* 1 PiB of GPU memory or BAR1 */
#define FIELD_MAX_PCT 100u                   /* utilization */
#define FIELD_MAX_FAN_PCT 200u               /* NVML: fans may read above 100 % */
#define FIELD_MAX_TEMP_C 150                 /* from 0 degC: -1 is a sentinel */
#define FIELD_MAX_POWER_MW 10000000u         /* 10 kW */
#define FIELD_MAX_CLOCK_MHZ 100000u          /* 100 GHz */
#define FIELD_MAX_PCIE_GEN 16u
#define FIELD_MAX_PCIE_WIDTH 64u
#define FIELD_MAX_PCIE_BYTES_PER_S (1ull << 40) /* 1 TiB/s */
#define FIELD_MAX_ENERGY_MJ 100000000000000000ull /* 10 kW for 300 years */
#define FIELD_MAX_ERRORS 0xFFFFFFFEull       /* an error or replay counter */
#define FIELD_MAX_ROWS 1000000u              /* remapped rows, retired pages */
#define FIELD_MAX_XID 65535u                 /* an Xid code */
#define FIELD_MAX_TIME_MS (1ull << 53)       /* ms since 1970 */

/* The VRAM health fields' bits (VRAMZ_SAMPLE_HEALTH) and the event
 * watcher's, which the slow thread and the watcher carry into ticks. */
#define FIELD_HEALTH_BITS (VRAMZ_F_ECC_MODE | VRAMZ_F_ECC_VOL | VRAMZ_F_ECC_AGG | \
			   VRAMZ_F_REMAP | VRAMZ_F_RETIRED | VRAMZ_F_RETIRED_PENDING | \
			   VRAMZ_F_PCIE_REPLAY)

struct field {
	const char *name;      /* JSON key and CSV column: "mem_used_bytes" */
	uint32_t valid_bit;    /* VRAMZ_F_* */
	enum field_type type;
	size_t offset;         /* in vramz_gpu_sample */
	/* in the segment's GPU sample record (docs/daemon.md, "Records"):
	 * append-only, a new field takes the next free offset of its width
	 * (4 or 8, aligned) and an old one never moves; tests/unit/
	 * test_segment_layout.c holds the documented offsets */
	unsigned seg_off;
	const char *prom;      /* metric name without vramz_ prefix, or NULL */
	double prom_scale;     /* multiply to get the metric's base unit */
	const char *prom_type; /* "gauge" or "counter" */
	const char *help;      /* one line, for metric HELP and docs */
	int64_t min;           /* plausible range: outside it, unknown */
	uint64_t max;          /* (FT_INT compares as signed, others unsigned) */
	/* dcgm-exporter's name for the same reading (`serve --dcgm-names`),
	 * or NULL when DCGM has no equivalent, and the factor from this
	 * field's unit to DCGM's.  A power of ten gives an exact decimal (mW
	 * to W: 0.001); any other factor (bytes to MiB: FIELD_DCGM_MIB) gives
	 * whole numbers rounded down, as DCGM's own.  The type is prom_type. */
	const char *dcgm;
	double dcgm_scale;
	/* the row's own words, spelled by the row macros: the struct member
	 * and the bit's name, for the generated Python copy */
	const char *member;    /* "mem_total_bytes" */
	const char *bit_name;  /* "VRAMZ_F_MEM" */
};

#define FIELD_DCGM_MIB (1.0 / 1048576) /* DCGM counts framebuffer memory in MiB */

extern const struct field gpu_fields[];
extern const size_t gpu_field_count;

/* The members of vramz_gpu_sample that are no field (index, valid, lost,
 * the process slice): the record's frame, in rows of the same shape (name
 * = member, no metric, no range), so the segment codec and the Python
 * generator see the whole struct.  Every member is a field or a frame row
 * (test_segment_layout checks it against sizeof). */
extern const struct field gpu_sample_frame[];
extern const size_t gpu_sample_frame_count;

/* The value of f in s as an integer (all sample fields are integers). */
int64_t field_get(const struct field *f, const vramz_gpu_sample *s);
/* Stores v into s's field f and sets its validity bit. */
void field_set(const struct field *f, vramz_gpu_sample *s, int64_t v);
/* Stores v into s's field f, leaving the validity bits alone (a decoder
 * that reads them from elsewhere). */
void field_put(const struct field *f, vramz_gpu_sample *s, int64_t v);
/* The field's width in bytes: 8 (FT_U64) or 4. */
unsigned field_width(const struct field *f);
int field_valid(const struct field *f, const vramz_gpu_sample *s);
const struct field *field_by_name(const char *name);

/* Copies the fields of src whose bits are in `bits` (and valid in src)
 * into dst, setting their bits. */
void field_copy_bits(vramz_gpu_sample *dst, const vramz_gpu_sample *src, uint32_t bits);

/* Whether v is inside f's plausible range. */
int field_in_range(const struct field *f, int64_t v);
/* Makes every field of s that is out of its range, or inconsistent with
 * the others (memory above the total), unknown by clearing its validity
 * bit; fields sharing a bit (used/free/total, GPU/memory utilization, link
 * generation/width) go unknown together.  Returns the bits cleared.  The
 * NVML backend calls it on every sample, the log reader on every row. */
uint32_t field_sanitize(vramz_gpu_sample *s);
/* The same for a process row: used memory, SM and memory utilization. */
uint32_t field_sanitize_proc(vramz_proc_sample *p);
/* Every text member of a GPU's identity (name, UUID, bus id, serial,
 * VBIOS, ...) through lib/internal/text.h's sanitizer, whichever backend filled it. */
void field_sanitize_info(vramz_gpu_info *gi);
/* The same for the system's and a backend's driver and library versions. */
void field_sanitize_system(vramz_system_info *si, vramz_backend_info *bi);
/* 1 when a memory reading is plausible: 0 < total <= FIELD_MAX_BYTES and
 * used, free each at most the total. */
int field_mem_ok(uint64_t total, uint64_t used, uint64_t free_bytes);

#endif
