/* findings.c - interim findings for the dashboard's panel, derived from
 * the model's own history until the diagnosis engine (branch diag) is on
 * main; see findings.h for how it will be wired in.
 *
 * Three checks, each cheap enough for every tick: a GPU whose used memory
 * has grown steadily over the last minutes (a least-squares slope, and the
 * time until free memory runs out at that rate); a process that holds
 * memory but has not used the SMs for a while; memory no listed process
 * owns (a context of a dead process, or one in a PID namespace NVML does
 * not list).  Figures are computed first, words only in findings_text.
 */
#include "tui/findings.h"

#include <stdio.h>
#include <string.h>

#include "fmt.h"

#define LEAK_WINDOW_MS (5 * 60 * 1000)
#define LEAK_MIN_SPAN_MS (30 * 1000)
#define LEAK_HORIZON_MS (24LL * 3600 * 1000)

static void add(struct findings *f, const struct finding *x)
{
	if (f->n < FINDINGS_MAX)
		f->v[f->n++] = *x;
}

/* Least-squares slope of used memory over the window, bytes/s; 0 when the
 * history is short or not rising steadily. */
static double leak_rate(const struct model_gpu *g)
{
	const struct hist_point *newest = model_hist(g, 0);
	if (!newest || !newest->mem_valid)
		return 0;
	double n = 0, st = 0, su = 0, stt = 0, stu = 0;
	int64_t t0 = newest->time_ms, oldest = t0;
	uint64_t first_used = newest->used_bytes;
	for (unsigned b = 0;; b++) {
		const struct hist_point *h = model_hist(g, b);
		if (!h || t0 - h->time_ms > LEAK_WINDOW_MS)
			break;
		if (!h->mem_valid)
			continue;
		double t = (double)(h->time_ms - t0) / 1000.0, u = (double)h->used_bytes;
		n++, st += t, su += u, stt += t * t, stu += t * u;
		oldest = h->time_ms;
		first_used = h->used_bytes;
	}
	if (n < 10 || t0 - oldest < LEAK_MIN_SPAN_MS)
		return 0;
	double den = n * stt - st * st;
	if (den <= 0)
		return 0;
	double slope = (n * stu - st * su) / den;
	/* a steady climb, not one allocation: the growth must be visible
	 * end to end and above the noise of a percent of the card */
	if (slope <= 0 || newest->used_bytes <= first_used ||
	    newest->used_bytes - first_used < newest->total_bytes / 100)
		return 0;
	return slope;
}

void findings_update(struct findings *f, struct model *m, const struct findings_opts *o)
{
	f->n = 0;
	for (unsigned i = 0; i < m->ngpus; i++) {
		struct model_gpu *g = &m->gpus[i];
		const vramz_gpu_sample *s = &g->cur.s;
		g->finding = 0;
		if (!g->present || s->lost || !(s->valid & VRAMZ_F_MEM))
			continue;
		double rate = leak_rate(g);
		if (rate > 0) {
			int64_t ttf = (int64_t)((double)s->mem_free_bytes / rate * 1000.0);
			if (ttf < LEAK_HORIZON_MS)
				add(f, &(struct finding){
					.severity = ttf < 3600 * 1000 ? SEV_CRIT : SEV_WARN,
					.kind = "leak", .gpu = (int)s->index,
					.rate_bytes_per_s = rate, .time_to_full_ms = ttf,
					.bytes = s->mem_used_bytes});
		}
		if ((s->valid & VRAMZ_F_UNATTRIBUTED) && s->unattributed_bytes >= o->min_bytes)
			add(f, &(struct finding){.severity = SEV_WARN, .kind = "orphaned",
						 .gpu = (int)s->index,
						 .bytes = s->unattributed_bytes});
	}
	for (unsigned i = 0; i < m->nrows; i++) {
		struct model_row *r = &m->rows[i];
		r->finding = 0;
		if (r->idle_valid && r->idle_ms >= o->idle_after_ms && r->vram_valid &&
		    r->vram_bytes >= o->min_bytes)
			add(f, &(struct finding){.severity = SEV_WARN, .kind = "idle",
						 .gpu = (int)r->first_gpu, .pid = r->pid,
						 .idle_ms = r->idle_ms, .bytes = r->vram_bytes});
	}
	/* worst first, then mark the subjects for the tables */
	for (unsigned i = 1; i < f->n; i++)
		for (unsigned j = i; j > 0 && f->v[j].severity > f->v[j - 1].severity; j--) {
			struct finding t = f->v[j];
			f->v[j] = f->v[j - 1];
			f->v[j - 1] = t;
		}
	for (unsigned k = 0; k < f->n; k++) {
		const struct finding *x = &f->v[k];
		for (unsigned i = 0; i < m->ngpus; i++)
			if (!x->pid && (int)m->gpus[i].cur.s.index == x->gpu &&
			    m->gpus[i].finding < x->severity)
				m->gpus[i].finding = x->severity;
		int r = x->pid ? model_find_pid(m, x->pid) : -1;
		if (r >= 0 && m->rows[r].finding < x->severity)
			m->rows[r].finding = x->severity;
	}
}

void findings_text(const struct finding *x, char *buf, size_t len)
{
	char a[24], b[24];
	if (!strcmp(x->kind, "leak"))
		snprintf(buf, len, "GPU %d memory growing %s/s: full in %s at this rate",
			 x->gpu, fmt_bytes(a, sizeof a, (uint64_t)x->rate_bytes_per_s),
			 fmt_duration(b, sizeof b, x->time_to_full_ms));
	else if (!strcmp(x->kind, "idle"))
		snprintf(buf, len, "pid %u idle %s%s on GPU %d, holds %s", x->pid,
			 "", fmt_duration(a, sizeof a, x->idle_ms), x->gpu,
			 fmt_bytes(b, sizeof b, x->bytes));
	else if (!strcmp(x->kind, "orphaned"))
		snprintf(buf, len,
			 "GPU %d: %s used by no listed process (dead context or other namespace)",
			 x->gpu, fmt_bytes(a, sizeof a, x->bytes));
	else
		snprintf(buf, len, "%s", x->kind);
}
