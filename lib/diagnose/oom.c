/* SPDX-License-Identifier: Apache-2.0 */
/* oom.c - the oom finding: a process that probably ended out of memory.
 *
 * A CUDA out-of-memory crash leaves no trace in NVML: the process just
 * leaves the list.  When the engine finds a process gone from a list that
 * was read, oom_check (the oom row's proc_gone hook, its state slot
 * oom_state below) asks whether its end looked like one - its GPU
 * nearly full at its last samples, a leak close to out of memory, a steep
 * rise in its last seconds beyond what was left free - and records an
 * event with the figures; detect_oom (the oom row's detector, kinds.c)
 * hands the events out as findings (live for oom_keep_ms, in a log for
 * good).  Worded as probable unless the process's PyTorch agent recorded
 * that it died of an uncaught out-of-memory error (its end record, read
 * from the file it leaves as a tombstone: issue 27); an agent's normal
 * exit is never an OOM death.  A live process whose allocator counts
 * OOMs it caught is the same row's detect_agent (torch.c).
 */
#include "state.h"
#include "detectors.h"
#include "leak.h"
#include "agent.h"

#include <stdio.h>
#include <string.h>

/* a process that probably ended out of memory (oom_check) */
struct oom_event {
	vramz_finding f;               /* subject and figures, filled at its end */
	int64_t end_ms;                /* engine time it was found gone */
};
#define DIAG_OOM_MAX 64

/* what the oom row keeps in the engine: the latest events, oldest dropped
 * (of a process: struct oom_proc, detectors.h) */
struct oom_diag {
	struct oom_event ooms[DIAG_OOM_MAX];
	unsigned nooms;
};

/* The latest window of a series that started at or before t_ms; NULL none. */
static const struct win *win_at(const struct ring *r, int64_t t_ms)
{
	const struct win *best = NULL;
	for (unsigned i = 0; i < r->n && r->w[i].t_first_ms <= t_ms; i++)
		best = &r->w[i];
	return best;
}

/* What p's end looked like from NVML: its GPU nearly full at its last
 * samples, a leak close to out of memory, a steep rise in its last seconds
 * beyond what was left free (VRAMZ_OOM_* bits); *lr_out the leak, if any. */
static uint32_t nvml_evidence(vramz_diag *d, struct proc_state *p,
			      const struct leak_result **lr_out, double *free_out, double *rise_out)
{
	const struct gpu_state *g = &d->gpus[p->gpu];
	const vramz_diag_config *c = &d->cfg;
	uint32_t ev = 0;
	double free_last = p->gpu_mem_known ? (double)p->gpu_free_bytes : -1;
	double min_free = free_last;
	if (p->gpu_mem_known) {
		/* the GPU's windows over the process's last 3 s: the least free */
		double cap = (double)(g->last.mem_free_bytes + g->last.mem_used_bytes);
		for (unsigned i = g->mem.n; i-- > 0;) {
			const struct win *w = &g->mem.w[i];
			if (w->t_last_ms < p->last_ms - 3000)
				break;
			if (w->t_first_ms > p->last_ms)
				continue;
			double f = cap - w->max_bytes;
			if (f < min_free)
				min_free = f < 0 ? 0 : f;
		}
		double thr = (double)c->oom_free_bytes;
		if (c->oom_free_share * (double)p->gpu_total_bytes > thr)
			thr = c->oom_free_share * (double)p->gpu_total_bytes;
		if (min_free < thr)
			ev |= VRAMZ_OOM_LOW_FREE;
	}
	/* the leak rules as of its end (a log evaluates only once a minute) */
	struct leak_result tmp;
	struct onset_need need = onset_need_nvml(c, free_last, p->first_ms);
	struct leak_cache *lc = &leak_of(d, p)->leak; /* the leak row's fits, reused */
	if (leak_cached(&p->mem, p->first_ms, c, &d->scratch, lc, &tmp) ||
	    leak_onset_cached(&p->mem, &need, c, &d->scratch, lc, &tmp))
		lc->r.is_leak = lc->onset.is_leak = 0; /* out of memory: no claim */
	const struct leak_result *lr = lc->r.is_leak ? &lc->r : lc->onset.is_leak ? &lc->onset : NULL;
	if (lr && free_last >= 0 && lr->tr.slope > 0 &&
	    free_last / lr->tr.slope * 1000.0 <= (double)c->leak_fast_tto_ms)
		ev |= VRAMZ_OOM_LEAKING;
	/* its rise over its last oom_rise_ms, window maxima */
	const struct win *then = win_at(&p->mem, p->last_ms - c->oom_rise_ms);
	double before = then ? then->max_bytes : p->mem.w[0].min_bytes;
	double rise = (double)p->last_bytes - before;
	double steep = 256.0 * 1048576.0;
	if (0.05 * (double)p->last_bytes > steep)
		steep = 0.05 * (double)p->last_bytes;
	if (rise >= steep && free_last >= 0 && free_last < rise)
		ev |= VRAMZ_OOM_STEEP_RISE;
	*lr_out = lr;
	*free_out = free_last;
	*rise_out = rise;
	return ev;
}

/* What p's PyTorch agent says of its end: read from the file it left as
 * a tombstone, or (a log) from the record of it the logger kept. */
enum end_says { END_UNKNOWN, END_NOT_OOM, END_OOM };

static enum end_says agent_end(vramz_diag *d, const struct proc_state *p, struct agent_figures *fig)
{
	if (!torch_of(d, p)->seen || diag_agent_figures(d, p, fig) || !fig->end.valid)
		return END_UNKNOWN;
	return fig->end.oom ? END_OOM : END_NOT_OOM;
}

/* The OOM of fig happened on another GPU of the process than p's: known
 * only when both UUIDs are. */
static int oom_elsewhere(const vramz_diag *d, const struct proc_state *p,
			 const struct agent_figures *fig)
{
	const struct gpu_state *g = &d->gpus[p->gpu];
	const char *uuid = agent_oom_uuid(fig);
	return uuid && g->have_info && g->info.uuid[0] && strcmp(uuid, g->info.uuid) != 0;
}

/* p was just found gone from a process list that was read.  Its agent's
 * end record, when there is one, decides: an uncaught out-of-memory
 * error is a certain death, with the line and the figures of the error;
 * a normal exit, another exception or a SIGTERM is never one.  Without
 * it (no agent, kill -9, a log), NVML's figures decide and the finding
 * is probable; an allocator that counted OOMs adds to that evidence but
 * is no death alone (the job may have caught them). */
static void oom_check(vramz_diag *d, struct proc_state *p, void *st)
{
	if (p->gpu >= d->ngpus || !p->mem.n)
		return;
	const vramz_diag_config *c = &d->cfg;
	struct agent_figures fig;
	enum end_says says = agent_end(d, p, &fig);
	if (says == END_NOT_OOM || (says == END_OOM && oom_elsewhere(d, p, &fig)))
		return;
	const struct leak_result *lr;
	double free_last, rise;
	uint32_t ev = nvml_evidence(d, p, &lr, &free_last, &rise);
	if (says == END_OOM)
		ev |= VRAMZ_OOM_ENDED;
	else if (!ev)
		return;
	if (p->agent_ooms > p->agent_ooms_first)
		ev |= VRAMZ_OOM_AGENT;
	struct oom_diag *od = kind_diag_state(d, VRAMZ_FK_OOM);
	if (od->nooms == DIAG_OOM_MAX) {
		memmove(&od->ooms[0], &od->ooms[1], (DIAG_OOM_MAX - 1) * sizeof od->ooms[0]);
		od->nooms--;
	}
	struct oom_event *e = &od->ooms[od->nooms++];
	memset(e, 0, sizeof *e);
	e->end_ms = d->last_ms;
	((struct oom_proc *)st)->oom_end = 1;
	vramz_finding *f = &e->f;
	f->kind = VRAMZ_FK_OOM;
	f->severity = (ev & VRAMZ_OOM_ENDED) ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING;
	f->time_to_oom_s = -1;
	p->ended = 1;
	finding_subject_proc(f, p);
	f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_VALUE | VRAMZ_FG_DURATION | VRAMZ_FG_EVIDENCE;
	f->bytes = p->last_bytes;
	f->value = rise;
	f->ref_value = (double)c->oom_rise_ms / 1000.0;
	f->duration_ms = p->last_ms - p->first_ms;
	f->evidence = ev;
	if (free_last >= 0) {
		f->figures |= VRAMZ_FG_REF;
		f->ref_bytes = (uint64_t)free_last;
	}
	if (lr && lr->tr.slope > 0) {
		f->figures |= VRAMZ_FG_RATE;
		f->rate_bytes_per_s = lr->tr.slope;
		f->rate_ci_low_bytes_per_s = lr->tr.ci_low;
		f->rate_ci_high_bytes_per_s = lr->tr.ci_high;
	}
	if (says == END_OOM)
		torch_oom_figures(f, &fig);
}

/* a process seen again is not (or no longer) gone out of memory */
static int oom_feed_proc(vramz_diag *d, struct proc_state *p, void *st, const vramz_proc_sample *s,
			 int64_t t)
{
	((struct oom_proc *)st)->oom_end = 0;
	return 0;
}

const struct kind_state oom_state = {
	.proc_size = sizeof(struct oom_proc), .diag_size = sizeof(struct oom_diag),
	.feed_proc = oom_feed_proc,
	.proc_gone = oom_check,
};

/* live: an oom finding stays oom_keep_ms; in a log, for good */
int detect_oom(vramz_diag *d, struct emitter *em)
{
	const struct oom_diag *od = kind_diag_state(d, VRAMZ_FK_OOM);
	for (unsigned i = 0; i < od->nooms; i++) {
		const struct oom_event *e = &od->ooms[i];
		if (!d->cfg.keep_ended && d->last_ms - e->end_ms > d->cfg.oom_keep_ms)
			continue;
		vramz_finding *f = emit(em, e->f.severity, (double)e->f.bytes);
		if (!f)
			return VRAMZ_ENOMEM;
		*f = e->f;
	}
	return 0;
}

const char *check_oom(const vramz_diag_config *c, char *buf, size_t len)
{
	if (!(c->oom_free_share >= 0 && c->oom_free_share < 1))
		snprintf(buf, len, "oom_free_share %g: must be at least 0 and below 1",
			 c->oom_free_share);
	else if (c->oom_rise_ms < 0 || c->oom_keep_ms < 0)
		snprintf(buf, len, "oom_rise_ms, oom_keep_ms: must not be negative");
	else
		return NULL;
	return buf;
}
