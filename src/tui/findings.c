/* SPDX-License-Identifier: Apache-2.0 */
/* findings.c - what the findings panel of `vramz top` shows, taken from
 * the diagnosis engine: the same engine, thresholds and words as `vramz
 * watch` and `vramz analyze`, so the dashboard never says something the
 * other two would not (an earlier stand-in here fitted a slope to a GPU's
 * used memory and called a job's start-up allocation a leak).
 *
 * The engine runs on the sampler thread and each tick arrives with a copy
 * of the findings after it; here they only change hands, are put into
 * words once per tick (vramz_finding_summary and _advice, not once per
 * frame), and mark what they name so the GPU blocks and the process table
 * can show a '!' in the severity's colour.
 */
#include "tui/findings.h"
#include "format/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void findings_free(struct findings *f)
{
	free(f->v);
	free(f->text);
	memset(f, 0, sizeof *f);
}

void findings_take(struct findings *f, struct tui_snap *s)
{
	if (s->catchup || s->err < 0)
		return;
	free(f->v);
	f->v = s->findings;
	f->n = s->nfindings;
	s->findings = NULL;
	s->nfindings = 0;
	if (f->n > f->cap_text) {
		void *t = realloc(f->text, f->n * sizeof *f->text);
		if (!t) {
			f->n = f->cap_text; /* show what there is room for */
		} else {
			f->text = t;
			f->cap_text = f->n;
		}
	}
	for (unsigned i = 0; i < f->n; i++) {
		char sum[256], adv[256];
		vramz_finding_summary(&f->v[i], sum, sizeof sum);
		vramz_finding_advice(&f->v[i], adv, sizeof adv);
		fmt_snprintf(f->text[i], sizeof f->text[i], "%s.  %s", sum, adv);
	}
}

const char *findings_text(const struct findings *f, unsigned i)
{
	return i < f->n ? f->text[i] : "";
}

void findings_mark(const struct findings *f, struct model *m)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		m->gpus[i].finding = 0;
	for (unsigned i = 0; i < m->nrows; i++)
		m->rows[i].finding = 0;
	for (unsigned k = 0; k < f->n; k++) {
		const vramz_finding *x = &f->v[k];
		int sev = (int)x->severity;
		for (unsigned i = 0; x->gpu >= 0 && i < m->ngpus; i++)
			if ((int)m->gpus[i].cur.s.index == x->gpu && m->gpus[i].finding < sev)
				m->gpus[i].finding = sev;
		int r = x->pid ? model_find_pid(m, x->pid) : -1;
		/* the same pid of another process (reused) is not the subject */
		if (r >= 0 && x->start_time_ticks && m->rows[r].start_ticks &&
		    x->start_time_ticks != m->rows[r].start_ticks)
			r = -1;
		if (r >= 0 && m->rows[r].finding < sev)
			m->rows[r].finding = sev;
	}
}
