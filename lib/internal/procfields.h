/* SPDX-License-Identifier: Apache-2.0 */
/* procfields.h - one table describing every per-process field: its CSV
 * column and JSON key (names carry units), what kind of value it is, its
 * place in vramz_proc_sample and validity bit, and its Prometheus metric or
 * label.  The CSV log (writer and reader), JSON and the exporter all walk
 * it, as lib/fields.c does for GPU fields: a field added here (the PyTorch
 * agent's figures, a vendor's) appears in every format at once.
 */
#ifndef VRAMZ_PROCFIELDS_H
#define VRAMZ_PROCFIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

/* Kinds of a process field: the first five come from the snapshot around
 * the process (time, GPU identity) or need formatting of their own. */
enum proc_field_kind {
	PC_TIME, PC_GPU, PC_UUID, PC_PID, PC_TYPE,
	PC_U32, PC_UINT, PC_U64, PC_STR,
};

struct proc_field {
	const char *name;     /* CSV column (append-only: old logs keep reading) */
	enum proc_field_kind kind;
	size_t offset, size;  /* in vramz_proc_sample (PC_U32..PC_STR) */
	uint32_t valid_bit;   /* VRAMZ_P_* that makes the value known; 0 always */
	const char *json;     /* JSON key: NULL the same as name, "" not in JSON */
	const char *prom;     /* metric name without vramz_, or NULL */
	double prom_scale;    /* multiply to get the metric's base unit */
	int prom_label;       /* 1: a label of every per-process series */
	const char *help;     /* one line: metric HELP and docs */
	int json_optional;    /* 1: the JSON key is left out, not null, when unknown */
	uint32_t torch_bit;   /* VRAMZ_T_* that must also be set in torch_valid
				 (the PyTorch agent's figures); 0 none */
	int prom_counter;     /* 1: a Prometheus counter (name ends _total) */
	const char *part;     /* rows sharing one metric, each a value of its
				 `part` label (adjacent in the table, the
				 first's help), and the keys of the JSON
				 object "outside_parts"; NULL otherwise */
	const char *label;    /* with prom_label: the label's name, NULL the
				 same as name (dcgm-exporter's `container` is
				 the container's name, not its id) */
};

static inline const char *proc_field_label(const struct proc_field *f)
{
	return f->label ? f->label : f->name;
}

extern const struct proc_field proc_fields[];
extern const size_t proc_field_count;

static inline const char *proc_field_json(const struct proc_field *f)
{
	return f->json ? f->json : f->name;
}
/* The field's value is known in p. */
static inline int proc_field_valid(const struct proc_field *f, const vramz_proc_sample *p)
{
	return (!f->valid_bit || (p->valid & f->valid_bit) == f->valid_bit) &&
	       (!f->torch_bit || (p->torch_valid & f->torch_bit) == f->torch_bit);
}
/* An integer field's value (PC_U32, PC_UINT, PC_U64). */
uint64_t proc_field_u64(const struct proc_field *f, const vramz_proc_sample *p);
/* Every text field of p (the table's PC_STR rows) through lib/internal/text.h's
 * sanitizer: what a backend, a segment or a log said cannot drive a
 * terminal.  Returns how many characters were replaced. */
size_t proc_field_sanitize_text(vramz_proc_sample *p);

#endif
