/* SPDX-License-Identifier: Apache-2.0 */
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
#include "par.h"
#include "fields.h"
#include "procfields.h"

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

const struct ctx_backend *ctx_backend_of(const vramz_ctx *ctx, unsigned gpu, unsigned *local)
{
	for (unsigned k = 0; k < ctx->nbk; k++) {
		const struct ctx_backend *c = &ctx->bk[k];
		if (gpu >= c->info.gpu_first && gpu - c->info.gpu_first < c->info.gpu_count) {
			*local = gpu - c->info.gpu_first;
			return c;
		}
	}
	return NULL;
}

/* Opens one backend into the next slot; keeps it when it has GPUs. */
static int open_one(vramz_ctx *ctx, const struct backend_ops *ops, const vramz_open_opts *o)
{
	struct ctx_backend *c = &ctx->bk[ctx->nbk];
	memset(c, 0, sizeof *c);
	c->ops = ops;
	int rc = ops->open(&c->be, o, ctx->err, sizeof ctx->err);
	unsigned n = rc < 0 ? 0 : ops->count(c->be);
	if (rc == 0 && n == 0)
		rc = ctx_fail(ctx, VRAMZ_ENODEV, "%s: the driver reports no GPUs", ops->name);
	if (rc < 0) {
		if (c->be)
			ops->close(c->be);
		c->be = NULL;
		return rc;
	}
	snprintf(c->info.name, sizeof c->info.name, "%s", ops->name);
	snprintf(c->info.vendor, sizeof c->info.vendor, "%s", ops->vendor ? ops->vendor : "");
	c->info.gpu_first = ctx->ngpus;
	c->info.gpu_count = n;
	ops->system(c->be, &ctx->sys, &c->info);
	/* text from a driver, a segment or a log: lib/internal/text.h */
	field_sanitize_system(&ctx->sys, &c->info);
	ctx->ngpus += n;
	ctx->nbk++;
	return 0;
}

/* NOLIB and NODEV say a vendor is absent; anything else is worth telling. */
static int telling(int rc)
{
	return rc != VRAMZ_ENOLIB && rc != VRAMZ_ENODEV;
}

static int open_backends(vramz_ctx *ctx, const vramz_open_opts *o)
{
	for (unsigned k = 0; k < backends_count; k++)
		if (backends[k]->wanted && backends[k]->wanted(o)) {
			ctx->recorded = 1;
			ctx->live_recorded = backends[k]->records_now;
			return open_one(ctx, backends[k], o);
		}
	int first = 0;
	char why[sizeof ctx->err] = "";
	for (unsigned k = 0; k < backends_count && ctx->nbk < CTX_MAX_BACKENDS; k++) {
		if (backends[k]->wanted)
			continue;
		int rc = open_one(ctx, backends[k], o);
		if (rc == VRAMZ_ENOMEM)
			return rc;
		/* the error to report if no backend finds a GPU: the first
		 * telling one, else the first */
		if (rc < 0 && (!first || (!telling(first) && telling(rc)))) {
			first = rc;
			memcpy(why, ctx->err, sizeof why);
		}
	}
	if (ctx->nbk == 0)
		return ctx_fail(ctx, first ? first : VRAMZ_ENODEV, "%s", why);
	return 0;
}

static int ctx_open(vramz_ctx **out, const vramz_open_opts *opts, const vramz_abi *abi,
		    int internal)
{
	vramz_open_opts o = VRAMZ_OPEN_OPTS_INIT;
	vramz_ctx *ctx = calloc(1, sizeof *ctx);
	*out = ctx;
	if (!ctx)
		return VRAMZ_ENOMEM;
	int rc = abi_init(&ctx->abi, abi, ctx->err, sizeof ctx->err);
	if (rc == 0 && opts && internal) { /* from inside the library: this struct */
		o = *opts;
		o.size = sizeof o;
	} else if (rc == 0 && opts) {
		rc = abi_copy_in(&o, sizeof o, opts, ABI_SIZE_UPTO(vramz_open_opts, proc_util_interval_ms),
				 "vramz_open_opts", ctx->err, sizeof ctx->err);
		o.flags &= ~BACKEND_OPEN_LIBRARY;
	}
	if (rc == 0)
		rc = open_backends(ctx, &o);
	if (rc < 0)
		return rc;
	for (unsigned k = 0; k < ctx->nbk; k++) {
		size_t l = strlen(ctx->sys.backend);
		snprintf(ctx->sys.backend + l, sizeof ctx->sys.backend - l, "%s%s", k ? "+" : "",
			 ctx->bk[k].info.name);
	}
	memcpy(ctx->sys.driver_version, ctx->bk[0].info.driver_version,
	       sizeof ctx->sys.driver_version);
	ctx->info = calloc(ctx->ngpus, sizeof *ctx->info);
	ctx->sel = calloc(ctx->ngpus, sizeof *ctx->sel);
	ctx->gpus = calloc(ctx->ngpus, sizeof *ctx->gpus);
	ctx->rcs = calloc(ctx->ngpus, sizeof *ctx->rcs);
	ctx->present = calloc(ctx->ngpus, 1);
	ctx->pcache = proc_cache_new(proc_root());
	if (!ctx->info || !ctx->sel || !ctx->gpus || !ctx->rcs || !ctx->present || !ctx->pcache)
		return VRAMZ_ENOMEM;
	/* a stat read per process per tick is most of what attribution costs at
	 * 10 Hz: once a second per pid is enough (proc.h says what it risks) */
	proc_cache_set_recheck(ctx->pcache, 1000000000);
	ctx->nsel = 0;
	for (unsigned i = 0; i < ctx->ngpus; i++) {
		unsigned local;
		const struct ctx_backend *c = ctx_backend_of(ctx, i, &local);
		vramz_gpu_info *gi = &ctx->info[i];
		/* a lost or unreadable GPU still gets an entry; its sample says lost */
		if (c->ops->gpu_info(c->be, local, gi) != VRAMZ_ENOTFOUND) {
			ctx->sel[ctx->nsel++] = i;
			ctx->present[i] = 1;
		}
		gi->index = i;
		if (!gi->vendor[0])
			snprintf(gi->vendor, sizeof gi->vendor, "%s", c->ops->vendor ? c->ops->vendor : "");
		snprintf(gi->backend, sizeof gi->backend, "%s", c->ops->name);
		field_sanitize_info(gi);
	}
	ctx->err[0] = 0;
	return 0;
}

int vramz_open_abi(vramz_ctx **out, const vramz_open_opts *opts, const vramz_abi *abi)
{
	return ctx_open(out, opts, abi, 0);
}

int ctx_open_internal(vramz_ctx **out, const vramz_open_opts *opts)
{
	return ctx_open(out, opts, NULL, 1);
}

void vramz_close(vramz_ctx *ctx)
{
	if (!ctx)
		return;
	for (unsigned k = 0; k < ctx->nbk; k++)
		if (ctx->bk[k].be)
			ctx->bk[k].ops->close(ctx->bk[k].be);
	proc_cache_free(ctx->pcache);
	agent_scan_free(&ctx->agents);
	abi_free(&ctx->abi);
	free(ctx->info);
	free(ctx->sel);
	free(ctx->gpus);
	free(ctx->rcs);
	free(ctx->present);
	free(ctx->procs.v);
	free(ctx->migs.v);
	free(ctx);
}

unsigned vramz_backend_count(const vramz_ctx *ctx)
{
	return ctx ? ctx->nbk : 0;
}

const vramz_backend_info *vramz_backend(const vramz_ctx *ctx, unsigned i)
{
	return ctx && i < ctx->nbk ? &ctx->bk[i].info : NULL;
}

unsigned vramz_call_stats(const vramz_ctx *ctx, vramz_call_stat *out, unsigned cap)
{
	if (!ctx || (cap && !out))
		return 0;
	/* the first backend that keeps them (NVML's names its calls) */
	for (unsigned k = 0; k < ctx->nbk; k++)
		if (ctx->bk[k].ops->call_stats)
			return ctx->bk[k].ops->call_stats(ctx->bk[k].be, out, cap);
	return 0;
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
	unsigned local;
	const struct ctx_backend *c = ctx_backend_of(ctx, index, &local);
	int rc = c->ops->gpu_details(c->be, local, gi);
	field_sanitize_info(gi);
	gi->valid |= VRAMZ_I_DETAILS;
	return rc;
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
	unsigned local;
	const struct ctx_backend *c = ctx_backend_of(j->ctx, idx, &local);
	j->rcs[s] = c->ops->sample(c->be, local, j->flags, g);
	g->index = idx;
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
	if (ctx->recorded) {
		int rc = ctx->bk[0].ops->tick(ctx->bk[0].be, &ctx->snap.time_ms, &ctx->snap.mono_ns,
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
	int parallel = 1;
	for (unsigned k = 0; k < ctx->nbk; k++)
		parallel &= ctx->bk[k].ops->parallel_safe;
	if ((ctx->ticks == 0 || (flags & VRAMZ_SAMPLE_SLOW)) && parallel)
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
			unsigned local;
			const struct ctx_backend *c = ctx_backend_of(ctx, idx, &local);
			rc = c->ops->procs(c->be, local, flags, &ctx->procs);
			for (unsigned i = g->proc_first; i < ctx->procs.n; i++) {
				ctx->procs.v[i].gpu_index = idx;
				/* a recording's text (a segment, a log); a live
				 * backend leaves text to proc.c, which sanitizes */
				if (ctx->recorded)
					proc_field_sanitize_text(&ctx->procs.v[i]);
			}
			if (rc == VRAMZ_ENOMEM)
				return rc;
			if (rc == 0)
				g->valid |= VRAMZ_F_PROCS;
		}
		g->proc_count = ctx->procs.n - g->proc_first;
		/* a replayed log's processes keep their recorded attribution */
		if (!(flags & VRAMZ_SAMPLE_NO_ATTRIB) && !ctx->recorded)
			for (unsigned i = g->proc_first; i < ctx->procs.n; i++)
				proc_attribute(ctx->pcache, &ctx->procs.v[i]);
		derive_unattributed(g, ctx->procs.v + g->proc_first);
		if ((flags & VRAMZ_SAMPLE_MIG) && (ctx->info[idx].valid & VRAMZ_I_MIG) &&
		    ctx->info[idx].mig_current) {
			if (ctx_migs(ctx, idx, &ctx->migs) == VRAMZ_ENOMEM)
				return VRAMZ_ENOMEM;
		}
	}
	if ((flags & VRAMZ_SAMPLE_PROCS) && !(flags & VRAMZ_SAMPLE_NO_ATTRIB)) {
		proc_cache_sweep(ctx->pcache);
		/* what only the process knows: its PyTorch agent's figures (a
		 * daemon's segment carries none: they are read here, now) */
		if ((!ctx->recorded || ctx->live_recorded) && agent_join(&ctx->agents, ctx->procs.v, ctx->procs.n,
						  ctx->info, ctx->ngpus) == VRAMZ_ENOMEM)
			return VRAMZ_ENOMEM;
	}
	ctx->snap.gpu_count = ctx->nsel;
	ctx->snap.gpus = ctx->gpus;
	ctx->snap.proc_count = ctx->procs.n;
	ctx->snap.procs = ctx->procs.v;
	ctx->snap.mig_count = ctx->migs.n;
	ctx->snap.migs = ctx->migs.v;
	/* at the record sizes the caller was built with (abi.c) */
	*out = abi_snapshot_out(&ctx->abi, &ctx->snap);
	if (!*out) {
		*out = &ctx->snap;
		return VRAMZ_ENOMEM;
	}
	if (ok == 0 && ctx->nsel > 0) {
		if (last == VRAMZ_ELOST)
			return ctx_fail(ctx, VRAMZ_ELOST, "%s", "every selected GPU is lost");
		return last ? last : VRAMZ_EBACKEND;
	}
	return 0;
}

int ctx_migs(vramz_ctx *ctx, unsigned gpu, struct mig_vec *out)
{
	unsigned local, from = out->n;
	const struct ctx_backend *c = ctx_backend_of(ctx, gpu, &local);
	int rc = c->ops->migs(c->be, local, out);
	for (unsigned i = from; i < out->n; i++)
		out->v[i].parent_index = gpu;
	return rc;
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
	unsigned la = 0, lb = 0;
	const struct ctx_backend *ca = ctx_backend_of(ctx, a, &la);
	const struct ctx_backend *cb = ctx_backend_of(ctx, b, &lb);
	if (!ca || ca != cb)
		return VRAMZ_EUNSUPPORTED; /* GPUs of two vendors: no common view */
	return ca->ops->topology(ca->be, la, lb, out);
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
