/* SPDX-License-Identifier: Apache-2.0 */
/* detect.c - the detectors on NVML's figures: each reads the engine's
 * series and state (state.h) and emits its kind's findings with their
 * figures through the emitter it is handed (no words: see advice.c).
 * Each is the detector of one row of the kinds table (kinds.c).  What a
 * kind keeps as it is fed is its own struct here, in its row's state slot
 * (kinds.h, struct kind_state): the engine allocates it and calls the
 * hooks beside it.  The detectors on a GPU's own figures (lost,
 * throttling, link, temperature) are gpuwatch.c's.
 *
 * Thresholds come from vramz_diag_config; docs/diagnoses.md explains each
 * detector, its figures and why its defaults are what they are.  Every
 * detector leans towards silence: a false alarm at 3 a.m. costs more trust
 * than a late true one.
 */
#include "state.h"
#include "detectors.h"
#include "grow.h"
#include "leak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- orphaned: since when memory has been unaccounted for, fed ---- */

/* a GPU: since when memory no process accounts for has been above
 * orphan_min; a process: since when it has held orphan_min unseen from
 * here.  -1: not now */
struct orphan_gpu {
	int64_t since_ms;
};
struct orphan_proc {
	int64_t hidden_since_ms;
};

static void orphan_init(void *st)
{
	*(int64_t *)st = -1; /* both structs: their one field */
}

static void orphaned_feed_gpu(vramz_diag *d, struct gpu_state *g, void *st,
			      const vramz_gpu_sample *s, int64_t t, int64_t dt)
{
	struct orphan_gpu *o = st;
	if (s->lost || !(s->valid & VRAMZ_F_UNATTRIBUTED))
		return;
	if (s->unattributed_bytes < d->cfg.orphan_min_bytes)
		o->since_ms = -1;
	else if (o->since_ms < 0)
		o->since_ms = t;
}

static int orphaned_feed_proc(vramz_diag *d, struct proc_state *p, void *st,
			      const vramz_proc_sample *s, int64_t t)
{
	struct orphan_proc *o = st;
	if (!(s->valid & VRAMZ_P_USED))
		return 0;
	if (!p->visible && s->used_bytes >= d->cfg.orphan_min_bytes) {
		if (o->hidden_since_ms < 0)
			o->hidden_since_ms = t;
	} else {
		o->hidden_since_ms = -1;
	}
	return 0;
}

const struct kind_state orphaned_state = {
	.gpu_size = sizeof(struct orphan_gpu), .proc_size = sizeof(struct orphan_proc),
	.init_gpu = orphan_init, .init_proc = orphan_init,
	.feed_gpu = orphaned_feed_gpu, .feed_proc = orphaned_feed_proc,
};

/* ---- idle_holder: idle.c's rule on each process, fed ---- */

struct idle_proc {
	vramz_idle_track idle;
};

static void idle_init(void *st)
{
	vramz_idle_reset(&((struct idle_proc *)st)->idle);
}

static int idle_feed_proc(vramz_diag *d, struct proc_state *p, void *st, const vramz_proc_sample *s,
			  int64_t t)
{
	if (s->valid & VRAMZ_P_USED)
		vramz_idle_feed(&((struct idle_proc *)st)->idle, t, s); /* SM 0, memory unchanged */
	return 0;
}

const struct kind_state idle_holder_state = {
	.proc_size = sizeof(struct idle_proc),
	.init_proc = idle_init,
	.feed_proc = idle_feed_proc,
};

/* Idle holder: at 0 % SM with memory unchanged (idle.c's rule), holding
 * idle_min_bytes, for idle_ms; *since_ms its start.  The fragmentation
 * hint asks it too. */
static int proc_idle_held(const vramz_diag *d, const struct proc_state *p, int64_t *since_ms)
{
	const struct idle_proc *ip = kind_proc_state(d, p, VRAMZ_FK_IDLE_HOLDER);
	*since_ms = ip->idle.since_ms;
	return ip->idle.since_ms >= 0 && p->last_bytes >= d->cfg.idle_min_bytes &&
	       p->last_ms - ip->idle.since_ms >= d->cfg.idle_ms;
}

/* ---- leaks ---- */

/* a GPU's: the cached fits of its memory series (a process's: struct
 * leak_proc, detectors.h) */
struct leak_gpu {
	struct leak_cache leak;
};

/* the engine's: detect_leak's arrays, kept from one evaluation to the
 * next: each evaluation allocating and freeing them was a good part of
 * one, as every allocation in a monitor asleep between ticks is cold */
struct leak_diag {
	void *buf;
	size_t cap;
};

/* the allocator's own series (issue 36): no caching steps in it */
static int leak_feed_proc(vramz_diag *d, struct proc_state *p, void *st, const vramz_proc_sample *s,
			  int64_t t)
{
	struct leak_proc *lp = st;
	if ((s->valid & VRAMZ_P_TORCH) && (s->torch_valid & VRAMZ_T_ALLOCATED)) {
		if (!lp->alloc.w && ring_init(&lp->alloc, d->cfg.ring_windows, d->cfg.window_ms))
			return VRAMZ_ENOMEM;
		ring_add(&lp->alloc, t, (double)s->torch_allocated_bytes, -1);
	}
	return 0;
}

static void leak_fini_proc(void *st)
{
	ring_free(&((struct leak_proc *)st)->alloc);
}

static void leak_fini_diag(void *st)
{
	free(((struct leak_diag *)st)->buf);
}

const struct kind_state leak_state = {
	.gpu_size = sizeof(struct leak_gpu), .proc_size = sizeof(struct leak_proc),
	.diag_size = sizeof(struct leak_diag),
	.feed_proc = leak_feed_proc,
	.fini_proc = leak_fini_proc, .fini_diag = leak_fini_diag,
};

/* free memory of a GPU now; -1 unknown */
static double gpu_free_now(const struct gpu_state *g)
{
	return (g->last.valid & VRAMZ_F_MEM) && !g->lost ? (double)g->last.mem_free_bytes : -1;
}

struct leak_hit {
	unsigned proc;                 /* index, or UINT32_MAX for a GPU-level leak */
	unsigned gpu;
	struct leak_result r;
	uint64_t bytes;
	int ended;
	int alloc;                     /* judged on the allocator's series */
};

static int emit_leak(vramz_diag *d, struct emitter *em, const struct leak_hit *h,
		     const double *gpu_rate)
{
	const struct gpu_state *g = &d->gpus[h->gpu];
	double tto = -1;
	if (!h->ended && (g->last.valid & VRAMZ_F_MEM) && !g->lost && gpu_rate[h->gpu] > 0)
		tto = (double)g->last.mem_free_bytes / gpu_rate[h->gpu];
	enum vramz_severity sev = VRAMZ_SEV_WARNING;
	if (tto >= 0 && tto * 1000.0 < (double)d->cfg.leak_critical_tto_ms)
		sev = VRAMZ_SEV_CRITICAL;
	vramz_finding *f = emit(em, sev, h->r.tr.slope);
	if (!f)
		return VRAMZ_ENOMEM;
	if (h->proc != UINT32_MAX)
		finding_subject_proc(f, &d->procs[h->proc]);
	else
		f->gpu = (int)h->gpu;
	f->figures = VRAMZ_FG_RATE | VRAMZ_FG_TREND | VRAMZ_FG_DURATION | VRAMZ_FG_BYTES;
	f->rate_bytes_per_s = h->r.tr.slope;
	f->rate_ci_low_bytes_per_s = h->r.tr.ci_low;
	f->rate_ci_high_bytes_per_s = h->r.tr.ci_high;
	f->tau = h->r.tr.tau;
	f->p_value = h->r.tr.p_value;
	f->duration_ms = h->r.end_ms - h->r.start_ms;
	f->onset_ms = h->r.start_ms;
	f->bytes = h->bytes;
	if (h->alloc)
		f->figures |= VRAMZ_FG_ALLOCATOR;
	if (h->r.shape == LEAK_STAIRS) {
		f->figures |= VRAMZ_FG_STEPS;
		f->count = h->r.steps;
		f->value = h->r.step_interval_s;
		f->ref_value = h->r.step_bytes;
	}
	if (tto >= 0) {
		f->time_to_oom_s = tto;
		f->figures |= VRAMZ_FG_TTO | VRAMZ_FG_REF;
		f->ref_bytes = g->last.mem_free_bytes;
	}
	/* an attached process's agent may say where in its code it grows */
	if (h->proc != UINT32_MAX && f->pid)
		torch_leak_site(d, &d->procs[h->proc], f);
	return 0;
}

/* size bytes of zeroed scratch, kept (struct leak_diag) */
static void *detect_scratch(vramz_diag *d, size_t size)
{
	struct leak_diag *ld = kind_diag_state(d, VRAMZ_FK_LEAK);
	if (grow_bytes(&ld->buf, &ld->cap, size))
		return NULL;
	return memset(ld->buf, 0, size);
}

/* The leak rules on one series: the slow rule's trend over the life, and
 * the onset rules (leak.c); the onset's result where it is a leak that
 * began later (its rate is the rise's, not diluted by what came before). */
static int judge_series(vramz_diag *d, const struct ring *r, struct leak_cache *c,
			const struct onset_need *need, struct leak_result *out)
{
	int rc = leak_cached(r, need->life_start_ms, &d->cfg, &d->scratch, c, out);
	if (rc)
		return rc;
	struct leak_result on;
	if ((rc = leak_onset_cached(r, need, &d->cfg, &d->scratch, c, &on)))
		return rc;
	if (on.is_leak && (!out->is_leak || on.start_ms > out->start_ms))
		*out = on;
	return 0;
}

/* A process: judged on its allocator's series where its PyTorch agent
 * gives one (no caching steps: sooner and surer), else, or when that
 * does not leak (memory outside the allocator), on NVML's. */
static int judge_proc(vramz_diag *d, struct proc_state *p, struct leak_hit *h)
{
	/* an exited process is judged as it was at its end */
	double fr = !p->ended ? gpu_free_now(&d->gpus[p->gpu])
		  : p->gpu_mem_known ? (double)p->gpu_free_bytes : -1;
	struct onset_need need = onset_need_nvml(&d->cfg, fr, p->first_ms);
	h->alloc = 0;
	struct leak_proc *lp = leak_of(d, p);
	if (lp->alloc.w && lp->alloc.n) {
		struct onset_need na = need;
		na.min_span_ms = d->cfg.leak_onset_alloc_min_span_ms;
		na.min_rise = (double)d->cfg.leak_onset_alloc_min_rise_bytes;
		int rc = judge_series(d, &lp->alloc, &lp->alloc_leak, &na, &h->r);
		if (rc || (h->alloc = h->r.is_leak))
			return rc;
	}
	return judge_series(d, &p->mem, &lp->leak, &need, &h->r);
}

int detect_leak(vramz_diag *d, struct emitter *em)
{
	unsigned nh = 0, ng = d->ngpus ? d->ngpus : 1;
	/* hits first (the strictest alignment), then the rates, then the flags */
	size_t hits_sz = (d->nprocs + d->ngpus + 1) * sizeof(struct leak_hit);
	char *buf = detect_scratch(d, hits_sz + ng * sizeof(double) + ng);
	if (!buf)
		return VRAMZ_ENOMEM;
	struct leak_hit *hits = (struct leak_hit *)buf;
	double *rate = (double *)(buf + hits_sz);
	unsigned char *has = (unsigned char *)(rate + ng);
	int rc = 0;
	for (unsigned i = 0; i < d->nprocs; i++) {
		struct proc_state *p = &d->procs[i];
		leak_of(d, p)->leaking = 0;
		if (!proc_active(d, p) || p->gpu >= d->ngpus)
			continue;
		struct leak_hit *h = &hits[nh];
		if ((rc = judge_proc(d, p, h)))
			goto out;
		if (!h->r.is_leak)
			continue;
		leak_of(d, p)->leaking = 1;
		h->proc = i;
		h->gpu = p->gpu;
		h->bytes = p->last_bytes;
		h->ended = p->ended;
		if (!p->ended)
			rate[p->gpu] += h->r.tr.slope;
		has[p->gpu] = 1;
		nh++;
	}
	/* a GPU whose memory rises with no leaking process to blame:
	 * unlisted processes, the driver, or processes that come and go */
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		struct gpu_state *g = &d->gpus[gi];
		if (!g->seen || g->lost || has[gi] || !g->mem.n)
			continue;
		struct leak_hit *h = &hits[nh];
		struct onset_need need = onset_need_nvml(&d->cfg, gpu_free_now(g), g->first_ms);
		struct leak_gpu *lg = kind_gpu_state(d, g, VRAMZ_FK_LEAK);
		if ((rc = judge_series(d, &g->mem, &lg->leak, &need, &h->r)))
			goto out;
		if (!h->r.is_leak)
			continue;
		h->proc = UINT32_MAX;
		h->gpu = gi;
		h->bytes = g->last.mem_used_bytes;
		h->ended = 0;
		h->alloc = 0;
		rate[gi] += h->r.tr.slope;
		nh++;
	}
	/* time to OOM counts every leak on the GPU: they share its free memory */
	for (unsigned i = 0; i < nh && !rc; i++)
		rc = emit_leak(d, em, &hits[i], rate);
out:
	return rc;
}

/* ---- leak: its thresholds' rules ---- */

const char *check_leak(const vramz_diag_config *c, char *buf, size_t len)
{
	if (c->leak_min_windows < 3)
		snprintf(buf, len, "leak_min_windows %u: must be at least 3", c->leak_min_windows);
	else if (!(c->leak_p > 0 && c->leak_p < 1))
		snprintf(buf, len, "leak_p %g: must be between 0 and 1", c->leak_p);
	else if (c->leak_fast_tto_ms < 0 || c->leak_fast_warmup_ms < 0 ||
		 c->leak_fast_min_span_ms < 0 || c->leak_steep_min_span_ms < 0 ||
		 c->leak_onset_min_span_ms < 0 || c->leak_onset_alloc_min_span_ms < 0 ||
		 c->leak_stair_min_span_ms < 0)
		snprintf(buf, len, "leak_fast_*_ms, leak_steep_min_span_ms, leak_onset_*_ms, "
				   "leak_stair_min_span_ms: must not be negative");
	else if (c->leak_stair_min_steps < 3)
		snprintf(buf, len, "leak_stair_min_steps %u: must be at least 3",
			 c->leak_stair_min_steps);
	else if (!(c->leak_fast_share > 0))
		snprintf(buf, len, "leak_fast_share %g: must be positive", c->leak_fast_share);
	else
		return NULL;
	return buf;
}

/* ---- per process: idle holders, hidden processes, fragmentation ---- */

int detect_idle_holder(vramz_diag *d, struct emitter *em)
{
	for (unsigned i = 0; i < d->nprocs; i++) {
		const struct proc_state *p = &d->procs[i];
		int64_t since;
		if (!proc_active(d, p) || !proc_idle_held(d, p, &since))
			continue;
		vramz_finding *f = emit(em, p->ended ? VRAMZ_SEV_INFO : VRAMZ_SEV_WARNING,
					(double)p->last_bytes);
		if (!f)
			return VRAMZ_ENOMEM;
		finding_subject_proc(f, p);
		f->figures = VRAMZ_FG_DURATION | VRAMZ_FG_BYTES;
		f->duration_ms = p->last_ms - since;
		f->bytes = p->last_bytes;
	}
	return 0;
}

/* Memory no listed process accounts for, on a GPU; then processes that
 * hold memory but are not visible from here. */
int detect_orphaned(vramz_diag *d, struct emitter *em)
{
	vramz_finding *f;
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		const struct orphan_gpu *o = kind_gpu_state(d, g, VRAMZ_FK_ORPHANED);
		if (!g->seen || g->lost || o->since_ms < 0 || g->last_ms - o->since_ms < d->cfg.orphan_ms)
			continue;
		if (!(f = emit(em, VRAMZ_SEV_WARNING, (double)g->last.unattributed_bytes)))
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_DURATION | VRAMZ_FG_BYTES | VRAMZ_FG_REF;
		f->duration_ms = g->last_ms - o->since_ms;
		f->bytes = g->last.unattributed_bytes;
		f->ref_bytes = g->last.mem_used_bytes;
	}
	for (unsigned i = 0; i < d->nprocs; i++) {
		const struct proc_state *p = &d->procs[i];
		if (!proc_active(d, p))
			continue;
		const struct orphan_proc *o = kind_proc_state(d, p, VRAMZ_FK_ORPHANED);
		if (o->hidden_since_ms < 0 || p->last_ms - o->hidden_since_ms < d->cfg.orphan_ms)
			continue;
		if (!(f = emit(em, VRAMZ_SEV_INFO, (double)p->last_bytes)))
			return VRAMZ_ENOMEM;
		finding_subject_proc(f, p);
		f->figures = VRAMZ_FG_DURATION | VRAMZ_FG_BYTES;
		f->duration_ms = p->last_ms - o->hidden_since_ms;
		f->bytes = p->last_bytes;
	}
	return 0;
}

/* Fragmentation hint: held near the peak while the work fell away (an
 * attached process's agent says for sure: the row's detect_agent). */
int detect_fragmentation(vramz_diag *d, struct emitter *em)
{
	for (unsigned i = 0; i < d->nprocs; i++) {
		const struct proc_state *p = &d->procs[i];
		int64_t since;
		if (!proc_active(d, p) || proc_idle_held(d, p, &since) || torch_is_attached(d, p) ||
		    p->last_bytes < d->cfg.idle_min_bytes ||
		    (double)p->last_bytes < 0.9 * (double)p->peak_bytes || p->mem.n < 4)
			continue;
		double recent = 0, before = 0;
		uint32_t rn = 0, bn = 0;
		int64_t cut = p->last_ms - d->cfg.frag_ms;
		if (cut <= p->first_ms)
			continue;
		for (unsigned w = 0; w < p->mem.n; w++) {
			const struct win *x = &p->mem.w[w];
			if (x->t_first_ms >= cut) {
				recent += x->act_sum;
				rn += x->act_n;
			} else if (x->t_last_ms < cut) {
				before += x->act_sum;
				bn += x->act_n;
			}
		}
		if (!rn || !bn)
			continue;
		double ra = recent / rn, ba = before / bn;
		if (ba >= 30 && ra <= 5 && ra < ba / 4) {
			vramz_finding *f = emit(em, VRAMZ_SEV_INFO, (double)p->last_bytes);
			if (!f)
				return VRAMZ_ENOMEM;
			finding_subject_proc(f, p);
			f->figures = VRAMZ_FG_DURATION | VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_VALUE;
			f->duration_ms = d->cfg.frag_ms;
			f->bytes = p->last_bytes;
			f->ref_bytes = p->peak_bytes;
			f->value = ra;
			f->ref_value = ba;
		}
	}
	return 0;
}

/* ---- jobs: imbalance across GPUs, stray contexts ---- */

struct jent {
	const struct proc_state *p;
};

static int cmp_jent(const void *a, const void *b)
{
	const struct proc_state *x = ((const struct jent *)a)->p, *y = ((const struct jent *)b)->p;
	int c = strcmp(x->job, y->job);
	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Memory still moving: over the last third of the job warm-up (at least two
 * windows) the process's window maxima spread by more than 10 % of its
 * current figure and 256 MiB - a model still loading, a rank still
 * allocating.  Imbalance is about where a job settles, not how it gets there. */
static int proc_settling(const vramz_diag *d, const struct proc_state *p)
{
	int64_t span = d->cfg.job_warmup_ms / 3;
	if (span < 2 * p->mem.width_ms)
		span = 2 * p->mem.width_ms;
	double lo = -1, hi = 0;
	for (unsigned w = p->mem.n; w-- > 0;) {
		const struct win *x = &p->mem.w[w];
		if (x->t_last_ms < p->last_ms - span)
			break;
		if (lo < 0 || x->max_bytes < lo)
			lo = x->max_bytes;
		if (x->max_bytes > hi)
			hi = x->max_bytes;
	}
	double now = (double)p->last_bytes > hi ? (double)p->last_bytes : hi;
	return lo >= 0 && hi - lo > 0.1 * now && hi - lo > 256.0 * 1048576.0;
}

/* A finding of this kind about this job was current before this evaluation. */
static int job_raised(const vramz_diag *d, const char *job)
{
	for (unsigned i = 0; i < d->ncur; i++) {
		const vramz_finding *f = &d->cur[i].f;
		if ((f->kind == VRAMZ_FK_IMBALANCE || f->kind == VRAMZ_FK_STRAY_CONTEXT) &&
		    !strcmp(f->job, job))
			return 1;
	}
	return 0;
}

/* Whether a job may be judged: two processes or more, on two GPUs or more
 * (one process spread over GPUs is model parallelism by design, and a
 * single GPU cannot be imbalanced), all past the job warm-up and settled.
 * The start-up grace holds back a new finding only: one already raised
 * stays while the job's memory moves, rather than clearing and coming back.
 * e[0..n-1] sorted by pid. */
static int job_judgeable(const vramz_diag *d, const struct jent *e, unsigned n)
{
	unsigned procs = 0, gpus = 0;
	int64_t now = d->last_ms;
	int grace = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct proc_state *p = e[i].p;
		if (!i || p->pid != e[i - 1].p->pid)
			procs++;
		int seen = 0;
		for (unsigned k = 0; k < i && !seen; k++)
			seen = e[k].p->gpu == p->gpu;
		gpus += !seen;
		/* an exited process (logs) is judged as it was when it ended */
		int64_t until = p->ended ? p->last_ms : now;
		if (until - p->first_ms < d->cfg.job_warmup_ms || (!p->ended && proc_settling(d, p)))
			grace = 1;
	}
	if (procs < 2 || gpus < 2)
		return 0;
	return !grace || job_raised(d, e[0].p->job);
}

/* One job: entries e[0..n-1] sorted by pid.  Its memory per GPU, split
 * into each process's main context and its small stray ones; then its
 * stray contexts (stray) or its imbalance (!stray). */
static int detect_job(vramz_diag *d, struct emitter *em, int stray, const struct jent *e,
		      unsigned n)
{
	unsigned ng = d->ngpus;
	if (!job_judgeable(d, e, n))
		return 0;
	uint64_t *main_bytes = calloc(ng, sizeof *main_bytes);
	uint64_t *stray_bytes = calloc(ng, sizeof *stray_bytes);
	unsigned *stray_n = calloc(ng, sizeof *stray_n);
	const struct proc_state **heavy = calloc(ng, sizeof *heavy);
	uint64_t *vals = calloc(ng, sizeof *vals);
	int rc = 0;
	if (!main_bytes || !stray_bytes || !stray_n || !heavy || !vals) {
		rc = VRAMZ_ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n;) {
		/* one process's entries: e[i..j) */
		unsigned j = i, best = i;
		while (j < n && e[j].p->pid == e[i].p->pid) {
			if (e[j].p->last_bytes > e[best].p->last_bytes)
				best = j;
			j++;
		}
		for (unsigned k = i; k < j; k++) {
			const struct proc_state *p = e[k].p;
			if (k != best && p->last_bytes < d->cfg.stray_max_bytes &&
			    e[best].p->last_bytes >= d->cfg.stray_max_bytes) {
				stray_bytes[p->gpu] += p->last_bytes;
				stray_n[p->gpu]++;
				continue;
			}
			main_bytes[p->gpu] += p->last_bytes;
			if (!heavy[p->gpu] || p->last_bytes > heavy[p->gpu]->last_bytes)
				heavy[p->gpu] = p;
		}
		i = j;
	}
	for (unsigned g = 0; stray && g < ng; g++) {
		if (!stray_n[g])
			continue;
		vramz_finding *f = emit(em, VRAMZ_SEV_WARNING, (double)stray_n[g]);
		if (!f) {
			rc = VRAMZ_ENOMEM;
			goto out;
		}
		f->gpu = (int)g;
		memcpy(f->job, e[0].p->job, sizeof f->job);
		f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_COUNT;
		f->bytes = stray_bytes[g];
		f->count = stray_n[g];
	}
	if (stray)
		goto out;
	unsigned nv = 0, hg = 0;
	for (unsigned g = 0; g < ng; g++)
		if (main_bytes[g]) {
			vals[nv++] = main_bytes[g];
			if (main_bytes[g] > main_bytes[hg])
				hg = g;
		}
	if (nv < 2)
		goto out;
	qsort(vals, nv, sizeof *vals, cmp_u64);
	uint64_t med = vals[(nv - 1) / 2]; /* lower median: with 2 GPUs, the lighter */
	uint64_t mx = vals[nv - 1];
	if (!med || (double)mx < d->cfg.imbalance_ratio * (double)med ||
	    mx - med < d->cfg.imbalance_min_bytes)
		goto out;
	/* critical: the heavy GPU is nearly full while the job's others are not */
	enum vramz_severity sev = VRAMZ_SEV_WARNING;
	const struct gpu_state *hgs = &d->gpus[hg];
	if ((hgs->last.valid & VRAMZ_F_MEM) && hgs->last.mem_total_bytes) {
		int others_low = 1;
		for (unsigned g = 0; g < ng; g++) {
			const struct gpu_state *o = &d->gpus[g];
			if (g == hg || !main_bytes[g] || !(o->last.valid & VRAMZ_F_MEM) ||
			    !o->last.mem_total_bytes)
				continue;
			if (o->last.mem_used_bytes * 2 >= o->last.mem_total_bytes)
				others_low = 0;
		}
		if (others_low && (double)hgs->last.mem_used_bytes >= 0.9 * (double)hgs->last.mem_total_bytes)
			sev = VRAMZ_SEV_CRITICAL;
	}
	vramz_finding *f = emit(em, sev, (double)mx / (double)med);
	if (!f) {
		rc = VRAMZ_ENOMEM;
		goto out;
	}
	/* identity is the job; the heaviest process is context */
	memcpy(f->job, e[0].p->job, sizeof f->job);
	f->gpu = (int)hg;
	f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_SHARE | VRAMZ_FG_COUNT;
	f->bytes = mx;
	f->ref_bytes = med;
	f->share = (double)mx / (double)med;
	f->count = nv;
	if (heavy[hg]) {
		memcpy(f->comm, heavy[hg]->comm, sizeof f->comm);
		memcpy(f->user, heavy[hg]->user, sizeof f->user);
	}
out:
	free(main_bytes);
	free(stray_bytes);
	free(stray_n);
	free(heavy);
	free(vals);
	return rc;
}

/* the engine's: the processes of jobs in job order, sorted once per
 * evaluation for the imbalance and stray_context rows both (the slot is
 * imbalance's) */
struct jobs_diag {
	void *buf;
	size_t cap;
	unsigned n;
	uint64_t tick;                 /* the tick they were sorted at; 0 never */
};

static void jobs_fini_diag(void *st)
{
	free(((struct jobs_diag *)st)->buf);
}

const struct kind_state imbalance_state = {
	.diag_size = sizeof(struct jobs_diag),
	.fini_diag = jobs_fini_diag,
};

/* The processes that belong to a job, sorted by job, pid and GPU: once
 * an evaluation (d->tick), for both job rows.  NULL out of memory. */
static const struct jent *job_order(vramz_diag *d, unsigned *n)
{
	struct jobs_diag *jd = kind_diag_state(d, VRAMZ_FK_IMBALANCE);
	if (jd->tick != d->tick || !jd->buf) {
		if (grow_bytes(&jd->buf, &jd->cap, (d->nprocs + 1) * sizeof(struct jent)))
			return NULL;
		struct jent *e = jd->buf;
		unsigned k = 0;
		for (unsigned i = 0; i < d->nprocs; i++) {
			const struct proc_state *p = &d->procs[i];
			if (proc_active(d, p) && p->visible && p->job[0] && p->gpu < d->ngpus &&
			    p->last_bytes)
				e[k++].p = p;
		}
		qsort(e, k, sizeof *e, cmp_jent);
		jd->n = k;
		jd->tick = d->tick;
	}
	*n = jd->n;
	return jd->buf;
}

/* Every job, each judged by detect_job. */
static int detect_jobs(vramz_diag *d, struct emitter *em, int stray)
{
	unsigned n;
	const struct jent *e = job_order(d, &n);
	if (!e)
		return VRAMZ_ENOMEM;
	int rc = 0;
	for (unsigned i = 0; i < n && !rc;) {
		unsigned j = i;
		while (j < n && !strcmp(e[j].p->job, e[i].p->job))
			j++;
		rc = detect_job(d, em, stray, e + i, j - i);
		i = j;
	}
	return rc;
}

int detect_stray_context(vramz_diag *d, struct emitter *em)
{
	return detect_jobs(d, em, 1);
}

int detect_imbalance(vramz_diag *d, struct emitter *em)
{
	return detect_jobs(d, em, 0);
}

const char *check_imbalance(const vramz_diag_config *c, char *buf, size_t len)
{
	if (!(c->imbalance_ratio >= 1))
		snprintf(buf, len, "imbalance_ratio %g: must be at least 1", c->imbalance_ratio);
	else
		return NULL;
	return buf;
}
