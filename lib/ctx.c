/* ctx.c - the library context: opens a backend, keeps each GPU's static
 * facts, the selection and the buffers of the latest sample, and derives
 * what no backend reports by itself (process attribution from /proc,
 * memory no process accounts for).
 *
 * A sample reuses the same buffers tick after tick, so a steady sampler
 * allocates nothing after its first few ticks.
 */
#include "ctx_internal.h"
#include "clock.h"
#include "grow.h"
#include "par.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ctx_fail(vramz_ctx *ctx, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
	va_end(ap);
	return rc;
}

vramz_proc_sample *proc_vec_push(struct proc_vec *pv)
{
	if (pv->n == pv->cap) {
		vramz_proc_sample *nv = grow_array(pv->v, &pv->cap, 16, sizeof *nv);
		if (!nv)
			return NULL;
		pv->v = nv;
	}
	vramz_proc_sample *p = &pv->v[pv->n++];
	memset(p, 0, sizeof *p);
	return p;
}

vramz_mig_sample *mig_vec_push(struct mig_vec *mv)
{
	if (mv->n == mv->cap) {
		vramz_mig_sample *nv = grow_array(mv->v, &mv->cap, 16, sizeof *nv);
		if (!nv)
			return NULL;
		mv->v = nv;
	}
	vramz_mig_sample *m = &mv->v[mv->n++];
	memset(m, 0, sizeof *m);
	return m;
}

int ctx_open_ops(vramz_ctx **out, const struct backend_ops *ops, const vramz_open_opts *opts)
{
	static const vramz_open_opts none;
	vramz_ctx *ctx = calloc(1, sizeof *ctx);
	*out = ctx;
	if (!ctx)
		return VRAMZ_ENOMEM;
	if (!opts)
		opts = &none;
	ctx->ops = ops;
	if (!ops)
		return ctx_fail(ctx, VRAMZ_EUNSUPPORTED, "%s", "replay is not built in");
	int rc = ctx->ops->open(&ctx->be, opts, ctx->err, sizeof ctx->err);
	if (rc < 0)
		return rc;
	ctx->ops->system(ctx->be, &ctx->sys);
	ctx->ngpus = ctx->ops->count(ctx->be);
	if (ctx->ngpus == 0)
		return ctx_fail(ctx, VRAMZ_ENODEV, "%s", "the driver reports no GPUs");
	ctx->info = calloc(ctx->ngpus, sizeof *ctx->info);
	ctx->sel = calloc(ctx->ngpus, sizeof *ctx->sel);
	ctx->gpus = calloc(ctx->ngpus, sizeof *ctx->gpus);
	ctx->rcs = calloc(ctx->ngpus, sizeof *ctx->rcs);
	ctx->pcache = proc_cache_new("/proc");
	/* a stat read per process per tick is most of what attribution costs at
	 * 10 Hz: once a second per pid is enough (proc.h says what it risks) */
	proc_cache_set_recheck(ctx->pcache, 1000000000);
	if (!ctx->info || !ctx->sel || !ctx->gpus || !ctx->rcs || !ctx->pcache)
		return VRAMZ_ENOMEM;
	ctx->nsel = 0;
	for (unsigned i = 0; i < ctx->ngpus; i++) {
		ctx->info[i].index = i;
		/* a lost or unreadable GPU still gets an entry; its sample says lost */
		if (ctx->ops->gpu_info(ctx->be, i, &ctx->info[i]) != VRAMZ_ENOTFOUND)
			ctx->sel[ctx->nsel++] = i;
	}
	ctx->err[0] = 0;
	return 0;
}

int vramz_open(vramz_ctx **out, const vramz_open_opts *opts)
{
	const struct backend_ops *ops = &backend_nvml;
	if (opts && opts->replay_path) {
#ifdef VRAMZ_HAVE_REPLAY
		ops = &backend_replay;
#else
		ops = NULL;
#endif
	}
	return ctx_open_ops(out, ops, opts);
}

void vramz_close(vramz_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->be)
		ctx->ops->close(ctx->be);
	proc_cache_free(ctx->pcache);
	agent_scan_free(&ctx->agents);
	free(ctx->info);
	free(ctx->sel);
	free(ctx->gpus);
	free(ctx->rcs);
	free(ctx->procs.v);
	free(ctx->migs.v);
	free(ctx);
}

unsigned vramz_call_stats(const vramz_ctx *ctx, vramz_call_stat *out, unsigned cap)
{
	if (!ctx || !ctx->be || !ctx->ops->call_stats || (cap && !out))
		return 0;
	return ctx->ops->call_stats(ctx->be, out, cap);
}

const char *vramz_last_error(const vramz_ctx *ctx)
{
	return ctx ? ctx->err : "out of memory";
}

const vramz_system_info *vramz_system(const vramz_ctx *ctx)
{
	return &ctx->sys;
}

unsigned vramz_gpu_count(const vramz_ctx *ctx)
{
	return ctx->ngpus;
}

const vramz_gpu_info *vramz_gpu(const vramz_ctx *ctx, unsigned index)
{
	return index < ctx->ngpus ? &ctx->info[index] : NULL;
}

int vramz_gpu_details(vramz_ctx *ctx, unsigned index)
{
	if (index >= ctx->ngpus)
		return VRAMZ_EINVAL;
	vramz_gpu_info *gi = &ctx->info[index];
	if (gi->valid & VRAMZ_I_DETAILS)
		return 0;
	int rc = ctx->ops->gpu_details(ctx->be, index, gi);
	gi->valid |= VRAMZ_I_DETAILS;
	return rc;
}

int vramz_select(vramz_ctx *ctx, const char *spec)
{
	unsigned *sel = calloc(ctx->ngpus ? ctx->ngpus : 1, sizeof *sel);
	if (!sel)
		return VRAMZ_ENOMEM;
	int n = select_parse(ctx, spec, sel);
	if (n < 0) {
		free(sel);
		return n;
	}
	free(ctx->sel);
	ctx->sel = sel;
	ctx->nsel = (unsigned)n;
	return 0;
}

unsigned vramz_selected_count(const vramz_ctx *ctx)
{
	return ctx->nsel;
}

unsigned vramz_selected_index(const vramz_ctx *ctx, unsigned i)
{
	return i < ctx->nsel ? ctx->sel[i] : 0;
}

/* Memory no listed process accounts for: driver allocations, processes in
 * other namespaces that NVML does not list, or leaks of dead contexts. */
static void derive_unattributed(vramz_gpu_sample *g, const vramz_proc_sample *p)
{
	uint64_t sum = 0;
	if (!(g->valid & VRAMZ_F_MEM) || !(g->valid & VRAMZ_F_PROCS))
		return;
	for (unsigned i = 0; i < g->proc_count; i++) {
		if (!(p[i].valid & VRAMZ_P_USED))
			return; /* an unknown share: the remainder is unknown too */
		sum += p[i].used_bytes;
	}
	g->unattributed_bytes = g->mem_used_bytes > sum ? g->mem_used_bytes - sum : 0;
	g->valid |= VRAMZ_F_UNATTRIBUTED;
}

struct sample_job {
	vramz_ctx *ctx;
	unsigned flags;
	int *rcs;
};

static void sample_one(void *arg, unsigned s)
{
	struct sample_job *j = arg;
	vramz_gpu_sample *g = &j->ctx->gpus[s];
	unsigned idx = j->ctx->sel[s];
	memset(g, 0, sizeof *g);
	g->index = idx;
	j->rcs[s] = j->ctx->ops->sample(j->ctx->be, idx, j->flags, g);
	if (j->rcs[s] == VRAMZ_ELOST) {
		memset(g, 0, sizeof *g);
		g->index = idx;
		g->lost = 1;
	}
}

int vramz_sample(vramz_ctx *ctx, unsigned flags, const vramz_snapshot **out)
{
	unsigned ok = 0;
	int last = 0;
	ctx->procs.n = 0;
	ctx->migs.n = 0;
	if (ctx->ops->tick) {
		int rc = ctx->ops->tick(ctx->be, &ctx->snap.time_ms, &ctx->snap.mono_ns,
					ctx->err, sizeof ctx->err);
		if (rc < 0)
			return rc;
	} else {
		ctx->snap.time_ms = clock_real_ms();
		ctx->snap.mono_ns = clock_mono_ns();
	}
	struct sample_job job = {ctx, flags, ctx->rcs};
	/* A GPU's first reads cost milliseconds inside the driver (3.7 ms for
	 * utilization on H200) and PCIe throughput always takes 20 ms, so
	 * those samples run one thread per GPU; a steady tick costs a few
	 * microseconds a GPU and stays on this thread. */
	if ((ctx->ticks == 0 || (flags & VRAMZ_SAMPLE_SLOW)) && ctx->ops->parallel_safe)
		par_for(ctx->nsel, sample_one, &job);
	else
		for (unsigned s = 0; s < ctx->nsel; s++)
			sample_one(&job, s);
	ctx->ticks++;
	for (unsigned s = 0; s < ctx->nsel; s++) {
		unsigned idx = ctx->sel[s];
		vramz_gpu_sample *g = &ctx->gpus[s];
		int rc = ctx->rcs[s];
		g->proc_first = ctx->procs.n;
		if (rc < 0) {
			last = rc;
			continue;
		}
		ok++;
		if (flags & VRAMZ_SAMPLE_PROCS) {
			rc = ctx->ops->procs(ctx->be, idx, flags, &ctx->procs);
			if (rc == VRAMZ_ENOMEM)
				return rc;
			if (rc == 0)
				g->valid |= VRAMZ_F_PROCS;
		}
		g->proc_count = ctx->procs.n - g->proc_first;
		/* a replayed log's processes keep their recorded attribution */
		if (!(flags & VRAMZ_SAMPLE_NO_ATTRIB) && !ctx->ops->tick)
			for (unsigned i = g->proc_first; i < ctx->procs.n; i++)
				proc_attribute(ctx->pcache, &ctx->procs.v[i]);
		derive_unattributed(g, ctx->procs.v + g->proc_first);
		if ((flags & VRAMZ_SAMPLE_MIG) && (ctx->info[idx].valid & VRAMZ_I_MIG) &&
		    ctx->info[idx].mig_current) {
			if (ctx->ops->migs(ctx->be, idx, &ctx->migs) == VRAMZ_ENOMEM)
				return VRAMZ_ENOMEM;
		}
	}
	if ((flags & VRAMZ_SAMPLE_PROCS) && !(flags & VRAMZ_SAMPLE_NO_ATTRIB)) {
		proc_cache_sweep(ctx->pcache);
		/* what only the process knows: its PyTorch agent's figures */
		if (!ctx->ops->tick && agent_join(&ctx->agents, ctx->procs.v, ctx->procs.n,
						  ctx->info, ctx->ngpus) == VRAMZ_ENOMEM)
			return VRAMZ_ENOMEM;
	}
	ctx->snap.gpu_count = ctx->nsel;
	ctx->snap.gpus = ctx->gpus;
	ctx->snap.proc_count = ctx->procs.n;
	ctx->snap.procs = ctx->procs.v;
	ctx->snap.mig_count = ctx->migs.n;
	ctx->snap.migs = ctx->migs.v;
	*out = &ctx->snap;
	if (ok == 0 && ctx->nsel > 0) {
		if (last == VRAMZ_ELOST)
			return ctx_fail(ctx, VRAMZ_ELOST, "%s", "every selected GPU is lost");
		return last ? last : VRAMZ_EBACKEND;
	}
	return 0;
}

int vramz_topology(vramz_ctx *ctx, unsigned a, unsigned b, vramz_link *out)
{
	memset(out, 0, sizeof *out);
	if (a >= ctx->ngpus || b >= ctx->ngpus)
		return VRAMZ_EINVAL;
	if (a == b) {
		out->kind = VRAMZ_LINK_SELF;
		return 0;
	}
	return ctx->ops->topology(ctx->be, a, b, out);
}

const char *vramz_link_str(const vramz_link *l, char *buf, size_t len)
{
	static const char *names[] = {"?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
	if (l->kind == VRAMZ_LINK_NVLINK)
		snprintf(buf, len, "NV%u", l->nvlinks);
	else
		snprintf(buf, len, "%s",
			 (unsigned)l->kind < sizeof names / sizeof names[0] ? names[l->kind] : "?");
	return buf;
}
