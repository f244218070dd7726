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
 * Numbers from the engine's state (state.h: feed_health and the Xid
 * capture in engine.c) in the detectors; words in summary_* / advice_*.
 * A GPU whose counters are where they were when first seen, with no
 * remap waiting or failed and no new Xid, raises nothing.
 */
#include "detectors.h"
#include "state.h"
#include "xid.h"

#include <stdio.h>
#include <string.h>

/* a new Xid in the table's memory rows */
static int memory_xid(const struct gpu_state *g)
{
	const struct xid_info *x = xid_lookup(g->xid_last);
	return g->xid_known && g->xid_count > g->xid_base && x && x->memory;
}

int detect_vram_errors(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		if (!g->seen)
			continue;
		uint64_t unc = g->ecc_known ? g->ecc_unc - g->ecc_unc_base : 0;
		uint64_t corr = g->ecc_known ? g->ecc_corr - g->ecc_corr_base : 0;
		int mx = memory_xid(g);
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
			f->value = g->xid_last;
		}
	}
	return 0;
}

int detect_row_remap(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		if (!g->seen || !g->remap_known || (!g->remap_pending && !g->remap_failure))
			continue;
		vramz_finding *f = emit(em, g->remap_failure ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING,
					g->remap_failure);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_VALUE | VRAMZ_FG_COUNT;
		f->value = g->remap_failure;  /* 1 failed, 0 pending */
		f->count = g->last.remap_uncorrectable_rows;
		f->ref_count = g->last.remap_correctable_rows;
	}
	return 0;
}

static int xid_emit(struct emitter *em, unsigned gi, const struct gpu_state *g,
		    const struct xid_proc *x)
{
	vramz_finding *f = emit(em, VRAMZ_SEV_CRITICAL, g->xid_last);
	if (!f)
		return VRAMZ_ENOMEM;
	f->gpu = (int)gi;
	f->figures = VRAMZ_FG_VALUE | VRAMZ_FG_COUNT;
	f->value = g->xid_last;
	f->count = g->xid_count - g->xid_base;
	f->ref_count = g->xid_nprocs;
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
		if (!g->seen || !g->xid_known || g->xid_count <= g->xid_base)
			continue;
		if (!g->xid_nprocs && xid_emit(em, gi, g, NULL))
			return VRAMZ_ENOMEM;
		for (unsigned i = 0; i < g->xid_nprocs; i++)
			if (xid_emit(em, gi, g, &g->xid_procs[i]))
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
