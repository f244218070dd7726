/* SPDX-License-Identifier: Apache-2.0 */
/* reduce.c - `vramz report`'s data reduction: a log of any length becomes
 * REP_COLS pixel columns per GPU in one pass, in memory that follows the
 * number of GPUs and processes, never the number of ticks (a day at 10 Hz
 * over 8 GPUs is 7 million rows).
 *
 * Each column keeps what a plot needs to stay honest at that width: the
 * minimum and maximum of memory (a spike shorter than a column still
 * shows), the process breakdown at the column's highest tick (so the stack
 * is a real moment, not an average that never happened), the range of
 * utilization and the peaks of temperature and power.  An interval
 * between ticks much longer than the logging interval is a gap (the logger
 * stopped): it is recorded and the plots break there instead of drawing a
 * line across the night.  Per process it keeps first / peak / last memory,
 * SM share and lifetime for the process table.
 */
#include "report/report.h"
#include "format/fmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "grow.h"

#define GAP_MIN_MS 5000  /* never call an interval shorter than this a gap */
#define GAP_FACTOR 10    /* ... nor one under 10 logging intervals */

int rep_init(struct rep *r, int64_t t0_ms, int64_t t1_ms, const char *gpu_spec)
{
	memset(r, 0, sizeof *r);
	r->t0_ms = t0_ms;
	r->t1_ms = t1_ms > t0_ms ? t1_ms : t0_ms + 1;
	r->gpu_spec = gpu_spec;
	r->gap_ms = INT64_MAX;
	htab_pkey_init(&r->index);
	return 0;
}

double rep_x_of(const struct rep *r, int64_t t_ms)
{
	return (double)(t_ms - r->t0_ms) * REP_COLS / (double)(r->t1_ms - r->t0_ms);
}

int rep_col_of(const struct rep *r, int64_t t_ms)
{
	double x = rep_x_of(r, t_ms);
	if (x < 0)
		return 0;
	if (x >= REP_COLS)
		return REP_COLS - 1;
	return (int)x;
}

int64_t rep_t_of_col(const struct rep *r, unsigned col)
{
	return r->t0_ms + (int64_t)((double)(r->t1_ms - r->t0_ms) * col / REP_COLS);
}

const char *rep_span_note(const struct rep *r, char *buf, size_t len)
{
	int64_t span = r->t1_ms - r->t0_ms;
	*buf = 0;
	if (span > REP_ODD_SPAN_MS)
		snprintf(buf, len,
			 "the log's ticks span %lld days, more than a year: its clock probably "
			 "jumped; --since and --until plot a stretch of it",
			 (long long)(span / 86400000));
	return buf;
}

/* ---- -g: which GPUs ---- */

static int item_matches(const char *it, size_t n, unsigned idx, const vramz_gpu_info *gi)
{
	char b[128];
	if (!n || n >= sizeof b)
		return 0;
	memcpy(b, it, n);
	b[n] = 0;
	if (isdigit((unsigned char)b[0]) && strspn(b, "0123456789-") == n) {
		char *end;
		unsigned long lo = strtoul(b, &end, 10), hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (!*end)
			return idx >= lo && idx <= hi;
	}
	if (!gi)
		return 0;
	if (!strncasecmp(gi->uuid, b, n))
		return 1;
	size_t bl = strlen(gi->pci_bus_id);
	return n >= 7 && bl >= n && !strcasecmp(gi->pci_bus_id + bl - n, b);
}

static int wanted(struct rep *r, unsigned idx, const vramz_gpu_info *gi)
{
	if (!r->gpu_spec || !strcmp(r->gpu_spec, "all"))
		return 1;
	for (const char *s = r->gpu_spec; *s;) {
		size_t n = strcspn(s, ",");
		if (item_matches(s, n, idx, gi))
			return 1;
		s += n + (s[n] == ',');
	}
	return 0;
}

static struct rep_gpu *gpu_for(struct rep *r, unsigned idx, const vramz_gpu_info *gi)
{
	if (idx >= r->wantcap) {
		unsigned ncap = idx + 16;
		unsigned char *nw = realloc(r->want, ncap);
		struct rep_gpu **ng = realloc(r->gpus, ncap * sizeof *ng);
		if (nw)
			r->want = nw;
		if (ng)
			r->gpus = ng;
		if (!nw || !ng)
			return NULL;
		memset(r->want + r->wantcap, 0, ncap - r->wantcap);
		memset(r->gpus + r->wantcap, 0, (ncap - r->wantcap) * sizeof *ng);
		r->wantcap = ncap;
	}
	if (!r->want[idx])
		r->want[idx] = wanted(r, idx, gi) ? 1 : 2;
	if (r->want[idx] != 1)
		return NULL;
	if (!r->gpus[idx]) {
		struct rep_gpu *g = calloc(1, sizeof *g);
		if (!g || !(g->cols = calloc(REP_COLS, sizeof *g->cols))) {
			free(g);
			return NULL;
		}
		g->index = idx;
		r->gpus[idx] = g;
		if (idx >= r->ngpus)
			r->ngpus = idx + 1;
	}
	struct rep_gpu *g = r->gpus[idx];
	if (gi && !g->have_info) {
		g->info = *gi;
		g->have_info = 1;
	}
	return g;
}

/* ---- processes ---- */

static struct rep_proc *proc_for(struct rep *r, const vramz_proc_sample *ps, int64_t t)
{
	uint64_t start = ps->valid & VRAMZ_P_VISIBLE ? ps->start_time_ticks : 0;
	unsigned idx1 = htab_pkey_get(&r->index, ps->gpu_index, ps->pid, start);
	if (idx1)
		return &r->procs[idx1 - 1];
	if (r->nprocs == r->pcap) {
		struct rep_proc *np = grow_array(r->procs, &r->pcap, 64, sizeof *np);
		if (!np)
			return NULL;
		r->procs = np;
	}
	struct rep_proc *p = &r->procs[r->nprocs];
	memset(p, 0, sizeof *p);
	p->cand = -1;
	p->gpu = ps->gpu_index;
	p->pid = ps->pid;
	p->start_ticks = start;
	p->first_ms = t;
	p->band = -1;
	if (htab_pkey_put(&r->index, p->gpu, p->pid, start, r->nprocs))
		return NULL;
	return &r->procs[r->nprocs++];
}

/* After p's peak grew: p takes a candidate slot of its GPU when one is
 * free or its peak passes the lowest candidate's (who loses the slot and
 * its columns).  The slots thus always hold the highest peaks so far;
 * one taken late starts with no columns (those bytes are drawn in
 * "other" until then).  0, or VRAMZ_ENOMEM. */
static int proc_candidate(struct rep *r, struct rep_gpu *g, struct rep_proc *p)
{
	if (p->cand >= 0 || !p->peak_bytes)
		return 0;
	if (!g->cand_val) {
		g->cand_val = calloc(REP_CANDS, sizeof *g->cand_val);
		g->cand_stamp = calloc(REP_CANDS, sizeof *g->cand_stamp);
		if (!g->cand_val || !g->cand_stamp)
			return VRAMZ_ENOMEM;
	}
	unsigned k = g->ncand;
	if (k == REP_CANDS) {
		k = 0;
		for (unsigned i = 1; i < REP_CANDS; i++)
			if (r->procs[g->cand_proc[i]].peak_bytes < r->procs[g->cand_proc[k]].peak_bytes)
				k = i;
		if (r->procs[g->cand_proc[k]].peak_bytes >= p->peak_bytes)
			return 0;
		r->procs[g->cand_proc[k]].cand = -1;
	} else {
		g->ncand++;
	}
	memset(g->cand_val[k], 0, sizeof g->cand_val[k]);
	memset(g->cand_stamp[k], 0, sizeof g->cand_stamp[k]);
	g->cand_proc[k] = (unsigned)(p - r->procs);
	p->cand = (int)k;
	return 0;
}

static void proc_note(struct rep_proc *p, const vramz_proc_sample *ps, int64_t t)
{
	if (ps->valid & VRAMZ_P_VISIBLE) {
		if (!p->cmd[0] && ps->cmdline[0])
			snprintf(p->cmd, sizeof p->cmd, "%s", ps->cmdline);
		if (!p->comm[0] && ps->comm[0])
			snprintf(p->comm, sizeof p->comm, "%s", ps->comm);
		if (!p->user[0] && ps->user[0])
			snprintf(p->user, sizeof p->user, "%s", ps->user);
		if (!p->job[0])
			fmt_job_width(p->job, sizeof p->job, ps, 0);
	}
	if (ps->valid & VRAMZ_P_USED) {
		if (!p->have_bytes)
			p->first_bytes = ps->used_bytes;
		p->have_bytes = 1;
		if (ps->used_bytes > p->peak_bytes)
			p->peak_bytes = ps->used_bytes;
		p->last_bytes = ps->used_bytes;
	}
	if (ps->valid & VRAMZ_P_SM) {
		p->sm_sum += ps->sm_pct;
		p->sm_n++;
	}
	p->last_ms = t;
}

/* ---- ticks ---- */

static int cmp_time_ms(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first intervals set what "much longer than usual" means. */
static void note_interval(struct rep *r, int64_t dt)
{
	if (dt <= 0 || r->ndeltas >= sizeof r->deltas / sizeof r->deltas[0])
		return;
	r->deltas[r->ndeltas++] = dt;
	int64_t s[sizeof r->deltas / sizeof r->deltas[0]];
	memcpy(s, r->deltas, r->ndeltas * sizeof *s);
	qsort(s, r->ndeltas, sizeof *s, cmp_time_ms);
	int64_t g = s[r->ndeltas / 2] * GAP_FACTOR;
	r->gap_ms = g > GAP_MIN_MS ? g : GAP_MIN_MS;
}

static unsigned thr_class(uint64_t reasons)
{
	unsigned c = 0;
	if (reasons & (VRAMZ_THR_SW_THERMAL | VRAMZ_THR_HW_THERMAL))
		c |= REP_THR_THERMAL;
	if (reasons & (VRAMZ_THR_SW_POWER_CAP | VRAMZ_THR_HW_POWER_BRAKE | VRAMZ_THR_HW_SLOWDOWN))
		c |= REP_THR_POWER;
	return c;
}

#define MAXV(dst, v) ((dst) = (v) > (dst) ? (v) : (dst))

/* The sensors the report draws beyond memory, utilization, temperature
 * and power (issue 40: those of the live page's detail view): each
 * column's highest, clamped to its member's range, and the GPU's peak for
 * the lane's scale. */
static void other_sensors(struct rep_gpu *g, struct rep_col *c, const vramz_gpu_sample *s)
{
	g->seen |= s->valid;
	if (s->valid & VRAMZ_F_UTIL)
		MAXV(c->umem_max, (uint8_t)(s->util_mem_pct > 100 ? 100 : s->util_mem_pct));
	if (s->valid & VRAMZ_F_FAN)
		MAXV(c->fan_max, (uint8_t)(s->fan_pct > 100 ? 100 : s->fan_pct));
	if (s->valid & VRAMZ_F_CLK_SM) {
		MAXV(c->sm_max, (uint16_t)(s->clock_sm_mhz > UINT16_MAX ? UINT16_MAX : s->clock_sm_mhz));
		MAXV(g->clk_peak, c->sm_max);
	}
	if (s->valid & VRAMZ_F_CLK_MEM) {
		MAXV(c->mclk_max, (uint16_t)(s->clock_mem_mhz > UINT16_MAX ? UINT16_MAX : s->clock_mem_mhz));
		MAXV(g->clk_peak, c->mclk_max);
	}
	if (s->valid & VRAMZ_F_PCIE_TPUT) {
		MAXV(c->tx_max, s->pcie_tx_bytes_per_s);
		MAXV(c->rx_max, s->pcie_rx_bytes_per_s);
		MAXV(g->io_peak, c->tx_max > c->rx_max ? c->tx_max : c->rx_max);
	}
}

static void gpu_sample(struct rep *r, struct rep_gpu *g, struct rep_col *c, const vramz_gpu_sample *s,
		       int64_t t)
{
	if (!g->ticks)
		g->first_ms = t;
	g->last_ms = t;
	g->ticks++;
	if (s->lost) {
		c->lost = 1;
		g->lost = 1;
		c->n++;
		return;
	}
	uint32_t had = c->valid;
	c->valid |= s->valid;
	if (s->valid & VRAMZ_F_UTIL) {
		unsigned u = s->util_gpu_pct > 100 ? 100 : s->util_gpu_pct;
		if (!(had & VRAMZ_F_UTIL) || u < c->util_min)
			c->util_min = (uint8_t)u;
		if (u > c->util_max)
			c->util_max = (uint8_t)u;
		if (u > g->util_peak)
			g->util_peak = u;
		g->util_sum += u;
		g->util_n++;
	}
	if ((s->valid & VRAMZ_F_TEMP) && (!(had & VRAMZ_F_TEMP) || s->temp_c > c->temp_max))
		c->temp_max = (int16_t)s->temp_c;
	if (s->valid & VRAMZ_F_TEMP && s->temp_c > g->temp_peak)
		g->temp_peak = s->temp_c;
	if (s->valid & VRAMZ_F_TEMP_MEM) {
		if (!(had & VRAMZ_F_TEMP_MEM) || s->temp_mem_c > c->tmem_max)
			c->tmem_max = (int16_t)s->temp_mem_c;
		if (!g->any_temp_mem || s->temp_mem_c > g->tmem_peak)
			g->tmem_peak = s->temp_mem_c;
		g->any_temp_mem = 1;
	}
	if ((s->valid & VRAMZ_F_POWER) && s->power_mw > c->power_max_mw)
		c->power_max_mw = s->power_mw;
	if ((s->valid & VRAMZ_F_POWER) && s->power_mw > g->power_peak_mw)
		g->power_peak_mw = s->power_mw;
	if ((s->valid & VRAMZ_F_POWER_LIMIT) && s->power_limit_mw > c->limit_mw)
		c->limit_mw = s->power_limit_mw;
	if ((s->valid & VRAMZ_F_POWER_LIMIT) && s->power_limit_mw > g->limit_max_mw)
		g->limit_max_mw = s->power_limit_mw;
	if (s->valid & VRAMZ_F_THROTTLE)
		c->thr |= (uint8_t)thr_class(s->throttle_reasons);
	other_sensors(g, c, s);
	if (!(s->valid & VRAMZ_F_MEM)) {
		c->n++;
		return;
	}
	uint64_t res = s->valid & VRAMZ_F_MEM_RESERVED ? s->mem_reserved_bytes : 0;
	uint64_t m = s->mem_used_bytes + res;
	int procs = (s->valid & VRAMZ_F_PROCS) != 0;
	g->any_procs |= procs;
	if (!(had & VRAMZ_F_MEM) || m < c->mem_min)
		c->mem_min = m;
	/* the winner: a tick with its process list beats one without */
	int better = !c->win || (procs && !c->procs) || (procs == c->procs && m > c->mem_max);
	if (m > c->mem_max)
		c->mem_max = m;
	if (better) {
		c->win = r->tick;
		c->procs = (uint8_t)procs;
		c->total = s->mem_total_bytes;
		c->reserved = res;
		c->used = s->mem_used_bytes;
		c->unattr = s->valid & VRAMZ_F_UNATTRIBUTED ? s->unattributed_bytes
			  : procs ? 0 : s->mem_used_bytes;
	}
	if (s->mem_total_bytes > g->total_max)
		g->total_max = s->mem_total_bytes;
	if (m > g->mem_peak)
		g->mem_peak = m;
	c->n++;
}

int rep_feed(struct rep *r, const vramz_snapshot *snap,
	     const vramz_gpu_info *(*info)(void *arg, unsigned idx), void *arg)
{
	int64_t t = snap->time_ms;
	r->tick++;
	int gap = 0;
	if (r->tick > 1) {
		int64_t dt = t - r->prev_ms;
		if (dt > r->gap_ms) {
			gap = 1;
			if (r->ngaps == r->gapcap) {
				struct rep_gap *ng = grow_array(r->gaps, &r->gapcap, 8, sizeof *ng);
				if (!ng)
					return VRAMZ_ENOMEM;
				r->gaps = ng;
			}
			r->gaps[r->ngaps++] = (struct rep_gap){r->prev_ms, t};
		} else {
			note_interval(r, dt);
		}
	}
	r->prev_ms = t;
	unsigned col = (unsigned)rep_col_of(r, t);
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *s = &snap->gpus[i];
		struct rep_gpu *g = gpu_for(r, s->index, info ? info(arg, s->index) : NULL);
		if (!g) {
			if (s->index < r->wantcap && r->want[s->index] == 2)
				continue;
			return VRAMZ_ENOMEM;
		}
		struct rep_col *c = &g->cols[col];
		if (gap)
			c->gap = 1;
		uint32_t before = c->win;
		gpu_sample(r, g, c, s, t);
		int won = c->win == r->tick && before != r->tick;
		for (unsigned k = 0; k < s->proc_count; k++) {
			const vramz_proc_sample *ps = &snap->procs[s->proc_first + k];
			struct rep_proc *p = proc_for(r, ps, t);
			if (!p)
				return VRAMZ_ENOMEM;
			uint64_t peak = p->peak_bytes;
			proc_note(p, ps, t);
			if (p->peak_bytes != peak && proc_candidate(r, g, p))
				return VRAMZ_ENOMEM;
			if (won && p->cand >= 0 && (ps->valid & VRAMZ_P_USED)) {
				g->cand_val[p->cand][col] = ps->used_bytes;
				g->cand_stamp[p->cand][col] = r->tick;
			}
		}
	}
	return 0;
}

uint64_t rep_proc_at(const struct rep *r, const struct rep_proc *p, const struct rep_col *c,
		     unsigned col)
{
	const struct rep_gpu *g = p->gpu < r->ngpus ? r->gpus[p->gpu] : NULL;
	if (!g || p->cand < 0 || !c->n)
		return 0;
	return g->cand_stamp[p->cand][col] == c->win ? g->cand_val[p->cand][col] : 0;
}

static const struct rep *sort_rep;

static int by_peak(const void *a, const void *b)
{
	const struct rep_proc *x = &sort_rep->procs[*(const unsigned *)a];
	const struct rep_proc *y = &sort_rep->procs[*(const unsigned *)b];
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes ? -1 : 1;
	if ((x->cand >= 0) != (y->cand >= 0)) /* of equal peaks, the one with columns */
		return x->cand >= 0 ? -1 : 1;
	return x->first_ms < y->first_ms ? -1 : x->first_ms > y->first_ms;
}

int rep_finish(struct rep *r, char *bad, size_t badlen)
{
	/* every -g item must name a GPU of the log */
	if (r->gpu_spec && strcmp(r->gpu_spec, "all")) {
		for (const char *s = r->gpu_spec; *s;) {
			size_t n = strcspn(s, ",");
			int hit = 0;
			for (unsigned i = 0; i < r->ngpus && !hit; i++)
				if (r->gpus[i])
					hit = item_matches(s, n, i, r->gpus[i]->have_info ? &r->gpus[i]->info : NULL);
			if (!hit) {
				snprintf(bad, badlen, "%.*s", (int)n, s);
				return VRAMZ_ENOTFOUND;
			}
			s += n + (s[n] == ',');
		}
	}
	unsigned *idx = malloc((r->nprocs + 1) * sizeof *idx);
	if (!idx)
		return VRAMZ_ENOMEM;
	for (unsigned i = 0; i < r->nprocs; i++)
		idx[i] = i;
	sort_rep = r;
	qsort(idx, r->nprocs, sizeof *idx, by_peak);
	for (unsigned i = 0; i < r->nprocs; i++) {
		struct rep_proc *p = &r->procs[idx[i]];
		struct rep_gpu *g = p->gpu < r->ngpus ? r->gpus[p->gpu] : NULL;
		if (g && g->ntop < REP_TOP && p->peak_bytes) {
			p->band = (int)g->ntop;
			g->top[g->ntop++] = idx[i];
		}
	}
	free(idx);
	return 0;
}

void rep_free(struct rep *r)
{
	for (unsigned i = 0; i < r->ngpus; i++)
		if (r->gpus[i]) {
			free(r->gpus[i]->cols);
			free(r->gpus[i]->cand_val);
			free(r->gpus[i]->cand_stamp);
			free(r->gpus[i]);
		}
	free(r->gpus);
	free(r->want);
	free(r->procs);
	htab_free(&r->index);
	free(r->gaps);
	free(r->findings);
	memset(r, 0, sizeof *r);
}
