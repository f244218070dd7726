/* SPDX-License-Identifier: Apache-2.0 */
/* findings.c - the findings' identity and keeping, apart from the engine's
 * feeding: each evaluation runs every row's detector with an emitter of
 * its kind, then merges what they raised with what stood before (a stable
 * id per kind and subject, revisions when a headline figure moves, the
 * hold of a finding whose condition has gone, report_after_ms before one
 * is handed out) and publishes the reported ones on the wall clock.  The
 * engine (engine.c) calls findings_evaluate; this file never calls the
 * engine, so lib/diagnose's graph stays a star (lint.callgraph).
 */
#include "findings.h"
#include "detectors.h"
#include "grow.h"
#include "kinds.h"
#include "state.h"

#include <stdlib.h>
#include <string.h>

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
static int figure_moved(double was, double now)
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
	int drift = figure_moved(o->rev_figure, s->rev_figure) || strcmp(o->f.site, s->f.site);
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

int findings_evaluate(vramz_diag *d)
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
	return 0;
}

