/* SPDX-License-Identifier: Apache-2.0 */
/* ring.h - bounded series of windows (ring.c): what every series of the
 * diagnosis engine is kept in.  A leaf of lib/diagnose's graph: it
 * includes nothing of the engine. */
#ifndef VRAMZ_DIAG_RING_H
#define VRAMZ_DIAG_RING_H

#include <stdint.h>

/* One window of a series: the maximum of memory (the per-iteration
 * alloc/free sawtooth vanishes in it) plus activity sums. */
struct win {
	int64_t t_first_ms, t_last_ms; /* data times of its first and last sample */
	double max_bytes;
	double min_bytes;
	double act_sum;                /* sum of activity (SM %) over samples */
	uint32_t n;                    /* samples */
	uint32_t act_n;                /* samples with activity known */
};

struct ring {
	struct win *w;
	unsigned cap, n;               /* cap even */
	int64_t width_ms;              /* current window width */
	unsigned merges;               /* times the ring halved */
	uint64_t ver;                  /* bumped when a window opens: analyses cache on it */
};

int ring_init(struct ring *r, unsigned cap, int64_t width_ms);
void ring_free(struct ring *r);
/* act < 0: activity unknown for this sample */
void ring_add(struct ring *r, int64_t t_ms, double bytes, double act);

#endif
