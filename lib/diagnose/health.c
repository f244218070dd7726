/* SPDX-License-Identifier: Apache-2.0 */
/* health.c - the VRAM health findings (docs/health.md, docs/diagnoses.md):
 *   vram_errors  new ECC errors since the GPU was first seen: critical for
 *                an uncorrected one or a memory Xid (48, 92, 94, 95, the
 *                rows of lib/xid.c marked memory), a warning for corrected
 *                ones rising;
 *   row_remap    a remap pending (warning: drain and reset) or failed
 *                (critical: replace the GPU);
 *   xid          a critical Xid the driver raised while watched, once per
 *                process that was on the GPU then (whose job it hit).
 * What they judge is kept here as it is fed (struct health_gpu, the
 * vram_errors row's state slot; the xid row's hook captures who was on a
 * GPU); numbers in the detectors, words in summary_* / advice_*.
 * A GPU whose counters are where they were when first seen, with no
 * remap waiting or failed and no new Xid, raises nothing.
 */
#include "detectors.h"
#include "state.h"
#include "xid.h"

#include <stdio.h>
#include <string.h>

/* What VRAM health keeps of a GPU: its counters when first seen, and now */
struct health_gpu {
	int ecc_known;                 /* an ECC counter was read */
	uint64_t ecc_unc_base, ecc_corr_base, ecc_unc, ecc_corr;
	int remap_known;
	unsigned remap_pending, remap_failure;
	int xid_known;                 /* an event watcher's figures came */
	unsigned xid_base, xid_count, xid_last, xid_captured; /* counts of Xid events */
	uint64_t xid_time_ms;
	/* the processes on the GPU when its latest new Xid came (whose job it hit) */
#define XID_PROCS_MAX 8
	unsigned xid_nprocs;
	struct xid_proc {
		uint32_t pid;
		uint64_t start_ticks;
		char comm[16];
		char user[VRAMZ_USER_LEN];
		char job[VRAMZ_JOB_LEN];
	} xid_procs[XID_PROCS_MAX];
};

static struct health_gpu *health_of(const vramz_diag *d, const struct gpu_state *g)
{
	return kind_gpu_state(d, g, VRAMZ_FK_VRAM_ERRORS);
}

int health_last_xid(const vramz_diag *d, const struct gpu_state *g, unsigned *xid)
{
	const struct health_gpu *h = health_of(d, g);
	*xid = h->xid_last;
	return h->xid_known && h->xid_count;
}

/* a new Xid in the table's memory rows */
static int memory_xid(const struct health_gpu *h)
{
	const struct xid_info *x = xid_lookup(h->xid_last);
	return h->xid_known && h->xid_count > h->xid_base && x && x->memory;
}

/* ---- feeding ---- */

/* The health counters: an uncorrected (volatile, else aggregate) count and
 * a corrected one, each against its first reading, and the remap state. */
static void feed_counters(struct health_gpu *h, const vramz_gpu_sample *s)
{
	uint32_t ecc = s->valid & VRAMZ_F_ECC_VOL ? VRAMZ_F_ECC_VOL : s->valid & VRAMZ_F_ECC_AGG;
	if (ecc) {
		uint64_t unc = ecc == VRAMZ_F_ECC_VOL ? s->ecc_uncorrected_volatile
						      : s->ecc_uncorrected_aggregate;
		uint64_t corr = ecc == VRAMZ_F_ECC_VOL ? s->ecc_corrected_volatile
						       : s->ecc_corrected_aggregate;
		/* a counter that went back (a driver reload): counted from there */
		if (!h->ecc_known || unc < h->ecc_unc_base || corr < h->ecc_corr_base) {
			h->ecc_unc_base = unc;
			h->ecc_corr_base = corr;
		}
		h->ecc_known = 1;
		h->ecc_unc = unc;
		h->ecc_corr = corr;
	}
	h->remap_known = (s->valid & VRAMZ_F_REMAP) != 0;
	h->remap_pending = h->remap_known && s->remap_pending;
	h->remap_failure = h->remap_known && s->remap_failure;
}

/* Who was on each GPU when a new Xid came: its processes as of this feed
 * (a GPU lost in the same tick still lists them). */
static void xid_after_feed(vramz_diag *d)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		struct health_gpu *h = health_of(d, &d->gpus[gi]);
		if (!h->xid_known || h->xid_count == h->xid_captured)
			continue;
		h->xid_captured = h->xid_count;
		h->xid_nprocs = 0;
		for (unsigned i = 0; i < d->nprocs && h->xid_nprocs < XID_PROCS_MAX; i++) {
			const struct proc_state *p = &d->procs[i];
			if (!p->used || p->ended || p->gpu != gi)
				continue;
			struct xid_proc *x = &h->xid_procs[h->xid_nprocs++];
			x->pid = p->pid;
			x->start_ticks = p->start_ticks;
			memcpy(x->comm, p->comm, sizeof x->comm);
			memcpy(x->user, p->user, sizeof x->user);
			memcpy(x->job, p->job, sizeof x->job);
		}
	}
}

/* The feed hook of VRAM health (the vram_errors row): the event
 * watcher's Xid figures, which come with a lost GPU's sample too, then
 * the ECC counters and the remap state. */
static void health_feed_gpu(vramz_diag *d, struct gpu_state *g, void *st,
			    const vramz_gpu_sample *s, int64_t t, int64_t dt)
{
	struct health_gpu *h = st;
	if (s->valid & VRAMZ_F_XID) {
		if (!h->xid_known)
			h->xid_base = h->xid_captured = s->xid_events;
		h->xid_known = 1;
		h->xid_count = s->xid_events;
		h->xid_last = s->xid_last;
		h->xid_time_ms = s->xid_time_ms;
	}
	if (!s->lost)
		feed_counters(h, s);
}

const struct kind_state vram_errors_state = {
	.gpu_size = sizeof(struct health_gpu),
	.feed_gpu = health_feed_gpu,
};

const struct kind_state xid_state = {
	.after_feed = xid_after_feed,
};

int detect_vram_errors(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		const struct health_gpu *h = health_of(d, g);
		if (!g->seen)
			continue;
		uint64_t unc = h->ecc_known ? h->ecc_unc - h->ecc_unc_base : 0;
		uint64_t corr = h->ecc_known ? h->ecc_corr - h->ecc_corr_base : 0;
		int mx = memory_xid(h);
		if (!unc && !corr && !mx)
			continue;
		int crit = unc || mx;
		vramz_finding *f = emit(em, crit ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING,
					(double)(unc * 1000 + corr));
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_COUNT;
		f->count = (unsigned)unc;     /* new uncorrected errors */
		f->ref_count = (unsigned)corr; /* new corrected errors */
		if (mx) {
			f->figures |= VRAMZ_FG_VALUE;
			f->value = h->xid_last;
		}
	}
	return 0;
}

int detect_row_remap(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		const struct health_gpu *h = health_of(d, g);
		if (!g->seen || !h->remap_known || (!h->remap_pending && !h->remap_failure))
			continue;
		vramz_finding *f = emit(em, h->remap_failure ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING,
					h->remap_failure);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_VALUE | VRAMZ_FG_COUNT;
		f->value = h->remap_failure;  /* 1 failed, 0 pending */
		f->count = g->last.remap_uncorrectable_rows;
		f->ref_count = g->last.remap_correctable_rows;
	}
	return 0;
}

static int xid_emit(struct emitter *em, unsigned gi, const struct health_gpu *h,
		    const struct xid_proc *x)
{
	vramz_finding *f = emit(em, VRAMZ_SEV_CRITICAL, h->xid_last);
	if (!f)
		return VRAMZ_ENOMEM;
	f->gpu = (int)gi;
	f->figures = VRAMZ_FG_VALUE | VRAMZ_FG_COUNT;
	f->value = h->xid_last;
	f->count = h->xid_count - h->xid_base;
	f->ref_count = h->xid_nprocs;
	if (x) {
		f->pid = x->pid;
		f->start_time_ticks = x->start_ticks;
		memcpy(f->comm, x->comm, sizeof f->comm);
		memcpy(f->user, x->user, sizeof f->user);
		memcpy(f->job, x->job, sizeof f->job);
	}
	return 0;
}

int detect_xid(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		const struct health_gpu *h = health_of(d, g);
		if (!g->seen || !h->xid_known || h->xid_count <= h->xid_base)
			continue;
		if (!h->xid_nprocs && xid_emit(em, gi, h, NULL))
			return VRAMZ_ENOMEM;
		for (unsigned i = 0; i < h->xid_nprocs; i++)
			if (xid_emit(em, gi, h, &h->xid_procs[i]))
				return VRAMZ_ENOMEM;
	}
	return 0;
}

/* ---- words ---- */

void summary_vram_errors(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char x[160] = "";
	if (f->figures & VRAMZ_FG_VALUE)
		snprintf(x, sizeof x, "; Xid %.0f: %s", f->value, xid_meaning((unsigned)f->value));
	if (f->count)
		snprintf(buf, len, "%s: %u new uncorrected ECC error%s (%u corrected)%s", s, f->count,
			 f->count == 1 ? "" : "s", f->ref_count, x);
	else if (f->ref_count)
		snprintf(buf, len, "%s: corrected ECC errors rising (%u new)%s", s, f->ref_count, x);
	else
		snprintf(buf, len, "%s: a VRAM error%s", s, x);
}

void advice_vram_errors(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	(void)s;
	if (f->severity == VRAMZ_SEV_CRITICAL)
		snprintf(buf, len, "%s", "The jobs on this GPU may have read bad data: drain it, "
					 "reset it (nvidia-smi -r) and check that its rows remapped; "
					 "rerun what was hit.");
	else
		snprintf(buf, len, "%s", "Corrected errors cost nothing yet; watch the rate, and plan a "
					 "reset if it keeps rising.");
}

void summary_row_remap(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	if (f->value > 0)
		snprintf(buf, len, "%s: a row remapping failed (%u uncorrectable, %u correctable rows "
				   "remapped): no spare rows left", s, f->count, f->ref_count);
	else
		snprintf(buf, len, "%s: a row remapping is pending (%u uncorrectable, %u correctable rows "
				   "remapped)", s, f->count, f->ref_count);
}

void advice_row_remap(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	(void)s;
	if (f->value > 0)
		snprintf(buf, len, "%s", "Replace the GPU: it cannot remap more rows, and its memory "
					 "errors will reach the jobs.");
	else
		snprintf(buf, len, "%s", "Drain and reset the GPU (nvidia-smi -r) when it is free: the "
					 "remap takes effect only then.");
}

void summary_xid(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s: Xid %.0f, %s%s", s, f->value, xid_meaning((unsigned)f->value),
		 f->pid ? " (its job was on the GPU then)" : "");
}

void advice_xid(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	(void)s;
	const struct xid_info *x = xid_lookup((unsigned)f->value);
	snprintf(buf, len, "%s%s", x ? x->action : "look the code up in NVIDIA's Xid catalogue",
		 "; dmesg has the driver's own line.");
	if (len && buf[0] >= 'a' && buf[0] <= 'z') /* the table's actions are mid-sentence */
		buf[0] = (char)(buf[0] - 'a' + 'A');
}
