/* SPDX-License-Identifier: Apache-2.0 */
/* procpage.c - the process page of `vramz top` (Enter on a row, Esc back):
 * everything vramz knows about one GPU process in one place.
 *
 *   its whole command line, user, state, CPU %, resident memory, when it
 *   started; its container, Kubernetes pod or Slurm job; its memory and
 *   SM use on each GPU; its PyTorch allocator's figures when the agent
 *   is attached (allocated, reserved, inactive split, retries, OOMs and
 *   what is held outside the allocator), GPU by GPU; the findings naming
 *   it with their advice and, for a leak, the Python line it grows at;
 *   and, in the rows left, a chart of its memory on each GPU over time.
 *
 * `k` on the page kills it with the table's checks (kill.c).  A process
 * that leaves the GPU list stays on the page, said to be gone, with its
 * chart, until Esc.
 */
#include "tui/render.h"

#include <string.h>

#include "clock.h"
#include "format/fmt.h"
#include "tui/chart.h"
#include "tui/term.h"

#define GIB 1073741824.0
#define CMD_LINES 3

static const char *state_word(char s)
{
	switch (s) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "uninterruptible (disk or driver wait)";
	case 'Z': return "zombie";
	case 'T': return "stopped";
	case 't': return "stopped by a tracer";
	case 'I': return "idle";
	case 'X': return "dead";
	default: return "";
	}
}

/* The bytes of s that fill w columns (UTF-8 lead bytes counted). */
static size_t bytes_for(const char *s, int w)
{
	size_t i = 0;
	for (int cols = 0; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80 && cols++ == w)
			break;
	}
	return i;
}

/* The text of the command over up to CMD_LINES rows; returns the rows. */
static int command_lines(int y, const char *cmd)
{
	int x0 = 9, w = COLS - x0, n = 0;
	put(y, 0, x0, ROLE_DIM, "command", 0);
	while (*cmd && n < CMD_LINES && w > 8) {
		size_t b = bytes_for(cmd, w);
		char line[1024];
		if (b >= sizeof line)
			b = sizeof line - 1;
		memcpy(line, cmd, b);
		line[b] = 0;
		cmd += b;
		if (*cmd && n == CMD_LINES - 1 && b > 0) /* more than fits: say so */
			put(y + n, COLS - 1, 1, ROLE_DIM, term_utf8() ? "…" : "+", 0);
		put(y + n, x0, *cmd && n == CMD_LINES - 1 ? w - 1 : w, ROLE_NORMAL, line, 0);
		n++;
	}
	return n ? n : 1;
}

/* "2026-12-02 11:00:00" of a process age_ms old; "" unknown */
static void started(char *buf, size_t len, const struct app *a, const struct model_row *r)
{
	struct tm tm;
	buf[0] = 0;
	if (a->replay || !r->age_valid || !local_tm(clock_real_ms() - r->age_ms, &tm))
		return;
	fmt_snprintf(buf, len, "%d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
		     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int host_line(int y, const struct app *a, const struct model_row *r)
{
	char cpu[24], rss[24], age[24], st[24], line[512];
	if (!r->visible) {
		put(y, 0, COLS, ROLE_DIM, "user -   not visible from this PID namespace: "
		    "no host details (NVML lists its pid, /proc here has no such process)", 0);
		return 1;
	}
	if (r->cpu_valid)
		fmt_snprintf(cpu, sizeof cpu, "%u.%u%%", r->cpu_tenths / 10, r->cpu_tenths % 10);
	else
		fmt_snprintf(cpu, sizeof cpu, "-");
	fmt_bytes_if(rss, sizeof rss, r->rss_valid, r->rss_bytes);
	fmt_duration(age, sizeof age, r->age_valid ? r->age_ms : -1);
	started(st, sizeof st, a, r);
	fmt_snprintf(line, sizeof line,
		     "user %s (uid %u)   state %c%s%s   CPU %s   RSS %s   up %s%s%s%s   parent %u",
		     r->user, r->uid, r->state ? r->state : '-', r->state ? " " : "", state_word(r->state),
		     cpu, rss, age, st[0] ? " (since " : "", st, st[0] ? ")" : "", r->ppid);
	put(y, 0, COLS, ROLE_NORMAL, line, 0);
	return 1;
}

/* Its job, container, pod and Slurm job, from the latest sample of it. */
static int job_line(int y, const vramz_proc_sample *p, const struct model_row *r)
{
	char line[1024];
	int named = p && p->pod[0] && p->pod_namespace[0];
	fmt_snprintf(line, sizeof line, "job %s   container %s%s%s%s   pod %s%s%s%s%s   slurm job %s",
		     r->job[0] ? r->job : "-", p && p->container[0] ? p->container : "-",
		     p && p->container_name[0] ? " (" : "", p ? p->container_name : "",
		     p && p->container_name[0] ? ")" : "",
		     named ? p->pod_namespace : "", named ? "/" : "", named ? p->pod : "",
		     named ? " " : "", p && p->pod_uid[0] ? p->pod_uid : "-",
		     p && p->slurm_job[0] ? p->slurm_job : "-");
	put(y, 0, COLS, ROLE_NORMAL, line, 0);
	return 1;
}

/* Where its memory outside the allocator appeared, as the agent saw it
 * (issue 37; docs/python.md): the parts in a fixed order, so the eye finds
 * the same one in the same place on every page. */
static int outside_line(int y, const vramz_proc_sample *p)
{
	char c[24], l[24], k[24], o[24];
	fmt_bytes(c, sizeof c, p->outside_context_bytes);
	fmt_bytes(l, sizeof l, p->outside_libraries_bytes);
	fmt_bytes(k, sizeof k, p->outside_nccl_bytes);
	fmt_bytes(o, sizeof o, p->outside_other_bytes);
	putf(y, 9, COLS - 9, ROLE_DIM,
	     "outside: CUDA context %s   CUDA libraries %s   NCCL %s (%u communicator%s)   other %s", c,
	     l, k, p->outside_nccl_comms, p->outside_nccl_comms == 1 ? "" : "s", o);
	return 1;
}

/* Its memory and SM use on each GPU; the PyTorch agent's figures. */
static int gpu_lines(int y, int bottom, const struct app *a, uint32_t pid)
{
	const struct tui_snap *s = a->snap;
	char b[24], line[512];
	int n = 0, x = put(y, 0, 9, ROLE_DIM, "memory", 1), torch = 0;
	for (unsigned i = 0; s && i < s->nprocs; i++) {
		const vramz_proc_sample *p = &s->procs[i];
		if (p->pid != pid)
			continue;
		torch |= (p->valid & VRAMZ_P_TORCH) != 0;
		char sm[16];
		fmt_uint_if(sm, sizeof sm, p->valid & VRAMZ_P_SM, p->sm_pct, "%");
		x += putf(y, x, COLS - x, ROLE_NORMAL, "GPU %u %s (SM %s)   ", p->gpu_index,
			  fmt_bytes_if(b, sizeof b, p->valid & VRAMZ_P_USED, p->used_bytes), sm);
	}
	n++;
	if (y + n >= bottom)
		return n;
	if (!torch) {
		put(y + n, 0, 9, ROLE_DIM, "PyTorch", 0);
		put(y + n, 9, COLS - 9, ROLE_DIM,
		    "agent not attached (vramz.torch.attach() in the process shows its allocator here)", 0);
		return n + 1;
	}
	put(y + n, 0, COLS, ROLE_HEAD,
	    "PyTorch  GPU   allocated    reserved  inactive split  retries   OOMs  outside allocator", 1);
	n++;
	for (unsigned i = 0; s && i < s->nprocs && y + n < bottom; i++) {
		const vramz_proc_sample *p = &s->procs[i];
		if (p->pid != pid || !(p->valid & VRAMZ_P_TORCH))
			continue;
		char al[24], rs[24], sp[24], out[24], re[24], oo[24];
		uint32_t t = p->torch_valid;
		fmt_bytes_if(al, sizeof al, t & VRAMZ_T_ALLOCATED, p->torch_allocated_bytes);
		fmt_bytes_if(rs, sizeof rs, t & VRAMZ_T_RESERVED, p->torch_reserved_bytes);
		fmt_bytes_if(sp, sizeof sp, t & VRAMZ_T_INACTIVE_SPLIT, p->torch_inactive_split_bytes);
		fmt_bytes_if(out, sizeof out, p->valid & VRAMZ_P_OUTSIDE, p->outside_allocator_bytes);
		fmt_uint_if(re, sizeof re, t & VRAMZ_T_RETRIES, (unsigned)p->torch_alloc_retries, "");
		fmt_uint_if(oo, sizeof oo, t & VRAMZ_T_OOMS, (unsigned)p->torch_ooms, "");
		fmt_snprintf(line, sizeof line, "         %3u  %10s  %10s  %14s  %7s  %5s  %17s", p->gpu_index,
			     al, rs, sp, re, oo, out);
		put(y + n, 0, COLS, (t & VRAMZ_T_OOMS) && p->torch_ooms ? ROLE_WARN : ROLE_NORMAL, line, 0);
		n++;
		if ((p->valid & VRAMZ_P_OUTSIDE_PARTS) && y + n < bottom)
			n += outside_line(y + n, p);
	}
	return n;
}

/* The findings naming it, with their advice; the leak site when known. */
static int finding_lines(int y, int bottom, const struct app *a, const struct model_row *r,
			 uint32_t pid, uint64_t start)
{
	static const char *const label[] = {"", "INFO ", "WARN ", "CRIT "};
	const struct findings *f = &a->f;
	int n = 0;
	for (unsigned k = 0; k < f->n && y + n < bottom; k++) {
		const vramz_finding *x = &f->v[k];
		if (x->pid != pid || (x->start_time_ticks && start && x->start_time_ticks != start))
			continue;
		int role = finding_role((int)x->severity, ROLE_NORMAL);
		int x0 = put(y + n, 0, 5, role, (unsigned)x->severity < 4 ? label[x->severity] : "", 0);
		struct tm tm; /* when it began: the chart's mark */
		if (x->first_seen_ms && local_tm(x->first_seen_ms, &tm))
			x0 += putf(y + n, x0, COLS - x0, ROLE_DIM, "began %02d:%02d:%02d  ", tm.tm_hour,
				   tm.tm_min, tm.tm_sec);
		put(y + n, x0, COLS - x0, role, findings_text(f, k), 0);
		n++;
		if ((x->figures & VRAMZ_FG_SITE) && x->site[0] && y + n < bottom) {
			if (x->kind == VRAMZ_FK_OOM) /* the line that ran out (issue 27) */
				putf(y + n, 5, COLS - 5, ROLE_NORMAL, "ran out at: %s", x->site);
			else
				putf(y + n, 5, COLS - 5, ROLE_NORMAL, "leak site: %s (%d%% of the growth)",
				     x->site, (int)(x->site_share * 100 + 0.5));
			n++;
		}
		for (unsigned h = 0; (x->figures & VRAMZ_FG_OOM) && h < x->nholders &&
				     h < VRAMZ_OOM_HOLDERS && y + n < bottom; h++, n++)
			putf(y + n, 5, COLS - 5, ROLE_NORMAL, "held by: %s (%d%% of its memory)",
			     x->holders[h].site, (int)(x->holders[h].share * 100 + 0.5));
	}
	if (!n && y < bottom) {
		put(y, 0, COLS, ROLE_DIM, r ? "no finding names this process" : "", 0);
		n = 1;
	}
	return n;
}

/* Its memory on each of its GPUs, a line each, over the rows left. */
static void page_chart(const struct app *a, int y, int h, uint64_t mask)
{
	static double all[MODEL_PHIST], pts[2048];
	static char names[MODEL_MAX_GPUS][12];
	const struct view *v = &a->v;
	const struct model *m = &a->m;
	double max = 0;
	for (unsigned g = 0; g < MODEL_MAX_GPUS; g++) {
		if (!(mask >> g & 1))
			continue;
		unsigned have = model_proc_hist(m, v->page_pid, v->page_start, g, all, MODEL_PHIST);
		for (unsigned k = 0; k < have; k++)
			max = all[k] > max ? all[k] : max;
	}
	int64_t t[17];
	unsigned n = 0;
	for (; n < 17 && n < m->ticks; n++)
		t[n] = m->tick_ms[(m->ticks - n) % MODEL_PHIST];
	int64_t step = chart_step_ms(t, n, a->replay ? 0 : a->interval_ms);
	struct chart c = {.y = y, .x = 0, .w = COLS, .h = h, .unit = CHART_GIB,
			  .top = chart_nice_top(max * 1.1, 0.25), .step_ms = step, .ceiling_role = ROLE_AXIS};
	if (!chart_begin(&c))
		return;
	if (c.npts > 2048)
		return;
	chart_legend(&c, -1, "its memory by GPU");
	for (unsigned g = 0, i = 0; g < MODEL_MAX_GPUS; g++) {
		if (!(mask >> g & 1))
			continue;
		for (int q = MODEL_PHIST; q < c.npts; q++)
			pts[q] = -1; /* older than the history kept */
		model_proc_hist(m, v->page_pid, v->page_start, g, pts,
				(unsigned)(c.npts < MODEL_PHIST ? c.npts : MODEL_PHIST));
		int role = ROLE_SERIES + (int)(g % TERM_SERIES);
		chart_line(&c, pts, role, (char)('0' + g % 10));
		fmt_snprintf(names[i], sizeof names[i], "GPU %u", g);
		if (i < 9)
			chart_legend(&c, role, names[i]);
		i++;
	}
	for (unsigned q = 0; q < a->f.n; q++) {
		const vramz_finding *x = &a->f.v[q];
		if (x->pid == v->page_pid && x->first_seen_ms)
			chart_mark(&c, m->now_ms - x->first_seen_ms, finding_role((int)x->severity, ROLE_NORMAL));
	}
	chart_end(&c);
}

void page_draw(struct app *a, int y, int bottom)
{
	struct view *v = &a->v;
	const struct model *m = &a->m;
	int i = model_find_pid(m, v->page_pid);
	const struct model_row *r = i >= 0 && m->rows[i].start_ticks == v->page_start ? &m->rows[i] : NULL;
	const vramz_proc_sample *p = NULL;
	for (unsigned k = 0; a->snap && k < a->snap->nprocs && !p; k++)
		if (a->snap->procs[k].pid == v->page_pid)
			p = &a->snap->procs[k];
	if (r)
		v->page_mask |= r->gpu_mask;
	int x = putf(y, 0, COLS, ROLE_TITLE, "PROCESS %u", v->page_pid);
	put(y, x, COLS - x, ROLE_DIM, "   Esc back   k kill", 0);
	y++;
	if (!r) {
		put(y++, 0, COLS, ROLE_WARN, "no longer in the GPU list: it exited or freed its GPU memory", 0);
	} else {
		y += host_line(y, a, r);
		if (y < bottom)
			y += job_line(y, p, r);
	}
	if (y < bottom)
		y += command_lines(y, v->page_cmd);
	if (r && y < bottom)
		y += gpu_lines(y, bottom, a, v->page_pid);
	if (y < bottom)
		y += finding_lines(y, bottom, a, r, v->page_pid, v->page_start);
	if (bottom - y >= CHART_MIN_ROWS)
		page_chart(a, y, bottom - y, v->page_mask);
}
