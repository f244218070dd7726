/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the ring of recent ticks behind the live page's charts.
 *
 * A page that opens /api/v1/events gets the last --history of memory and
 * utilization first, so its charts start full instead of empty.  The ring
 * keeps only what the charts draw: per tick its time, and per selected GPU
 * the used bytes and the utilization (a value the GPU did not report is
 * kept as unknown and sent as null).  Its size is fixed when serve starts:
 * --history / --interval ticks, at most SERVE_HISTORY_MAX_TICKS, so it
 * never grows with time or with clients (docs/exporter.md, "The live
 * page").
 */
#include "serve/web.h"

#include <stdlib.h>
#include <string.h>

#include "format/jsonw.h"

/* One GPU at one tick (16 bytes). */
struct hist_pt {
	uint64_t used_bytes;
	uint8_t util_pct;
	uint8_t flags; /* HP_* */
};
enum { HP_MEM = 1, HP_UTIL = 2, HP_LOST = 4 };

/* GPUs a tick keeps at most (a selection beyond this is charted in part) */
#define HIST_MAX_GPUS 64

struct serve_history {
	unsigned cap;          /* ticks */
	unsigned head, count;  /* next slot; ticks kept */
	unsigned ngpus;        /* columns, fixed by the first tick */
	unsigned index[HIST_MAX_GPUS]; /* each column's GPU index */
	int64_t *t_ms;         /* [cap] */
	struct hist_pt *pts;   /* [cap * HIST_MAX_GPUS], allocated with the first tick */
};

struct serve_history *history_new(int64_t history_ms, int64_t interval_ms)
{
	struct serve_history *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	int64_t n = interval_ms > 0 ? (history_ms + interval_ms - 1) / interval_ms : 1;
	h->cap = n < 1 ? 1 : n > SERVE_HISTORY_MAX_TICKS ? SERVE_HISTORY_MAX_TICKS : (unsigned)n;
	h->t_ms = calloc(h->cap, sizeof *h->t_ms);
	if (!h->t_ms) {
		free(h);
		return NULL;
	}
	return h;
}

void history_free(struct serve_history *h)
{
	if (!h)
		return;
	free(h->t_ms);
	free(h->pts);
	free(h);
}

unsigned history_capacity(const struct serve_history *h)
{
	return h->cap;
}

void history_add(struct serve_history *h, const vramz_snapshot *snap)
{
	if (!snap || !snap->gpu_count)
		return;
	if (!h->pts) {
		h->ngpus = snap->gpu_count < HIST_MAX_GPUS ? snap->gpu_count : HIST_MAX_GPUS;
		h->pts = calloc((size_t)h->cap * h->ngpus, sizeof *h->pts);
		if (!h->pts)
			return; /* no chart history; the live figures still flow */
		for (unsigned i = 0; i < h->ngpus; i++)
			h->index[i] = snap->gpus[i].index;
	}
	struct hist_pt *row = h->pts + (size_t)h->head * h->ngpus;
	memset(row, 0, h->ngpus * sizeof *row);
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		unsigned col = 0;
		while (col < h->ngpus && h->index[col] != g->index)
			col++;
		if (col == h->ngpus)
			continue;
		struct hist_pt *p = &row[col];
		p->flags = g->lost ? HP_LOST : 0;
		if (!g->lost && (g->valid & VRAMZ_F_MEM)) {
			p->used_bytes = g->mem_used_bytes;
			p->flags |= HP_MEM;
		}
		if (!g->lost && (g->valid & VRAMZ_F_UTIL)) {
			p->util_pct = (uint8_t)(g->util_gpu_pct > 100 ? 100 : g->util_gpu_pct);
			p->flags |= HP_UTIL;
		}
	}
	h->t_ms[h->head] = snap->time_ms;
	h->head = (h->head + 1) % h->cap;
	if (h->count < h->cap)
		h->count++;
}

/* Slot of the k-th oldest tick kept. */
static unsigned slot(const struct serve_history *h, unsigned k)
{
	return (h->head + h->cap - h->count + k) % h->cap;
}

void history_json(const struct serve_history *h, struct jsonw *w)
{
	unsigned n = h->pts ? h->count : 0;
	jw_arr(w, "t");
	for (unsigned k = 0; k < n; k++)
		jw_i64(w, NULL, h->t_ms[slot(h, k)]);
	jw_end_arr(w);
	jw_arr(w, "gpus");
	for (unsigned c = 0; c < (h->pts ? h->ngpus : 0); c++) {
		jw_obj(w, NULL);
		jw_u64(w, "index", h->index[c]);
		jw_arr(w, "used_bytes");
		for (unsigned k = 0; k < n; k++) {
			const struct hist_pt *p = &h->pts[(size_t)slot(h, k) * h->ngpus + c];
			jw_u64_if(w, NULL, p->flags & HP_MEM, p->used_bytes);
		}
		jw_end_arr(w);
		jw_arr(w, "util_pct");
		for (unsigned k = 0; k < n; k++) {
			const struct hist_pt *p = &h->pts[(size_t)slot(h, k) * h->ngpus + c];
			jw_u64_if(w, NULL, p->flags & HP_UTIL, p->util_pct);
		}
		jw_end_arr(w);
		jw_end_obj(w);
	}
	jw_end_arr(w);
}
