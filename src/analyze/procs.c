/* SPDX-License-Identifier: Apache-2.0 */
/* procs.c - the per-process side of `vramz analyze`: for every
 * process of a log (keyed by GPU, pid and start time, as the engine keys
 * them), its memory at first sight, at its peak and at its last sample, its
 * growth, and its command line - so a report names "python3 train.py
 * --bs 64", not just "python3", and shows what grew even when no rule
 * fired (a log too short to judge, a growth that stopped).
 *
 * Bounded: at most APROCS_MAX (16384) processes are tracked (a log of 100,000 pids
 * in one tick costs a few MB here); more are counted, not kept.
 */
#include "analyze/procs.h"

#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "grow.h"
#include "text.h"

void aprocs_free(struct aprocs *a)
{
	free(a->p);
	htab_free(&a->index);
	memset(a, 0, sizeof *a);
}

const struct aproc *aprocs_find(const struct aprocs *a, unsigned gpu, uint32_t pid,
				uint64_t start_ticks)
{
	unsigned idx1 = htab_pkey_get(&a->index, gpu, pid, start_ticks);
	return idx1 ? &a->p[idx1 - 1] : NULL;
}

int aprocs_add(struct aprocs *a, const vramz_snapshot *snap)
{
	for (unsigned i = 0; i < snap->proc_count; i++) {
		const vramz_proc_sample *s = &snap->procs[i];
		/* the engine's key: a process not visible has no start time */
		uint64_t start = (s->valid & VRAMZ_P_VISIBLE) ? s->start_time_ticks : 0;
		struct aproc *p = (struct aproc *)aprocs_find(a, s->gpu_index, s->pid, start);
		if (!p) {
			if (a->n >= APROCS_MAX) {
				a->dropped++;
				continue;
			}
			if (a->n == a->cap) {
				struct aproc *np = grow_array(a->p, &a->cap, 64, sizeof *np);
				if (!np)
					return -1;
				a->p = np;
			}
			if (htab_pkey_put(&a->index, s->gpu_index, s->pid, start, a->n))
				return -1;
			p = &a->p[a->n++];
			memset(p, 0, sizeof *p);
			p->gpu = s->gpu_index;
			p->pid = s->pid;
			p->start_ticks = start;
			p->first_ms = p->last_ms = snap->time_ms;
		}
		if (snap->time_ms > p->last_ms)
			p->seen_ms += snap->time_ms - p->last_ms;
		p->last_ms = snap->time_ms;
		if (!p->cmd[0] && (s->valid & VRAMZ_P_VISIBLE)) {
			snprintf(p->cmd, sizeof p->cmd, "%s", s->cmdline[0] ? s->cmdline : s->comm);
			snprintf(p->user, sizeof p->user, "%s", s->user);
		}
		if (!(s->valid & VRAMZ_P_USED))
			continue;
		if (!p->have_bytes)
			p->first_bytes = s->used_bytes;
		p->have_bytes = 1;
		p->last_bytes = s->used_bytes;
		if (s->used_bytes > p->peak_bytes)
			p->peak_bytes = s->used_bytes;
	}
	return 0;
}

const char *aprocs_safe(char *buf, size_t len, const char *s)
{
	return text_safe(buf, len, s);
}

static int64_t growth(const struct aproc *p)
{
	return (int64_t)p->last_bytes - (int64_t)p->first_bytes;
}

static const struct aprocs *sort_ctx;

static int cmp_growth(const void *x, const void *y)
{
	const struct aproc *a = &sort_ctx->p[*(const unsigned *)x], *b = &sort_ctx->p[*(const unsigned *)y];
	int64_t ga = growth(a), gb = growth(b);
	if (ga != gb)
		return ga > gb ? -1 : 1;
	if (a->peak_bytes != b->peak_bytes)
		return a->peak_bytes > b->peak_bytes ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

static unsigned *sorted(const struct aprocs *a)
{
	unsigned *ix = malloc((a->n ? a->n : 1) * sizeof *ix);
	if (!ix)
		return NULL;
	for (unsigned i = 0; i < a->n; i++)
		ix[i] = i;
	sort_ctx = a;
	qsort(ix, a->n, sizeof *ix, cmp_growth);
	return ix;
}

void aprocs_print(const struct aprocs *a, FILE *o, unsigned max)
{
	unsigned *ix = sorted(a);
	if (!ix || !a->n) {
		free(ix);
		return;
	}
	unsigned rows = max && max < a->n ? max : a->n;
	fprintf(o, "\nwhat grew (per process and GPU, most first):\n");
	fprintf(o, "%8s %3s %10s %10s %10s %10s %8s  %s\n", "PID", "GPU", "FIRST", "PEAK", "LAST",
		"GROWTH", "SEEN", "COMMAND");
	for (unsigned r = 0; r < rows; r++) {
		const struct aproc *p = &a->p[ix[r]];
		char f[32], pk[32], l[32], g[40], d[32], c[VRAMZ_CMD_LEN];
		int64_t gr = growth(p);
		if (p->have_bytes) {
			char gb[32];
			fmt_bytes(gb, sizeof gb, (uint64_t)(gr < 0 ? -gr : gr));
			snprintf(g, sizeof g, "%s%s", gr < 0 ? "-" : gr > 0 ? "+" : "", gb);
		} else {
			snprintf(g, sizeof g, "-");
		}
		fprintf(o, "%8u %3u %10s %10s %10s %10s %8s  %s\n", (unsigned)p->pid, p->gpu,
			fmt_bytes_if(f, sizeof f, p->have_bytes, p->first_bytes),
			fmt_bytes_if(pk, sizeof pk, p->have_bytes, p->peak_bytes),
			fmt_bytes_if(l, sizeof l, p->have_bytes, p->last_bytes), g,
			fmt_duration(d, sizeof d, p->seen_ms),
			p->cmd[0] ? aprocs_safe(c, sizeof c, p->cmd) : "-");
	}
	if (rows < a->n)
		fprintf(o, "(%u more; --json lists all)\n", a->n - rows);
	if (a->dropped)
		fprintf(o, "(%u processes beyond %u not tracked)\n", a->dropped, APROCS_MAX);
	free(ix);
}

void aprocs_json(const struct aprocs *a, struct jsonw *w)
{
	unsigned *ix = sorted(a);
	jw_arr(w, "processes");
	for (unsigned r = 0; ix && r < a->n; r++) {
		const struct aproc *p = &a->p[ix[r]];
		jw_obj(w, NULL);
		jw_u64(w, "pid", p->pid);
		jw_u64(w, "gpu", p->gpu);
		jw_u64_if(w, "start_time_ticks", p->start_ticks != 0, p->start_ticks);
		jw_str(w, "cmdline", p->cmd[0] ? p->cmd : NULL);
		jw_str(w, "user", p->user[0] ? p->user : NULL);
		jw_i64(w, "first_time_ms", p->first_ms);
		jw_i64(w, "last_time_ms", p->last_ms);
		jw_i64(w, "seen_ms", p->seen_ms);
		jw_u64_if(w, "first_bytes", p->have_bytes, p->first_bytes);
		jw_u64_if(w, "peak_bytes", p->have_bytes, p->peak_bytes);
		jw_u64_if(w, "last_bytes", p->have_bytes, p->last_bytes);
		jw_i64_if(w, "growth_bytes", p->have_bytes, growth(p));
		jw_end_obj(w);
	}
	jw_end_arr(w);
	jw_u64(w, "processes_not_tracked", a->dropped);
	free(ix);
}
