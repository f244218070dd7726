/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the ring of recent ticks behind the live page's charts.
 *
 * A page that opens /api/v1/events gets the last --history of every
 * sensor its charts draw first, so its sensor rows and its detail view of
 * a GPU start full instead of empty.  The ring keeps only what the charts
 * draw: per tick its time, and per selected GPU the sensors of sensors[]
 * below, 56 bytes (a value the GPU did not report is kept as unknown and
 * sent as null).  Its size is fixed when serve starts:
 * --history / --interval ticks, at most SERVE_HISTORY_MAX_TICKS, so it
 * never grows with time or with clients (docs/exporter.md, "The live
 * page").
 */
#include "serve/web.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/jsonw.h"

/* One GPU at one tick (56 bytes): every sensor the page's detail view
 * draws, each in the narrowest type its plausible values fit (a clock in
 * MHz, a temperature in °C); `have` says which were reported. */
struct hist_pt {
	uint64_t used_bytes, reserved_bytes;
	uint64_t pcie_tx, pcie_rx;        /* bytes/s */
	uint32_t power_mw;
	uint16_t clk_sm, clk_mem;         /* MHz */
	int16_t temp, temp_mem;           /* °C */
	uint8_t util, util_mem, fan;      /* % */
	uint8_t lost;
	uint16_t have;                    /* 1 << row of sensors[] */
};

/* The sensors kept: the snapshot's key (the hello's key too, but for the
 * first two, which keep the names the hello had before the others were
 * kept), the sample's bit and member, where the ring keeps it, and the
 * largest value it keeps (above: the type's largest, or a percentage's
 * 100).  One row a sensor, so adding one is a line here and a member in
 * hist_pt (docs/exporter.md, "The live page"). */
struct hist_sensor {
	const char *key;
	uint32_t bit;          /* VRAMZ_F_* */
	size_t s_off, s_size;  /* in vramz_gpu_sample */
	int s_signed;
	size_t p_off, p_size;  /* in struct hist_pt */
	int64_t lo, hi;        /* kept range: clamped into it */
};
#define SZ(T, m) sizeof(((T *)0)->m)
#define HS(key, bit, sm, pm, sgn, lo, hi)                                                         \
	{key, bit, offsetof(vramz_gpu_sample, sm), SZ(vramz_gpu_sample, sm), sgn,                 \
	 offsetof(struct hist_pt, pm), SZ(struct hist_pt, pm), lo, hi}
static const struct hist_sensor sensors[] = {
	HS("used_bytes", VRAMZ_F_MEM, mem_used_bytes, used_bytes, 0, 0, INT64_MAX),
	HS("util_pct", VRAMZ_F_UTIL, util_gpu_pct, util, 0, 0, 100),
	HS("mem_reserved_bytes", VRAMZ_F_MEM_RESERVED, mem_reserved_bytes, reserved_bytes, 0, 0, INT64_MAX),
	HS("util_mem_pct", VRAMZ_F_UTIL, util_mem_pct, util_mem, 0, 0, 100),
	HS("temp_c", VRAMZ_F_TEMP, temp_c, temp, 1, INT16_MIN, INT16_MAX),
	HS("temp_mem_c", VRAMZ_F_TEMP_MEM, temp_mem_c, temp_mem, 1, INT16_MIN, INT16_MAX),
	HS("power_mw", VRAMZ_F_POWER, power_mw, power_mw, 0, 0, UINT32_MAX),
	HS("clock_sm_mhz", VRAMZ_F_CLK_SM, clock_sm_mhz, clk_sm, 0, 0, UINT16_MAX),
	HS("clock_mem_mhz", VRAMZ_F_CLK_MEM, clock_mem_mhz, clk_mem, 0, 0, UINT16_MAX),
	HS("fan_pct", VRAMZ_F_FAN, fan_pct, fan, 0, 0, 100),
	HS("pcie_tx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_tx_bytes_per_s, pcie_tx, 0, 0, INT64_MAX),
	HS("pcie_rx_bytes_per_s", VRAMZ_F_PCIE_TPUT, pcie_rx_bytes_per_s, pcie_rx, 0, 0, INT64_MAX),
};
#define NSENSORS (sizeof sensors / sizeof sensors[0])
_Static_assert(sizeof(struct hist_pt) == 56, "docs/performance.md states the ring's cost");
_Static_assert(NSENSORS <= 16, "hist_pt.have has a bit a sensor");

static int64_t load(const void *base, size_t off, size_t size, int sgn)
{
	const char *p = (const char *)base + off;
	if (size == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		return v > INT64_MAX ? INT64_MAX : (int64_t)v;
	}
	if (size == 4 && sgn) {
		int32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	if (size == 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	if (size == 2 && sgn) {
		int16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	if (size == 2) {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	return *(const uint8_t *)p;
}

static void store(void *base, size_t off, size_t size, int64_t v)
{
	char *p = (char *)base + off;
	if (size == 8) {
		uint64_t u = (uint64_t)v;
		memcpy(p, &u, 8);
	} else if (size == 4) {
		uint32_t u = (uint32_t)v;
		memcpy(p, &u, 4);
	} else if (size == 2) {
		uint16_t u = (uint16_t)v; /* an int16_t's bits as well */
		memcpy(p, &u, 2);
	} else {
		*(uint8_t *)p = (uint8_t)v;
	}
}

/* GPUs a tick keeps at most (a selection beyond this is charted in part) */
#define HIST_MAX_GPUS 64

struct serve_history {
	unsigned cap;          /* ticks */
	unsigned head, count;  /* next slot; ticks kept */
	unsigned ngpus;        /* columns, fixed by the first tick */
	unsigned index[HIST_MAX_GPUS]; /* each column's GPU index */
	int64_t *t_ms;         /* [cap] */
	struct hist_pt *pts;   /* [cap * ngpus], allocated with the first tick */
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
		p->lost = g->lost != 0;
		if (g->lost)
			continue;
		for (unsigned k = 0; k < NSENSORS; k++) {
			const struct hist_sensor *hs = &sensors[k];
			if (!(g->valid & hs->bit))
				continue;
			int64_t v = load(g, hs->s_off, hs->s_size, hs->s_signed);
			store(p, hs->p_off, hs->p_size, v < hs->lo ? hs->lo : v > hs->hi ? hs->hi : v);
			p->have |= (uint16_t)(1u << k);
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
		/* a sensor the ring never had is left out (the page: all unknown) */
		uint16_t seen = 0;
		for (unsigned k = 0; k < n; k++)
			seen |= h->pts[(size_t)slot(h, k) * h->ngpus + c].have;
		for (unsigned s = 0; s < NSENSORS; s++) {
			const struct hist_sensor *hs = &sensors[s];
			if (!(seen & (1u << s)) && s >= 2) /* the first two: always */
				continue;
			jw_arr(w, hs->key);
			for (unsigned k = 0; k < n; k++) {
				const struct hist_pt *p = &h->pts[(size_t)slot(h, k) * h->ngpus + c];
				int have = (p->have >> s) & 1;
				int64_t v = have ? load(p, hs->p_off, hs->p_size, hs->s_signed) : 0;
				jw_i64_if(w, NULL, have, v);
			}
			jw_end_arr(w);
		}
		jw_end_obj(w);
	}
	jw_end_arr(w);
}
