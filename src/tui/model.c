/* SPDX-License-Identifier: Apache-2.0 */
/* model.c - the dashboard's data, built from the snapshots the sampler
 * thread hands over: a history ring per GPU for the plots, and a process
 * table with one row per pid (a process on two GPUs is one row listing
 * both), which the view sorts, filters and folds into a tree.
 *
 * Idle time is not something NVML reports: the model remembers, per
 * process (pid + start time, so a reused pid starts afresh), when its SM
 * utilization was last above zero.  A process never seen busy since vramz
 * started is idle "at least" that long, and the table says so.
 *
 * Nothing here draws, reads the terminal, or touches the library context:
 * everything comes from the copied snapshot, so live and replayed data go
 * through the same code.
 */
#include "tui/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"

/* One process's memory on one GPU over the model's ticks (so every series
 * lines up with tick_ms), kept as runs: from a run's tick on, the same MiB
 * (UINT32_MAX: not listed, unknown) until the next run's.  A steady
 * process costs one run, not a point a tick: top at 100k processes kept
 * 2 KiB of points for each (issue 35).  The runs are a ring, the oldest
 * dropped once the window no longer reaches them. */
struct proc_run {
	unsigned tick;
	uint32_t mib;
};

#define SERIES_MAX_RUNS (MODEL_PHIST + 1)

struct proc_series {
	uint32_t pid;
	unsigned gpu;
	uint64_t start_ticks;
	unsigned first_tick;              /* the model tick it was first listed */
	unsigned last_tick;               /* the model tick it was last listed */
	struct proc_run *run;             /* ring: cap runs, nrun from head */
	unsigned head, nrun, cap;
};

struct activity {
	uint32_t pid;
	uint64_t start_ticks;
	int64_t first_seen_ms, last_active_ms;
	int seen_active;
	unsigned tick;                    /* last tick it was listed */
};

static const char *const col_names[COL_COUNT] = {
	[COL_PID] = "PID", [COL_USER] = "USER", [COL_JOB] = "JOB",
	[COL_GPU] = "GPU", [COL_VRAM] = "VRAM", [COL_SM] = "SM%",
	[COL_IDLE] = "IDLE", [COL_CPU] = "CPU%", [COL_RSS] = "RSS", [COL_TIME] = "TIME",
	[COL_STATE] = "S", [COL_CMD] = "COMMAND",
};

const char *model_col_name(enum model_col c)
{
	return (unsigned)c < COL_COUNT ? col_names[c] : "?";
}

const char *model_col_key(enum model_col c)
{
	static const char *const keys[COL_COUNT] = {"pid", "user", "job", "gpu", "vram", "sm",
						    "idle", "cpu", "rss", "time", "state", "command"};
	return (unsigned)c < COL_COUNT ? keys[c] : "?";
}

int model_col_desc(enum model_col c)
{
	return c == COL_VRAM || c == COL_SM || c == COL_IDLE || c == COL_CPU || c == COL_RSS ||
	       c == COL_TIME || c == COL_STATE;
}

void model_init(struct model *m)
{
	memset(m, 0, sizeof *m);
}

static void series_drop_all(struct model *m)
{
	for (unsigned i = 0; i < m->nseries; i++)
		free(m->series[i].run);
	m->nseries = 0;
}

void model_free(struct model *m)
{
	htab_free(&m->row_idx);
	htab_free(&m->act_idx);
	htab_free(&m->series_idx);
	series_drop_all(m);
	free(m->gpus);
	free(m->rows);
	free(m->order);
	free(m->acts);
	free(m->series);
	memset(m, 0, sizeof *m);
}

static int reserve(void **v, unsigned *cap, unsigned need, size_t elem)
{
	if (need <= *cap)
		return 0;
	unsigned ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *nv = realloc(*v, (size_t)ncap * elem);
	if (!nv)
		return -1;
	*v = nv;
	*cap = ncap;
	return 0;
}

static struct model_gpu *gpu_slot(struct model *m, unsigned index)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (m->gpus[i].cur.s.index == index)
			return &m->gpus[i];
	if (m->ngpus >= MODEL_MAX_GPUS)
		return NULL;
	struct model_gpu *nv = realloc(m->gpus, (m->ngpus + 1) * sizeof *nv);
	if (!nv)
		return NULL;
	m->gpus = nv;
	struct model_gpu *g = &m->gpus[m->ngpus++];
	memset(g, 0, sizeof *g);
	g->cur.s.index = index;
	return g;
}

static void hist_push(struct model_gpu *g, const struct tui_gpu *t, int64_t time_ms)
{
	const struct hist_point *prev = model_hist(g, 0);
	struct hist_point *h = &g->hist[g->hist_head];
	const vramz_gpu_sample *s = &t->s;
	memset(h, 0, sizeof *h);
	h->time_ms = time_ms;
	if (s->valid & VRAMZ_F_MEM) {
		h->mem_valid = 1;
		h->used_bytes = s->mem_used_bytes;
		h->total_bytes = s->mem_total_bytes;
		if (s->valid & VRAMZ_F_MEM_RESERVED)
			h->reserved_bytes = s->mem_reserved_bytes;
	}
	if (s->valid & VRAMZ_F_UTIL) {
		h->util_valid = 1;
		h->util_pct = (uint8_t)(s->util_gpu_pct > 100 ? 100 : s->util_gpu_pct);
	}
	if (s->valid & VRAMZ_F_TEMP)
		h->temp_valid = 1, h->temp_c = (int16_t)s->temp_c;
	if (s->valid & VRAMZ_F_POWER)
		h->power_valid = 1, h->power_w = (uint16_t)(s->power_mw / 1000 > 65535 ? 65535 : s->power_mw / 1000);
	if (s->valid & VRAMZ_F_CLK_SM)
		h->clock_valid = 1, h->clock_mhz = (uint16_t)(s->clock_sm_mhz > 65535 ? 65535 : s->clock_sm_mhz);
	/* prev is another slot than h unless the ring holds one point; the
	 * chart draws used over reserved, so both must stay */
	int same_mem = prev && prev != h && prev->mem_valid == h->mem_valid &&
		       prev->used_bytes == h->used_bytes && prev->reserved_bytes == h->reserved_bytes &&
		       prev->total_bytes == h->total_bytes;
	int same_util = prev && prev != h && prev->util_valid == h->util_valid &&
			prev->util_pct == h->util_pct;
	g->flat_mem = same_mem ? g->flat_mem + (g->flat_mem < 2 * MODEL_HIST) : 1;
	g->flat_util = same_util ? g->flat_util + (g->flat_util < 2 * MODEL_HIST) : 1;
	g->hist_head = (g->hist_head + 1) % MODEL_HIST;
	if (g->hist_n < MODEL_HIST)
		g->hist_n++;
}

const struct hist_point *model_hist(const struct model_gpu *g, unsigned back)
{
	if (back >= g->hist_n)
		return NULL;
	return &g->hist[(g->hist_head + MODEL_HIST - 1 - back) % MODEL_HIST];
}

/* The idle clock of one process; creates its entry on first sight. */
static struct activity *activity_of(struct model *m, const vramz_proc_sample *p)
{
	uint64_t start = (p->valid & VRAMZ_P_VISIBLE) ? p->start_time_ticks : 0;
	unsigned i1 = htab_pkey_get(&m->act_idx, 0, p->pid, start);
	if (i1)
		return &m->acts[i1 - 1];
	if (reserve((void **)&m->acts, &m->cap_acts, m->nacts + 1, sizeof *m->acts) ||
	    htab_pkey_put(&m->act_idx, 0, p->pid, start, m->nacts))
		return NULL;
	struct activity *a = &m->acts[m->nacts++];
	memset(a, 0, sizeof *a);
	a->pid = p->pid;
	a->start_ticks = start;
	a->first_seen_ms = a->last_active_ms = m->now_ms;
	a->tick = m->ticks;
	return a;
}

static void activity_sweep(struct model *m)
{
	unsigned w = 0;
	for (unsigned i = 0; i < m->nacts; i++)
		if (m->acts[i].tick == m->ticks)
			m->acts[w++] = m->acts[i];
	if (w == m->nacts)
		return;
	m->nacts = w;
	/* the survivors moved: index them again (no allocation: the table
	 * has room for more than these) */
	htab_clear(&m->act_idx);
	for (unsigned i = 0; i < w; i++)
		htab_pkey_put(&m->act_idx, 0, m->acts[i].pid, m->acts[i].start_ticks, i);
}

/* "0", "0,3", "0-7": the GPUs of a mask, ranges folded. */
static void gpu_list(char *buf, size_t len, uint64_t mask)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < MODEL_MAX_GPUS && o + 8 < len; i++) {
		if (!(mask >> i & 1))
			continue;
		int j = i;
		while (j + 1 < MODEL_MAX_GPUS && (mask >> (j + 1) & 1))
			j++;
		o += (size_t)fmt_snprintf(buf + o, len - o, o ? ",%d" : "%d", i);
		if (j > i + 1)
			o += (size_t)fmt_snprintf(buf + o, len - o, "-%d", j);
		else if (j == i + 1)
			o += (size_t)fmt_snprintf(buf + o, len - o, ",%d", j);
		i = j;
	}
}

/* The series of p on its GPU, created on first sight; the list comes in
 * the same order each tick, so the search starts where the last ended. */
static struct proc_series *series_of(struct model *m, const vramz_proc_sample *p)
{
	uint64_t start = (p->valid & VRAMZ_P_VISIBLE) ? p->start_time_ticks : 0;
	unsigned i1 = htab_pkey_get(&m->series_idx, p->gpu_index, p->pid, start);
	if (i1)
		return &m->series[i1 - 1];
	if (reserve((void **)&m->series, &m->cap_series, m->nseries + 1, sizeof *m->series) ||
	    htab_pkey_put(&m->series_idx, p->gpu_index, p->pid, start, m->nseries))
		return NULL;
	struct proc_series *q = &m->series[m->nseries++];
	memset(q, 0, sizeof *q);
	q->pid = p->pid;
	q->gpu = p->gpu_index;
	q->start_ticks = start;
	q->first_tick = q->last_tick = m->ticks;
	return q;
}

static struct proc_run *run_at(const struct proc_series *q, unsigned i)
{
	return &q->run[(q->head + i) % q->cap];
}

/* From tick on, mib: a new run unless the last one already says so. */
static void run_push(const struct model *m, struct proc_series *q, unsigned tick, uint32_t mib)
{
	if (q->nrun && run_at(q, q->nrun - 1)->mib == mib)
		return;
	/* the window's first tick: a run is needed while the next starts later */
	unsigned from = m->ticks >= MODEL_PHIST ? m->ticks - MODEL_PHIST + 1 : 0;
	while (q->nrun >= 2 && run_at(q, 1)->tick <= from) {
		q->head = (q->head + 1) % q->cap;
		q->nrun--;
	}
	if (q->nrun == q->cap && q->cap < SERIES_MAX_RUNS) {
		unsigned ncap = q->cap ? 2 * q->cap : 1;
		if (ncap > SERIES_MAX_RUNS)
			ncap = SERIES_MAX_RUNS;
		struct proc_run *r = malloc(ncap * sizeof *r);
		if (!r)
			return; /* out of memory: the chart misses a change */
		for (unsigned i = 0; i < q->nrun; i++)
			r[i] = *run_at(q, i);
		free(q->run);
		q->run = r;
		q->head = 0;
		q->cap = ncap;
	}
	if (q->nrun == q->cap) { /* full: the oldest goes */
		q->head = (q->head + 1) % q->cap;
		q->nrun--;
	}
	*run_at(q, q->nrun++) = (struct proc_run){tick, mib};
}

static void series_feed(struct model *m, const vramz_proc_sample *p)
{
	struct proc_series *q = series_of(m, p);
	if (!q)
		return;
	uint32_t mib = (p->valid & VRAMZ_P_USED) ? (uint32_t)(p->used_bytes >> 20) : UINT32_MAX;
	if (q->nrun && q->last_tick == m->ticks) { /* listed twice (two MIG instances): the sum */
		struct proc_run *r = run_at(q, q->nrun - 1);
		if (mib != UINT32_MAX && r->mib != UINT32_MAX) {
			if (r->tick == m->ticks)
				r->mib += mib;
			else
				run_push(m, q, m->ticks, r->mib + mib);
		}
		return;
	}
	if (q->nrun && q->last_tick + 1 < m->ticks) /* the ticks it was not listed are unknown */
		run_push(m, q, q->last_tick + 1, UINT32_MAX);
	run_push(m, q, m->ticks, mib);
	q->last_tick = m->ticks;
}

/* Forgets the series of processes gone for MODEL_PKEEP ticks. */
static void series_sweep(struct model *m)
{
	unsigned w = 0;
	for (unsigned i = 0; i < m->nseries; i++) {
		if (m->ticks - m->series[i].last_tick > MODEL_PKEEP)
			free(m->series[i].run);
		else if (w++ != i)
			m->series[w - 1] = m->series[i];
	}
	if (w == m->nseries)
		return;
	m->nseries = w;
	htab_clear(&m->series_idx);
	for (unsigned i = 0; i < w; i++)
		htab_pkey_put(&m->series_idx, m->series[i].gpu, m->series[i].pid,
			      m->series[i].start_ticks, i);
}

unsigned model_proc_hist(const struct model *m, uint32_t pid, uint64_t start_ticks,
			 unsigned gpu, double *out, unsigned n)
{
	unsigned i1 = htab_pkey_get(&m->series_idx, gpu, pid, start_ticks);
	const struct proc_series *q = i1 ? &m->series[i1 - 1] : NULL;
	unsigned have = 0, i = q && q->nrun ? q->nrun - 1 : 0;
	for (unsigned k = 0; k < n; k++) {
		out[k] = -1;
		if (!q || !q->nrun || k >= MODEL_PHIST || k > m->ticks)
			continue;
		unsigned t = m->ticks - k; /* going back: the run holding t is at or before i */
		if (t > q->last_tick || t < q->first_tick || q->last_tick - t >= MODEL_PHIST)
			continue;
		while (i > 0 && run_at(q, i)->tick > t)
			i--;
		const struct proc_run *r = run_at(q, i);
		if (r->tick <= t && r->mib != UINT32_MAX) {
			out[k] = r->mib / 1024.0;
			have = k + 1;
		}
	}
	return have;
}

static struct model_row *row_for(struct model *m, const vramz_proc_sample *p)
{
	unsigned i1 = htab_pkey_get(&m->row_idx, 0, p->pid, 0);
	if (i1)
		return &m->rows[i1 - 1];
	if (reserve((void **)&m->rows, &m->cap_rows, m->nrows + 1, sizeof *m->rows) ||
	    htab_pkey_put(&m->row_idx, 0, p->pid, 0, m->nrows))
		return NULL;
	struct model_row *r = &m->rows[m->nrows++];
	memset(r, 0, sizeof *r);
	r->pid = p->pid;
	r->first_gpu = p->gpu_index;
	if (p->valid & VRAMZ_P_VISIBLE) {
		r->visible = 1;
		r->uid = p->uid;
		r->ppid = p->ppid;
		r->start_ticks = p->start_time_ticks;
		fmt_snprintf(r->user, sizeof r->user, "%s", p->user);
		if (p->cmdline[0])
			model_cmd_short(p->cmdline, r->cmd, sizeof r->cmd);
		else
			fmt_snprintf(r->cmd, sizeof r->cmd, "[%s]", p->comm);
	} else {
		/* NVML lists it, this /proc cannot see it: say so, guess nothing */
		fmt_snprintf(r->user, sizeof r->user, "-");
		fmt_snprintf(r->cmd, sizeof r->cmd, "(other ns) pid not visible here");
	}
	fmt_job(r->job, sizeof r->job, p);
	return r;
}

int model_feed(struct model *m, const struct tui_snap *s)
{
	if (s->reset) {
		for (unsigned i = 0; i < m->ngpus; i++) {
			m->gpus[i].hist_n = m->gpus[i].hist_head = 0;
			m->gpus[i].flat_mem = m->gpus[i].flat_util = 0;
		}
		m->nacts = 0;
		series_drop_all(m);
		htab_clear(&m->act_idx);
		htab_clear(&m->series_idx);
	}
	if (s->keep_last) { /* the error line under the last good tick */
		fmt_snprintf(m->errmsg, sizeof m->errmsg, "%s", s->errmsg);
		return 0;
	}
	m->ticks++;
	m->now_ms = s->time_ms;
	m->tick_ms[m->ticks % MODEL_PHIST] = s->time_ms;
	fmt_snprintf(m->errmsg, sizeof m->errmsg, "%s", s->err < 0 ? s->errmsg : "");
	for (unsigned i = 0; i < m->ngpus; i++)
		m->gpus[i].present = 0;
	for (unsigned i = 0; i < s->ngpus; i++) {
		struct model_gpu *g = gpu_slot(m, s->gpus[i].s.index);
		if (!g)
			continue;
		g->cur = s->gpus[i];
		g->present = 1;
		hist_push(g, &s->gpus[i], s->time_ms);
	}
	m->fed++;
	if (s->procs_dropped)
		return 0; /* the rows of the tick before stay until a newer one */
	m->nrows = 0;
	m->ngroups = 0;
	htab_clear(&m->row_idx);
	for (unsigned i = 0; i < s->nprocs; i++) {
		const vramz_proc_sample *p = &s->procs[i];
		struct model_row *r = row_for(m, p);
		if (!r)
			return -1;
		if (p->gpu_index < MODEL_MAX_GPUS)
			r->gpu_mask |= 1ull << p->gpu_index;
		if (p->gpu_index < r->first_gpu)
			r->first_gpu = p->gpu_index;
		if (p->valid & VRAMZ_P_USED) {
			r->vram_valid = 1;
			r->vram_bytes += p->used_bytes;
		}
		if (p->valid & VRAMZ_P_SM) {
			r->sm_valid = 1;
			if (p->sm_pct > r->sm_pct)
				r->sm_pct = p->sm_pct;
		}
		if (p->valid & VRAMZ_P_TORCH) {
			r->torch = 1;
			if (p->torch_valid & VRAMZ_T_RESERVED)
				r->torch_reserved_bytes += p->torch_reserved_bytes;
			if (p->valid & VRAMZ_P_OUTSIDE)
				r->outside_bytes += p->outside_allocator_bytes;
		}
		series_feed(m, p);
		struct activity *a = activity_of(m, p);
		if (a) {
			a->tick = m->ticks;
			if ((p->valid & VRAMZ_P_SM) && p->sm_pct > 0) {
				a->last_active_ms = m->now_ms;
				a->seen_active = 1;
			}
		}
	}
	for (unsigned i = 0; i < m->nrows; i++) {
		struct model_row *r = &m->rows[i];
		gpu_list(r->gpus, sizeof r->gpus, r->gpu_mask);
		vramz_proc_sample key = {.pid = r->pid, .start_time_ticks = r->start_ticks,
					 .valid = r->visible ? VRAMZ_P_VISIBLE : 0};
		struct activity *a = activity_of(m, &key);
		if (a && r->sm_valid) {
			r->idle_valid = 1;
			r->idle_ms = r->sm_pct > 0 ? 0 : m->now_ms - a->last_active_ms;
			r->idle_lower = !a->seen_active;
		}
	}
	activity_sweep(m);
	series_sweep(m);
	return 0;
}

int model_find_pid(const struct model *m, uint32_t pid)
{
	unsigned i1 = htab_pkey_get(&m->row_idx, 0, pid, 0);
	return i1 && i1 <= m->nrows ? (int)i1 - 1 : -1;
}

/* ---- arranging: filter, sort, tree --------------------------------------- */

static int model_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* A state's place when sorting by it: stuck (D) first, then running,
 * then the rest; unknown last. */
static unsigned state_rank(char s)
{
	switch (s) {
	case 'D': return 6;
	case 'R': return 5;
	case 'Z': return 4;
	case 'T': case 't': return 3;
	case 'S': return 2;
	case 0: return 0;
	default: return 1;
	}
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct model *m = ((const void **)arg)[0];
	const struct arrange *ar = ((const void **)arg)[1];
	const struct model_row *a = &m->rows[*(const unsigned *)pa];
	const struct model_row *b = &m->rows[*(const unsigned *)pb];
	int c = 0, desc = model_col_desc(ar->sort);
	switch (ar->sort) {
	case COL_PID: c = model_cmp_u64(a->pid, b->pid); break;
	case COL_USER: c = strcmp(a->user, b->user); break;
	case COL_JOB: c = strcmp(a->job, b->job); break;
	case COL_GPU: c = model_cmp_u64(a->first_gpu, b->first_gpu); break;
	case COL_CMD: c = strcmp(a->cmd, b->cmd); break;
	case COL_VRAM:
		c = model_cmp_u64(a->vram_valid ? a->vram_bytes + 1 : 0,
			    b->vram_valid ? b->vram_bytes + 1 : 0);
		break;
	case COL_SM:
		c = model_cmp_u64(a->sm_valid ? a->sm_pct + 1u : 0, b->sm_valid ? b->sm_pct + 1u : 0);
		break;
	case COL_IDLE:
		c = model_cmp_u64(a->idle_valid ? (uint64_t)a->idle_ms + 1 : 0,
			    b->idle_valid ? (uint64_t)b->idle_ms + 1 : 0);
		break;
	/* the host side: unknown last, largest (or a D state) first */
	case COL_CPU:
		c = model_cmp_u64(a->cpu_valid ? a->cpu_tenths + 1ull : 0, b->cpu_valid ? b->cpu_tenths + 1ull : 0);
		break;
	case COL_RSS:
		c = model_cmp_u64(a->rss_valid ? a->rss_bytes + 1 : 0, b->rss_valid ? b->rss_bytes + 1 : 0);
		break;
	case COL_TIME:
		c = model_cmp_u64(a->age_valid ? (uint64_t)a->age_ms + 1 : 0,
			    b->age_valid ? (uint64_t)b->age_ms + 1 : 0);
		break;
	case COL_STATE:
		c = model_cmp_u64(state_rank(a->state), state_rank(b->state));
		break;
	default: break;
	}
	if (desc)
		c = -c;
	if (ar->reverse)
		c = -c;
	return c ? c : model_cmp_u64(a->pid, b->pid);
}

static int row_passes(const struct model_row *r, const struct arrange *a)
{
	if (a->user[0] && strcmp(r->user, a->user))
		return 0;
	if (a->gpu >= 0 && (a->gpu >= MODEL_MAX_GPUS || !(r->gpu_mask >> a->gpu & 1)))
		return 0;
	if (a->text[0]) {
		char pid[16];
		fmt_snprintf(pid, sizeof pid, "%u", r->pid);
		if (!strcasestr(r->cmd, a->text) && !strcasestr(r->user, a->text) &&
		    !strcasestr(r->job, a->text) && strcmp(pid, a->text))
			return 0;
	}
	return 1;
}

static int push_order(struct model *m, unsigned idx)
{
	if (reserve((void **)&m->order, &m->cap_order, m->norder + 1, sizeof *m->order))
		return -1;
	m->order[m->norder++] = idx;
	return 0;
}

/* A pid and where its row is, sorted by pid: the tree's lookups are
 * binary searches, so building it is O(n log n) whatever the shape (one
 * non-GPU parent per GPU process made the old scans O(n^3): 100k
 * processes never finished). */
struct pid_pos {
	uint32_t pid;
	unsigned row;
};

static int by_pid(const void *pa, const void *pb)
{
	const struct pid_pos *a = pa, *b = pb;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int find_pos(const struct pid_pos *v, unsigned n, uint32_t pid)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].pid == pid ? (int)lo : -1;
}

/* Parents that hold no GPU memory but launched several GPU processes
 * (torchrun, a Slurm step) become group rows summing their children.
 * The children by parent: sorted by ppid, each run of siblings at once. */
static int add_groups(struct model *m, const unsigned *idx, unsigned n)
{
	struct pid_pos *kids = malloc((n ? n : 1) * sizeof *kids);
	unsigned nk = 0;
	if (!kids)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const struct model_row *r = &m->rows[idx[i]];
		if (r->visible && r->ppid > 1)
			kids[nk++] = (struct pid_pos){r->ppid, idx[i]};
	}
	qsort(kids, nk, sizeof *kids, by_pid);
	for (unsigned i = 0, j; i < nk; i = j) {
		for (j = i + 1; j < nk && kids[j].pid == kids[i].pid; j++)
			;
		uint32_t ppid = kids[i].pid;
		unsigned siblings = j - i;
		if (siblings < 2 || model_find_pid(m, ppid) >= 0)
			continue;
		if (reserve((void **)&m->rows, &m->cap_rows, m->nrows + m->ngroups + 1,
			    sizeof *m->rows)) {
			free(kids);
			return -1;
		}
		/* the first child in the view's order names the group, as before */
		unsigned first = kids[i].row;
		for (unsigned k = i + 1; k < j; k++)
			first = kids[k].row < first ? kids[k].row : first;
		const struct model_row *r = &m->rows[first];
		struct model_row *g = &m->rows[m->nrows + m->ngroups++];
		memset(g, 0, sizeof *g);
		g->group = 1;
		g->visible = 1;
		g->pid = ppid;
		g->uid = r->uid;
		memcpy(g->user, r->user, sizeof g->user); /* distinct rows */
		memcpy(g->job, r->job, sizeof g->job);
		fmt_snprintf(g->cmd, sizeof g->cmd, "(parent of %u GPU processes)", siblings);
		g->first_gpu = r->first_gpu;
		for (unsigned k = i; k < j; k++) {
			const struct model_row *c = &m->rows[kids[k].row];
			g->gpu_mask |= c->gpu_mask;
			g->vram_valid |= c->vram_valid;
			g->vram_bytes += c->vram_bytes;
			if (c->first_gpu < g->first_gpu)
				g->first_gpu = c->first_gpu;
		}
		gpu_list(g->gpus, sizeof g->gpus, g->gpu_mask);
	}
	free(kids);
	return 0;
}

/* The tree of the sorted rows idx[0..n-1]: each row's parent found by a
 * binary search of the pids, the children of each listed in the sorted
 * order (CSR arrays), then emitted depth first from the roots. */
struct tree {
	const unsigned *idx;
	unsigned *first, *kid;         /* children of idx[i]: kid[first[i] .. first[i + 1]) */
};

static int emit_tree(struct model *m, const struct tree *t, unsigned i, int depth)
{
	unsigned row = t->idx[i];
	m->rows[row].depth = depth;
	if (push_order(m, row))
		return -1;
	if (depth > 16)
		return 0; /* a ppid loop cannot happen, but never recurse forever */
	for (unsigned k = t->first[i]; k < t->first[i + 1]; k++)
		if (emit_tree(m, t, t->kid[k], depth + 1))
			return -1;
	return 0;
}

static int arrange_tree(struct model *m, const unsigned *idx, unsigned n)
{
	struct pid_pos *pos = malloc((n ? n : 1) * sizeof *pos);
	int *parent = malloc((n ? n : 1) * sizeof *parent);
	unsigned *first = calloc(n + 2, sizeof *first), *kid = malloc((n ? n : 1) * sizeof *kid);
	int rc = -1;
	if (!pos || !parent || !first || !kid)
		goto out;
	for (unsigned i = 0; i < n; i++)
		pos[i] = (struct pid_pos){m->rows[idx[i]].pid, i};
	qsort(pos, n, sizeof *pos, by_pid);
	for (unsigned i = 0; i < n; i++) {
		const struct model_row *r = &m->rows[idx[i]];
		int p = !r->visible || r->group || r->ppid <= 1 ? -1 : find_pos(pos, n, r->ppid);
		parent[i] = p < 0 || pos[p].row == i ? -1 : (int)pos[p].row;
		if (parent[i] >= 0)
			first[parent[i] + 2]++;
	}
	for (unsigned i = 2; i < n + 2; i++)
		first[i] += first[i - 1];
	for (unsigned i = 0; i < n; i++) /* in sorted order: each list stays sorted */
		if (parent[i] >= 0)
			kid[first[parent[i] + 1]++] = i;
	struct tree t = {idx, first, kid};
	rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++)
		if (parent[i] < 0)
			rc = emit_tree(m, &t, i, 0);
out:
	free(pos);
	free(parent);
	free(first);
	free(kid);
	return rc;
}

int model_arrange(struct model *m, const struct arrange *a)
{
	m->norder = 0;
	m->ngroups = 0;
	unsigned n = 0;
	unsigned *idx = malloc((m->nrows + 1) * 2 * sizeof *idx);
	if (!idx)
		return -1;
	for (unsigned i = 0; i < m->nrows; i++) {
		m->rows[i].depth = 0;
		if (row_passes(&m->rows[i], a))
			idx[n++] = i;
	}
	if (a->tree && add_groups(m, idx, n) == 0) {
		unsigned *nidx = realloc(idx, (n + m->ngroups + 1) * sizeof *idx);
		if (!nidx) {
			free(idx);
			return -1;
		}
		idx = nidx;
		for (unsigned g = 0; g < m->ngroups; g++)
			idx[n++] = m->nrows + g;
	}
	const void *ctx[2] = {m, a};
	qsort_r(idx, n, sizeof *idx, row_cmp, ctx);
	int rc = 0;
	if (a->tree)
		rc = arrange_tree(m, idx, n);
	for (unsigned i = 0; i < n && rc == 0 && !a->tree; i++)
		rc = push_order(m, idx[i]);
	free(idx);
	return rc;
}

/* Whether a program's base name (n bytes) is a Python interpreter:
 * python, python3, python3.11, pypy3, ... */
static int is_python(const char *b, size_t n)
{
	return (n >= 6 && !strncmp(b, "python", 6)) || (n >= 4 && !strncmp(b, "pypy", 4));
}

/* Appends [s, s + n) to out at *o (cut at len). */
static void cat_n(char *out, size_t len, size_t *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *o + 1 < len; i++)
		out[(*o)++] = s[i];
	out[*o < len ? *o : len - 1] = '\0';
}

/* The base name of the path [s, s + n) */
static const char *base_of(const char *s, size_t n)
{
	const char *b = s;
	for (size_t i = 0; i + 1 < n; i++) /* not at a final /: a name is left */
		if (s[i] == '/')
			b = s + i + 1;
	return b;
}

void model_cmd_short(const char *cmdline, char *out, size_t len)
{
	if (!len)
		return;
	out[0] = '\0';
	size_t o = 0;
	const char *s = cmdline, *sp = strchr(s, ' ');
	size_t n = sp ? (size_t)(sp - s) : strlen(s);
	const char *b = base_of(s, n);
	cat_n(out, len, &o, b, n - (size_t)(b - s));
	int py = is_python(b, n - (size_t)(b - s)), skip_arg = 0;
	for (s += n; *s;) { /* the arguments, each after its blank */
		sp = strchr(s + 1, ' ');
		n = sp ? (size_t)(sp - s) : strlen(s);
		const char *a = s + 1;
		size_t an = n - 1;
		if (py && skip_arg) { /* the argument of -X, -W, -Q */
			skip_arg = 0;
		} else if (py && an && a[0] == '-') {
			/* -m MODULE and -c CODE end the interpreter's own options:
			 * the module or code is what runs, shown as given */
			if ((an == 2 && (a[1] == 'm' || a[1] == 'c')) || (an == 1))
				py = 0;
			else if (an == 2 && (a[1] == 'X' || a[1] == 'W' || a[1] == 'Q'))
				skip_arg = 1;
		} else if (py && an) { /* the script: its name, its path on the page */
			const char *sb = base_of(a, an);
			cat_n(out, len, &o, " ", 1);
			cat_n(out, len, &o, sb, an - (size_t)(sb - a));
			py = 0;
			s += n;
			continue;
		}
		cat_n(out, len, &o, s, n);
		s += n;
	}
}
