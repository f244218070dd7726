/* fields.h - one table describing every per-GPU sample field: its name
 * (with its unit), validity bit, place in vramz_gpu_sample and its
 * Prometheus metric.  JSON, CSV logs, the log reader and the exporter all
 * walk this table, so a field added here appears everywhere at once and
 * the formats cannot disagree about names or units. */
#ifndef VRAMZ_FIELDS_H
#define VRAMZ_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

enum field_type { FT_U64, FT_UINT, FT_INT };

struct field {
	const char *name;      /* JSON key and CSV column: "mem_used_bytes" */
	uint32_t valid_bit;    /* VRAMZ_F_* */
	enum field_type type;
	size_t offset;         /* in vramz_gpu_sample */
	const char *prom;      /* metric name without vramz_ prefix, or NULL */
	double prom_scale;     /* multiply to get the metric's base unit */
	const char *prom_type; /* "gauge" or "counter" */
	const char *help;      /* one line, for metric HELP and docs */
};

extern const struct field gpu_fields[];
extern const size_t gpu_field_count;

/* The value of f in s as an integer (all sample fields are integers). */
int64_t field_get(const struct field *f, const vramz_gpu_sample *s);
/* Stores v into s's field f and sets its validity bit. */
void field_set(const struct field *f, vramz_gpu_sample *s, int64_t v);
int field_valid(const struct field *f, const vramz_gpu_sample *s);
const struct field *field_by_name(const char *name);

#endif
