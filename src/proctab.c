/* SPDX-License-Identifier: Apache-2.0 */
/* proctab.c - the process table of `status` and `ps` (see proctab.h).
 * A pid this machine cannot see (another PID namespace, or gone) is shown
 * as such rather than with a guessed name, and a container id is cut to
 * the 12 characters docker prints. */
#include "proctab.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format/fmt.h"

struct sort_ctx {
	const vramz_snapshot *snap;
	const struct proctab_opts *o;
};

int proctab_sort_parse(const char *s, enum proctab_sort *out)
{
	static const struct {
		const char *name;
		enum proctab_sort v;
	} keys[] = {{"vram", SORT_VRAM}, {"mem", SORT_VRAM}, {"pid", SORT_PID},
		    {"gpu", SORT_GPU}, {"user", SORT_USER}, {"sm", SORT_SM},
		    {"command", SORT_CMD}, {"cmd", SORT_CMD}};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (!strcasecmp(s, keys[i].name)) {
			*out = keys[i].v;
			return 0;
		}
	return -1;
}

static int proc_cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *sc = arg;
	const vramz_proc_sample *a = &sc->snap->procs[*(const unsigned *)pa];
	const vramz_proc_sample *b = &sc->snap->procs[*(const unsigned *)pb];
	int c = 0;
	switch (sc->o->sort) {
	case SORT_VRAM: /* biggest first; unknown last */
		c = -proc_cmp_u64((a->valid & VRAMZ_P_USED) ? a->used_bytes + 1 : 0,
			     (b->valid & VRAMZ_P_USED) ? b->used_bytes + 1 : 0);
		break;
	case SORT_SM:
		c = -proc_cmp_u64((a->valid & VRAMZ_P_SM) ? a->sm_pct + 1u : 0,
			     (b->valid & VRAMZ_P_SM) ? b->sm_pct + 1u : 0);
		break;
	case SORT_PID: c = proc_cmp_u64(a->pid, b->pid); break;
	case SORT_GPU: c = proc_cmp_u64(a->gpu_index, b->gpu_index); break;
	case SORT_USER: c = strcmp(a->user, b->user); break;
	case SORT_CMD: c = strcmp(a->cmdline, b->cmdline); break;
	}
	if (!c)
		c = proc_cmp_u64(a->gpu_index, b->gpu_index);
	if (!c)
		c = proc_cmp_u64(a->pid, b->pid);
	return sc->o->reverse ? -c : c;
}

static int user_matches(const vramz_proc_sample *p, const char *user)
{
	char uid[16];
	if (!(p->valid & VRAMZ_P_VISIBLE))
		return 0;
	snprintf(uid, sizeof uid, "%u", p->uid);
	return !strcmp(p->user, user) || !strcmp(uid, user);
}

unsigned proctab_select(const vramz_snapshot *snap, const struct proctab_opts *o,
			unsigned *idx)
{
	unsigned n = 0;
	for (unsigned i = 0; i < snap->proc_count; i++) {
		const vramz_proc_sample *p = &snap->procs[i];
		if (o->user && !user_matches(p, o->user))
			continue;
		if (o->min_bytes && (!(p->valid & VRAMZ_P_USED) || p->used_bytes < o->min_bytes))
			continue;
		idx[n++] = i;
	}
	struct sort_ctx sc = {snap, o};
	qsort_r(idx, n, sizeof *idx, cmp_rows, &sc);
	return n;
}

/* The job column (fmt_job): Slurm job, pod or container, whichever is
 * known; a named pod with its container where the column has room (all of
 * it with --wide). */
static const char *job_of(const vramz_proc_sample *p, char *buf, size_t len, int wide)
{
	if (!(p->valid & VRAMZ_P_VISIBLE))
		return "?";
	return *fmt_job_width(buf, len, p, wide ? 0 : 22) ? buf : "-";
}

/* The PyTorch agent's columns (shown only when some row has an agent):
 * what its allocator holds, what is outside it, split memory, retries and
 * OOMs.  "-" on rows without one. */
static void torch_cells(FILE *f, const vramz_proc_sample *p)
{
	char a[16], r[16], o[16], s[16], rt[16], om[16];
	int on = p->valid & VRAMZ_P_TORCH;
	fmt_bytes_if(a, sizeof a, on && (p->torch_valid & VRAMZ_T_ALLOCATED), p->torch_allocated_bytes);
	fmt_bytes_if(r, sizeof r, on && (p->torch_valid & VRAMZ_T_RESERVED), p->torch_reserved_bytes);
	fmt_bytes_if(o, sizeof o, p->valid & VRAMZ_P_OUTSIDE, p->outside_allocator_bytes);
	fmt_bytes_if(s, sizeof s, on && (p->torch_valid & VRAMZ_T_INACTIVE_SPLIT),
		     p->torch_inactive_split_bytes);
	fmt_uint_if(rt, sizeof rt, on && (p->torch_valid & VRAMZ_T_RETRIES),
		    (unsigned)p->torch_alloc_retries, "");
	fmt_uint_if(om, sizeof om, on && (p->torch_valid & VRAMZ_T_OOMS), (unsigned)p->torch_ooms, "");
	fprintf(f, " %9s %9s %9s %9s %5s %4s", a, r, o, s, rt, om);
}

unsigned proctab_print(FILE *f, const vramz_snapshot *snap, const struct proctab_opts *o)
{
	const struct colors *c = colors_for(f);
	unsigned *idx = malloc((snap->proc_count ? snap->proc_count : 1) * sizeof *idx);
	if (!idx)
		return 0;
	unsigned n = proctab_select(snap, o, idx);
	int torch = 0;
	for (unsigned k = 0; k < n; k++)
		torch |= (snap->procs[idx[k]].valid & VRAMZ_P_TORCH) != 0;
	fprintf(f, "%s%3s %8s %-10s %-22s %10s %4s", c->bold, "GPU", "PID", "USER",
		"CONTAINER/JOB", "VRAM", "SM%");
	if (torch)
		fprintf(f, " %9s %9s %9s %9s %5s %4s", "T.ALLOC", "T.RESERV", "OUTSIDE", "T.SPLIT",
			"RETRY", "OOM");
	fprintf(f, "  %s%s\n", "COMMAND", c->reset);
	for (unsigned k = 0; k < n; k++) {
		const vramz_proc_sample *p = &snap->procs[idx[k]];
		char used[24], sm[8], job[VRAMZ_POD_LEN + 2 * VRAMZ_KUBE_NAME_LEN + 8], user[16], cmd[VRAMZ_CMD_LEN + 8];
		int vis = p->valid & VRAMZ_P_VISIBLE;
		fmt_bytes_if(used, sizeof used, p->valid & VRAMZ_P_USED, p->used_bytes);
		fmt_uint_if(sm, sizeof sm, p->valid & VRAMZ_P_SM, p->sm_pct, "");
		fmt_trunc(user, sizeof user, vis ? p->user : "?", 10);
		if (vis)
			fmt_trunc(cmd, sizeof cmd, p->cmdline, o->wide ? 0 : 60);
		else
			snprintf(cmd, sizeof cmd, "(not visible here: other PID namespace or exited)");
		fprintf(f, "%3u %8u %-10s %-22s %10s %4s", p->gpu_index, p->pid, user,
			job_of(p, job, sizeof job, o->wide), used, sm);
		if (torch)
			torch_cells(f, p);
		fprintf(f, "  %s%s%s\n", vis ? "" : c->dim, cmd, vis ? "" : c->reset);
	}
	if (o->unattributed) {
		for (unsigned i = 0; i < snap->gpu_count; i++) {
			const vramz_gpu_sample *g = &snap->gpus[i];
			char b[24];
			if (!(g->valid & VRAMZ_F_UNATTRIBUTED) || g->unattributed_bytes < (64u << 20))
				continue;
			fprintf(f, "%3u %8s %-10s %-22s %10s %4s  %s%s%s\n", g->index, "-", "-", "-",
				fmt_bytes(b, sizeof b, g->unattributed_bytes), "-", c->yellow,
				"(used by no listed process: driver, other namespaces or dead contexts)",
				c->reset);
		}
	}
	free(idx);
	return n;
}
