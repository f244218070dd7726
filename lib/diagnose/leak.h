/* SPDX-License-Identifier: Apache-2.0 */
/* leak.h - the leak rules on one series (leak.c), and their results
 * cached per series: what the leak detector (detect.c) and the oom check
 * (oom.c) ask.  It knows series and thresholds, not the engine. */
#ifndef VRAMZ_DIAG_LEAK_H
#define VRAMZ_DIAG_LEAK_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"
#include "ring.h"
#include "stats.h"

struct leak_result {
	int is_leak;
	struct trend tr;
	int64_t start_ms, end_ms;      /* of the rising stretch */
	double last_bytes;
	const char *why_not;           /* reason when not a leak (tests, debugging) */
};

/* a series' last leak analyses, redone only when a window has opened */
struct leak_cache {
	uint64_t ver;                  /* ring ver analysed; 0 never */
	struct leak_result r;
	uint64_t fast_ver;             /* the same for the fast rule */
	struct leak_result fast;
};

/* the analyses' work arrays, kept from one evaluation to the next */
struct diag_scratch {
	double *t, *y, *tmp;
	size_t cap_pts, cap_tmp;
};

int leak_analyze(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		 struct diag_scratch *s, struct leak_result *out);
/* The fast rule: a rise sure enough and long enough for the time to OOM it
 * projects with free_bytes left (leak_fast_*).  free_bytes < 0: unknown. */
int leak_fast(const struct ring *r, int64_t life_start_ms, double free_bytes,
	      const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_result *out);
/* The two rules' results for a series, recomputed when stale (c). */
int leak_cached(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		struct diag_scratch *s, struct leak_cache *c, struct leak_result *out);
int leak_fast_cached(const struct ring *r, int64_t life_start_ms, double free_bytes,
		     const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_cache *c,
		     struct leak_result *out);

#endif
