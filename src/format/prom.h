/* SPDX-License-Identifier: Apache-2.0 */
/* prom.h - Prometheus text exposition (format 0.0.4) of a vramz snapshot.
 *
 * The exporter renders one complete /metrics body per sample into a
 * prom_buf and serves that text to every scrape, so rendering is the only
 * place that knows metric names.  Per-GPU sample metrics come from the
 * field table (lib/fields.c); this module adds what is not a per-GPU
 * field: identity (vramz_gpu_info), lost flags, throttle reasons as one
 * 0/1 series per reason, NVLink state, MIG instances, per-process series
 * (opt-in), the diagnosis engine's figures and the exporter's own health.
 * An unknown value has no sample; nothing here invents a number.
 */
#ifndef VRAMZ_PROM_H
#define VRAMZ_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"
#include "vramz/vramz.h"

/* Content-Type of a /metrics response in this format. */
#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A growable text buffer.  Out of memory sticks in .oom, so a renderer
 * appends without checking each call and looks once at the end. */
struct prom_buf {
	char *p;
	size_t len, cap;
	int oom;
};

void prom_buf_init(struct prom_buf *b);
/* Empties the buffer but keeps its memory for the next render. */
void prom_buf_reset(struct prom_buf *b);
void prom_buf_free(struct prom_buf *b);
/* Appends n bytes / a C string. */
void prom_buf_put(struct prom_buf *b, const char *s, size_t n);
void prom_buf_puts(struct prom_buf *b, const char *s);
/* Appends s as a label value: backslash, double quote and newline escaped,
 * invalid UTF-8 bytes replaced by U+FFFD (label values must be UTF-8). */
void prom_buf_label_value(struct prom_buf *b, const char *s);
/* Appends printf's text. */
void prom_buf_printf(struct prom_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

enum {
	PROM_PROCS = 1u << 0, /* per-process series (cardinality: one per pid) */
	PROM_DCGM = 1u << 1,  /* dcgm-exporter's series too (prom_dcgm.c) */
};

/* "nvidia3": a GPU's device node, dcgm-exporter's `device` label */
#define PROM_DEVICE_LEN 24

/* The exporter's own state, rendered as vramz_up and friends. */
struct prom_exporter {
	int up;                      /* 1: the last sample read at least one GPU */
	double sample_duration_s;    /* wall time of the last sample+render; <0 unknown */
	double last_sample_unix_s;   /* when it was taken; <=0 unknown (no sample yet) */
	uint64_t samples_total;      /* samples attempted since start */
	uint64_t sample_errors_total; /* of which failed (no GPU readable) */
};

struct prom_input {
	const vramz_system_info *sys; /* NULL: no driver label */
	/* The backends that found GPUs (vramz_backend()): each GPU's driver
	 * label is its own backend's, so a mixed NVIDIA + AMD machine labels
	 * each with its driver.  None: sys's driver for every GPU. */
	const vramz_backend_info *backends;
	unsigned backend_count;
	const vramz_gpu_info *info;   /* static facts, indexed by backend index */
	unsigned info_count;
	/* The GPUs to describe when snap is NULL (backend indices); NULL: all of
	 * info.  With a snapshot, its GPUs are the ones described. */
	const unsigned *sel;
	unsigned sel_count;
	const vramz_snapshot *snap;   /* NULL: no sample to show (not up) */
	unsigned flags;               /* PROM_* */
	struct prom_exporter exporter;
	/* With PROM_DCGM: the host name (NULL: no label), the name of its
	 * label (NULL: "Hostname", dcgm-exporter's before it became
	 * "hostname"), and each GPU's device node by backend index,
	 * info_count of them ("" unknown: then NVML's minor number, when
	 * the GPU's info has one; NULL: none known) */
	const char *hostname;
	const char *hostname_label;
	const char (*device)[PROM_DEVICE_LEN];
};

/* Appends the whole body: GPU identity and samples, processes when asked,
 * then the exporter's series.  0, or VRAMZ_ENOMEM (the buffer is then
 * incomplete and must not be served). */
int prom_render(struct prom_buf *b, const struct prom_input *in);

/* prombuf.c, for both renderers: GPU idx's static facts (NULL unknown),
 * and its driver version: its backend's; without backends, the system's;
 * NULL unknown. */
const vramz_gpu_info *prom_info_of(const struct prom_input *in, unsigned idx);
const char *prom_driver_of(const struct prom_input *in, unsigned idx);

/* Appends a value v * scale as put by the field table's renderer: an exact
 * decimal when scale is a power of ten. */
void prom_buf_scaled(struct prom_buf *b, int64_t v, double scale);

/* prom_dcgm.c: dcgm-exporter's series (DCGM_FI_DEV_FB_USED, ...) for the
 * fields of lib/fields.c that name one, with dcgm-exporter's labels; the
 * HELP and TYPE of each family even without a sample.  prom_render calls
 * it when PROM_DCGM is set. */
void prom_render_dcgm(struct prom_buf *b, const struct prom_input *in);
/* The device node ("nvidia3") of the NVIDIA GPU at pci_bus_id, from
 * PROCFS/driver/nvidia/gpus/BUS/information; 0, or -1 when unknown
 * (another vendor, no driver file, no "Device Minor" line). */
int prom_dcgm_device(const char *procfs, const char *pci_bus_id, char out[PROM_DEVICE_LEN]);

/* Appends the series of the diagnosis findings: for each kind's series in
 * the kinds table (lib/diagnose/kinds.c: vramz_leak_rate_bytes_per_second,
 * vramz_time_to_oom_seconds, vramz_idle_holder_bytes,
 * vramz_orphan_memory_bytes, vramz_oom_ended_bytes), its HELP and TYPE even
 * when it has no sample (so dashboards see the metric exists), then one
 * sample per finding of that kind that carries the figure and names a GPU,
 * labelled with the GPU and, for a process, its pid. */
int prom_render_findings(struct prom_buf *b, const struct prom_input *in,
			 const vramz_finding *f, unsigned n);

#endif
