/* SPDX-License-Identifier: Apache-2.0 */
/* bench_leak_corpus.c - how soon the diagnosis engine reports a leak, from
 * the leak's onset, on a labelled corpus (issue 36): synthetic processes
 * whose truth is known by construction, and the real H100 recording of
 * tests/recordings/h100-leaks.* (its README in shared/recordings: the
 * truth per pid).
 *
 * Synthetic cases: rates from 50 MiB/min to 20 GiB/min, the leak's onset
 * at the process's start, right after a 6 GiB load, or after 10 minutes of
 * steady work; a smooth rise, a noisy one (a per-iteration sawtooth of
 * 256 MiB), or behind a caching allocator's 512 MiB segments (NVML sees a
 * staircase); with the PyTorch agent's allocated bytes or without.  And
 * the negatives users meet: a model load at once or from disk, an
 * allocator's warm-up, growth that stops (a plateau), a KV-cache
 * preallocation, sequence lengths growing to a cap, a job that frees
 * everything, a steady noisy job, a cache filled and cleared.
 *
 * Each is fed at 2 Hz with watch's settings (report after 5 s) and
 * evaluated after every sample; the recording at its own 1 s.  Printed per
 * case: the time from onset to the first leak report, its target (issue
 * 36: with the agent >= 1 GiB/min within 30 s and >= 100 MiB/min within
 * 3 min; without, a smooth >= 1 GiB/min within 45 s, a 512 MiB staircase
 * of >= 1 GiB/min within 120 s; "-" where none is promised), the rate's
 * error then, the first steep-rise notice, and for negatives every
 * evaluation that showed a leak.  --check: exit 1 on any false report
 * or a latency past twice its target (ctest runs it so); -v NAME: the
 * cases whose name contains NAME only.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "vramz/diagnose.h"
#include "vramz/log.h"

#define MiB 1048576.0
#define GiB 1073741824.0
#define TOTAL (80.0 * GiB)
#define PERIOD_MS 500
#define CTX (500.0 * MiB)

enum shape { SMOOTH, NOISY, STAIRS };
enum onset { AT_START, AFTER_LOAD, AFTER_10MIN };
enum neg { N_NONE, N_LOAD, N_DISK, N_WARMUP, N_PLATEAU, N_KVCACHE, N_SEQLEN, N_FREES, N_STEADY,
	   N_CYCLE };

struct ccase {
	char name[64];
	int leak;                      /* truth */
	double rate;                   /* bytes/s */
	enum onset onset;
	enum shape shape;
	enum neg neg;
	int agent;
	double onset_s, dur_s, target_s; /* target < 0: none promised */
};

static uint64_t rng;

static double gauss(void) { return bench_gauss(&rng); }

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* live tensors of the process at t (the allocator's allocated bytes), and
 * the transient part of an iteration (activations) */
static double alloc_at(const struct ccase *c, double t, double *transient)
{
	*transient = 0;
	if (c->leak) {
		double model = c->onset == AT_START ? 0.25 * GiB : t < 3 ? 0.25 * GiB
			     : t < 5 ? 0.25 * GiB + 3 * GiB * (t - 3) : 6.25 * GiB;
		if (c->shape == NOISY)
			*transient = 256 * MiB * fmod(t / 0.7, 1.0);
		return model + (t > c->onset_s ? (t - c->onset_s) * c->rate : 0);
	}
	switch (c->neg) {
	case N_LOAD:
		*transient = 1 * GiB * fmod(t / 0.6, 1.0);
		return t < 4 ? 0.25 * GiB : 6.25 * GiB;
	case N_DISK:
		*transient = 512 * MiB * fmod(t / 0.6, 1.0);
		return 0.25 * GiB + clampd(t - 5, 0, 10) * 0.8 * GiB;
	case N_WARMUP:
		*transient = 256 * MiB * fmod(t / 0.5, 1.0);
		return 4 * GiB;
	case N_PLATEAU: /* 508: +1 GiB every 8 s for 40 s, then a 1 GiB sawtooth */
		*transient = t > 45 ? 1 * GiB * fmod(t / 4, 1.0) : 0;
		return 1.5 * GiB + 1 * GiB * floor(clampd((t - 5) / 8 + 1, 0, 5));
	case N_KVCACHE:
		return t < 20 ? 6 * GiB : 6 * GiB + 0.9 * (TOTAL - 6 * GiB - 7 * GiB - CTX);
	case N_SEQLEN: {
		double steps = (t > 5) + (t > 10) + (t > 20) + (t > 40) + (t > 80) + (t > 160);
		*transient = (1 + steps) * 256 * MiB * fmod(t / 0.8, 1.0);
		return 4 * GiB;
	}
	case N_FREES:
		*transient = 512 * MiB * fmod(t / 0.7, 1.0);
		return t < 300 ? 10 * GiB : 0;
	case N_STEADY:
		*transient = 256 * MiB * fmod(t * 0.77, 1.0); /* bounded peaks */
		return 20 * GiB;
	case N_CYCLE: /* a cache filled (2 GiB in 15 s) and cleared, every 30 s */
		return 4 * GiB + 2 * GiB * clampd(fmod(t, 30) / 15, 0, 1) * (fmod(t, 30) < 20);
	default:
		return 0;
	}
}

struct proc_model {
	double reserved;               /* the caching allocator's segments */
};

/* NVML's used memory: the context plus what the allocator reserved, in
 * segments of 2 MiB, or 512 MiB behind a staircase; it never gives back
 * (no empty_cache) but where the job frees everything. */
static double nvml_at(const struct ccase *c, struct proc_model *pm, double alloc, double peak, double t)
{
	double seg = c->shape == STAIRS || c->neg == N_WARMUP ? 512 * MiB : 2 * MiB;
	double need = ceil(peak / seg) * seg;
	if (c->neg == N_WARMUP) /* four steps in the first 12 s, then enough */
		need = 4 * GiB + 512 * MiB * ((t > 5) + (t > 6) + (t > 8) + (t > 12));
	if (c->neg == N_FREES && t >= 300)
		pm->reserved = need; /* empty_cache() */
	else if (need > pm->reserved)
		pm->reserved = need;
	(void)alloc;
	return CTX + pm->reserved;
}

struct outcome {
	double first_s;                /* onset to the first leak report; -1 none */
	double rate_err;               /* |rate - truth| / truth then */
	double rise_s;                 /* onset to the first rise notice; -1 none */
	unsigned false_evals;          /* negatives: evaluations showing a leak */
	int on_alloc;                  /* judged on the allocator's series */
	char said[256];                /* the first report's words */
};

static const vramz_finding *find(vramz_diag *d, enum vramz_finding_kind k, uint32_t pid)
{
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f);
	for (unsigned i = 0; i < n; i++)
		if (f[i].kind == k && f[i].pid == pid)
			return &f[i];
	return NULL;
}

static void note(vramz_diag *d, uint32_t pid, double t_s, double onset_s, double truth_rate,
		 struct outcome *o)
{
	const vramz_finding *f = find(d, VRAMZ_FK_LEAK, pid);
	if (f && o->first_s < 0 && t_s >= onset_s) {
		o->first_s = t_s - onset_s;
		o->rate_err = truth_rate > 0 ? fabs(f->rate_bytes_per_s - truth_rate) / truth_rate : 0;
		o->on_alloc = (f->figures & VRAMZ_FG_ALLOCATOR) != 0;
		vramz_finding_summary(f, o->said, sizeof o->said);
	}
	if (f && truth_rate <= 0) {
		if (!o->false_evals)
			vramz_finding_summary(f, o->said, sizeof o->said);
		o->false_evals++;
	}
	if (o->rise_s < 0 && t_s >= onset_s && find(d, VRAMZ_FK_RISE, pid))
		o->rise_s = t_s - onset_s;
}

static void run_case(const struct ccase *c, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	o->first_s = o->rise_s = -1;
	rng = 88172645463325252ull ^ (uint64_t)(c->rate + 1000 * c->neg + 7 * c->shape + c->onset);
	vramz_gpu_sample g;
	vramz_proc_sample p[2];
	memset(&g, 0, sizeof g);
	memset(p, 0, sizeof p);
	g.valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_PROCS;
	g.mem_total_bytes = (uint64_t)TOTAL;
	g.mem_reserved_bytes = (uint64_t)(480 * MiB);
	g.util_gpu_pct = 90;
	g.proc_count = 2;
	for (int i = 0; i < 2; i++) {
		p[i].pid = 4000 + (uint32_t)i;
		p[i].valid = VRAMZ_P_USED | VRAMZ_P_SM | VRAMZ_P_VISIBLE;
		p[i].start_time_ticks = 100 + (uint64_t)i;
		p[i].sm_pct = 90;
		snprintf(p[i].comm, sizeof p[i].comm, "python3");
	}
	p[0].used_bytes = (uint64_t)(7 * GiB); /* a neighbour, steady */
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.report_after_ms = 5000; /* watch's */
	vramz_diag *d = vramz_diag_new(&cfg);
	struct proc_model pm = {0};
	double peak_iter = 0, agent_alloc = 0;
	vramz_snapshot s = {.gpu_count = 1, .gpus = &g, .proc_count = 2, .procs = p};
	for (int64_t ms = 0; ms <= (int64_t)(c->dur_s * 1000); ms += PERIOD_MS) {
		double t = (double)ms / 1000.0, tr;
		double a = alloc_at(c, t, &tr);
		double noise = c->shape == NOISY || c->neg == N_STEADY ? 16 * MiB * gauss() : 0;
		peak_iter = a + tr;
		double used = nvml_at(c, &pm, a, peak_iter, t) + noise;
		p[1].used_bytes = (uint64_t)(used > 0 ? used : 0);
		/* the agent publishes once a second, at some moment of a step */
		if (c->agent) {
			if (ms % 1000 == 0)
				agent_alloc = a + tr * fabs(fmod(t * 0.37, 1.0));
			p[1].valid |= VRAMZ_P_TORCH;
			p[1].torch_valid = VRAMZ_T_ALLOCATED | VRAMZ_T_RESERVED;
			p[1].torch_allocated_bytes = (uint64_t)agent_alloc;
			p[1].torch_reserved_bytes = (uint64_t)pm.reserved;
		}
		g.mem_used_bytes = p[0].used_bytes + p[1].used_bytes;
		g.mem_free_bytes = g.mem_total_bytes - g.mem_reserved_bytes - g.mem_used_bytes;
		s.time_ms = 1700000000000 + ms;
		if (vramz_diag_feed(d, &s)) {
			fprintf(stderr, "feed failed\n");
			exit(1);
		}
		note(d, p[1].pid, t, c->leak ? c->onset_s : 0, c->leak ? c->rate : 0, o);
		if (find(d, VRAMZ_FK_LEAK, p[0].pid))
			o->false_evals++; /* the steady neighbour */
	}
	vramz_diag_free(d);
}

static unsigned make_corpus(struct ccase *cs)
{
	static const double rates[] = {50 * MiB / 60, 100 * MiB / 60, 500 * MiB / 60, GiB / 60,
				       5 * GiB / 60, 20 * GiB / 60};
	static const char *const onsets[] = {"start", "after-load", "after-10min"};
	static const char *const shapes[] = {"smooth", "noisy", "stairs"};
	unsigned n = 0;
	for (int a = 0; a < 2; a++)
		for (int sh = 0; sh < 3; sh++)
			for (int on = 0; on < 3; on++)
				for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
					struct ccase *c = &cs[n++];
					memset(c, 0, sizeof *c);
					c->leak = 1;
					c->rate = rates[r];
					c->onset = (enum onset)on;
					c->shape = (enum shape)sh;
					c->agent = a;
					c->onset_s = on == AT_START ? 0 : on == AFTER_LOAD ? 6 : 600;
					double mpm = c->rate * 60 / MiB;
					snprintf(c->name, sizeof c->name, "%s %s %s %.0fMiB/min",
						 a ? "agent" : "nvml", shapes[sh], onsets[on], mpm);
					double gpm = c->rate * 60 / GiB;
					c->target_s = -1;
					if (a && gpm >= 1)
						c->target_s = 30;
					else if (a && mpm >= 100)
						c->target_s = 180;
					else if (!a && gpm >= 1)
						c->target_s = sh == STAIRS ? 120 : 45;
					/* until the GPU would be nearly full, at most 20 min */
					double room = (TOTAL - 15 * GiB) / c->rate;
					c->dur_s = c->onset_s + (room < 1200 ? room : 1200);
				}
	static const struct {
		enum neg neg;
		const char *name;
		double dur_s;
	} negs[] = {
		{N_LOAD, "model load at once, then steps", 900},
		{N_DISK, "model load from disk (8 GiB in 10 s)", 600},
		{N_WARMUP, "allocator warm-up: 4 segments, then steady", 600},
		{N_PLATEAU, "growth that stops: +1 GiB every 8 s for 40 s", 600},
		{N_KVCACHE, "KV-cache preallocation at 20 s", 600},
		{N_SEQLEN, "sequence lengths growing to a cap", 900},
		{N_FREES, "a job that frees everything", 600},
		{N_STEADY, "steady, noisy", 900},
		{N_CYCLE, "a cache filled and cleared every 30 s", 900},
	};
	for (int a = 0; a < 2; a++)
		for (size_t i = 0; i < sizeof negs / sizeof negs[0]; i++) {
			struct ccase *c = &cs[n++];
			memset(c, 0, sizeof *c);
			c->neg = negs[i].neg;
			c->agent = a;
			c->dur_s = negs[i].dur_s;
			c->target_s = -1;
			snprintf(c->name, sizeof c->name, "%s no leak: %s", a ? "agent" : "nvml",
				 negs[i].name);
		}
	return n;
}

/* ---- the real recording ---- */

static const struct {
	uint32_t pid;
	int leak;
	const char *onset;             /* UTC, the truth in shared/recordings/README.md */
	double rate;                   /* bytes/s */
	double target_s;
	const char *what;
} truth[] = {
	{504, 1, "2026-12-06T11:02:37.8Z", 20 * MiB, 30, "agent, behind 512 MiB steps"},
	{505, 1, "2026-12-06T11:02:37.9Z", 20 * MiB, 120, "no agent, 512 MiB steps"},
	{506, 1, "2026-12-06T11:02:39.1Z", 300 * MiB, 30, "agent, 17.6 GiB/min"},
	{507, 1, "2026-12-06T11:02:08.0Z", 24 * MiB, 45, "no agent, from its start"},
	{508, 0, NULL, 0, -1, "growth that stops"},
	{509, 0, NULL, 0, -1, "holds 6 GiB"},
};

static int64_t parse_utc(const char *s)
{
	int Y, M, D, h, m;
	double sec;
	if (sscanf(s, "%d-%d-%dT%d:%d:%lfZ", &Y, &M, &D, &h, &m, &sec) != 6)
		return 0;
	/* days from civil (Howard Hinnant's) */
	Y -= M <= 2;
	int64_t era = (Y >= 0 ? Y : Y - 399) / 400;
	int64_t yoe = Y - era * 400;
	int64_t doy = (153 * (M + (M > 2 ? -3 : 9)) + 2) / 5 + D - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;
	return ((days * 24 + h) * 60 + m) * 60000 + (int64_t)llround(sec * 1000);
}

static int run_recording(const char *path, struct outcome *o, int *nrows)
{
	vramz_log_reader *r;
	if (vramz_log_open(&r, path)) {
		fprintf(stderr, "bench_leak_corpus: %s: %s\n", path, r ? vramz_log_error(r) : "cannot open");
		return -1;
	}
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.report_after_ms = 5000;
	vramz_diag *d = vramz_diag_new(&cfg);
	size_t nt = sizeof truth / sizeof truth[0];
	for (size_t i = 0; i < nt; i++) {
		memset(&o[i], 0, sizeof o[i]);
		o[i].first_s = o[i].rise_s = -1;
	}
	const vramz_snapshot *snap;
	int rc;
	while ((rc = vramz_log_next(r, &snap)) == 1) {
		if (vramz_diag_feed(d, snap) < 0)
			break;
		for (size_t i = 0; i < nt; i++) {
			int64_t on = truth[i].onset ? parse_utc(truth[i].onset) : 0;
			note(d, truth[i].pid, (double)snap->time_ms / 1000.0, (double)on / 1000.0,
			     truth[i].leak ? truth[i].rate : 0, &o[i]);
		}
	}
	*nrows = (int)nt;
	vramz_diag_free(d);
	vramz_log_close(r);
	return rc < 0 ? -1 : 0;
}

static void row(const char *name, int leak, double target, const struct outcome *o, int *bad,
		int verbose)
{
	char lat[24] = "never", tgt[16] = "-", err[16] = "-", rise[16] = "-", fal[16] = "0";
	if (o->first_s >= 0)
		snprintf(lat, sizeof lat, "%.1f s%s", o->first_s, o->on_alloc ? " (a)" : "");
	if (target >= 0)
		snprintf(tgt, sizeof tgt, "%.0f s", target);
	if (leak && o->first_s >= 0)
		snprintf(err, sizeof err, "%.0f %%", o->rate_err * 100);
	if (o->rise_s >= 0)
		snprintf(rise, sizeof rise, "%.1f s", o->rise_s);
	snprintf(fal, sizeof fal, "%u", o->false_evals);
	const char *verdict = "ok";
	if (o->false_evals)
		verdict = "FALSE";
	else if (leak && target >= 0 && (o->first_s < 0 || o->first_s > 2 * target))
		verdict = "LATE";
	else if (leak && target >= 0 && o->first_s > target)
		verdict = "slow";
	else if (leak && o->first_s < 0)
		verdict = "missed";
	if (!strcmp(verdict, "FALSE") || !strcmp(verdict, "LATE"))
		(*bad)++;
	printf("| %-52s | %-10s | %-6s | %-5s | %-8s | %-5s | %-6s |\n", name, lat, tgt, err, rise,
	       fal, verdict);
	if (verbose && o->said[0])
		printf("|   %s\n", o->said);
}

int main(int argc, char **argv)
{
	int check = 0, verbose = 0;
	const char *only = NULL, *rec = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = 1;
		else if (!strcmp(argv[i], "-v") && i + 1 < argc)
			only = argv[++i], verbose = 1;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: bench_leak_corpus [--check] [-v NAME] [RECORDING.csv]\n");
			return 0;
		} else
			rec = argv[i];
	}
	static struct ccase cs[256];
	unsigned n = make_corpus(cs);
	int bad = 0;
	printf("| %-52s | %-10s | %-6s | %-5s | %-8s | %-5s | %-6s |\n", "case (truth)", "reported",
	       "target", "rate", "rise", "false", "");
	printf("|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------------------------------------",
	       "------------", "--------", "-------", "----------", "-------", "--------");
	for (unsigned i = 0; i < n; i++) {
		if (only && !strstr(cs[i].name, only))
			continue;
		struct outcome o;
		run_case(&cs[i], &o);
		row(cs[i].name, cs[i].leak, cs[i].target_s, &o, &bad, verbose);
		fflush(stdout);
	}
	if (rec && (!only || strstr("recording", only))) {
		struct outcome o[8];
		int nr = 0;
		if (run_recording(rec, o, &nr))
			return 1;
		for (int i = 0; i < nr; i++) {
			char name[80];
			snprintf(name, sizeof name, "H100 pid %u: %s (%s)", truth[i].pid,
				 truth[i].leak ? "leak" : "no leak", truth[i].what);
			row(name, truth[i].leak, truth[i].target_s, &o[i], &bad, verbose);
		}
	}
	printf("\n%d case%s false or past twice the target\n", bad, bad == 1 ? "" : "s");
	return check && bad ? 1 : 0;
}
