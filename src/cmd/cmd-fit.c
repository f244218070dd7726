/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-fit.c - `vramz fit -- CMD ... {}`: the largest batch size that fits
 * in the GPU memory there is, found by measuring, not by guessing.
 *
 * The command runs a few steps at a batch size put in place of `{}` and
 * exits.  vramz runs it at a few small sizes (jobrun.c measures each run's
 * peak on every GPU it touches), fits memory = a + b*batch per GPU by
 * least squares, and predicts the largest batch whose peak stays under
 * each GPU's free memory minus --margin.  Memory is often not exactly
 * linear (cudnn benchmark workspaces, allocator rounding), so the fit's
 * residuals are checked and reported, and the prediction is only a
 * candidate: one run verifies it; when that run fails (non-zero exit, an
 * out-of-memory message, or a peak over the budget) the answer is found by
 * bisection between the largest size that fitted and the failed one; when
 * it fits with room left, the line is refitted with the new point and the
 * next prediction tried, a few times at most.
 *
 * `--params 7e9 --dtype bf16 --optimizer adamw` instead prints an offline
 * estimate from bytes-per-parameter rules (docs/jobs.md), labelled as such.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/jsondoc.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsonw.h"
#include "jobs/jobrun.h"

#define FIT_MAX_TRIALS 64
#define FIT_MAX_GPUS JOBRUN_MAX_GPUS

struct fit_trial {
	unsigned long batch;
	int fits;            /* ran, exit 0, no OOM message, under budget */
	int oom;             /* failed like an out-of-memory */
	int over_budget;     /* ran fine but peaked above free - margin */
	int status;          /* exit status as a shell reports it */
	int64_t duration_ms;
	uint64_t peak[FIT_MAX_GPUS];   /* by selection slot */
	const char *phase;   /* "probe", "predict", "bisect" */
};

struct fit {
	vramz_ctx *ctx;
	char **tmpl;         /* the command with {} */
	int ntmpl;
	int64_t interval_ms;
	int verbose;
	unsigned ngpus;
	uint64_t free_bytes[FIT_MAX_GPUS], budget[FIT_MAX_GPUS];
	struct fit_trial t[FIT_MAX_TRIALS];
	unsigned nt;
	double a[FIT_MAX_GPUS], b[FIT_MAX_GPUS], resid_pct;
	int fitted[FIT_MAX_GPUS];
	int nonlinear;
	char last_tail[2048];
	int broken;          /* failed without an OOM sign at the smallest size */
};

/* ---- the offline estimate --------------------------------------------- */

static int fit_parse_count(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v) || v <= 0)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 0: break;
	case 'k': v *= 1e3; end++; break;
	case 'm': v *= 1e6; end++; break;
	case 'b': case 'g': v *= 1e9; end++; break;
	case 't': v *= 1e12; end++; break;
	default: return -1;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int fit_estimate(const char *params_s, const char *dtype, const char *optim)
{
	static const struct { const char *name; double bytes; } dtypes[] = {
		{"fp32", 4}, {"float32", 4}, {"tf32", 4}, {"bf16", 2}, {"bfloat16", 2},
		{"fp16", 2}, {"float16", 2}, {"fp8", 1}, {"int8", 1}, {"int4", 0.5},
	};
	/* optimizer state bytes per parameter, kept in fp32 by every common
	 * implementation; "none" means inference: no gradients either */
	static const struct { const char *name; double state; int train; } optims[] = {
		{"adamw", 8, 1}, {"adam", 8, 1}, {"adamw8bit", 2, 1}, {"sgd", 0, 1},
		{"momentum", 4, 1}, {"sgd-momentum", 4, 1}, {"adafactor", 0, 1},
		{"none", 0, 0}, {"inference", 0, 0},
	};
	double params, wb = -1, sb = -1;
	int train = 1;
	if (fit_parse_count(params_s, &params)) {
		cli_err("fit: bad --params '%s' (e.g. 7e9, 7B, 350M)", params_s);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (!strcasecmp(dtype, dtypes[i].name))
			wb = dtypes[i].bytes;
	for (size_t i = 0; i < sizeof optims / sizeof optims[0]; i++)
		if (!strcasecmp(optim, optims[i].name)) {
			sb = optims[i].state;
			train = optims[i].train;
		}
	if (wb < 0) {
		cli_err("fit: unknown --dtype '%s' (fp32, bf16, fp16, fp8, int8, int4)", dtype);
		return EXIT_USAGE;
	}
	if (sb < 0) {
		cli_err("fit: unknown --optimizer '%s' (adamw, adam, adamw8bit, sgd, momentum, adafactor, none)",
			optim);
		return EXIT_USAGE;
	}
	double weights = params * wb;
	double grads = train ? params * wb : 0;
	double states = params * sb;
	/* mixed precision keeps an fp32 master copy of low-precision weights */
	double master = train && wb < 4 ? params * 4 : 0;
	double total = weights + grads + states + master;
	char b[32];
	if (g_opts.json) {
		struct jsonw w;
		jw_init(&w, stdout, 1);
		json_envelope(&w, "fit-estimate");
		jw_bool(&w, "estimate", 1);
		jw_dbl(&w, "params", params, 0);
		jw_str(&w, "dtype", dtype);
		jw_str(&w, "optimizer", optim);
		jw_u64(&w, "weights_bytes", (uint64_t)weights);
		jw_u64(&w, "gradients_bytes", (uint64_t)grads);
		jw_u64(&w, "optimizer_bytes", (uint64_t)states);
		jw_u64(&w, "master_weights_bytes", (uint64_t)master);
		jw_u64(&w, "total_bytes", (uint64_t)total);
		jw_dbl(&w, "bytes_per_param", total / params, 2);
		jw_str(&w, "excludes", "activations, CUDA context, allocator fragmentation");
		jw_end_obj(&w);
		jw_finish(&w);
		return EXIT_OK;
	}
	printf("ESTIMATE (from bytes-per-parameter rules, not measured; see docs/jobs.md)\n");
	printf("  %-22s %12s\n", "weights", fmt_bytes(b, sizeof b, (uint64_t)weights));
	printf("  %-22s %12s\n", "gradients", fmt_bytes(b, sizeof b, (uint64_t)grads));
	printf("  %-22s %12s\n", "optimizer states", fmt_bytes(b, sizeof b, (uint64_t)states));
	printf("  %-22s %12s\n", "fp32 master weights", fmt_bytes(b, sizeof b, (uint64_t)master));
	printf("  %-22s %12s  (%.1f bytes/parameter)\n", "total", fmt_bytes(b, sizeof b, (uint64_t)total),
	       total / params);
	printf("not included: activations (grow with batch size: measure with `vramz fit -- CMD {}`),\n"
	       "the CUDA context (~0.5 GiB per process) and allocator fragmentation\n");
	return EXIT_OK;
}

/* ---- measuring ---------------------------------------------------------- */

static char *fit_subst(const char *arg, unsigned long batch)
{
	char num[24];
	snprintf(num, sizeof num, "%lu", batch);
	size_t n = 0;
	for (const char *p = arg; (p = strstr(p, "{}")); p += 2)
		n++;
	char *out = malloc(strlen(arg) + n * strlen(num) + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = arg; *p;) {
		if (p[0] == '{' && p[1] == '}') {
			o = stpcpy(o, num);
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	*o = 0;
	return out;
}

/* Runs the command at batch; returns the trial, NULL when vramz failed. */
static struct fit_trial *fit_try(struct fit *f, unsigned long batch, const char *phase)
{
	for (unsigned i = 0; i < f->nt; i++)
		if (f->t[i].batch == batch)
			return &f->t[i];
	if (f->nt == FIT_MAX_TRIALS) {
		cli_err("fit: more than %d trials; giving up", FIT_MAX_TRIALS);
		return NULL;
	}
	char **argv = calloc((size_t)f->ntmpl + 1, sizeof *argv);
	struct jobrun_result *r = calloc(1, sizeof *r);
	struct fit_trial *t = NULL;
	if (!argv || !r)
		goto out;
	for (int i = 0; i < f->ntmpl; i++)
		if (!(argv[i] = fit_subst(f->tmpl[i], batch)))
			goto out;
	if (f->verbose)
		fprintf(stderr, "vramz fit: batch %lu ...\n", batch);
	struct jobrun_opts jo = {.interval_ms = f->interval_ms, .capture = 1, .echo = f->verbose};
	char err[256];
	if (jobrun(f->ctx, argv, &jo, r, err, sizeof err) < 0) {
		cli_err("fit: %s", err);
		goto out;
	}
	if (!r->started) {
		cli_err("fit: cannot run '%s': %s", argv[0], strerror(r->exec_errno));
		goto out;
	}
	t = &f->t[f->nt++];
	memset(t, 0, sizeof *t);
	t->batch = batch;
	t->phase = phase;
	t->status = jobrun_status(r);
	t->duration_ms = r->duration_ms;
	t->oom = r->oom_message;
	for (unsigned g = 0; g < f->ngpus; g++) {
		t->peak[g] = r->gpus[g].peak_bytes;
		if (t->peak[g] > f->budget[g])
			t->over_budget = 1;
	}
	t->fits = t->status == 0 && !t->oom && !t->over_budget;
	if (t->status != 0)
		snprintf(f->last_tail, sizeof f->last_tail, "%s", r->tail);
	if (r->interrupted) {
		cli_err("fit: interrupted");
		t = NULL;
	}
out:
	if (argv)
		for (int i = 0; i < f->ntmpl; i++)
			free(argv[i]);
	free(argv);
	free(r);
	return t;
}

/* Least squares over the trials that ran to completion (fits or merely
 * over budget: both measured a whole run's peak). */
static void fit_line(struct fit *f)
{
	f->resid_pct = 0;
	for (unsigned g = 0; g < f->ngpus; g++) {
		double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0, ymax = 0;
		for (unsigned i = 0; i < f->nt; i++) {
			const struct fit_trial *t = &f->t[i];
			if (t->status != 0 || t->oom)
				continue;
			double x = (double)t->batch, y = (double)t->peak[g];
			sx += x; sy += y; sxx += x * x; sxy += x * y; n++;
			if (y > ymax)
				ymax = y;
		}
		f->fitted[g] = 0;
		if (n < 2 || ymax == 0)
			continue;
		double den = n * sxx - sx * sx;
		if (den == 0)
			continue;
		f->b[g] = (n * sxy - sx * sy) / den;
		f->a[g] = (sy - f->b[g] * sx) / n;
		f->fitted[g] = 1;
		for (unsigned i = 0; i < f->nt; i++) {
			const struct fit_trial *t = &f->t[i];
			if (t->status != 0 || t->oom)
				continue;
			double r = fabs((double)t->peak[g] - (f->a[g] + f->b[g] * (double)t->batch));
			if (100.0 * r / ymax > f->resid_pct)
				f->resid_pct = 100.0 * r / ymax;
		}
	}
	f->nonlinear = f->resid_pct > 3.0;
}

/* Largest multiple of step the line puts under every GPU's budget. */
static unsigned long fit_predict(const struct fit *f, unsigned long step, unsigned long cap)
{
	double best = (double)cap;
	int any = 0;
	for (unsigned g = 0; g < f->ngpus; g++) {
		if (!f->fitted[g])
			continue;
		any = 1;
		if (f->b[g] <= 0)
			continue; /* not growing with batch here */
		double x = ((double)f->budget[g] - f->a[g]) / f->b[g];
		if (x < best)
			best = x;
	}
	if (!any || best < step)
		return 0;
	unsigned long p = (unsigned long)floor(best / (double)step) * step;
	return p > cap ? cap / step * step : p;
}

static int fit_by_batch(const void *x, const void *y)
{
	const struct fit_trial *a = x, *b = y;
	return a->batch < b->batch ? -1 : a->batch > b->batch;
}

static unsigned fit_worst_gpu(const struct fit *f, const struct fit_trial *t)
{
	unsigned w = 0;
	for (unsigned g = 1; g < f->ngpus; g++)
		if (t->peak[g] > t->peak[w])
			w = g;
	return w;
}

static void fit_print(struct fit *f, unsigned long answer, unsigned long predicted)
{
	char b1[32], b2[32], d[32];
	qsort(f->t, f->nt, sizeof f->t[0], fit_by_batch);
	if (g_opts.json) {
		struct jsonw w;
		jw_init(&w, stdout, 1);
		json_envelope(&w, "fit");
		jw_u64_if(&w, "batch", answer > 0, answer);
		jw_u64_if(&w, "predicted_batch", predicted > 0, predicted);
		jw_bool(&w, "nonlinear", f->nonlinear);
		jw_dbl(&w, "max_residual_pct", f->resid_pct, 2);
		jw_arr(&w, "gpus");
		for (unsigned g = 0; g < f->ngpus; g++) {
			const vramz_gpu_info *gi = vramz_gpu(f->ctx, vramz_selected_index(f->ctx, g));
			jw_obj(&w, NULL);
			jw_u64(&w, "index", vramz_selected_index(f->ctx, g));
			jw_str(&w, "uuid", gi ? gi->uuid : NULL);
			jw_u64(&w, "mem_free_bytes", f->free_bytes[g]);
			jw_u64(&w, "budget_bytes", f->budget[g]);
			jw_dbl_if(&w, "fit_a_bytes", f->fitted[g], f->a[g], 0);
			jw_dbl_if(&w, "fit_b_bytes_per_batch", f->fitted[g], f->b[g], 0);
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_arr(&w, "trials");
		for (unsigned i = 0; i < f->nt; i++) {
			const struct fit_trial *t = &f->t[i];
			jw_obj(&w, NULL);
			jw_u64(&w, "batch", t->batch);
			jw_str(&w, "phase", t->phase);
			jw_str(&w, "result", t->fits ? "fits" : t->oom ? "oom" :
				   t->status ? "failed" : "over-budget");
			jw_u64(&w, "exit_status", (uint64_t)t->status);
			jw_i64(&w, "duration_ms", t->duration_ms);
			jw_u64(&w, "peak_bytes", t->peak[fit_worst_gpu(f, t)]);
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_finish(&w);
		return;
	}
	printf("%8s  %-8s %-12s %12s %8s\n", "BATCH", "PHASE", "RESULT", "PEAK", "TIME");
	for (unsigned i = 0; i < f->nt; i++) {
		const struct fit_trial *t = &f->t[i];
		char res[32];
		if (t->fits)
			snprintf(res, sizeof res, "fits");
		else if (t->oom)
			snprintf(res, sizeof res, "OOM");
		else if (t->status)
			snprintf(res, sizeof res, "exit %d", t->status);
		else
			snprintf(res, sizeof res, "over budget");
		printf("%8lu  %-8s %-12s %12s %8s\n", t->batch, t->phase, res,
		       fmt_bytes(b1, sizeof b1, t->peak[fit_worst_gpu(f, t)]),
		       jobrun_fmt_secs(d, sizeof d, t->duration_ms));
	}
	for (unsigned g = 0; g < f->ngpus; g++) {
		if (!f->fitted[g])
			continue;
		char b3[32];
		printf("GPU %u: memory = %s + %s x batch; budget %s (free %s minus margin)\n",
		       vramz_selected_index(f->ctx, g),
		       fmt_bytes(b1, sizeof b1, f->a[g] > 0 ? (uint64_t)f->a[g] : 0),
		       fmt_bytes(b2, sizeof b2, f->b[g] > 0 ? (uint64_t)f->b[g] : 0),
		       fmt_bytes(d, sizeof d, f->budget[g]),
		       fmt_bytes(b3, sizeof b3, f->free_bytes[g]));
	}
	if (f->nonlinear)
		printf("warning: memory is not linear in the batch size (residual up to %.1f%%): "
		       "e.g. cudnn benchmark workspaces; the answer was checked by running it\n",
		       f->resid_pct);
	if (answer)
		printf("largest batch that fits: %lu\n", answer);
}

static double margin_share = 0.10;
static const char *sizes_list = "1,2,4,8", *est_params, *est_dtype = "bf16", *est_optim = "adamw";
static unsigned batch_step = 1, max_batch_n = 1u << 20;
static int64_t interval_opt_ms = 10;
static int verbose_out;

const struct opt fit_opts[] = {
	{0, "margin", OPT_PERCENT, &margin_share, NULL, "keep this share of free memory spare (default 10%)"},
	{0, "sizes", OPT_STR, &sizes_list, "LIST", "batch sizes of the first runs (default 1,2,4,8)"},
	{0, "step", OPT_UINT, &batch_step, NULL, "batch sizes are multiples of N (default 1)"},
	{0, "max-batch", OPT_UINT, &max_batch_n, NULL, "never try more than N"},
	OPT_SAMPLE_INTERVAL(&interval_opt_ms, "sampling period (default 10ms)"),
	{'v', "verbose", OPT_FLAG, &verbose_out, NULL, "show the command's output"},
	{0, "params", OPT_STR, &est_params, "N", "offline estimate for N parameters (7e9, 7B)"},
	{0, "dtype", OPT_STR, &est_dtype, "TYPE", "estimate: fp32, bf16, fp16, fp8, int8, int4",
	 "fp32 bf16 fp16 fp8 int8 int4"},
	{0, "optimizer", OPT_STR, &est_optim, "NAME", "estimate: adamw, sgd, momentum, none, ..."},
	OPT_GPUS,
	OPT_JSON,
	OPT_END,
};
const char fit_synopsis[] =
	"[OPTIONS] [--] COMMAND ... {} ... | --params N [--dtype T] [--optimizer O]";
const char fit_about[] =
	"Finds the largest batch size that fits: {} in the command is replaced by\n"
	"a batch size; the command should run a few steps and exit.";

/* The command and --step / --sizes: the first sizes into probe; their
 * count, or -1 after saying what is wrong. */
static int fit_check(const struct cmd_args *args, unsigned long *probe, unsigned cap)
{
	if (args->n < 1) {
		cli_err("fit: no command given (vramz fit -- COMMAND ... {})");
		return -1;
	}
	int has = 0;
	for (int i = 0; i < args->n; i++)
		has |= strstr(args->v[i], "{}") != NULL;
	if (!has) {
		cli_err("fit: the command has no {} to put the batch size in");
		return -1;
	}
	if (batch_step < 1 || max_batch_n < batch_step) {
		cli_err("fit: --step must be at least 1 and at most --max-batch");
		return -1;
	}
	unsigned nprobe = 0;
	for (const char *p = sizes_list; *p && nprobe < cap;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (end == p || v == 0 || (*end && *end != ',')) {
			cli_err("fit: bad --sizes '%s' (e.g. 1,2,4,8)", sizes_list);
			return -1;
		}
		probe[nprobe++] = v * batch_step;
		p = *end ? end + 1 : end;
	}
	if (nprobe < 2) {
		cli_err("fit: --sizes needs at least two sizes to fit a line");
		return -1;
	}
	return (int)nprobe;
}

/* The first sizes: *lo the largest that fits, *hi the first that does not
 * (0: all fit).  0, or -1 when vramz failed or nothing fits (said why). */
static int fit_probe(struct fit *f, const unsigned long *probe, unsigned nprobe,
		     unsigned long *lo, unsigned long *hi)
{
	struct fit_trial *t;
	for (unsigned i = 0; i < nprobe; i++) {
		if (!(t = fit_try(f, probe[i], "probe")))
			return -1;
		if (!t->fits) {
			*hi = t->batch;
			break;
		}
		*lo = t->batch;
	}
	if (*lo)
		return 0;
	const struct fit_trial *t0 = &f->t[0];
	fit_print(f, 0, 0);
	if (t0->status && !t0->oom)
		cli_err("fit: the command failed at batch %lu (exit %d) without an out-of-memory sign:\n%s",
			t0->batch, t0->status, f->last_tail);
	else
		cli_err("fit: even batch %lu does not fit", t0->batch);
	return -1;
}

/* All probes fit: extrapolate, verify, refit with the new point. */
static int fit_extrapolate(struct fit *f, unsigned long *lo, unsigned long *hi,
			   unsigned long *predicted)
{
	for (int round = 0; round < 4; round++) {
		fit_line(f);
		unsigned long p = fit_predict(f, batch_step, max_batch_n);
		if (round == 0)
			*predicted = p;
		if (p <= *lo)
			break;
		struct fit_trial *t = fit_try(f, p, round ? "refit" : "predict");
		if (!t)
			return -1;
		if (!t->fits) {
			*hi = p;
			break;
		}
		*lo = p;
		if (p >= max_batch_n)
			break;
	}
	return 0;
}

/* Between a size that fits (lo) and one that does not (hi): a guess from
 * the failed run's peak, then bisection.  0, or -1 when vramz failed. */
static int fit_narrow(struct fit *f, unsigned long *lo, unsigned long *hi)
{
	struct fit_trial *t;
	/* A run that failed from lack of memory shows, in its peak, where the
	 * real limit lies (what the allocator got before it gave up); the line
	 * through that limit is a far better guess than a midpoint.  One guess
	 * and its next step, then plain bisection. */
	const struct fit_trial *failed = NULL;
	for (unsigned i = 0; i < f->nt; i++)
		if (f->t[i].batch == *hi && f->t[i].oom)
			failed = &f->t[i];
	if (*hi && failed && *hi - *lo > batch_step) {
		uint64_t saved[FIT_MAX_GPUS];
		memcpy(saved, f->budget, sizeof saved);
		for (unsigned g = 0; g < f->ngpus; g++)
			if (failed->peak[g] && failed->peak[g] < f->budget[g])
				f->budget[g] = failed->peak[g];
		unsigned long guess = fit_predict(f, batch_step, max_batch_n);
		memcpy(f->budget, saved, sizeof saved);
		for (int k = 0; k < 2 && guess > *lo && guess < *hi; k++, guess += batch_step) {
			if (!(t = fit_try(f, guess, "limit")))
				return -1;
			if (!t->fits) {
				*hi = guess;
				break;
			}
			*lo = guess;
		}
	}
	/* bisection between a size that fits and one that does not */
	while (*hi && *hi - *lo > batch_step) {
		unsigned long mid = *lo + (*hi - *lo) / 2 / batch_step * batch_step;
		if (mid <= *lo)
			mid = *lo + batch_step;
		if (!(t = fit_try(f, mid, "bisect")))
			return -1;
		if (t->fits)
			*lo = mid;
		else
			*hi = mid;
	}
	return 0;
}

int cmd_fit(const struct cmd_args *args)
{
	if (est_params)
		return args->n ? (cli_err("fit: --params takes no command"), EXIT_USAGE)
			    : fit_estimate(est_params, est_dtype, est_optim);
	unsigned long probe[16];
	int nprobe = fit_check(args, probe, 16);
	if (nprobe < 0)
		return EXIT_USAGE;
	struct fit *f = calloc(1, sizeof *f);
	if (!f) {
		cli_err("fit: out of memory");
		return EXIT_FAIL;
	}
	const vramz_snapshot *s;
	int ex = cli_open_sample(&f->ctx, 0, &s);
	if (ex) {
		free(f);
		return ex;
	}
	f->tmpl = args->v;
	f->ntmpl = args->n;
	f->interval_ms = interval_opt_ms;
	f->verbose = verbose_out;
	f->ngpus = s->gpu_count < FIT_MAX_GPUS ? s->gpu_count : FIT_MAX_GPUS;
	for (unsigned g = 0; g < f->ngpus; g++) {
		f->free_bytes[g] = (s->gpus[g].valid & VRAMZ_F_MEM) ? s->gpus[g].mem_free_bytes : 0;
		f->budget[g] = (uint64_t)((double)f->free_bytes[g] * (1.0 - margin_share));
	}
	ex = EXIT_FAIL;
	unsigned long lo = 0, hi = 0, predicted = 0;
	if (fit_probe(f, probe, (unsigned)nprobe, &lo, &hi))
		goto out;
	if (!hi) {
		if (fit_extrapolate(f, &lo, &hi, &predicted))
			goto out;
	} else {
		fit_line(f);
	}
	if (fit_narrow(f, &lo, &hi))
		goto out;
	/* the residuals over every completed run, the verifying ones too */
	fit_line(f);
	fit_print(f, lo, predicted);
	ex = EXIT_OK;
out:
	cli_close(f->ctx);
	free(f);
	return ex;
}
