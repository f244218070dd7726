/* SPDX-License-Identifier: Apache-2.0 */
/* findpanel.c - what the findings panel of `vramz top` shows, taken from
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
#include "tui/findpanel.h"
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
		findings_line(sum, adv, f->text[i], sizeof f->text[i]);
	}
}

/* Cuts [at, at + n) out of s. */
static void cut(char *s, char *at, size_t n)
{
	memmove(at, at + n, strlen(at + n) + 1);
	(void)s;
}

void findings_line(const char *summary, const char *advice, char *out, size_t len)
{
	char sum[256], ans[64] = "", stats[96] = "";
	fmt_snprintf(sum, sizeof sum, "%s", summary);
	/* the statistics: "(95% CI 1.0-1.2, tau 0.98)", the leak's */
	char *p = strstr(sum, " (95% CI ");
	char *q = p ? strchr(p, ')') : NULL;
	if (q) {
		fmt_snprintf(stats, sizeof stats, "%.*s", (int)(q + 1 - (p + 1)), p + 1);
		cut(sum, p, (size_t)(q + 1 - p));
	}
	/* the answer: the leak's time to out of memory, the rise's to full */
	static const struct {
		const char *lead, *tail, *say;
	} answers[] = {
		{"; out of memory in about ", ";", "out of memory in about "},
		{", the GPU full in about ", " at this pace", "full in about "},
	};
	for (unsigned k = 0; k < sizeof answers / sizeof answers[0] && !ans[0]; k++) {
		char *a = strstr(sum, answers[k].lead);
		if (!a)
			continue;
		char *v = a + strlen(answers[k].lead);
		char *e = strstr(v, answers[k].tail);
		size_t vn = e ? (size_t)(e - v) : strlen(v);
		fmt_snprintf(ans, sizeof ans, "%s%.*s", answers[k].say, (int)vn, v);
		/* the clause goes, a ';' after it stays to join what follows */
		cut(sum, a, (size_t)(v + vn - a) + (e && answers[k].tail[0] != ';' ? strlen(answers[k].tail) : 0));
	}
	fmt_snprintf(out, len, "%s%s%s.  %s%s%s%s", ans, ans[0] ? ": " : "", sum, advice,
		     stats[0] ? "  (" : "", stats, stats[0] ? ")" : "");
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
