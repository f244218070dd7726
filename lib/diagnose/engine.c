/* SPDX-License-Identifier: Apache-2.0 */
/* engine.c - the diagnosis engine's state: one series per GPU and per
 * process, fed one snapshot at a time, evaluated at a bounded cadence into
 * findings whose identity survives from one evaluation to the next.
 *
 * A process is keyed by (GPU, pid, start time): a pid the kernel hands to
 * a new process starts a new series instead of continuing a dead one's.
 * Feeding costs a hash lookup and a window update per process, so a day
 * of 10 Hz samples replays in seconds; the statistics run only when an
 * evaluation is due.  An evaluation walks the kinds table (kinds.c): each
 * row's detector is handed an emitter of that row's kind, so detectors
 * read the state (state.h) and never call back in here.  Exited processes
 * are dropped at once in live use and kept (up to DIAG_ENDED_MAX) for log
 * analysis, where "it leaked until it died" is the answer wanted.
 */
#include "state.h"
#include "detectors.h"
#include "jobkey.h"
#include "kinds.h"
#include "abi.h"
#include "grow.h"
#include "hashtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0.2's config, the first with a size: up to proc_root */
#define CFG_MIN_SIZE ABI_SIZE_UPTO(vramz_diag_config, proc_root)

/* Every field its default: each threshold's from the kinds table (the
 * engine's own thresholds are there too), the rest 0 / NULL (keep_ended,
 * proc_root). */
static void config_defaults(vramz_diag_config *c)
{
	memset(c, 0, sizeof *c);
	c->size = sizeof *c;
	for (unsigned i = 0, n = kind_conf_count(); i < n; i++) {
		const struct kind_conf *k = kind_conf_at(i);
		char *v = (char *)c + k->off;
		switch (k->ctype) {
		case KC_I64: *(int64_t *)(void *)v = (int64_t)k->def; break;
		case KC_U64: *(uint64_t *)(void *)v = (uint64_t)k->def; break;
		case KC_UINT: *(unsigned *)(void *)v = (unsigned)k->def; break;
		case KC_INT: *(int *)(void *)v = (int)k->def; break;
		case KC_DOUBLE: *(double *)(void *)v = k->def; break;
		}
	}
}

int vramz_diag_config_init(vramz_diag_config *cfg, size_t size)
{
	if (!cfg || size < CFG_MIN_SIZE)
		return VRAMZ_EINVAL;
	vramz_diag_config c;
	config_defaults(&c);
	/* an older caller's struct gets its part; a newer one's unknown tail 0 */
	memcpy(cfg, &c, size < sizeof c ? size : sizeof c);
	if (size > sizeof c)
		memset((char *)cfg + sizeof c, 0, size - sizeof c);
	cfg->size = size;
	return 0;
}

/* The first rule a config breaks, named for the user; NULL when it is
 * valid.  The engine's own rules, then each kind's (its row's check). */
static const char *config_check(const vramz_diag_config *c, char *buf, size_t len)
{
	if (c->window_ms <= 0)
		snprintf(buf, len, "window_ms %lld: must be positive", (long long)c->window_ms);
	else if (c->ring_windows < 16)
		snprintf(buf, len, "ring_windows %u: must be at least 16", c->ring_windows);
	else if (c->job_warmup_ms < 0)
		snprintf(buf, len, "job_warmup_ms %lld: must not be negative", (long long)c->job_warmup_ms);
	else if (c->report_after_ms < 0)
		snprintf(buf, len, "report_after_ms %lld: must not be negative",
			 (long long)c->report_after_ms);
	else {
		for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++)
			if (finding_kinds[k].check && finding_kinds[k].check(c, buf, len))
				return buf;
		return NULL;
	}
	return buf;
}

int vramz_diag_create_abi(vramz_diag **out, const vramz_diag_config *cfg, const vramz_abi *abi)
{
	vramz_diag *d = calloc(1, sizeof *d);
	*out = d;
	if (!d)
		return VRAMZ_ENOMEM;
	config_defaults(&d->cfg);
	htab_pkey_init(&d->index);
	int rc = abi_init(&d->abi, abi, d->err, sizeof d->err);
	if (rc == 0 && cfg)
		rc = abi_copy_in(&d->cfg, sizeof d->cfg, cfg, CFG_MIN_SIZE, "vramz_diag_config",
				 d->err, sizeof d->err);
	if (rc == 0 && config_check(&d->cfg, d->err, sizeof d->err))
		rc = VRAMZ_EINVAL;
	if (rc < 0)
		return rc;
	d->jobs = jobkey_new(d->cfg.proc_root);
	if (!d->jobs) {
		free(d);
		*out = NULL;
		return VRAMZ_ENOMEM;
	}
	d->live = d->cfg.proc_root != NULL; /* torch.c may ask agents for leak sites */
	d->cfg.proc_root = NULL; /* the cache holds its own copy */
	d->last_eval_ms = 0;
	return 0;
}

vramz_diag *vramz_diag_new_abi(const vramz_diag_config *cfg, const vramz_abi *abi)
{
	vramz_diag *d;
	if (vramz_diag_create_abi(&d, cfg, abi) == 0)
		return d;
	vramz_diag_free(d);
	return NULL;
}

const char *vramz_diag_error(const vramz_diag *d)
{
	return d ? d->err : "out of memory";
}

/* a process's series: NVML's, and its allocator's where an agent spoke */
static void proc_series_free(struct proc_state *p)
{
	ring_free(&p->mem);
	ring_free(&p->alloc);
}

void vramz_diag_free(vramz_diag *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->ngpus; i++)
		ring_free(&d->gpus[i].mem);
	for (unsigned i = 0; i < d->nprocs; i++)
		proc_series_free(&d->procs[i]);
	free(d->gpus);
	free(d->procs);
	htab_free(&d->index);
	free(d->cur);
	free(d->next);
	free(d->out);
	free(d->past);
	free(d->scratch.t);
	free(d->scratch.y);
	free(d->scratch.tmp);
	free(d->detect_buf);
	free(d->jobs_buf);
	jobkey_free(d->jobs);
	diag_agent_free(d);
	abi_free(&d->abi);
	free(d);
}

static struct gpu_state *gpu_get(vramz_diag *d, unsigned index)
{
	if (index >= 4096)
		return NULL;
	if (index >= d->ngpus) {
		struct gpu_state *ng = realloc(d->gpus, (index + 1) * sizeof *ng);
		if (!ng)
			return NULL;
		memset(ng + d->ngpus, 0, (index + 1 - d->ngpus) * sizeof *ng);
		d->gpus = ng;
		d->ngpus = index + 1;
	}
	struct gpu_state *g = &d->gpus[index];
	if (!g->mem.w) {
		if (ring_init(&g->mem, d->cfg.ring_windows, d->cfg.window_ms))
			return NULL;
		g->index = index;
		g->orphan_since_ms = -1;
	}
	return g;
}

int vramz_diag_set_gpu_info(vramz_diag *d, const vramz_gpu_info *info, unsigned count)
{
	if (!d || (count && !info))
		return VRAMZ_EINVAL;
	for (unsigned i = 0; i < count; i++) {
		/* at the caller's record size: the fields it lacks stay unknown */
		vramz_gpu_info gi = {0};
		size_t sz = d->abi.sz.gpu_info;
		memcpy(&gi, (const char *)info + i * sz, sz < sizeof gi ? sz : sizeof gi);
		struct gpu_state *g = gpu_get(d, gi.index);
		if (!g)
			return VRAMZ_ENOMEM;
		g->info = gi;
		g->have_info = 1;
	}
	return 0;
}

/* ---- the process table ---- */

static int index_put(vramz_diag *d, unsigned i)
{
	const struct proc_state *p = &d->procs[i];
	return htab_pkey_put(&d->index, p->gpu, p->pid, p->start_ticks, i) ? VRAMZ_ENOMEM : 0;
}

/* After evictions moved the processes: fewer than before, so no growth
 * and no failure. */
static void index_rebuild(vramz_diag *d)
{
	htab_clear(&d->index);
	for (unsigned i = 0; i < d->nprocs; i++)
		index_put(d, i);
}

/* ---- its bound: at most VRAMZ_DIAG_SERIES_MAX series ----
 * A series costs its ring (ring_windows windows, 24 KiB at the default),
 * so a log with 100,000 pids in a tick cost analyze 2.4 GB.  When a new
 * process would pass the bound, the quarter of the series least worth
 * keeping goes in one pass: exited processes first (the earliest exit
 * first), then the smallest peak usage (the oldest first among equals).
 * Dropped series are counted for the caller to report
 * (vramz_diag_series_dropped); exited ones are not counted where they
 * would have gone anyway (live use). */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct victim {
	int live;
	uint64_t peak_bytes;
	int64_t last_ms;
	unsigned index;
};

static int cmp_victim(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	if (x->live != y->live)
		return x->live - y->live;
	if (x->live && x->peak_bytes != y->peak_bytes)
		return x->peak_bytes < y->peak_bytes ? -1 : 1;
	if (x->last_ms != y->last_ms)
		return x->last_ms < y->last_ms ? -1 : 1;
	return x->index < y->index ? -1 : (x->index > y->index);
}

static int series_make_room(vramz_diag *d)
{
	unsigned n = d->nprocs, drop = n / 4 ? n / 4 : 1;
	struct victim *v = malloc(n * sizeof *v);
	if (!v)
		return VRAMZ_ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct proc_state *p = &d->procs[i];
		v[i] = (struct victim){.live = !p->ended, .peak_bytes = p->peak_bytes,
				       .last_ms = p->last_ms, .index = i};
	}
	qsort(v, n, sizeof *v, cmp_victim);
	for (unsigned k = 0; k < drop; k++) {
		struct proc_state *p = &d->procs[v[k].index];
		if (!p->ended || d->cfg.keep_ended)
			d->series_dropped++;
		proc_series_free(p);
		p->used = 0;
	}
	free(v);
	unsigned j = 0;
	for (unsigned i = 0; i < n; i++)
		if (d->procs[i].used)
			d->procs[j++] = d->procs[i];
	d->nprocs = j;
	index_rebuild(d);
	return 0;
}

unsigned long vramz_diag_series_dropped(const vramz_diag *d)
{
	return d ? d->series_dropped : 0;
}

static struct proc_state *proc_get(vramz_diag *d, const vramz_proc_sample *s, int64_t t_ms)
{
	int vis = (s->valid & VRAMZ_P_VISIBLE) != 0;
	uint64_t start = vis ? s->start_time_ticks : 0;
	unsigned idx1 = htab_pkey_get(&d->index, s->gpu_index, s->pid, start);
	if (idx1)
		return &d->procs[idx1 - 1];
	if (d->nprocs >= VRAMZ_DIAG_SERIES_MAX && series_make_room(d))
		return NULL;
	if (d->nprocs == d->cap_procs) {
		struct proc_state *np = grow_array(d->procs, &d->cap_procs, 32, sizeof *np);
		if (!np)
			return NULL;
		d->procs = np;
	}
	struct proc_state *p = &d->procs[d->nprocs];
	memset(p, 0, sizeof *p);
	if (ring_init(&p->mem, d->cfg.ring_windows, d->cfg.window_ms))
		return NULL;
	p->used = 1;
	p->gpu = s->gpu_index;
	p->pid = s->pid;
	p->start_ticks = start;
	p->first_ms = t_ms;
	vramz_idle_reset(&p->idle);
	p->hidden_since_ms = -1;
	d->nprocs++;
	if (index_put(d, d->nprocs - 1)) {
		d->nprocs--;
		proc_series_free(p);
		return NULL;
	}
	return p;
}

/* Drops exited processes: all of them live, the oldest beyond
 * DIAG_ENDED_MAX when kept for a log. */
static void procs_evict(vramz_diag *d)
{
	unsigned ended = 0;
	for (unsigned i = 0; i < d->nprocs; i++)
		ended += d->procs[i].ended;
	if (!ended || (d->cfg.keep_ended && ended <= DIAG_ENDED_MAX))
		return;
	int64_t cut = INT64_MIN;
	if (d->cfg.keep_ended) {
		/* the (ended - MAX)-th oldest exit time */
		unsigned drop = ended - DIAG_ENDED_MAX / 2;
		int64_t *t = malloc(ended * sizeof *t);
		if (!t)
			return;
		unsigned n = 0;
		for (unsigned i = 0; i < d->nprocs; i++)
			if (d->procs[i].ended)
				t[n++] = d->procs[i].last_ms;
		qsort(t, n, sizeof *t, cmp_i64); /* n log n: 300,000 exits in one tick happen */
		cut = t[drop - 1];
		free(t);
	}
	unsigned j = 0;
	for (unsigned i = 0; i < d->nprocs; i++) {
		struct proc_state *p = &d->procs[i];
		if (p->ended && (!d->cfg.keep_ended || p->last_ms <= cut)) {
			proc_series_free(p);
			continue;
		}
		d->procs[j++] = *p;
	}
	d->nprocs = j;
	index_rebuild(d);
}

/* ---- feeding ---- */

/* The health counters: an uncorrected (volatile, else aggregate) count and
 * a corrected one, each against its first reading, and the remap state. */
static void feed_health(struct gpu_state *g, const vramz_gpu_sample *s)
{
	uint32_t ecc = s->valid & VRAMZ_F_ECC_VOL ? VRAMZ_F_ECC_VOL : s->valid & VRAMZ_F_ECC_AGG;
	if (ecc) {
		uint64_t unc = ecc == VRAMZ_F_ECC_VOL ? s->ecc_uncorrected_volatile
						      : s->ecc_uncorrected_aggregate;
		uint64_t corr = ecc == VRAMZ_F_ECC_VOL ? s->ecc_corrected_volatile
						       : s->ecc_corrected_aggregate;
		/* a counter that went back (a driver reload): counted from there */
		if (!g->ecc_known || unc < g->ecc_unc_base || corr < g->ecc_corr_base) {
			g->ecc_unc_base = unc;
			g->ecc_corr_base = corr;
		}
		g->ecc_known = 1;
		g->ecc_unc = unc;
		g->ecc_corr = corr;
	}
	g->remap_known = (s->valid & VRAMZ_F_REMAP) != 0;
	g->remap_pending = g->remap_known && s->remap_pending;
	g->remap_failure = g->remap_known && s->remap_failure;
}

/* Who was on each GPU when a new Xid came: its processes as of this feed
 * (a GPU lost in the same tick still lists them). */
static void capture_xid_procs(vramz_diag *d)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		struct gpu_state *g = &d->gpus[gi];
		if (!g->xid_known || g->xid_count == g->xid_captured)
			continue;
		g->xid_captured = g->xid_count;
		g->xid_nprocs = 0;
		for (unsigned i = 0; i < d->nprocs && g->xid_nprocs < XID_PROCS_MAX; i++) {
			const struct proc_state *p = &d->procs[i];
			if (!p->used || p->ended || p->gpu != gi)
				continue;
			struct xid_proc *x = &g->xid_procs[g->xid_nprocs++];
			x->pid = p->pid;
			x->start_ticks = p->start_ticks;
			memcpy(x->comm, p->comm, sizeof x->comm);
			memcpy(x->user, p->user, sizeof x->user);
			memcpy(x->job, p->job, sizeof x->job);
		}
	}
}

static void feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t)
{
	int64_t dt = g->seen ? t - g->last_ms : 0;
	if (dt > 10000)
		dt = 10000; /* a gap in the data is not time spent in a state */
	if (!g->seen)
		g->first_ms = t;
	g->seen = 1;
	g->last_ms = t;
	/* the watcher's Xid figures come with a lost GPU's sample too */
	if (s->valid & VRAMZ_F_XID) {
		if (!g->xid_known)
			g->xid_base = g->xid_captured = s->xid_events;
		g->xid_known = 1;
		g->xid_count = s->xid_events;
		g->xid_last = s->xid_last;
		g->xid_time_ms = s->xid_time_ms;
	}
	if (s->lost) {
		if (!g->lost)
			g->lost_ms = t;
		g->lost = 1;
		return;
	}
	g->lost = 0;
	g->last = *s;
	feed_health(g, s);
	if (s->valid & VRAMZ_F_MEM)
		ring_add(&g->mem, t, (double)s->mem_used_bytes,
			 (s->valid & VRAMZ_F_UTIL) ? (double)s->util_gpu_pct : -1);
	if (s->valid & VRAMZ_F_PROCS)
		g->procs_tick = d->tick;
	if ((s->valid & VRAMZ_F_UTIL) && s->util_gpu_pct > 0) {
		g->busy_ms += dt;
		if (s->valid & VRAMZ_F_THROTTLE) {
			uint64_t r = s->throttle_reasons;
			if (r & (VRAMZ_THR_SW_THERMAL | VRAMZ_THR_HW_THERMAL))
				g->thr_thermal_ms += dt;
			if (r & (VRAMZ_THR_SW_POWER_CAP | VRAMZ_THR_HW_POWER_BRAKE))
				g->thr_power_ms += dt;
			if (r & (VRAMZ_THR_HW_SLOWDOWN | VRAMZ_THR_HW_THERMAL | VRAMZ_THR_HW_POWER_BRAKE))
				g->thr_hw_ms += dt;
		}
		/* links drop to a lower generation at idle by design: count busy time only */
		if ((s->valid & VRAMZ_F_PCIE_LINK) && g->have_info &&
		    (g->info.valid & VRAMZ_I_PCIE_MAX) && g->info.pcie_max_gen) {
			g->link_busy_ms += dt;
			if (s->pcie_gen < g->info.pcie_max_gen || s->pcie_width < g->info.pcie_max_width) {
				g->link_low_ms += dt;
				g->link_low_gen = s->pcie_gen;
				g->link_low_width = s->pcie_width;
			}
		}
	}
	if ((s->valid & VRAMZ_F_UNATTRIBUTED) && s->unattributed_bytes >= d->cfg.orphan_min_bytes) {
		if (g->orphan_since_ms < 0)
			g->orphan_since_ms = t;
	} else if (s->valid & VRAMZ_F_UNATTRIBUTED) {
		g->orphan_since_ms = -1;
	}
}

static int feed_proc(vramz_diag *d, struct proc_state *p, const vramz_snapshot *snap,
		     const vramz_proc_sample *s, int64_t t)
{
	p->seen_tick = d->tick;
	p->last_ms = t;
	p->ended = 0;
	p->oom_end = 0;
	p->visible = (s->valid & VRAMZ_P_VISIBLE) != 0;
	if (p->visible) {
		p->ppid = s->ppid;
		p->pgid = s->pgid;
		if (jobkey_get(d->jobs, snap, s, p->job, sizeof p->job))
			return VRAMZ_ENOMEM;
		memcpy(p->comm, s->comm, sizeof p->comm);
		p->comm[sizeof p->comm - 1] = 0;
		memcpy(p->user, s->user, sizeof p->user);
		p->user[sizeof p->user - 1] = 0;
	}
	/* issue 15 hook: the PyTorch agent's join sets p->agent_ooms (its
	 * allocator's num_ooms) here; a rise over agent_ooms_first makes an
	 * oom finding certain (detect.c: oom_check) */
	if (p->gpu < d->ngpus) {
		const struct gpu_state *g = &d->gpus[p->gpu];
		p->gpu_mem_known = (g->last.valid & VRAMZ_F_MEM) && !g->lost;
		p->gpu_free_bytes = g->last.mem_free_bytes;
		p->gpu_total_bytes = g->last.mem_total_bytes;
	}
	torch_feed(p, s, t);
	/* the allocator's own series (issue 36): no caching steps in it */
	if ((s->valid & VRAMZ_P_TORCH) && (s->torch_valid & VRAMZ_T_ALLOCATED)) {
		if (!p->alloc.w && ring_init(&p->alloc, d->cfg.ring_windows, d->cfg.window_ms))
			return VRAMZ_ENOMEM;
		ring_add(&p->alloc, t, (double)s->torch_allocated_bytes, -1);
	}
	if (!(s->valid & VRAMZ_P_USED))
		return 0;
	int has_sm = (s->valid & VRAMZ_P_SM) != 0;
	ring_add(&p->mem, t, (double)s->used_bytes, has_sm ? (double)s->sm_pct : -1);
	p->last_bytes = s->used_bytes;
	if (s->used_bytes > p->peak_bytes)
		p->peak_bytes = s->used_bytes;
	vramz_idle_feed(&p->idle, t, s); /* idle.c: SM 0 and memory unchanged */
	if (!p->visible && s->used_bytes >= d->cfg.orphan_min_bytes) {
		if (p->hidden_since_ms < 0)
			p->hidden_since_ms = t;
	} else {
		p->hidden_since_ms = -1;
	}
	return 0;
}

static int evaluate(vramz_diag *d);

int vramz_diag_feed(vramz_diag *d, const vramz_snapshot *snap)
{
	if (!d || !snap || (snap->gpu_count && !snap->gpus) || (snap->proc_count && !snap->procs))
		return VRAMZ_EINVAL;
	/* the caller's record sizes to the library's (abi.c) */
	if (!(snap = abi_snapshot_in(&d->abi, snap)))
		return VRAMZ_ENOMEM;
	int64_t t = engine_time(d, snap);
	if (!d->have_time)
		d->last_eval_ms = t;
	d->have_time = 1;
	d->last_ms = t;
	d->last_wall_ms = snap->time_ms;
	d->last_mono_ns = snap->mono_ns;
	d->tick++;
	jobkey_tick(d->jobs);
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		struct gpu_state *g = gpu_get(d, snap->gpus[i].index);
		if (!g)
			return VRAMZ_ENOMEM;
		feed_gpu(d, g, &snap->gpus[i], t);
	}
	for (unsigned i = 0; i < snap->proc_count; i++) {
		const vramz_proc_sample *s = &snap->procs[i];
		struct proc_state *p = proc_get(d, s, t);
		if (!p || feed_proc(d, p, snap, s, t))
			return VRAMZ_ENOMEM;
	}
	capture_xid_procs(d);
	/* a process missing from a list that was read has exited (or left the GPU) */
	for (unsigned i = 0; i < d->nprocs; i++) {
		struct proc_state *p = &d->procs[i];
		if (p->ended || p->seen_tick == d->tick || p->gpu >= d->ngpus)
			continue;
		const struct gpu_state *g = &d->gpus[p->gpu];
		if (g->procs_tick == d->tick) {
			oom_check(d, p); /* oom.c: did it end out of memory? */
			p->ended = 1;
		} else if (g->lost && g->last_ms == t) {
			p->ended = 1;
		}
	}
	d->dirty = 1;
	if (t - d->last_eval_ms >= d->cfg.eval_interval_ms)
		return evaluate(d);
	return 0;
}

/* ---- findings ---- */

static uint64_t finding_id(const vramz_finding *f)
{
	uint64_t h = 1469598103934665603ull;
	const uint64_t parts[] = {(uint64_t)f->kind, (uint64_t)(int64_t)f->gpu, f->pid,
				  f->start_time_ticks};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((parts[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
	for (const char *c = f->job; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h;
}

/* The emitter's add: a finding of the row's kind into d->next. */
static vramz_finding *emit_add(struct emitter *em, enum vramz_severity sev, double headline)
{
	vramz_diag *d = em->sink;
	if (d->nnext == d->cap_next) {
		struct finding_slot *nn = grow_array(d->next, &d->cap_next, 16, sizeof *nn);
		if (!nn)
			return NULL;
		d->next = nn;
	}
	struct finding_slot *s = &d->next[d->nnext++];
	memset(s, 0, sizeof *s);
	s->f.kind = em->kind;
	s->f.severity = sev;
	s->f.gpu = -1;
	s->f.time_to_oom_s = -1;
	s->rev_figure = headline;
	return &s->f;
}

/* Every row's detector, in table order (the agent's right after its
 * row's), each with an emitter of its own kind. */
static int detect_all(vramz_diag *d)
{
	for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		const struct finding_kind *fk = &finding_kinds[k];
		struct emitter em = {emit_add, fk->kind, d};
		int rc = fk->detect(d, &em);
		if (!rc && fk->detect_agent)
			rc = fk->detect_agent(d, &em);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_finding(const void *a, const void *b)
{
	const vramz_finding *x = a, *y = b;
	if (x->severity != y->severity)
		return (int)y->severity - (int)x->severity;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->gpu != y->gpu)
		return x->gpu - y->gpu;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void remember_cleared(vramz_diag *d, const vramz_finding *f)
{
	if (!d->past) {
		d->past = malloc(DIAG_PAST_MAX * sizeof *d->past);
		if (!d->past)
			return;
	}
	for (unsigned i = 0; i < d->npast; i++)
		if (d->past[i].id == f->id) {
			memmove(&d->past[i], &d->past[i + 1], (d->npast - i - 1) * sizeof *d->past);
			d->npast--;
			break;
		}
	if (d->npast == DIAG_PAST_MAX) {
		memmove(&d->past[0], &d->past[1], (d->npast - 1) * sizeof *d->past);
		d->npast--;
	}
	d->past[d->npast++] = *f;
}

/* A headline figure moved by more than a quarter: worth a "changed". */
static int moved(double was, double now)
{
	double a = was < 0 ? -was : was, b = now < 0 ? -now : now;
	double m = a > b ? a : b;
	return m > 0 && (now - was > 0.25 * m || was - now > 0.25 * m);
}

/* Finding s continues o: the same identity, its first sight, and a new
 * revision when its severity changes (or its process ended, or its line
 * was first named), or when a headline figure (or the line) moved and
 * the last revision is DIAG_CHANGE_MIN_MS old (a caught-OOM count that
 * rises every second is one "changed" per interval, not one per rise). */
static void continue_slot(struct finding_slot *s, const struct finding_slot *o, int64_t now)
{
	s->f.first_seen_ms = o->f.first_seen_ms;
	s->f.revision = o->f.revision;
	s->reported = o->reported;
	s->rev_ms = o->rev_ms;
	int jump = o->f.severity != s->f.severity || o->f.ended != s->f.ended ||
		   (!o->f.site[0] && s->f.site[0]); /* torch.c named the leak's line */
	int drift = moved(o->rev_figure, s->rev_figure) || strcmp(o->f.site, s->f.site);
	if (jump || (drift && now - o->rev_ms >= DIAG_CHANGE_MIN_MS)) {
		s->f.revision++;
		s->rev_ms = now;
	} else {
		s->rev_figure = o->rev_figure;
	}
}

/* A finding of the last evaluation its detector no longer raised stays
 * while its condition has been absent less than its kind's hold_ms
 * (kinds.c): a condition judged over a window that dips for a moment is
 * not cleared and raised again.  Not for a process that has ended (live:
 * its findings go with it) or whose series is gone. */
static int hold_slot(vramz_diag *d, const struct finding_slot *o, int64_t now)
{
	const struct finding_kind *k = kind_of(o->f.kind);
	if (!k || !k->hold_ms || now - o->raised_ms >= k->hold_ms || !o->reported)
		return 0; /* a pending one gone before report_after is never announced */
	if (o->f.pid && o->f.gpu >= 0) {
		unsigned i = htab_pkey_get(&d->index, (unsigned)o->f.gpu, o->f.pid,
					   o->f.start_time_ticks);
		if (!i || !proc_active(d, &d->procs[i - 1]) || d->procs[i - 1].ended)
			return 0;
	}
	if (d->nnext == d->cap_next) {
		struct finding_slot *nn = grow_array(d->next, &d->cap_next, 16, sizeof *nn);
		if (!nn)
			return VRAMZ_ENOMEM;
		d->next = nn;
	}
	d->next[d->nnext++] = *o; /* as last raised, raised_ms unchanged */
	return 0;
}

/* The findings of this evaluation against the last one's: identities
 * continued, held ones kept, each handed out once it held long enough. */
static int merge_findings(vramz_diag *d, int64_t now)
{
	unsigned raised = d->nnext;
	for (unsigned i = 0; i < raised; i++) {
		struct finding_slot *s = &d->next[i];
		s->f.id = finding_id(&s->f);
		s->f.last_update_ms = now;
		s->f.first_seen_ms = now;
		s->f.revision = 1;
		s->reported = 0;
		s->raised_ms = now;
		s->rev_ms = now;
		for (unsigned j = 0; j < d->ncur; j++)
			if (d->cur[j].f.id == s->f.id) {
				continue_slot(s, &d->cur[j], now);
				break;
			}
		/* a start-up transient raised and cleared within seconds is noise:
		 * hand a finding out once it has held report_after_ms; what does
		 * not come back by itself (a GPU off the bus, a process that ended
		 * out of memory: the rows' at_once) at once */
		if (now - s->f.first_seen_ms >= d->cfg.report_after_ms || kind_of(s->f.kind)->at_once)
			s->reported = 1;
	}
	for (unsigned j = 0; j < d->ncur; j++) {
		int still = 0;
		for (unsigned i = 0; i < raised && !still; i++)
			still = d->next[i].f.id == d->cur[j].f.id;
		if (still)
			continue;
		unsigned before = d->nnext;
		if (hold_slot(d, &d->cur[j], now))
			return VRAMZ_ENOMEM;
		if (d->nnext > before || !d->cfg.keep_ended || !d->cur[j].reported)
			continue;
		vramz_finding f = d->cur[j].f;
		f.first_seen_ms += d->last_wall_ms - now;
		f.last_update_ms += d->last_wall_ms - now;
		if (f.onset_ms)
			f.onset_ms += d->last_wall_ms - now;
		remember_cleared(d, &f);
	}
	return 0;
}

static int evaluate(vramz_diag *d)
{
	d->nnext = 0;
	int rc = detect_all(d);
	if (rc)
		return rc;
	int64_t now = d->last_ms;
	rc = merge_findings(d, now);
	if (rc)
		return rc;
	/* raised again: no longer a past finding */
	for (unsigned i = 0; i < d->nnext; i++)
		for (unsigned j = 0; j < d->npast; j++)
			if (d->past[j].id == d->next[i].f.id) {
				memmove(&d->past[j], &d->past[j + 1], (d->npast - j - 1) * sizeof *d->past);
				d->npast--;
				break;
			}
	struct finding_slot *t = d->cur;
	unsigned tcap = d->cap_cur;
	d->cur = d->next;
	d->ncur = d->nnext;
	d->cap_cur = d->cap_next;
	d->next = t;
	d->cap_next = tcap;
	d->nnext = 0;
	vramz_finding *out = realloc(d->out, (d->ncur ? d->ncur : 1) * sizeof *out);
	if (!out)
		return VRAMZ_ENOMEM;
	d->out = out;
	d->nout = 0;
	int64_t shift = d->last_wall_ms - d->last_ms; /* engine time -> the wall clock now */
	for (unsigned i = 0; i < d->ncur; i++)
		if (d->cur[i].reported) {
			out[d->nout] = d->cur[i].f;
			out[d->nout].first_seen_ms += shift;
			out[d->nout].last_update_ms += shift;
			if (out[d->nout].onset_ms)
				out[d->nout].onset_ms += shift;
			d->nout++;
		}
	qsort(out, d->nout, sizeof *out, cmp_finding);
	d->last_eval_ms = now;
	d->dirty = 0;
	procs_evict(d);
	return 0;
}

unsigned vramz_diag_findings(vramz_diag *d, const vramz_finding **out)
{
	if (!d) {
		*out = NULL;
		return 0;
	}
	if (d->dirty && evaluate(d)) {
		*out = NULL;
		return 0;
	}
	*out = abi_restride(&d->abi.findings, d->out, d->nout, sizeof *d->out, d->abi.sz.finding);
	return *out ? d->nout : 0;
}

unsigned vramz_diag_cleared(vramz_diag *d, const vramz_finding **out)
{
	*out = d ? abi_restride(&d->abi.cleared, d->past, d->npast, sizeof *d->past,
				d->abi.sz.finding) : NULL;
	return *out ? d->npast : 0;
}
