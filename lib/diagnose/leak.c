/* SPDX-License-Identifier: Apache-2.0 */
/* leak.c - is this series a leak?  The detector behind VRAMZ_FK_LEAK.
 *
 * Most memory that rises is not a leak: a caching allocator grows in a
 * few steps while it learns the working set and then holds; a training
 * loop allocates and frees every iteration; a job frees everything when
 * it ends.  So, on the per-window maxima of one series (ring.c):
 *   1. drop the warm-up at the start of the process's life;
 *   2. find where the rise starts (the earliest of a few candidate starts
 *      whose Mann-Kendall tau is close to the best), and require a
 *      significant, strong monotonic trend from there (tau, p);
 *   3. estimate the rate with Theil-Sen and Sen's 95 % interval;
 *   4. reject what is too slow or too small to matter, what has fallen
 *      back from its peak, what has flattened out recently (plateau), and
 *      growth made of a few large steps (allocator) rather than many,
 *      and levels the series already reached before the rise (cycles).
 * Every rejection names its reason (why_not), which the tests check.
 */
#include "leak.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAK_MAX_POINTS 256
#define STAIR_MIN_JUMP (32.0 * 1048576.0) /* the least jump a step is (onset rules) */

static int scratch_reserve(struct diag_scratch *s, unsigned n)
{
	size_t pairs = (size_t)n * (n - 1) / 2 + 1;
	if (s->cap_pts < n) {
		double *t = realloc(s->t, n * sizeof *t);
		if (!t)
			return VRAMZ_ENOMEM;
		s->t = t;
		double *y = realloc(s->y, n * sizeof *y);
		if (!y)
			return VRAMZ_ENOMEM;
		s->y = y;
		s->cap_pts = n;
	}
	if (s->cap_tmp < pairs) {
		double *tmp = realloc(s->tmp, pairs * sizeof *tmp);
		if (!tmp)
			return VRAMZ_ENOMEM;
		s->tmp = tmp;
		s->cap_tmp = pairs;
	}
	return 0;
}

/* Median of the 3 values at y[i..i+2] (fewer at the ends). */
static double med3(const double *y, unsigned n, unsigned i)
{
	double a = y[i], b = i + 1 < n ? y[i + 1] : a, c = i + 2 < n ? y[i + 2] : b;
	if (a > b) {
		double t = a;
		a = b;
		b = t;
	}
	return c < a ? a : c > b ? b : c;
}

/* The window-to-window increments of y[0..n): their median and robust
 * spread (1.4826 MAD) - tmp holds n - 1. */
static void increments(const double *y, unsigned n, double *tmp, double *med, double *sigma)
{
	unsigned m = n - 1;
	for (unsigned i = 0; i < m; i++)
		tmp[i] = y[i + 1] - y[i];
	*med = stats_median(tmp, m);
	for (unsigned i = 0; i < m; i++)
		tmp[i] = fabs((y[i + 1] - y[i]) - *med);
	*sigma = 1.4826 * stats_median(tmp, m);
}

/* An increment larger than this is a jump: well above the pace and the
 * noise of the others, and at least floor. */
static double jump_threshold(const double *y, unsigned n, double *tmp, double floor)
{
	double med, sigma;
	increments(y, n, tmp, &med, &sigma);
	double thr = (med > 0 ? med : 0) + 6 * sigma;
	return thr > floor ? thr : floor;
}

/* How many increments of y[0..n) exceed thr (*jumps), and whether they
 * carry most (70 %) of its net rise. */
static int jumps_carry(const double *y, unsigned n, double thr, unsigned *jumps)
{
	double jump_sum = 0;
	*jumps = 0;
	for (unsigned i = 0; i + 1 < n; i++) {
		double d = y[i + 1] - y[i];
		if (d > thr) {
			(*jumps)++;
			jump_sum += d;
		}
	}
	double net = med3(y, n, n - 3) - med3(y, n, 0);
	return *jumps > 0 && net > 0 && jump_sum >= 0.7 * net;
}

/* Growth made of at most 3 jumps well above the window-to-window noise,
 * which carry most of the rise: how a caching allocator grows. */
static int few_steps(const double *y, unsigned n, double *tmp)
{
	if (n < 4)
		return 0;
	double med, sigma;
	increments(y, n, tmp, &med, &sigma);
	double thr = 6 * sigma;
	unsigned jumps;
	return jumps_carry(y, n, thr < 1048576.0 ? 1048576.0 : thr, &jumps) && jumps <= 3;
}

/* Growth carried by jumps in a minority of the windows, however many: a
 * staircase, which the staircase rule judges by its cadence, not a smooth
 * rise. */
static int stepwise(const double *y, unsigned n, double *tmp)
{
	if (n < 4)
		return 0;
	unsigned jumps;
	return jumps_carry(y, n, jump_threshold(y, n, tmp, STAIR_MIN_JUMP), &jumps) &&
	       jumps * 4 <= n - 1;
}

static const char why_young[] = "the rise began after its start: too young yet";

/* The rise of the points s->t, s->y [k, n) judged (steps 2-4 of the
 * header): out->is_leak, or out->why_not. */
static void judge_from(const struct ring *r, const vramz_diag_config *cfg, struct diag_scratch *s,
		       unsigned n, unsigned k, int64_t t0_ms, struct leak_result *out)
{
	out->is_leak = 0;
	double tau, p, var;
	stats_mann_kendall(s->y + k, n - k, &tau, &p, &var);
	if (p >= cfg->leak_p || tau < cfg->leak_min_tau) {
		out->why_not = "no significant rising trend";
		out->tr.tau = tau;
		out->tr.p_value = p;
		return;
	}
	const double *t = s->t + k, *y = s->y + k;
	unsigned m = n - k;
	struct trend tr = {.tau = tau, .p_value = p};
	stats_theil_sen(t, y, m, var, s->tmp, &tr.slope, &tr.ci_low, &tr.ci_high);
	out->tr = tr;
	out->start_ms = t0_ms + (int64_t)llround(t[0] * 1000.0);
	out->end_ms = r->w[r->n - 1].t_last_ms;

	double span_s = t[m - 1] - t[0];
	if (tr.slope * 60.0 < (double)cfg->leak_min_rate_bytes_per_min) {
		out->why_not = "rate below the minimum";
		return;
	}
	if (tr.slope * span_s < (double)cfg->leak_min_rise_bytes) {
		out->why_not = "rise below the minimum";
		return;
	}
	/* fell back from its peak: freed, not leaking (now) */
	double lo = y[0], hi = y[0];
	for (unsigned i = 1; i < m; i++) {
		if (y[i] < lo)
			lo = y[i];
		if (y[i] > hi)
			hi = y[i];
	}
	double recent = y[m - 1];
	for (unsigned i = m >= 3 ? m - 3 : 0; i < m; i++)
		if (y[i] > recent)
			recent = y[i];
	if (recent < hi - 0.25 * (hi - lo)) {
		out->why_not = "fell back from its peak";
		return;
	}
	/* a leak keeps making new highs: a level reached before the rise
	 * began is a cycle (a cache filled and cleared), not a leak */
	for (unsigned i = 0; i < k; i++)
		if (s->y[i] >= recent - 0.25 * (hi - lo)) {
			out->why_not = "the level was reached before: a cycle";
			return;
		}
	/* flattened out: the latest quarter barely rises; or not begun: the
	 * earliest quarter barely rises, the rise is younger than the span
	 * judged (a load past the warm-up, a leak just begun: the fast rule's
	 * to call, or this one's once it has lasted) */
	unsigned tail = m / 4 < 8 ? 8 : m / 4;
	if (tail < m) {
		double ts, tlo, thi, ttau, tp, tvar;
		stats_mann_kendall(y + m - tail, tail, &ttau, &tp, &tvar);
		stats_theil_sen(t + m - tail, y + m - tail, tail, tvar, s->tmp, &ts, &tlo, &thi);
		if (ts < 0.3 * tr.slope) {
			out->why_not = "plateau: the latest stretch is flat";
			return;
		}
		stats_mann_kendall(y, tail, &ttau, &tp, &tvar);
		stats_theil_sen(t, y, tail, tvar, s->tmp, &ts, &tlo, &thi);
		if (ts < 0.3 * tr.slope) {
			out->why_not = why_young;
			return;
		}
	}
	if (few_steps(y, m, s->tmp)) {
		out->why_not = "a few steps, as a caching allocator grows";
		return;
	}
	out->is_leak = 1;
	out->why_not = NULL;
}

int leak_analyze(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		 struct diag_scratch *s, struct leak_result *out)
{
	out->is_leak = 0;
	out->why_not = "too little data";
	out->tr = (struct trend){0, 1, 0, 0, 0};
	if (r->n < 3)
		return 0;
	int rc = scratch_reserve(s, r->n);
	if (rc)
		return rc;
	int64_t from_ms = life_start_ms + cfg->leak_warmup_ms;
	unsigned first = 0;
	while (first < r->n && r->w[first].t_first_ms < from_ms)
		first++;
	/* at most LEAK_MAX_POINTS points: neighbouring windows merge by max,
	 * which keeps the statistics O(256^2) however long the ring */
	unsigned avail = r->n - first;
	unsigned group = (avail + LEAK_MAX_POINTS - 1) / LEAK_MAX_POINTS;
	if (!group)
		group = 1;
	unsigned n = 0;
	int64_t t0_ms = first < r->n ? r->w[first].t_first_ms : 0;
	for (unsigned i = first; i < r->n; i += group) {
		unsigned e = i + group < r->n ? i + group : r->n;
		double mx = r->w[i].max_bytes;
		for (unsigned j = i + 1; j < e; j++)
			if (r->w[j].max_bytes > mx)
				mx = r->w[j].max_bytes;
		int64_t a = r->w[i].t_first_ms, b = r->w[e - 1].t_last_ms;
		s->t[n] = (double)(a + (b - a) / 2 - t0_ms) / 1000.0;
		s->y[n] = mx;
		n++;
	}
	out->last_bytes = r->w[r->n - 1].max_bytes;
	if (n < cfg->leak_min_windows || n < 3 ||
	    r->w[r->n - 1].t_last_ms - t0_ms < cfg->leak_min_span_ms)
		return 0;

	/* where does the rise start?  Row sums of the Mann-Kendall signs give
	 * S of every suffix in one O(n^2) pass; candidates are ranked without
	 * the tie correction (conservative), the chosen one gets it. */
	double *row = s->tmp;
	for (unsigned i = 0; i + 1 < n; i++) {
		long c = 0;
		double yi = s->y[i];
		for (unsigned j = i + 1; j < n; j++)
			c += (s->y[j] > yi) - (s->y[j] < yi);
		row[i] = (double)c;
	}
	row[n - 1] = 0;
	for (unsigned i = n - 1; i-- > 0;)
		row[i] += row[i + 1]; /* row[k] = S of the suffix from k */
	unsigned best_k = n;
	double best_tau = -2, cand_tau[8], cand_p[8];
	unsigned cand_k[8], nc = 0;
	for (unsigned c = 0; c < 8; c++) {
		unsigned k = (unsigned)((uint64_t)n * c / 8);
		unsigned len = n - k;
		if (len < cfg->leak_min_windows ||
		    (s->t[n - 1] - s->t[k]) * 1000.0 < (double)cfg->leak_min_span_ms)
			break;
		double dn = (double)len, sk = row[k];
		double var0 = dn * (dn - 1) * (2 * dn + 5) / 18.0;
		double z = sk > 0 ? (sk - 1) / sqrt(var0) : 0;
		cand_k[nc] = k;
		cand_tau[nc] = sk / (dn * (dn - 1) / 2);
		cand_p[nc] = stats_norm_sf(z);
		if (cand_p[nc] < cfg->leak_p && cand_tau[nc] > best_tau)
			best_tau = cand_tau[nc];
		nc++;
	}
	for (unsigned c = 0; c < nc && best_k == n; c++)
		if (cand_p[c] < cfg->leak_p && cand_tau[c] >= 0.9 * best_tau)
			best_k = cand_k[c];
	if (best_k == n || best_tau < cfg->leak_min_tau) {
		out->why_not = "no significant rising trend";
		out->tr.tau = nc ? cand_tau[0] : 0;
		out->tr.p_value = nc ? cand_p[0] : 1;
		return 0;
	}
	/* from the earliest good start; one whose head is flat (the rise began
	 * later) gives way to the next */
	for (unsigned c = 0; c < nc; c++) {
		if (cand_k[c] < best_k || cand_p[c] >= cfg->leak_p)
			continue;
		judge_from(r, cfg, s, n, cand_k[c], t0_ms, out);
		if (out->why_not != why_young)
			return 0;
	}
	return 0;
}

/* ---- leaks from their onset (issue 36) ----
 *
 * The rule above waits for the warm-up and a minute of data and asks for
 * a trend over the process's life: right for a leak of a few MiB a minute
 * over hours, late for the common one, which starts with the training loop
 * right after the model's load.  The onset rules judge the latest stretch
 * of a series (at most ONSET_MAX_POINTS windows) as a person reading the
 * curve would: a load is one or a few large jumps, not a leak; growth that
 * goes on after it is, from its onset, whenever that is.  Two shapes:
 *
 *  - smooth: a strong monotonic rise (Mann-Kendall tau >= ONSET_MIN_TAU at
 *    leak_p) from an onset, whose head rises too (else the onset is
 *    later), still rising in its latest third, not carried by a few jumps,
 *    to levels not reached before; judged once it has lasted
 *    max(min span, min rise / rate) - the allocator's own series (the
 *    PyTorch agent's allocated bytes, which have no caching steps) asks
 *    less than NVML's (leak_onset_*).  Near out of memory, past the fast
 *    warm-up, the rise needs only leak_fast_share of the time it leaves.
 *    Onsets tried: the stretch's start, where each run of jumps begins
 *    and ends (a load, a step) and ONSET_EVEN evenly spaced points (a
 *    rise out of noise has no jump to mark its start), earliest first.
 *  - staircase: what NVML sees of a caching allocator whose pieces stay
 *    alive: a new segment whenever the kept pieces have used up the free
 *    one (512 MiB every 26 s on the H100).  At least leak_stair_min_steps
 *    steps at a steady cadence (the longest interval at most
 *    STAIR_MAX_SPREAD times the shortest) over leak_stair_min_span_ms, the
 *    latest recent (within STAIR_RECENT of the longest interval: steps
 *    that stopped were an allocator's warm-up), none fallen back.
 */

#define ONSET_MAX_POINTS 256
#define ONSET_MIN_POINTS 10
#define ONSET_MIN_TAU 0.8
#define ONSET_EVEN 64      /* evenly spaced onsets: every 4 windows of 256 */
#define ONSET_MAX_CAND 96
#define ONSET_MAX_JUDGED 6
#define ONSET_HEAD 20
#define STAIR_MAX_STEPS 64
#define STAIR_MAX_SPREAD 3.0
#define STAIR_RECENT 1.5

static const char why_later[] = "the rise began later";

/* The series' latest ONSET_MAX_POINTS windows into s->t (s from the
 * first, whose time is *t0_ms) and s->y; their count, 0 when too few. */
static unsigned onset_tail(const struct ring *r, struct diag_scratch *s, int64_t *t0_ms, int *rc)
{
	unsigned first = r->n > ONSET_MAX_POINTS ? r->n - ONSET_MAX_POINTS : 0;
	unsigned n = r->n - first;
	if (n < ONSET_MIN_POINTS)
		return 0;
	if ((*rc = scratch_reserve(s, n)))
		return 0;
	*t0_ms = r->w[first].t_first_ms;
	for (unsigned i = 0; i < n; i++) {
		const struct win *w = &r->w[first + i];
		s->t[i] = (double)(w->t_first_ms + (w->t_last_ms - w->t_first_ms) / 2 - *t0_ms) / 1000.0;
		s->y[i] = w->max_bytes;
	}
	return n;
}

/* Theil-Sen slope of the m points t, y (tmp: scratch). */
static double slope_of(const double *t, const double *y, unsigned m, double *tmp)
{
	double tau, p, var, sl, lo, hi;
	stats_mann_kendall(y, m, &tau, &p, &var);
	stats_theil_sen(t, y, m, var, tmp, &sl, &lo, &hi);
	return sl;
}

/* Not a leak (yet) if the rise from k of the n points is not one: the
 * reason, or NULL with out's trend filled.  need_*: what the series asks
 * before it is judged (leak_onset_*). */
static const char *smooth_judge(const struct ring *r, const vramz_diag_config *cfg,
				struct diag_scratch *s, unsigned n, unsigned k, int64_t t0_ms,
				const struct onset_need *need, struct leak_result *out)
{
	const double *t = s->t + k, *y = s->y + k;
	unsigned m = n - k;
	/* begun at k, cheaply first (most onsets tried fail here): it starts
	 * at its lowest and its head rises, or the onset is later */
	double lo = y[0], hi = y[0];
	for (unsigned i = 1; i < m; i++) {
		hi = y[i] > hi ? y[i] : hi;
		lo = y[i] < lo ? y[i] : lo;
	}
	if (y[0] > lo + 0.25 * (hi - lo))
		return why_later;
	double crude = (med3(y, m, m - 3) - y[0]) / (t[m - 1] - t[0]);
	/* a head of at most ONSET_HEAD windows: in a long stretch a quarter
	 * would take in a still part before the rise and date it too early */
	unsigned q = m / 4 < 5 ? 5 : m / 4 > ONSET_HEAD ? ONSET_HEAD : m / 4;
	if (crude <= 0 || slope_of(t, y, q, s->tmp) < 0.3 * crude)
		return why_later;
	double tau, p, var;
	stats_mann_kendall(y, m, &tau, &p, &var);
	out->tr = (struct trend){.tau = tau, .p_value = p};
	if (p >= cfg->leak_p || tau < ONSET_MIN_TAU)
		return "no significant rising trend";
	struct trend tr = {.tau = tau, .p_value = p};
	stats_theil_sen(t, y, m, var, s->tmp, &tr.slope, &tr.ci_low, &tr.ci_high);
	out->tr = tr;
	out->start_ms = t0_ms + (int64_t)llround(t[0] * 1000.0);
	out->end_ms = r->w[r->n - 1].t_last_ms;
	double span_s = (double)(out->end_ms - out->start_ms) / 1000.0;
	if (tr.slope <= 0 || tr.slope * 60.0 < (double)cfg->leak_min_rate_bytes_per_min)
		return "rate below the minimum";
	if (tr.slope * span_s < (double)cfg->leak_min_rise_bytes)
		return "rise below the minimum";
	/* still rising: its latest third keeps half the pace */
	q = m / 3 < 5 ? 5 : m / 3;
	if (slope_of(t + m - q, y + m - q, q, s->tmp) < 0.5 * tr.slope)
		return "stopped rising";
	if (few_steps(y, m, s->tmp))
		return "a few steps, as a caching allocator grows";
	if (stepwise(y, m, s->tmp))
		return "in steps: the staircase rule's";
	/* at its highest now, which no level before reached (a cycle) */
	if (med3(y, m, m - 3) < hi - 0.25 * (hi - lo))
		return "fell back from its peak";
	for (unsigned i = 0; i < k; i++)
		if (s->y[i] >= hi - 0.25 * (hi - lo))
			return "the level was reached before: a cycle";
	/* long enough for its rate; near out of memory, for the time left */
	double need_s = (double)need->min_span_ms / 1000.0;
	if (need->min_rise / tr.slope > need_s)
		need_s = need->min_rise / tr.slope;
	if (need->free_bytes >= 0 && cfg->leak_fast_tto_ms > 0 &&
	    out->start_ms >= need->life_start_ms + cfg->leak_fast_warmup_ms) {
		double tto_s = need->free_bytes / tr.slope;
		double near_s = cfg->leak_fast_share * tto_s;
		if (near_s * 1000.0 < (double)cfg->leak_fast_min_span_ms)
			near_s = (double)cfg->leak_fast_min_span_ms / 1000.0;
		if (tto_s * 1000.0 <= (double)cfg->leak_fast_tto_ms && near_s < need_s)
			need_s = near_s;
	}
	if (span_s < need_s)
		return "rise too short yet";
	return NULL;
}

/* Onsets to try for the n points, earliest first, into k[]: evenly
 * spaced points, and where each run of jumps (a load, a step, the start
 * of a rise over a still stretch) begins and ends, latest first; their
 * count. */
static unsigned onset_candidates(struct diag_scratch *s, unsigned n, unsigned *k)
{
	unsigned nc = 0;
	double thr = jump_threshold(s->y, n, s->tmp, STAIR_MIN_JUMP);
	for (unsigned c = 0; c < ONSET_EVEN; c++)
		k[nc++] = (unsigned)((uint64_t)n * c / ONSET_EVEN);
	int was = 0; /* the increment after i was a jump */
	for (unsigned i = n - 1; i-- > 0 && nc < ONSET_MAX_CAND;) {
		int jump = s->y[i + 1] - s->y[i] > thr;
		if (jump && !was)
			k[nc++] = i + 1; /* a run ends: after it */
		else if (!jump && was)
			k[nc++] = i + 1; /* a run begins at i + 1 */
		was = jump;
	}
	if (was && nc < ONSET_MAX_CAND)
		k[nc++] = 0;
	/* sorted, unique, long enough */
	for (unsigned i = 1; i < nc; i++)
		for (unsigned j = i; j > 0 && k[j - 1] > k[j]; j--) {
			unsigned x = k[j];
			k[j] = k[j - 1];
			k[j - 1] = x;
		}
	unsigned u = 0;
	for (unsigned i = 0; i < nc; i++)
		if ((!u || k[i] != k[u - 1]) && k[i] + ONSET_MIN_POINTS <= n)
			k[u++] = k[i];
	return u;
}

/* The smooth shape: the earliest onset whose rise is a leak. */
static void smooth_onset(const struct ring *r, const vramz_diag_config *cfg,
			 struct diag_scratch *s, unsigned n, int64_t t0_ms,
			 const struct onset_need *need, struct leak_result *out)
{
	unsigned k[ONSET_MAX_CAND];
	double sk[ONSET_MAX_CAND];
	unsigned nc = onset_candidates(s, n, k);
	/* S of every suffix in one O(n^2) pass, kept for the candidates */
	double *row = s->tmp;
	for (unsigned i = 0; i + 1 < n; i++) {
		long c = 0;
		for (unsigned j = i + 1; j < n; j++)
			c += (s->y[j] > s->y[i]) - (s->y[j] < s->y[i]);
		row[i] = (double)c;
	}
	row[n - 1] = 0;
	for (unsigned i = n - 1; i-- > 0;)
		row[i] += row[i + 1];
	for (unsigned c = 0; c < nc; c++)
		sk[c] = row[k[c]];
	out->why_not = "no strong rise";
	unsigned judged = 0;
	const char *first_why = NULL;
	for (unsigned c = 0; c < nc && judged < ONSET_MAX_JUDGED; c++) {
		double dm = (double)(n - k[c]);
		if (sk[c] / (dm * (dm - 1) / 2) < ONSET_MIN_TAU)
			continue;
		struct leak_result o = *out;
		const char *why = smooth_judge(r, cfg, s, n, k[c], t0_ms, need, &o);
		judged += why != why_later; /* those fail before the statistics */
		if (!why) {
			*out = o;
			out->why_not = NULL;
			out->is_leak = 1;
			out->shape = LEAK_SMOOTH;
			return;
		}
		/* the first real reason, not "began later", is the one told */
		if (!first_why || first_why == why_later) {
			first_why = why;
			*out = o;
		}
	}
	if (first_why)
		out->why_not = first_why;
}

/* The staircase shape on the n points (NULL: a leak, out filled). */
static const char *stair_judge(const struct ring *r, const vramz_diag_config *cfg,
			       struct diag_scratch *s, unsigned n, int64_t t0_ms,
			       const struct onset_need *need, struct leak_result *out)
{
	const double *t = s->t, *y = s->y;
	double thr = jump_threshold(y, n, s->tmp, STAIR_MIN_JUMP);
	/* steps, latest first: the window before each (sb) and the one at
	 * its top (st), until a fall as large as a step ends the staircase */
	unsigned st[STAIR_MAX_STEPS], sb[STAIR_MAX_STEPS], ns = 0;
	for (unsigned i = n - 1; i-- > 0 && ns < STAIR_MAX_STEPS;) {
		double dy = y[i + 1] - y[i];
		if (dy > thr) {
			if (ns && sb[ns - 1] == i + 1) {
				sb[ns - 1] = i; /* one step over two windows */
			} else {
				st[ns] = i + 1;
				sb[ns++] = i;
			}
		} else if (-dy > thr) {
			break;
		}
	}
	if (ns < cfg->leak_stair_min_steps || ns < 3)
		return "too few steps for a staircase";
	for (unsigned i = 0; i < ns / 2; i++) {
		unsigned x = st[i], z = sb[i];
		st[i] = st[ns - 1 - i];
		sb[i] = sb[ns - 1 - i];
		st[ns - 1 - i] = x;
		sb[ns - 1 - i] = z;
	}
	double ivs[STAIR_MAX_STEPS], hs[STAIR_MAX_STEPS];
	double iv_min = 1e300, iv_max = 0;
	for (unsigned j = 0; j + 1 < ns; j++) {
		ivs[j] = t[st[j + 1]] - t[st[j]];
		iv_min = ivs[j] < iv_min ? ivs[j] : iv_min;
		iv_max = ivs[j] > iv_max ? ivs[j] : iv_max;
	}
	if (iv_max > STAIR_MAX_SPREAD * iv_min)
		return "steps at an uneven cadence";
	unsigned b = sb[0]; /* the level before the first step */
	out->start_ms = t0_ms + (int64_t)llround(t[st[0]] * 1000.0);
	out->end_ms = r->w[r->n - 1].t_last_ms;
	double span_s = (double)(out->end_ms - out->start_ms) / 1000.0;
	double rate = (y[st[ns - 1]] - y[st[0]]) / (t[st[ns - 1]] - t[st[0]]);
	double tau, p, var;
	stats_mann_kendall(y + b, n - b, &tau, &p, &var);
	/* Sen's interval has no meaning here: the slowest and fastest steps */
	out->tr = (struct trend){.tau = tau, .p_value = p, .slope = rate,
				 .ci_low = rate, .ci_high = rate};
	for (unsigned j = 0; j + 1 < ns; j++) {
		hs[j] = y[st[j + 1]] - y[sb[j + 1]];
		double sr = hs[j] / ivs[j];
		out->tr.ci_low = sr < out->tr.ci_low ? sr : out->tr.ci_low;
		out->tr.ci_high = sr > out->tr.ci_high ? sr : out->tr.ci_high;
	}
	if (p >= cfg->leak_p)
		return "no significant rising trend";
	if (rate * 60.0 < (double)cfg->leak_min_rate_bytes_per_min)
		return "rate below the minimum";
	double rise = y[n - 1] - y[b];
	if (rise < (double)cfg->leak_min_rise_bytes || rise < need->min_rise)
		return "rise below the minimum";
	if (t[n - 1] - t[st[ns - 1]] > STAIR_RECENT * iv_max)
		return "the steps stopped";
	if (span_s * 1000.0 < (double)cfg->leak_stair_min_span_ms)
		return "staircase too short yet";
	for (unsigned i = 0; i < b; i++)
		if (y[i] >= y[n - 1] - 0.25 * rise)
			return "the level was reached before: a cycle";
	out->steps = ns;
	out->step_interval_s = stats_median(ivs, ns - 1);
	out->step_bytes = stats_median(hs, ns - 1);
	return NULL;
}

int leak_onset(const struct ring *r, const struct onset_need *need, const vramz_diag_config *cfg,
	       struct diag_scratch *s, struct leak_result *out)
{
	memset(out, 0, sizeof *out);
	out->why_not = "too little data";
	out->tr = (struct trend){0, 1, 0, 0, 0};
	if (r->n < ONSET_MIN_POINTS)
		return 0;
	out->last_bytes = r->w[r->n - 1].max_bytes;
	int rc = 0;
	int64_t t0_ms = 0;
	unsigned n = onset_tail(r, s, &t0_ms, &rc);
	if (rc || !n)
		return rc;
	/* cheap gate, before any statistics: the stretch must rise enough
	 * above its lowest point */
	double lo = s->y[0];
	for (unsigned i = 1; i < n; i++)
		lo = s->y[i] < lo ? s->y[i] : lo;
	if (s->y[n - 1] - lo < (double)cfg->leak_min_rise_bytes) {
		out->why_not = "rise below the minimum";
		return 0;
	}
	smooth_onset(r, cfg, s, n, t0_ms, need, out);
	if (out->is_leak)
		return 0;
	struct leak_result st = *out;
	if (!(st.why_not = stair_judge(r, cfg, s, n, t0_ms, need, &st))) {
		*out = st;
		out->is_leak = 1;
		out->shape = LEAK_STAIRS;
	}
	return 0;
}
/* The statistics are O(windows^2): rerun them only when the series gained
 * about 2 % more windows since the last run (at least one). */
int leak_cached(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		struct diag_scratch *s, struct leak_cache *c, struct leak_result *out)
{
	if (!c->ver || r->ver >= c->ver + 1 + r->n / 48) {
		int rc = leak_analyze(r, life_start_ms, cfg, s, &c->r);
		if (rc)
			return rc;
		c->ver = r->ver;
	}
	*out = c->r;
	return 0;
}

/* The onset rules rerun whenever a window opened: they look at a bounded
 * tail and give up at once on a series that has not risen. */
int leak_onset_cached(const struct ring *r, const struct onset_need *need,
		      const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_cache *c,
		      struct leak_result *out)
{
	if (!c->onset_ver || r->ver != c->onset_ver) {
		int rc = leak_onset(r, need, cfg, s, &c->onset);
		if (rc)
			return rc;
		c->onset_ver = r->ver;
	}
	*out = c->onset;
	return 0;
}
