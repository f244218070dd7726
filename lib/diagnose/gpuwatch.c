/* SPDX-License-Identifier: Apache-2.0 */
/* gpuwatch.c - the detectors on a GPU's own figures, apart from its
 * memory: gpu_lost (off the bus, with the last Xid it had), throttle
 * (busy time throttled by heat or power), pcie_downgraded (busy time on
 * a link below its max) and mem_temp (memory near its limit).  Throttle
 * and link time are sums kept as the GPU is fed: their structs and feed
 * hooks are the rows' state slots (kinds.h, struct kind_state), here
 * beside the detectors that read them.  Numbers only: the words are
 * advice.c's; the thresholds docs/diagnoses.md's.
 */
#include "state.h"
#include "detectors.h"

/* ---- throttle and pcie_downgraded: GPU-time sums, fed ---- */

/* busy time (utilization above 0), and of it, time throttled by each reason */
struct throttle_gpu {
	int64_t busy_ms, thermal_ms, power_ms, hw_ms;
};

static void throttle_feed_gpu(vramz_diag *d, struct gpu_state *g, void *st,
			      const vramz_gpu_sample *s, int64_t t, int64_t dt)
{
	struct throttle_gpu *th = st;
	if (s->lost || !(s->valid & VRAMZ_F_UTIL) || s->util_gpu_pct == 0)
		return;
	th->busy_ms += dt;
	if (s->valid & VRAMZ_F_THROTTLE) {
		uint64_t r = s->throttle_reasons;
		if (r & (VRAMZ_THR_SW_THERMAL | VRAMZ_THR_HW_THERMAL))
			th->thermal_ms += dt;
		if (r & (VRAMZ_THR_SW_POWER_CAP | VRAMZ_THR_HW_POWER_BRAKE))
			th->power_ms += dt;
		if (r & (VRAMZ_THR_HW_SLOWDOWN | VRAMZ_THR_HW_THERMAL | VRAMZ_THR_HW_POWER_BRAKE))
			th->hw_ms += dt;
	}
}

const struct kind_state throttle_state = {
	.gpu_size = sizeof(struct throttle_gpu),
	.feed_gpu = throttle_feed_gpu,
};

/* busy time with a known link, and of it, time below the link's max:
 * links drop to a lower generation at idle by design, so busy time only */
struct pcie_gpu {
	int64_t busy_ms, low_ms;
	unsigned low_gen, low_width;   /* latest downgraded link seen busy */
};

static void pcie_feed_gpu(vramz_diag *d, struct gpu_state *g, void *st, const vramz_gpu_sample *s,
			  int64_t t, int64_t dt)
{
	struct pcie_gpu *pc = st;
	if (s->lost || !(s->valid & VRAMZ_F_UTIL) || s->util_gpu_pct == 0 ||
	    !(s->valid & VRAMZ_F_PCIE_LINK) || !g->have_info || !(g->info.valid & VRAMZ_I_PCIE_MAX) ||
	    !g->info.pcie_max_gen)
		return;
	pc->busy_ms += dt;
	if (s->pcie_gen < g->info.pcie_max_gen || s->pcie_width < g->info.pcie_max_width) {
		pc->low_ms += dt;
		pc->low_gen = s->pcie_gen;
		pc->low_width = s->pcie_width;
	}
}

const struct kind_state pcie_state = {
	.gpu_size = sizeof(struct pcie_gpu),
	.feed_gpu = pcie_feed_gpu,
};

/* ---- per GPU: lost, throttling, link, temperature ---- */

int detect_gpu_lost(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = &d->gpus[gi];
		if (!g->seen || !g->lost)
			continue;
		vramz_finding *f = emit(em, VRAMZ_SEV_CRITICAL, 0);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_DURATION;
		f->duration_ms = g->last_ms - g->lost_ms;
		unsigned xid;
		if (health_last_xid(d, g, &xid)) { /* the last Xid seen before */
			f->figures |= VRAMZ_FG_VALUE;
			f->value = xid;
		}
	}
	return 0;
}

/* a GPU that is read: seen and not lost */
static const struct gpu_state *gpu_read(const vramz_diag *d, unsigned gi)
{
	const struct gpu_state *g = &d->gpus[gi];
	return g->seen && !g->lost ? g : NULL;
}

int detect_throttle(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = gpu_read(d, gi);
		const struct throttle_gpu *tg = g ? kind_gpu_state(d, g, VRAMZ_FK_THROTTLE) : NULL;
		if (!g || tg->busy_ms < d->cfg.throttle_min_busy_ms)
			continue;
		double busy = (double)tg->busy_ms;
		double th = tg->thermal_ms / busy, pw = tg->power_ms / busy;
		double hw = tg->hw_ms / busy;
		double share = th > pw ? th : pw;
		if (share < d->cfg.throttle_share)
			continue;
		vramz_finding *f = emit(em, hw >= 0.5 ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING, share);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_SHARE | VRAMZ_FG_VALUE | VRAMZ_FG_DURATION;
		f->share = share;
		f->value = th;
		f->ref_value = pw;
		f->duration_ms = tg->busy_ms;
	}
	return 0;
}

int detect_pcie_downgraded(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = gpu_read(d, gi);
		const struct pcie_gpu *pc = g ? kind_gpu_state(d, g, VRAMZ_FK_PCIE_DOWNGRADED) : NULL;
		if (!g || pc->busy_ms < d->cfg.throttle_min_busy_ms ||
		    (double)pc->low_ms < d->cfg.pcie_share * (double)pc->busy_ms)
			continue;
		vramz_finding *f = emit(em, VRAMZ_SEV_WARNING, (double)pc->low_gen * 100 + pc->low_width);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_SHARE | VRAMZ_FG_VALUE | VRAMZ_FG_COUNT | VRAMZ_FG_DURATION;
		f->share = (double)pc->low_ms / (double)pc->busy_ms;
		f->value = pc->low_gen;
		f->ref_value = g->info.pcie_max_gen;
		f->count = pc->low_width;
		f->ref_count = g->info.pcie_max_width;
		f->duration_ms = pc->busy_ms;
	}
	return 0;
}

int detect_mem_temp(vramz_diag *d, struct emitter *em)
{
	for (unsigned gi = 0; gi < d->ngpus; gi++) {
		const struct gpu_state *g = gpu_read(d, gi);
		if (!g || !(g->last.valid & VRAMZ_F_TEMP_MEM))
			continue;
		int limit = d->cfg.mem_temp_max_c;
		if (g->have_info && (g->info.valid & VRAMZ_I_T_MEM_MAX) && g->info.temp_mem_max_c > 0)
			limit = g->info.temp_mem_max_c;
		int t = g->last.temp_mem_c;
		if (t < limit - d->cfg.mem_temp_margin_c)
			continue;
		vramz_finding *f = emit(em, t >= limit ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING, 0);
		if (!f)
			return VRAMZ_ENOMEM;
		f->gpu = (int)gi;
		f->figures = VRAMZ_FG_VALUE;
		f->value = t;
		f->ref_value = limit;
	}
	return 0;
}
