/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-pick.c - `vramz pick [-n N] [--min-free SIZE]`: which GPUs should
 * the next job use?  Prints CUDA_VISIBLE_DEVICES=<uuids> for `eval` or
 * `env`: UUIDs, because CUDA numbers GPUs fastest-first while NVML numbers
 * them by PCI bus, and an index would silently mean a different GPU.
 *
 * The choice: among the GPUs with at least --min-free free, a set of N all
 * joined pairwise by NVLink is preferred (collectives over NVLink are many
 * times faster than over PCIe); within the same class the set with the
 * most free memory in its tightest GPU wins (a data-parallel job is bound
 * by its smallest GPU), then the largest total, then the lowest indices,
 * so the answer is stable.  Sets are enumerated exhaustively up to a
 * bound; beyond it (very large hosts) the N freest GPUs are taken.
 * Topology is read only for qualifying GPUs, once per pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsonw.h"
#include "format/jsondoc.h"
#include "jobs/picklock.h"
#include "vramz/diagnose.h"
#include "source.h"

#define PICK_MAX 64
#define PICK_ENUM_LIMIT 200000

struct pick_gpu {
	unsigned index;  /* backend index */
	uint64_t free_bytes;
};

struct pick_state {
	unsigned n, want;
	struct pick_gpu g[PICK_MAX];
	unsigned char nvl[PICK_MAX][PICK_MAX]; /* 1: joined by NVLink */
	unsigned cur[PICK_MAX], best[PICK_MAX];
	int have_best, best_nvl;
	uint64_t best_min, best_sum;
	unsigned long visited;
};

static void pick_consider(struct pick_state *ps)
{
	int nvl = 1;
	uint64_t mn = UINT64_MAX, sum = 0;
	for (unsigned i = 0; i < ps->want; i++) {
		const struct pick_gpu *a = &ps->g[ps->cur[i]];
		if (a->free_bytes < mn)
			mn = a->free_bytes;
		sum += a->free_bytes;
		for (unsigned j = i + 1; j < ps->want && nvl; j++)
			nvl = ps->nvl[ps->cur[i]][ps->cur[j]];
	}
	int better = !ps->have_best || nvl > ps->best_nvl ||
		     (nvl == ps->best_nvl && (mn > ps->best_min ||
					       (mn == ps->best_min && sum > ps->best_sum)));
	if (!better)
		return;
	ps->have_best = 1;
	ps->best_nvl = nvl;
	ps->best_min = mn;
	ps->best_sum = sum;
	memcpy(ps->best, ps->cur, ps->want * sizeof ps->cur[0]);
}

/* Combinations in lexicographic order, so ties keep the lowest indices. */
static void pick_enum(struct pick_state *ps, unsigned depth, unsigned from)
{
	if (depth == ps->want) {
		ps->visited++;
		pick_consider(ps);
		return;
	}
	for (unsigned i = from; i + (ps->want - depth) <= ps->n; i++) {
		ps->cur[depth] = i;
		pick_enum(ps, depth + 1, i + 1);
	}
}

static double pick_choose(unsigned n, unsigned k)
{
	double c = 1;
	for (unsigned i = 1; i <= k; i++)
		c = c * (n - k + i) / i;
	return c;
}

static int pick_by_free_desc(const void *a, const void *b)
{
	const struct pick_gpu *x = a, *y = b;
	if (x->free_bytes != y->free_bytes)
		return x->free_bytes < y->free_bytes ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* What one sample can tell about the chosen GPUs: memory no process holds,
 * a memory near its temperature limit, a lost GPU.  The diagnosis engine
 * fed once with no time requirements; findings that need a history (leaks,
 * idle holders) cannot show here. */
static void pick_warn_findings(vramz_ctx *ctx, const vramz_snapshot *s,
			       const unsigned *chosen, unsigned n)
{
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.report_after_ms = 0;
	cfg.orphan_ms = 0;
	cfg.eval_interval_ms = 0; /* evaluate at the one feed */
	vramz_diag *d = vramz_diag_new(&cfg);
	if (!d)
		return;
	vramz_gpu_info info[PICK_MAX];
	unsigned ni = 0;
	for (unsigned i = 0; i < s->gpu_count && ni < PICK_MAX; i++) {
		const vramz_gpu_info *gi = vramz_gpu(ctx, s->gpus[i].index);
		if (gi && s->gpus[i].index < PICK_MAX && s->gpus[i].index == ni)
			info[ni++] = *gi;
	}
	vramz_diag_set_gpu_info(d, info, ni);
	const vramz_finding *f;
	unsigned nf = vramz_diag_feed(d, s) == 0 ? vramz_diag_findings(d, &f) : 0;
	char buf[512];
	for (unsigned k = 0; k < nf; k++)
		for (unsigned i = 0; i < n; i++)
			/* the GPU's own findings; a process another namespace
			 * holds is every container's normal view */
			if (f[k].gpu >= 0 && (unsigned)f[k].gpu == chosen[i] && !f[k].pid)
				cli_err("pick: warning: %s",
					vramz_finding_summary(&f[k], buf, sizeof buf));
	vramz_diag_free(d);
}

static unsigned want = 1;
static uint64_t min_free;
static int verbose, empty, lock;
static double max_util = -1;
static int64_t lock_ms = 120000;

const struct opt pick_opts[] = {
	{'n', "count", OPT_UINT, &want, NULL, "how many GPUs (default 1)"},
	{0, "min-free", OPT_SIZE, &min_free, NULL, "only GPUs with at least SIZE free"},
	{0, "max-util", OPT_PERCENT, &max_util, NULL, "only GPUs at most PCT busy (e.g. 10%)"},
	{0, "empty", OPT_FLAG, &empty, NULL, "only GPUs no process holds memory on"},
	{0, "lock", OPT_FLAG, &lock, NULL,
	 "reserve the choice so concurrent picks with --lock take other GPUs"},
	{0, "lock-for", OPT_DURATION, &lock_ms, NULL,
	 "how long a --lock reservation holds if the job lives (default 2m)"},
	{'v', "verbose", OPT_FLAG, &verbose, NULL, "explain the choice on stderr"},
	OPT_GPUS,
	OPT_JSON,
	OPT_LIVE,
	OPT_END,
};
const char pick_synopsis[] = "[-n N] [--min-free SIZE] [--max-util PCT] [--empty] [--lock]";
const char pick_about[] =
	"Chooses N GPUs with the most free memory, preferring sets joined by\n"
	"NVLink, and prints CUDA_VISIBLE_DEVICES=<uuids>.  Exit 1 when no set\n"
	"qualifies.  Warns on stderr when a chosen GPU has a finding (memory\n"
	"no process holds, a hot memory, a lost GPU).\n"
	"Use: eval \"export $(vramz pick -n 2 --lock)\"";

/* The GPUs that pass the filters into ps->g; how many were considered
 * (their free memory known). */
static unsigned pick_qualify(struct pick_state *ps, vramz_ctx *ctx, const vramz_snapshot *s,
			     struct picklock *pl)
{
	unsigned considered = 0;
	char b1[32];
	for (unsigned i = 0; i < s->gpu_count && ps->n < PICK_MAX; i++) {
		const vramz_gpu_sample *g = &s->gpus[i];
		if (g->lost || !(g->valid & VRAMZ_F_MEM))
			continue; /* unknown free memory never qualifies */
		considered++;
		if (verbose)
			fprintf(stderr, "GPU %u: %s free%s\n", g->index,
				fmt_bytes(b1, sizeof b1, g->mem_free_bytes),
				g->mem_free_bytes < min_free ? " (below --min-free)" : "");
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		const char *why = g->mem_free_bytes < min_free ? "below --min-free"
			: max_util >= 0 && !(g->valid & VRAMZ_F_UTIL) ? "utilization unknown"
			: max_util >= 0 && g->util_gpu_pct > max_util * 100 + 1e-9 ? "above --max-util"
			: empty && !(g->valid & VRAMZ_F_PROCS) ? "processes unknown"
			: empty && g->proc_count ? "not empty"
			: lock && gi && picklock_reserved(pl, gi->uuid) ? "reserved by another pick"
			: NULL;
		if (verbose && why && g->mem_free_bytes >= min_free)
			fprintf(stderr, "GPU %u: %s\n", g->index, why);
		if (why)
			continue;
		ps->g[ps->n++] = (struct pick_gpu){g->index, g->mem_free_bytes};
	}
	return considered;
}

/* The best set of ps->want among ps->g into ps->best; chosen[] its GPU
 * indices in index order (what people expect to read). */
static void pick_best(struct pick_state *ps, vramz_ctx *ctx, unsigned *chosen)
{
	if (want > 1 && pick_choose(ps->n, want) <= PICK_ENUM_LIMIT) {
		for (unsigned i = 0; i < ps->n; i++)
			for (unsigned j = i + 1; j < ps->n; j++) {
				vramz_link l;
				int ok = vramz_topology(ctx, ps->g[i].index, ps->g[j].index, &l) == 0 &&
					 l.kind == VRAMZ_LINK_NVLINK;
				ps->nvl[i][j] = ps->nvl[j][i] = (unsigned char)ok;
			}
		pick_enum(ps, 0, 0);
	} else {
		/* one GPU, or too many sets to weigh: the freest, by memory */
		qsort(ps->g, ps->n, sizeof ps->g[0], pick_by_free_desc);
		for (unsigned i = 0; i < want; i++)
			ps->cur[i] = i;
		pick_consider(ps);
		if (want > 1)
			ps->best_nvl = -1; /* not examined */
	}
	for (unsigned i = 0; i < want; i++)
		chosen[i] = ps->g[ps->best[i]].index;
	for (unsigned i = 1; i < want; i++)
		for (unsigned j = i; j > 0 && chosen[j - 1] > chosen[j]; j--) {
			unsigned t = chosen[j];
			chosen[j] = chosen[j - 1];
			chosen[j - 1] = t;
		}
}

static void pick_print(const struct pick_state *ps, vramz_ctx *ctx, const unsigned *chosen)
{
	if (g_opts.json) {
		struct jsonw w;
		jw_init(&w, stdout, 1);
		json_envelope(&w, "pick");
		jw_arr(&w, "gpus");
		for (unsigned i = 0; i < want; i++) {
			const vramz_gpu_info *gi = vramz_gpu(ctx, chosen[i]);
			uint64_t fb = 0;
			for (unsigned k = 0; k < ps->n; k++)
				if (ps->g[k].index == chosen[i])
					fb = ps->g[k].free_bytes;
			jw_obj(&w, NULL);
			jw_u64(&w, "index", chosen[i]);
			jw_str(&w, "uuid", gi ? gi->uuid : NULL);
			jw_u64(&w, "mem_free_bytes", fb);
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		if (ps->best_nvl < 0 || want == 1)
			jw_null(&w, "nvlink_joined");
		else
			jw_bool(&w, "nvlink_joined", ps->best_nvl);
		jw_u64(&w, "min_free_bytes", ps->best_min);
		jw_end_obj(&w);
		jw_finish(&w);
	} else {
		printf("CUDA_VISIBLE_DEVICES=");
		for (unsigned i = 0; i < want; i++) {
			const vramz_gpu_info *gi = vramz_gpu(ctx, chosen[i]);
			printf("%s%s", i ? "," : "", gi && *gi->uuid ? gi->uuid : "?");
		}
		printf("\n");
	}
	if (verbose) {
		char b1[32];
		fprintf(stderr, "chose GPU%s", want == 1 ? "" : "s");
		for (unsigned i = 0; i < want; i++)
			fprintf(stderr, " %u", chosen[i]);
		fprintf(stderr, ": %s free in the tightest%s\n",
			fmt_bytes(b1, sizeof b1, ps->best_min),
			want == 1 ? "" : ps->best_nvl > 0 ? ", all joined by NVLink" :
			ps->best_nvl == 0 ? ", no NVLink-joined set qualified" : "");
	}
}

int cmd_pick(const struct cmd_args *args)
{
	(void)args;
	if (want < 1 || want > PICK_MAX) {
		cli_err("pick: -n must be between 1 and %d", PICK_MAX);
		return EXIT_USAGE;
	}
	vramz_ctx *ctx = NULL;
	const vramz_snapshot *s;
	struct pick_state *ps = NULL;
	struct picklock pl = {-1};
	int ex;
	if (lock && (ex = picklock_acquire(&pl)))
		return ex;
	/* the finding check reads the processes */
	if ((ex = source_open_sample(&ctx, VRAMZ_SAMPLE_PROCS, &s)))
		goto out;
	ex = EXIT_FAIL;
	if (!(ps = calloc(1, sizeof *ps))) {
		cli_err("pick: out of memory");
		goto out;
	}
	ps->want = want;
	if (verbose) { /* stdout is for CUDA_VISIBLE_DEVICES only */
		char src[128];
		if (*source_str(ctx, src, sizeof src))
			fprintf(stderr, "vramz: pick: from %s\n", src);
	}
	unsigned considered = pick_qualify(ps, ctx, s, &pl);
	if (ps->n < want) {
		char at_least[64] = "", b[32];
		if (min_free)
			snprintf(at_least, sizeof at_least, " with at least %s free",
				 fmt_bytes(b, sizeof b, min_free));
		cli_err("pick: need %u GPU%s%s; %u of %u qualif%s%s", want, want == 1 ? "" : "s",
			at_least, ps->n, considered, ps->n == 1 ? "ies" : "y",
			verbose ? "" : " (vramz pick -v says why)");
		goto out;
	}
	unsigned chosen[PICK_MAX];
	pick_best(ps, ctx, chosen);
	ex = 0;
	if (lock) {
		for (unsigned i = 0; i < want && !ex; i++) {
			const vramz_gpu_info *gi = vramz_gpu(ctx, chosen[i]);
			ex = gi ? picklock_reserve(&pl, gi->uuid, lock_ms) : 0;
		}
		picklock_release(&pl); /* before the output: the next pick may go on */
		if (ex)
			goto out;
	}
	pick_warn_findings(ctx, s, chosen, want);
	pick_print(ps, ctx, chosen);
	ex = EXIT_OK;
out:
	free(ps);
	cli_close(ctx);
	picklock_release(&pl);
	return ex;
}
