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

/* Growth made of at most 3 jumps well above the window-to-window noise,
 * which carry most of the rise: how a caching allocator grows. */
static int few_steps(const double *y, unsigned n, double *tmp)
{
	if (n < 4)
		return 0;
	unsigned m = n - 1;
	for (unsigned i = 0; i < m; i++)
		tmp[i] = y[i + 1] - y[i];
	double med = stats_median(tmp, m);
	for (unsigned i = 0; i < m; i++)
		tmp[i] = fabs((y[i + 1] - y[i]) - med);
	double sigma = 1.4826 * stats_median(tmp, m);
	double thr = 6 * sigma;
	if (thr < 1048576.0)
		thr = 1048576.0;
	double jump_sum = 0;
	unsigned jumps = 0;
	for (unsigned i = 0; i < m; i++) {
		double d = y[i + 1] - y[i];
		if (d > thr) {
			jumps++;
			jump_sum += d;
		}
	}
	double net = med3(y, n, n - 3) - med3(y, n, 0);
	return jumps > 0 && jumps <= 3 && net > 0 && jump_sum >= 0.7 * net;
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

/* ---- fast leaks ----
 *
 * The rule above waits for the warm-up and a minute of data: right for a
 * leak that takes hours, too late for one that fills the GPU in a minute
 * or two, or that eats gigabytes a minute.  The fast rule judges, on a
 * bounded tail of the series, two kinds of rise sooner:
 *
 *  - near out of memory (a projected time to OOM under leak_fast_tto): the
 *    evidence asked is in proportion to the urgency - the rise must have
 *    lasted leak_fast_share of the time to OOM it projects, so a GPU that
 *    fills in 80 s is called at about 20 s into the rise, while a model
 *    that loads 25 GiB in 25 s and stops has stopped before it has lasted
 *    long enough;
 *  - steep (leak_steep_rate a minute or more, issue 27): a rise of
 *    leak_steep_min_span that began once the process was past its warm-up
 *    and had held still for a while (STEEP_STILL_MS): a job that ran
 *    steadily and then started to leak.  Growth from the start of a
 *    process (loading, the allocator learning its working set) is the
 *    slow rule's, after its warm-up; a rise to a level the series had
 *    reached before is a cycle, not a leak.
 *
 * Both ask the rise to be significant and strong (Mann-Kendall at leak_p,
 * tau >= 0.8, on at least 10 windows), still rising in its latest windows,
 * and not a few allocator steps. */

#define FAST_MAX_POINTS 128
#define FAST_MIN_POINTS 10
#define FAST_MIN_TAU 0.8
#define STEEP_STILL_MS 10000  /* held still this long, past warm-up, before */

/* The series' tail from from_ms (at most FAST_MAX_POINTS windows) into
 * s->t (s from the first) and s->y; its length, 0 when too short. */
static unsigned fast_tail(const struct ring *r, int64_t from_ms, struct diag_scratch *s,
			  int64_t *t0_ms, int *rc)
{
	unsigned first = r->n > FAST_MAX_POINTS ? r->n - FAST_MAX_POINTS : 0;
	while (first < r->n && r->w[first].t_first_ms < from_ms)
		first++;
	unsigned n = r->n - first;
	if (n < FAST_MIN_POINTS)
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

/* Where the strong rise of s->y[0..n) starts: the earliest suffix whose
 * tau is at least FAST_MIN_TAU and within 5 % of the best (more flat
 * windows before the rise would dilute the rate); n when none. */
static unsigned rise_start(struct diag_scratch *s, unsigned n)
{
	double *row = s->tmp; /* S of every suffix in one pass */
	for (unsigned i = 0; i + 1 < n; i++) {
		long c = 0;
		for (unsigned j = i + 1; j < n; j++)
			c += (s->y[j] > s->y[i]) - (s->y[j] < s->y[i]);
		row[i] = (double)c;
	}
	row[n - 1] = 0;
	for (unsigned i = n - 1; i-- > 0;)
		row[i] += row[i + 1];
	double best = -1;
	for (unsigned k = 0; k + FAST_MIN_POINTS <= n; k++) {
		double dn = (double)(n - k), tk = row[k] / (dn * (dn - 1) / 2);
		if (tk > best)
			best = tk;
	}
	for (unsigned k = 0; k + FAST_MIN_POINTS <= n; k++) {
		double dn = (double)(n - k), tk = row[k] / (dn * (dn - 1) / 2);
		if (tk >= FAST_MIN_TAU && tk >= 0.95 * best)
			return k;
	}
	return n;
}

/* The rise from k of the tail (n points, t0_ms) fitted into out; the
 * reason it is no leak, or NULL. */
static const char *fast_fit(const struct ring *r, const vramz_diag_config *cfg,
			    struct diag_scratch *s, unsigned n, unsigned k, int64_t t0_ms,
			    struct leak_result *out)
{
	const double *t = s->t + k, *y = s->y + k;
	unsigned m = n - k;
	double tau, p, var;
	stats_mann_kendall(y, m, &tau, &p, &var);
	out->tr.tau = tau;
	out->tr.p_value = p;
	if (p >= cfg->leak_p || tau < FAST_MIN_TAU)
		return "no significant rising trend";
	/* Theil-Sen reorders tmp, which rise_start's rows lived in (done with) */
	struct trend tr = {.tau = tau, .p_value = p};
	stats_theil_sen(t, y, m, var, s->tmp, &tr.slope, &tr.ci_low, &tr.ci_high);
	out->tr = tr;
	out->start_ms = t0_ms + (int64_t)llround(t[0] * 1000.0);
	out->end_ms = r->w[r->n - 1].t_last_ms;
	out->last_bytes = r->w[r->n - 1].max_bytes;
	double span_s = (double)(out->end_ms - out->start_ms) / 1000.0;
	if (tr.slope <= 0 || tr.slope * 60.0 < (double)cfg->leak_min_rate_bytes_per_min)
		return "rate below the minimum";
	if (tr.slope * span_s < (double)cfg->leak_min_rise_bytes)
		return "rise below the minimum";
	if (few_steps(y, m, s->tmp))
		return "a few steps, as a caching allocator grows";
	return NULL;
}

/* Still rising: near out of memory, the latest 3 windows carry at least
 * half the pace (an urgent rise moves a lot a window); steep, the latest
 * third of the rise does, by its Theil-Sen slope (a window-to-window
 * sawtooth would make 3 windows flicker). */
static int still_rising(struct diag_scratch *s, unsigned n, unsigned k, double slope, int steep)
{
	const double *t = s->t + k, *y = s->y + k;
	unsigned m = n - k;
	if (!steep)
		return y[m - 1] - y[m - 4] >= 0.5 * slope * (t[m - 1] - t[m - 4]);
	unsigned tail = m / 3 < 8 ? 8 : m / 3;
	if (tail > m)
		tail = m;
	double ts, lo, hi, tau, p, var;
	stats_mann_kendall(y + m - tail, tail, &tau, &p, &var);
	stats_theil_sen(t + m - tail, y + m - tail, tail, var, s->tmp, &ts, &lo, &hi);
	return ts >= 0.5 * slope;
}

/* The steep path: a rise of leak_steep_rate a minute or more, begun past
 * the warm-up after STEEP_STILL_MS of stillness, to levels never reached
 * before, lasting leak_steep_min_span. */
static const char *steep_judge(const vramz_diag_config *cfg, const struct diag_scratch *s,
			       unsigned n, unsigned k, int64_t life_start_ms,
			       const struct leak_result *out)
{
	if (!cfg->leak_steep_rate_bytes_per_min ||
	    out->tr.slope * 60.0 < (double)cfg->leak_steep_rate_bytes_per_min)
		return "not near out of memory, nor steep";
	if ((s->t[k] - s->t[0]) * 1000.0 < STEEP_STILL_MS ||
	    out->start_ms < life_start_ms + cfg->leak_warmup_ms + STEEP_STILL_MS)
		return "steep, but rising since its warm-up: the slow rule's";
	if ((double)(out->end_ms - out->start_ms) < (double)cfg->leak_steep_min_span_ms)
		return "steep rise too short yet";
	double lo = s->y[k], hi = s->y[n - 1];
	for (unsigned i = 0; i < k; i++)
		if (s->y[i] >= hi - 0.25 * (hi - lo))
			return "the level was reached before: a cycle";
	return NULL;
}

int leak_fast(const struct ring *r, int64_t life_start_ms, double free_bytes,
	      const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_result *out)
{
	out->is_leak = 0;
	out->why_not = "too little data";
	out->tr = (struct trend){0, 1, 0, 0, 0};
	int near_on = cfg->leak_fast_tto_ms > 0 && free_bytes >= 0;
	if (!near_on && !cfg->leak_steep_rate_bytes_per_min) {
		out->why_not = "fast rule off, or free memory unknown";
		return 0;
	}
	if (r->n < FAST_MIN_POINTS)
		return 0;
	int rc = 0;
	int64_t t0_ms = 0;
	unsigned n = fast_tail(r, life_start_ms + cfg->leak_fast_warmup_ms, s, &t0_ms, &rc);
	if (rc || !n)
		return rc;
	/* cheap gate, before any statistics: the crude rate over the stretch
	 * must project an OOM within twice the fast horizon, or be steep */
	double crude_s = s->t[n - 1] - s->t[0];
	double crude = crude_s > 0 ? (s->y[n - 1] - s->y[0]) / crude_s : 0;
	int near_gate = near_on && crude > 0 &&
			free_bytes / crude * 1000.0 <= 2.0 * (double)cfg->leak_fast_tto_ms;
	/* ... or, over its latest leak_steep_min_span, steep */
	unsigned j = n - 1;
	while (j > 0 && (s->t[n - 1] - s->t[j - 1]) * 1000.0 <= (double)cfg->leak_steep_min_span_ms)
		j--;
	double recent_s = s->t[n - 1] - s->t[j];
	double recent = recent_s > 0 ? (s->y[n - 1] - s->y[j]) / recent_s : 0;
	int steep_gate = cfg->leak_steep_rate_bytes_per_min &&
			 recent * 60.0 >= 0.5 * (double)cfg->leak_steep_rate_bytes_per_min;
	if (!near_gate && !steep_gate) {
		out->why_not = "not near out of memory";
		return 0;
	}
	unsigned k = rise_start(s, n);
	if (k + FAST_MIN_POINTS > n) {
		out->why_not = "no strong rise";
		return 0;
	}
	out->why_not = fast_fit(r, cfg, s, n, k, t0_ms, out);
	if (out->why_not)
		return 0;
	double span_s = (double)(out->end_ms - out->start_ms) / 1000.0;
	double tto_s = free_bytes >= 0 ? free_bytes / out->tr.slope : -1;
	/* near out of memory first; a rise that is not yet, or not near, may
	 * still be steep */
	int near = near_on && tto_s * 1000.0 <= (double)cfg->leak_fast_tto_ms;
	if (near && (span_s * 1000.0 < (double)cfg->leak_fast_min_span_ms ||
		     span_s < cfg->leak_fast_share * tto_s))
		near = 0;
	if (near)
		out->why_not = still_rising(s, n, k, out->tr.slope, 0) ? NULL : "stopped rising";
	else if (!(out->why_not = steep_judge(cfg, s, n, k, life_start_ms, out)) &&
		 !still_rising(s, n, k, out->tr.slope, 1))
		out->why_not = "stopped rising";
	if (out->why_not && near_on && tto_s * 1000.0 <= (double)cfg->leak_fast_tto_ms &&
	    !strcmp(out->why_not, "not near out of memory, nor steep"))
		out->why_not = "rise too short yet for the time to OOM it projects";
	out->is_leak = out->why_not == NULL;
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

/* The fast rule reruns whenever a window opened: it looks at a bounded
 * tail and gives up at once on a series not near out of memory. */
int leak_fast_cached(const struct ring *r, int64_t life_start_ms, double free_bytes,
		     const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_cache *c,
		     struct leak_result *out)
{
	if (!c->fast_ver || r->ver != c->fast_ver) {
		int rc = leak_fast(r, life_start_ms, free_bytes, cfg, s, &c->fast);
		if (rc)
			return rc;
		c->fast_ver = r->ver;
	}
	*out = c->fast;
	return 0;
}
