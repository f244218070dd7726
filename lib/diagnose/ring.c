/* SPDX-License-Identifier: Apache-2.0 */
/* ring.c - bounded series for the diagnosis engine.
 *
 * A series is a ring of windows; each window keeps the maximum and minimum
 * of memory over its samples plus the sum of activity.  The maximum is
 * what trend tests need: a training loop allocates and frees every
 * iteration, and the per-window maximum turns that sawtooth into the
 * level the allocator really holds.  When the ring is full, neighbouring
 * windows merge pairwise and the width doubles, so a series of any length
 * costs a fixed number of windows while keeping its whole history at a
 * coarser grain.
 */
#include "ring.h"
#include "vramz/vramz.h"

#include <stdlib.h>
#include <string.h>

int ring_init(struct ring *r, unsigned cap, int64_t width_ms)
{
	memset(r, 0, sizeof *r);
	if (cap < 16)
		cap = 16;
	cap &= ~1u;
	r->w = calloc(cap, sizeof *r->w);
	if (!r->w)
		return VRAMZ_ENOMEM;
	r->cap = cap;
	r->width_ms = width_ms > 0 ? width_ms : 1000;
	return 0;
}

void ring_free(struct ring *r)
{
	free(r->w);
	memset(r, 0, sizeof *r);
}

static void win_merge(struct win *a, const struct win *b)
{
	a->t_last_ms = b->t_last_ms;
	if (b->max_bytes > a->max_bytes)
		a->max_bytes = b->max_bytes;
	if (b->min_bytes < a->min_bytes)
		a->min_bytes = b->min_bytes;
	a->act_sum += b->act_sum;
	a->n += b->n;
	a->act_n += b->act_n;
}

/* Halves the ring: window i becomes windows 2i and 2i+1 merged. */
static void ring_halve(struct ring *r)
{
	unsigned j = 0;
	for (unsigned i = 0; i + 1 < r->n; i += 2, j++) {
		struct win m = r->w[i];
		win_merge(&m, &r->w[i + 1]);
		r->w[j] = m;
	}
	if (r->n & 1)
		r->w[j++] = r->w[r->n - 1];
	r->n = j;
	r->width_ms *= 2;
	r->merges++;
}

void ring_add(struct ring *r, int64_t t_ms, double bytes, double act)
{
	struct win *w = r->n ? &r->w[r->n - 1] : NULL;
	if (!w || t_ms >= w->t_first_ms + r->width_ms) {
		if (r->n == r->cap)
			ring_halve(r);
		w = &r->w[r->n++];
		r->ver++;
		w->t_first_ms = t_ms;
		w->max_bytes = bytes;
		w->min_bytes = bytes;
		w->act_sum = 0;
		w->n = 0;
		w->act_n = 0;
	}
	w->t_last_ms = t_ms;
	if (bytes > w->max_bytes)
		w->max_bytes = bytes;
	if (bytes < w->min_bytes)
		w->min_bytes = bytes;
	w->n++;
	if (act >= 0) {
		w->act_sum += act;
		w->act_n++;
	}
}
