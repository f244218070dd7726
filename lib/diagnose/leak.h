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

/* the shape a leak was judged on */
enum leak_shape {
	LEAK_TREND = 0,                /* the slow rule: a trend over the life */
	LEAK_SMOOTH,                   /* the onset rules: a steady rise */
	LEAK_STAIRS,                   /* steps at a steady cadence */
};

struct leak_result {
	int is_leak;
	struct trend tr;
	int64_t start_ms, end_ms;      /* of the rising stretch: its onset, now */
	double last_bytes;
	const char *why_not;           /* reason when not a leak (tests, debugging) */
	enum leak_shape shape;
	unsigned steps;                /* LEAK_STAIRS: how many */
	double step_interval_s;        /* their median interval */
	double step_bytes;             /* and height */
};

/* what the onset rules ask of a series before they judge it (leak.c) */
struct onset_need {
	int64_t min_span_ms;           /* a smooth rise lasts at least */
	double min_rise;               /* and rises at least (bytes), whichever is longer */
	double free_bytes;             /* its GPU's free memory now; < 0 unknown */
	int64_t life_start_ms;         /* the process's (or GPU's) first sample */
};

/* What the onset rules ask of NVML's series of a process or GPU (free:
 * its GPU's free memory, < 0 unknown; life: its first sample). */
static inline struct onset_need onset_need_nvml(const vramz_diag_config *cfg, double free_bytes,
						int64_t life_ms)
{
	return (struct onset_need){.min_span_ms = cfg->leak_onset_min_span_ms,
				   .min_rise = (double)cfg->leak_onset_min_rise_bytes,
				   .free_bytes = free_bytes, .life_start_ms = life_ms};
}

/* a series' last leak analyses, redone only when a window has opened */
struct leak_cache {
	uint64_t ver;                  /* ring ver analysed; 0 never */
	struct leak_result r;
	uint64_t onset_ver;            /* the same for the onset rules */
	struct leak_result onset;
};

/* the analyses' work arrays, kept from one evaluation to the next */
struct diag_scratch {
	double *t, *y, *tmp;
	size_t cap_pts, cap_tmp;
};

int leak_analyze(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		 struct diag_scratch *s, struct leak_result *out);
/* The onset rules: a smooth rise or a staircase, judged from its onset
 * whenever that is, once it has lasted what need asks. */
int leak_onset(const struct ring *r, const struct onset_need *need, const vramz_diag_config *cfg,
	       struct diag_scratch *s, struct leak_result *out);
/* The two rules' results for a series, recomputed when stale (c). */
int leak_cached(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		struct diag_scratch *s, struct leak_cache *c, struct leak_result *out);
int leak_onset_cached(const struct ring *r, const struct onset_need *need,
		      const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_cache *c,
		      struct leak_result *out);

#endif
