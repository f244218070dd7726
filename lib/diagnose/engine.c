/* SPDX-License-Identifier: Apache-2.0 */
/* engine.c - the diagnosis engine's state: one series per GPU and per
 * process, fed one snapshot at a time, evaluated at a bounded cadence into
 * findings whose identity survives from one evaluation to the next.
 *
 * A process is keyed by (GPU, pid, start time): a pid the kernel hands to
 * a new process starts a new series instead of continuing a dead one's.
 * Feeding costs a hash lookup and a window update per process, so a day
 * of 10 Hz samples replays in seconds; the statistics run only when an
 * evaluation is due.  What a kind keeps as it is fed lives in its own
 * struct, in its own file: the engine allocates and frees each row's
 * block (kinds.h, struct kind_state) and calls the row's hooks, knowing
 * no kind by name.  An evaluation walks the kinds table (kinds.c): each
 * row's detector is handed an emitter of that row's kind, so detectors
 * read the state (state.h) and never call back in here.  Exited processes
 * are dropped at once in live use and kept (up to DIAG_ENDED_MAX) for log
 * analysis, where "it leaked until it died" is the answer wanted.
 */
#include "state.h"
#include "findings.h"
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
		for (unsigned k = 0; k < VRAMZ_FK_COUNT; k++)
			if (finding_kinds[k].check && finding_kinds[k].check(c, buf, len))
				return buf;
		return NULL;
	}
	return buf;
}

/* ---- the kinds' state slots ---- */

/* a row's state hooks; NULL for a row that keeps none */
static const struct kind_state *row_state(unsigned k)
{
	return finding_kinds[k].state;
}

/* every row k that has the hook */
#define EACH_HOOK(k, hook)                                 \
	for (unsigned k = 0; k < VRAMZ_FK_COUNT; k++)       \
		if (row_state(k) && row_state(k)->hook)

#define SLOT_ALIGN _Alignof(max_align_t)
#define SLOT_ROUND(n) (((n) + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN)

/* Lays each row's blocks out one after another and allocates the
 * engine's; the GPUs' and processes' come with them. */
static int slots_init(vramz_diag *d)
{
	size_t diag = 0;
	for (unsigned k = 0; k < VRAMZ_FK_COUNT; k++) {
		const struct kind_state *ks = row_state(k);
		if (!ks)
			continue;
		d->slot_off[k] = (struct slot_off){d->gpu_slots_size, d->proc_slots_size, diag};
		d->gpu_slots_size += SLOT_ROUND(ks->gpu_size);
		d->proc_slots_size += SLOT_ROUND(ks->proc_size);
		diag += SLOT_ROUND(ks->diag_size);
	}
	d->diag_slots = calloc(1, diag ? diag : 1);
	return d->diag_slots ? 0 : VRAMZ_ENOMEM;
}

static void slots_free(vramz_diag *d)
{
	if (d->diag_slots)
		EACH_HOOK(k, fini_diag)
			row_state(k)->fini_diag(kind_diag_state(d, k));
	free(d->diag_slots);
	free(d->gpu_slots);
}

/* a new process's blocks, zeroed and initialised */
static int proc_slots_new(vramz_diag *d, struct proc_state *p)
{
	p->slots = calloc(1, d->proc_slots_size ? d->proc_slots_size : 1);
	if (!p->slots)
		return VRAMZ_ENOMEM;
	EACH_HOOK(k, init_proc)
		row_state(k)->init_proc(kind_proc_state(d, p, k));
	return 0;
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
	if (rc == 0)
		rc = slots_init(d);
	if (rc < 0)
		return rc;
	d->jobs = jobkey_new(d->cfg.proc_root);
	if (!d->jobs) {
		vramz_diag_free(d); /* the slots and the abi state too */
		*out = NULL;
		return VRAMZ_ENOMEM;
	}
	d->live = d->cfg.proc_root != NULL; /* the kinds may ask agents (their files) */
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

/* a process's series and the kinds' blocks of it */
static void proc_series_free(vramz_diag *d, struct proc_state *p)
{
	ring_free(&p->mem);
	if (!p->slots)
		return;
	EACH_HOOK(k, fini_proc)
		row_state(k)->fini_proc(kind_proc_state(d, p, k));
	free(p->slots);
	p->slots = NULL;
}

void vramz_diag_free(vramz_diag *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->ngpus; i++)
		ring_free(&d->gpus[i].mem);
	for (unsigned i = 0; i < d->nprocs; i++)
		proc_series_free(d, &d->procs[i]);
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
	jobkey_free(d->jobs);
	slots_free(d);
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
		d->gpus = ng;
		size_t ssz = d->gpu_slots_size ? d->gpu_slots_size : 1;
		char *ns = realloc(d->gpu_slots, (index + 1) * ssz);
		if (!ns)
			return NULL;
		d->gpu_slots = ns;
		memset(ng + d->ngpus, 0, (index + 1 - d->ngpus) * sizeof *ng);
		memset(ns + d->ngpus * ssz, 0, (index + 1 - d->ngpus) * ssz);
		unsigned was = d->ngpus;
		d->ngpus = index + 1;
		/* every new GPU's blocks, a gap's too: the hooks and detectors
		 * may walk all of d->gpus */
		for (unsigned i = was; i < d->ngpus; i++)
			EACH_HOOK(k, init_gpu)
				row_state(k)->init_gpu(kind_gpu_state(d, &d->gpus[i], k));
	}
	struct gpu_state *g = &d->gpus[index];
	if (!g->mem.w) {
		if (ring_init(&g->mem, d->cfg.ring_windows, d->cfg.window_ms))
			return NULL;
		g->index = index;
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
		proc_series_free(d, p);
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
	if (proc_slots_new(d, p)) {
		proc_series_free(d, p);
		return NULL;
	}
	d->nprocs++;
	if (index_put(d, d->nprocs - 1)) {
		d->nprocs--;
		proc_series_free(d, p);
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
			proc_series_free(d, p);
			continue;
		}
		d->procs[j++] = *p;
	}
	d->nprocs = j;
	index_rebuild(d);
}

/* ---- feeding ---- */

/* A GPU's sample: the engine's own bookkeeping (seen, lost, its memory
 * series), then each kind's feed hook for the state that kind keeps
 * (kinds.h: struct kind_state) - the engine knows no kind by name. */
static void feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t)
{
	int64_t dt = g->seen ? t - g->last_ms : 0;
	if (dt > 10000)
		dt = 10000; /* a gap in the data is not time spent in a state */
	if (!g->seen)
		g->first_ms = t;
	g->seen = 1;
	g->last_ms = t;
	/* a lost GPU's sample too: the hooks look at s->lost themselves */
	EACH_HOOK(k, feed_gpu)
		row_state(k)->feed_gpu(d, g, kind_gpu_state(d, g, k), s, t, dt);
	if (s->lost) {
		if (!g->lost)
			g->lost_ms = t;
		g->lost = 1;
		return;
	}
	g->lost = 0;
	g->last = *s;
	if (s->valid & VRAMZ_F_MEM)
		ring_add(&g->mem, t, (double)s->mem_used_bytes,
			 (s->valid & VRAMZ_F_UTIL) ? (double)s->util_gpu_pct : -1);
	if (s->valid & VRAMZ_F_PROCS)
		g->procs_tick = d->tick;
}

/* A process's sample: the engine's own bookkeeping (names, its GPU's
 * memory, its memory series), then each kind's feed hook. */
static int feed_proc(vramz_diag *d, struct proc_state *p, const vramz_snapshot *snap,
		     const vramz_proc_sample *s, int64_t t)
{
	p->seen_tick = d->tick;
	p->last_ms = t;
	p->ended = 0;
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
		memcpy(p->container_name, s->container_name, sizeof p->container_name);
		p->container_name[sizeof p->container_name - 1] = 0;
	}
	if (p->gpu < d->ngpus) {
		const struct gpu_state *g = &d->gpus[p->gpu];
		p->gpu_mem_known = (g->last.valid & VRAMZ_F_MEM) && !g->lost;
		p->gpu_free_bytes = g->last.mem_free_bytes;
		p->gpu_total_bytes = g->last.mem_total_bytes;
	}
	if (s->valid & VRAMZ_P_USED) {
		int has_sm = (s->valid & VRAMZ_P_SM) != 0;
		ring_add(&p->mem, t, (double)s->used_bytes, has_sm ? (double)s->sm_pct : -1);
		p->last_bytes = s->used_bytes;
		if (s->used_bytes > p->peak_bytes)
			p->peak_bytes = s->used_bytes;
	}
	/* the hooks look at s->valid themselves */
	for (unsigned k = 0; k < VRAMZ_FK_COUNT; k++) {
		const struct kind_state *ks = row_state(k);
		int rc = ks && ks->feed_proc ? ks->feed_proc(d, p, kind_proc_state(d, p, k), s, t) : 0;
		if (rc)
			return rc;
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
	EACH_HOOK(k, after_feed)
		row_state(k)->after_feed(d);
	/* a process missing from a list that was read has exited (or left the GPU) */
	for (unsigned i = 0; i < d->nprocs; i++) {
		struct proc_state *p = &d->procs[i];
		if (p->ended || p->seen_tick == d->tick || p->gpu >= d->ngpus)
			continue;
		const struct gpu_state *g = &d->gpus[p->gpu];
		if (g->procs_tick == d->tick) {
			EACH_HOOK(k, proc_gone)
				row_state(k)->proc_gone(d, p, kind_proc_state(d, p, k));
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

static int evaluate(vramz_diag *d)
{
	int rc = findings_evaluate(d); /* findings.c */
	if (!rc)
		procs_evict(d);
	return rc;
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
