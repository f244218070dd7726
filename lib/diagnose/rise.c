/* SPDX-License-Identifier: Apache-2.0 */
/* rise.c - memory rising steeply now, told while it rises (issue 36): the
 * detector and words of VRAMZ_FK_RISE.
 *
 * A process whose used memory climbs leak_steep_rate_bytes_per_min or more
 * over its latest leak_steep_min_span_ms, spread over that stretch rather
 * than in one jump (a model copied in at once is a load, not news), is
 * told with the time until its GPU is full at that pace, and cleared,
 * after the kind's hold, once it stops.  It is not a leak: a load from
 * disk, a cache filling and a sequence-length warm-up rise like this and
 * stop.  The leak rules (leak.c) judge whether it goes on, and a process
 * they call leaking is theirs alone: its leak finding carries the rate and
 * the time to OOM.  Severity is WARNING, CRITICAL only when the GPU would
 * be full within RISE_CRITICAL_TTO_MS.
 */
#include "state.h"
#include "detectors.h"
#include "words.h"

#include <stdio.h>

#define RISE_CRITICAL_TTO_MS 60000
#define RISE_MIN_WINDOWS 5

struct rise {
	double rate;                   /* bytes/s from its start in the stretch */
	int64_t start_ms;              /* the window before its first increment */
};

/* Is the series rising steeply over its latest stretch?  1 and *out. */
static int rise_of(const struct ring *r, const vramz_diag_config *cfg, struct rise *out)
{
	int64_t span = cfg->leak_steep_min_span_ms;
	if (!cfg->leak_steep_rate_bytes_per_min || span <= 0 || r->n < RISE_MIN_WINDOWS)
		return 0;
	const struct win *w = r->w;
	unsigned n = r->n, j = n;
	int64_t now = w[n - 1].t_last_ms;
	while (j > 0 && w[j - 1].t_first_ms >= now - span)
		j--;
	if (n - j < RISE_MIN_WINDOWS || (double)(now - w[j].t_first_ms) < 0.8 * (double)span)
		return 0; /* too little of the stretch seen yet */
	double base = w[j].max_bytes, top = base;
	for (unsigned i = j; i < n && i < j + 3; i++)
		base = w[i].max_bytes < base ? w[i].max_bytes : base;
	for (unsigned i = j; i < n; i++)
		top = w[i].max_bytes > top ? w[i].max_bytes : top;
	double net = top - base;
	if (net <= 0 || w[n - 1].max_bytes < top - 0.1 * net)
		return 0; /* not rising, or fallen back */
	/* spread over the stretch, no fall as large as a quarter of it */
	unsigned first = 0, last = 0;
	double largest = 0;
	for (unsigned i = j + 1; i < n; i++) {
		double dy = w[i].max_bytes - w[i - 1].max_bytes;
		if (-dy > 0.25 * net)
			return 0;
		if (dy > 0.05 * net) {
			if (!first)
				first = i;
			last = i;
			largest = dy > largest ? dy : largest;
		}
	}
	if (!first || largest > 0.5 * net || w[last].t_first_ms - w[first].t_first_ms < span / 3 ||
	    now - w[last].t_first_ms > span / 3)
		return 0;
	int64_t t0 = w[first - 1].t_first_ms, t1 = w[last].t_last_ms;
	double rate = (w[last].max_bytes - w[first - 1].max_bytes) / ((double)(t1 - t0) / 1000.0);
	if (t1 <= t0 || rate * 60.0 < (double)cfg->leak_steep_rate_bytes_per_min)
		return 0;
	out->rate = rate;
	out->start_ms = t0;
	return 1;
}

int detect_rise(vramz_diag *d, struct emitter *em)
{
	for (unsigned i = 0; i < d->nprocs; i++) {
		const struct proc_state *p = &d->procs[i];
		struct rise r;
		if (!p->used || p->ended || leak_of(d, p)->leaking || p->gpu >= d->ngpus ||
		    !rise_of(&p->mem, &d->cfg, &r))
			continue;
		const struct gpu_state *g = &d->gpus[p->gpu];
		int free_ok = (g->last.valid & VRAMZ_F_MEM) && !g->lost;
		double tto = free_ok ? (double)g->last.mem_free_bytes / r.rate : -1;
		vramz_finding *f = emit(em, tto >= 0 && tto * 1000.0 < RISE_CRITICAL_TTO_MS
					    ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING, r.rate);
		if (!f)
			return VRAMZ_ENOMEM;
		finding_subject_proc(f, p);
		f->figures = VRAMZ_FG_RATE | VRAMZ_FG_DURATION | VRAMZ_FG_BYTES;
		f->rate_bytes_per_s = f->rate_ci_low_bytes_per_s = f->rate_ci_high_bytes_per_s = r.rate;
		f->duration_ms = p->mem.w[p->mem.n - 1].t_last_ms - r.start_ms;
		f->onset_ms = r.start_ms;
		f->bytes = p->last_bytes;
		if (tto >= 0) {
			f->figures |= VRAMZ_FG_TTO | VRAMZ_FG_REF;
			f->time_to_oom_s = tto;
			f->ref_bytes = g->last.mem_free_bytes;
		}
	}
	return 0;
}

void summary_rise(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32], c[32];
	int n = snprintf(buf, len, "%s: memory rising %.1f GiB/min", s,
			 f->rate_bytes_per_s * 60 / 1073741824.0);
	if (n < 0 || (size_t)n >= len)
		return;
	if (f->figures & VRAMZ_FG_TTO)
		n += snprintf(buf + n, len - (size_t)n, ", the GPU full in about %s at this pace",
			      diag_dur_str(c, sizeof c, f->time_to_oom_s * 1000));
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (for %s, now %s)",
			 diag_dur_str(a, sizeof a, (double)f->duration_ms),
			 diag_bytes_str(b, sizeof b, (double)f->bytes));
}

void advice_rise(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	(void)f;
	(void)s;
	snprintf(buf, len, "%s", "Not a leak yet: a model loading or a cache filling rises like "
				 "this and stops. If it goes on, it is reported as a leak; if it "
				 "must go on, free memory for it now.");
}
