/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-run.c - `vramz run -- CMD ...`: what a command really needs in GPU
 * memory, measured from outside so it works for any framework.
 *
 * jobrun.c runs the command and follows its whole process tree on every
 * selected GPU; this file turns the result into a report (a table on
 * stderr, so the command's own stdout stays clean for pipes, or JSON),
 * enforces --max-vram budgets for CI (exit 3), and compares two saved
 * JSON reports (`--compare A.json B.json`), e.g. FP32 against mixed
 * precision.  The command's exit status passes through: its code, or
 * 128+N when signal N ended it, 127/126 when it could not be executed.
 *
 * With -o LOG every tick is also appended to LOG in the standard CSV log
 * format (lib/log, docs/csv.md), GPU rows in LOG and process rows in its
 * .procs sibling, so `vramz analyze` and `vramz replay` read a run like any
 * recording.  The process rows are every process on the selected GPUs,
 * not only the command's: a log holding some of them would show the rest
 * of the GPU's used memory as held by no process, which `analyze` reports
 * as orphaned.  After the command ends one closing tick shows its
 * processes gone, and the PyTorch agents' OOMs and ends go to
 * LOG.events.csv as `log --procs` writes them (format/agentlog.h), so
 * `analyze` of the run says whether it died out of memory, and where.
 * The log is opened before the command starts, so a file
 * that cannot be written (other columns, /dev/full) refuses the run at
 * once; a write that fails later stops the log only: the command runs on
 * untouched and its status passes through, or 1 when it succeeded.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "format/jsondoc.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsonw.h"
#include "jobs/jobrun.h"
#include "format/jsonr.h"
#include "format/logwrite.h"
#include "format/agentlog.h"
#include "safefile.h"

struct run_conf {
	int64_t interval_ms;
	uint64_t max_vram, max_vram_total;
	const char *log_path;
	const char *report_path;
	int compare;
	int quiet;
};

static const char *run_signame(int sig)
{
	const char *s = sigabbrev_np(sig);
	return s ? s : "?";
}

static void run_json(FILE *f, vramz_ctx *ctx, char **argv, int argc,
		     const struct run_conf *o, const struct jobrun_result *r,
		     int over_gpu, int over_total)
{
	struct jsonw w;
	jw_init(&w, f, 1);
	json_envelope(&w, "run");
	jw_arr(&w, "command");
	for (int i = 0; i < argc; i++)
		jw_str(&w, NULL, argv[i]);
	jw_end_arr(&w);
	jw_bool(&w, "started", r->started);
	jw_u64(&w, "exit_status", (uint64_t)jobrun_status(r));
	if (r->signaled)
		jw_str(&w, "signal", run_signame(r->signo));
	else
		jw_null(&w, "signal");
	jw_i64(&w, "duration_ms", r->duration_ms);
	jw_i64(&w, "interval_ms", o->interval_ms);
	jw_u64(&w, "samples", r->ticks);
	jw_u64(&w, "late_samples", r->late_ticks);
	jw_u64(&w, "peak_total_bytes", r->peak_total_bytes);
	jw_i64(&w, "peak_total_at_ms", r->peak_total_at_ms);
	jw_u64(&w, "processes_seen", r->procs_seen);
	jw_u64(&w, "left_running", r->left_running);
	jw_u64_if(&w, "max_vram_bytes", o->max_vram != 0, o->max_vram);
	jw_u64_if(&w, "max_vram_total_bytes", o->max_vram_total != 0, o->max_vram_total);
	jw_bool(&w, "budget_exceeded", over_gpu >= 0 || over_total);
	jw_arr(&w, "gpus");
	for (unsigned i = 0; i < r->ngpus; i++) {
		const struct jobrun_gpu *g = &r->gpus[i];
		if (!g->touched)
			continue;
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		jw_obj(&w, NULL);
		jw_u64(&w, "index", g->index);
		jw_str(&w, "uuid", gi && *gi->uuid ? gi->uuid : NULL);
		jw_str(&w, "name", gi && *gi->name ? gi->name : NULL);
		jw_u64(&w, "peak_bytes", g->peak_bytes);
		jw_i64(&w, "peak_at_ms", g->peak_at_ms);
		jw_u64(&w, "processes_peak", g->procs_peak);
		jw_dbl_if(&w, "sm_pct_mean", g->sm_ticks > 0,
			  g->sm_ticks ? (double)g->sm_pct_sum / g->sm_ticks : 0, 1);
		jw_dbl_if(&w, "gpu_energy_j", g->energy_ok,
			  (double)(g->energy_end_mj - g->energy_start_mj) / 1000.0, 1);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_end_obj(&w);
	jw_finish(&w);
}

static void run_table(FILE *f, vramz_ctx *ctx, const struct run_conf *o,
		      const struct jobrun_result *r)
{
	char d[32], b[32], at[32], e[32];
	if (r->signaled)
		fprintf(f, "vramz run: killed by SIG%s after %s", run_signame(r->signo),
			jobrun_fmt_secs(d, sizeof d, r->duration_ms));
	else
		fprintf(f, "vramz run: exit %d after %s", r->exit_code,
			jobrun_fmt_secs(d, sizeof d, r->duration_ms));
	fprintf(f, ", %u samples every %lldms", r->ticks, (long long)o->interval_ms);
	if (r->late_ticks)
		fprintf(f, " (%u late)", r->late_ticks);
	fprintf(f, "\n");
	unsigned touched = 0;
	for (unsigned i = 0; i < r->ngpus; i++)
		touched += r->gpus[i].touched;
	if (!touched) {
		fprintf(f, "no GPU memory held by the command on the selected GPUs\n");
		return;
	}
	fprintf(f, "%-4s %-20s %10s %8s %5s %6s %10s\n", "GPU", "UUID", "PEAK", "AT",
		"PROCS", "SM%", "ENERGY");
	for (unsigned i = 0; i < r->ngpus; i++) {
		const struct jobrun_gpu *g = &r->gpus[i];
		if (!g->touched)
			continue;
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		char u[32], sm[16];
		fmt_trunc(u, sizeof u, gi ? gi->uuid : "-", 20);
		if (g->sm_ticks)
			snprintf(sm, sizeof sm, "%.0f", (double)g->sm_pct_sum / g->sm_ticks);
		else
			snprintf(sm, sizeof sm, "-");
		if (g->energy_ok)
			snprintf(e, sizeof e, "%.1f kJ",
				 (double)(g->energy_end_mj - g->energy_start_mj) / 1e6);
		else
			snprintf(e, sizeof e, "-");
		fprintf(f, "%-4u %-20s %10s %8s %5u %6s %10s\n", g->index, u,
			fmt_bytes(b, sizeof b, g->peak_bytes),
			jobrun_fmt_secs(at, sizeof at, g->peak_at_ms), g->procs_peak, sm, e);
	}
	fprintf(f, "%-25s %10s %8s\n", "total (at once)",
		fmt_bytes(b, sizeof b, r->peak_total_bytes),
		jobrun_fmt_secs(at, sizeof at, r->peak_total_at_ms));
	if (r->left_running)
		fprintf(f, "note: %u process(es) of the command are still running\n",
			r->left_running);
	if (r->ticks < 3)
		fprintf(f, "note: only %u samples: a short peak may have been missed (try -i 10ms)\n",
			r->ticks);
}

/* ---- -o LOG -------------------------------------------------------------- */

struct run_log {
	struct log_writer *w;
	struct agentlog *agents; /* the PyTorch agents' records, LOG.events.csv */
	vramz_ctx *ctx;
	struct logbuf gb, pb;
	unsigned ticks;
	int failed;          /* a write failed: no more ticks, err says why */
	char err[600];
};

static const vramz_gpu_info *run_log_info(void *ctx, unsigned idx)
{
	return vramz_gpu(ctx, idx);
}

/* jobrun's on_tick: one tick to the log.  After a failure it stays quiet -
 * the command is never stopped for the log's sake - and the tool reports
 * the first error once the command has ended. */
static void run_log_tick(void *arg, const vramz_snapshot *snap, const unsigned char *member)
{
	struct run_log *l = arg;
	(void)member; /* every process is logged, see the top of the file */
	if (l->failed)
		return;
	l->gb.len = l->pb.len = 0;
	if (log_format_tick(&l->gb, &l->pb, snap, run_log_info, l->ctx)) {
		snprintf(l->err, sizeof l->err, "out of memory formatting a tick");
		l->failed = 1;
		return;
	}
	if (log_writer_tick(l->w, &l->gb, &l->pb, l->err, sizeof l->err) < 0) {
		l->failed = 1;
		return;
	}
	agentlog_tick(l->agents, snap, run_log_info, l->ctx);
	l->ticks++;
}

/* Closes the log; 0, or -1 after saying in one line why it is incomplete. */
static int run_log_close(struct run_log *l)
{
	char err[600];
	int rc = 0;
	if (l->failed) {
		cli_err("run: log stopped after %u samples: %s", l->ticks, l->err);
		rc = -1;
	}
	if (log_writer_close(l->w, err, sizeof err) < 0 && !rc) {
		cli_err("run: %s", err);
		rc = -1;
	}
	agentlog_close(l->agents);
	logbuf_free(&l->gb);
	logbuf_free(&l->pb);
	return rc;
}

/* ---- --compare ---------------------------------------------------------- */

/* A report of 8 GPUs and a few hundred processes is tens of KiB; reading
 * stops past this, so `--compare /dev/zero` cannot take the memory. */
#define RUN_REPORT_MAX_BYTES (16 << 20)

static struct jr_val *run_load(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		cli_err("run: %s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && n <= RUN_REPORT_MAX_BYTES &&
	       (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf) {
		cli_err("run: %s: out of memory", path);
		return NULL;
	}
	if (n > RUN_REPORT_MAX_BYTES) { /* /dev/zero, or a file that is not a report */
		cli_err("run: %s: larger than %d MiB, not a 'vramz run --json' report", path,
			RUN_REPORT_MAX_BYTES >> 20);
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	char err[128];
	struct jr_val *v = jr_parse(buf, err, sizeof err);
	free(buf);
	if (!v) {
		cli_err("run: %s: not JSON (%s)", path, err);
		return NULL;
	}
	const char *kind = jr_str(v, "kind");
	if (!kind || strcmp(kind, "run") || !jr_get(v, "gpus")) {
		cli_err("run: %s: not a 'vramz run --json' report", path);
		jr_free(v);
		return NULL;
	}
	return v;
}

static void run_change(char *buf, size_t len, double a, double b)
{
	char d[32];
	double diff = b - a;
	fmt_bytes(d, sizeof d, (uint64_t)fabs(diff));
	if (a > 0)
		snprintf(buf, len, "%s%s (%+.1f%%)", diff < 0 ? "-" : "+", d, 100.0 * diff / a);
	else
		snprintf(buf, len, "%s%s", diff < 0 ? "-" : "+", d);
}

/* Finds the GPU of report b matching a's GPU ga: same UUID, else same index. */
static const struct jr_val *run_match(const struct jr_val *gb, const struct jr_val *ga)
{
	const char *uuid = jr_str(ga, "uuid");
	uint64_t ia = 0, ib;
	jr_u64(ga, "index", &ia);
	for (size_t i = 0; uuid && i < gb->n; i++) {
		const char *u = jr_str(&gb->items[i], "uuid");
		if (u && !strcmp(u, uuid))
			return &gb->items[i];
	}
	for (size_t i = 0; i < gb->n; i++)
		if (!jr_u64(&gb->items[i], "index", &ib) && ib == ia)
			return &gb->items[i];
	return NULL;
}

static int run_compare(const char *pa, const char *pb, int json)
{
	struct jr_val *a = run_load(pa), *b = a ? run_load(pb) : NULL;
	if (!a || !b) {
		jr_free(a);
		return EXIT_FAIL;
	}
	const struct jr_val *ga = jr_get(a, "gpus"), *gb = jr_get(b, "gpus");
	struct jsonw w;
	if (json) {
		jw_init(&w, stdout, 1);
		json_envelope(&w, "run-compare");
		jw_str(&w, "a", pa);
		jw_str(&w, "b", pb);
		jw_arr(&w, "gpus");
	} else {
		printf("%-28s %12s %12s  %s\n", "GPU (peak)", "A", "B", "CHANGE B-A");
	}
	char sa[32], sb[32], ch[64];
	/* every GPU of A, then GPUs only B used */
	for (int pass = 0; pass < 2; pass++) {
		const struct jr_val *from = pass ? gb : ga, *other = pass ? ga : gb;
		for (size_t i = 0; from && i < from->n; i++) {
			const struct jr_val *g = &from->items[i];
			const struct jr_val *m = other ? run_match(other, g) : NULL;
			if (pass && m)
				continue;
			uint64_t pka = 0, pkb = 0, idx = 0;
			const struct jr_val *ra = pass ? m : g, *rb = pass ? g : m;
			int has_a = ra && !jr_u64(ra, "peak_bytes", &pka);
			int has_b = rb && !jr_u64(rb, "peak_bytes", &pkb);
			jr_u64(g, "index", &idx);
			const char *uuid = jr_str(g, "uuid");
			if (json) {
				jw_obj(&w, NULL);
				jw_u64(&w, "index", idx);
				jw_str(&w, "uuid", uuid);
				jw_u64_if(&w, "a_peak_bytes", has_a, pka);
				jw_u64_if(&w, "b_peak_bytes", has_b, pkb);
				jw_i64_if(&w, "change_bytes", has_a && has_b, (int64_t)(pkb - pka));
				jw_dbl_if(&w, "change_pct", has_a && has_b && pka,
					  pka ? 100.0 * ((double)pkb - (double)pka) / (double)pka : 0, 1);
				jw_end_obj(&w);
				continue;
			}
			char name[64], u[24];
			snprintf(name, sizeof name, "%u %s", (unsigned)idx,
				 fmt_trunc(u, sizeof u, uuid ? uuid : "", 20));
			if (has_a && has_b)
				run_change(ch, sizeof ch, (double)pka, (double)pkb);
			else
				snprintf(ch, sizeof ch, "%s", has_a ? "not used in B" : "not used in A");
			printf("%-28s %12s %12s  %s\n", name, fmt_bytes_if(sa, sizeof sa, has_a, pka),
			       fmt_bytes_if(sb, sizeof sb, has_b, pkb), ch);
		}
	}
	uint64_t ta = 0, tb = 0;
	double da = 0, db = 0;
	int hta = !jr_u64(a, "peak_total_bytes", &ta), htb = !jr_u64(b, "peak_total_bytes", &tb);
	int hda = !jr_num(a, "duration_ms", &da), hdb = !jr_num(b, "duration_ms", &db);
	if (json) {
		jw_end_arr(&w);
		jw_u64_if(&w, "a_peak_total_bytes", hta, ta);
		jw_u64_if(&w, "b_peak_total_bytes", htb, tb);
		jw_i64_if(&w, "change_total_bytes", hta && htb, (int64_t)(tb - ta));
		jw_dbl_if(&w, "a_duration_ms", hda, da, 0);
		jw_dbl_if(&w, "b_duration_ms", hdb, db, 0);
		jw_end_obj(&w);
		jw_finish(&w);
	} else {
		if (hta && htb)
			run_change(ch, sizeof ch, (double)ta, (double)tb);
		printf("%-28s %12s %12s  %s\n", "total (at once)", fmt_bytes_if(sa, sizeof sa, hta, ta),
		       fmt_bytes_if(sb, sizeof sb, htb, tb), hta && htb ? ch : "-");
		if (hda && hdb) {
			jobrun_fmt_secs(sa, sizeof sa, (int64_t)da);
			jobrun_fmt_secs(sb, sizeof sb, (int64_t)db);
			if (da > 0)
				snprintf(ch, sizeof ch, "%+.1f%%", 100.0 * (db - da) / da);
			printf("%-28s %12s %12s  %s\n", "duration", sa, sb, da > 0 ? ch : "-");
		}
	}
	jr_free(a);
	jr_free(b);
	return EXIT_OK;
}

static struct run_conf conf = {.interval_ms = 20};

const struct opt run_opts[] = {
	OPT_SAMPLE_INTERVAL(&conf.interval_ms, "sampling period (default 20ms; 10ms catches short peaks)"),
	{0, "max-vram", OPT_SIZE, &conf.max_vram, NULL,
	 "budget per GPU: exit 3 when a GPU's peak exceeds it"},
	{0, "max-vram-total", OPT_SIZE, &conf.max_vram_total, NULL,
	 "budget for the sum over GPUs at any one time: exit 3 above it"},
	{'o', "output", OPT_STR, &conf.log_path, "LOG",
	 "append every sample to LOG as a CSV log (processes: LOG's .procs sibling)"},
	{0, "report", OPT_STR, &conf.report_path, "FILE",
	 "write the report to FILE instead of stderr"},
	{0, "compare", OPT_FLAG, &conf.compare, NULL,
	 "compare two saved --json reports: vramz run --compare A.json B.json"},
	{'q', "quiet", OPT_FLAG, &conf.quiet, NULL, "no report unless a budget is exceeded"},
	OPT_GPUS,
	OPT_JSON,
	OPT_END,
};
const char run_synopsis[] = "[OPTIONS] [--] COMMAND [ARGS...] | --compare A.json B.json";
const char run_about[] =
	"Runs COMMAND (no shell), follows its whole process tree on every GPU, and\n"
	"reports its peak VRAM per GPU, mean SM utilization, duration and energy.\n"
	"The report goes to stderr (--json: to stdout, the command's stdout then\n"
	"going to stderr); the exit status is the command's (128+N for\n"
	"signal N), or 3 when it succeeded but exceeded a --max-vram budget.";

/* --report FILE, made or emptied under the link rule (safefile.h); a
 * FIFO or device the user named (/dev/stdout's target) is written as it is */
static FILE *report_open(const char *path, char *err, size_t errlen)
{
	if (!strcmp(path, "/dev/stdout"))
		return stdout;
	int fd = safefile_open(-1, path, SAFEFILE_WRITE | SAFEFILE_ANY_KIND, 0644, err, errlen);
	if (fd < 0)
		return NULL;
	struct stat st;
	FILE *f = NULL;
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && ftruncate(fd, 0)) || !(f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

/* -o LOG: opened before the command starts, so a log that cannot be
 * written is refused while nothing has run yet; 0 or -1 (said why). */
static int run_log_open(struct run_log *lg, struct jobrun_opts *jo)
{
	char err[600];
	struct log_writer_opts wo = {.path = conf.log_path, .procs = 1};
	if (log_writer_open(&lg->w, &wo, err, sizeof err) < 0) {
		cli_err("run: %s", err);
		log_writer_close(lg->w, err, sizeof err);
		lg->w = NULL;
		return -1;
	}
	/* the PyTorch agents' OOMs and ends beside it, as `log --procs` keeps
	 * them, so analyze of the run names the line that ran out */
	lg->agents = agentlog_open("run", conf.log_path);
	jo->on_tick = run_log_tick;
	jo->arg = lg;
	/* a file-size limit is a failed write to report, not a death
	 * that would leave the command unwatched */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

/* Runs cmd under jobrun into r; *rep becomes stdout when the report is the
 * one thing on stdout.  0, or -1 after saying why. */
static int run_job(vramz_ctx *ctx, char **cmd, const struct jobrun_opts *jo,
		   struct jobrun_result *r, FILE **rep)
{
	char err[600];
	/* --json without --report: the report is the one thing on stdout, so
	 * `vramz run --json -- CMD | jq` works; the command's stdout goes to
	 * stderr meanwhile */
	int json_out = g_opts.json && !conf.report_path, saved_stdout = -1;
	if (json_out) {
		fflush(stdout);
		saved_stdout = dup(STDOUT_FILENO);
		if (saved_stdout >= 0)
			dup2(STDERR_FILENO, STDOUT_FILENO);
	}
	int jrc = jobrun(ctx, cmd, jo, r, err, sizeof err);
	if (saved_stdout >= 0) {
		dup2(saved_stdout, STDOUT_FILENO);
		close(saved_stdout);
		*rep = stdout;
	}
	if (jrc < 0) {
		cli_err("run: %s", err);
		return -1;
	}
	return 0;
}

/* The report and the budgets of a run that ended; its exit status. */
static int run_verdict(FILE *rep, vramz_ctx *ctx, char **cmd, int ncmd,
		       const struct jobrun_result *r, int log_failed)
{
	if (!r->started)
		cli_err("run: cannot run '%s': %s", cmd[0], strerror(r->exec_errno));
	int over_gpu = -1, over_total = 0;
	for (unsigned i = 0; i < r->ngpus; i++)
		if (conf.max_vram && r->gpus[i].peak_bytes > conf.max_vram && over_gpu < 0)
			over_gpu = (int)i;
	if (conf.max_vram_total && r->peak_total_bytes > conf.max_vram_total)
		over_total = 1;
	int over = over_gpu >= 0 || over_total;
	if (r->started && (!conf.quiet || over)) {
		if (g_opts.json)
			run_json(rep, ctx, cmd, ncmd, &conf, r, over_gpu, over_total);
		else
			run_table(rep, ctx, &conf, r);
	}
	fflush(stdout);
	char b1[32], b2[32];
	if (over_gpu >= 0)
		cli_err("run: peak %s on GPU %u exceeds --max-vram %s",
			fmt_bytes(b1, sizeof b1, r->gpus[over_gpu].peak_bytes),
			r->gpus[over_gpu].index, fmt_bytes(b2, sizeof b2, conf.max_vram));
	if (over_total)
		cli_err("run: total peak %s exceeds --max-vram-total %s",
			fmt_bytes(b1, sizeof b1, r->peak_total_bytes),
			fmt_bytes(b2, sizeof b2, conf.max_vram_total));
	/* the command's failure is the bigger news; then a broken log (vramz
	 * itself failed), then a budget */
	int status = jobrun_status(r);
	if (status == 0 && log_failed)
		status = EXIT_FAIL;
	else if (status == 0 && over)
		status = EXIT_FINDING;
	return status;
}

int cmd_run(const struct cmd_args *args)
{
	if (conf.compare) {
		if (args->n != 2) {
			cli_err("run: --compare takes two report files (vramz run --json --report A.json -- ...)");
			return EXIT_USAGE;
		}
		return run_compare(args->v[0], args->v[1], g_opts.json);
	}
	if (args->n < 1) {
		cli_err("run: no command given (vramz run [OPTIONS] -- COMMAND [ARGS...])");
		return EXIT_USAGE;
	}
	if (conf.log_path && !strcmp(conf.log_path, "-")) {
		cli_err("run: -o - would mix the log into the command's stdout; give a file");
		return EXIT_USAGE;
	}
	char err[600];
	struct log_writer_opts wo = {.path = conf.log_path, .procs = 1};
	if (conf.log_path && log_writer_check(&wo, 1, err, sizeof err)) {
		cli_err("run: %s", err);
		return EXIT_FAIL;
	}
	FILE *rep = stderr;
	if (conf.report_path && !(rep = report_open(conf.report_path, err, sizeof err))) {
		cli_err("run: %s", err);
		return EXIT_FAIL;
	}
	vramz_ctx *ctx = NULL;
	char **cmd = NULL;
	struct jobrun_result *r = NULL;
	struct jobrun_opts jo = {.interval_ms = conf.interval_ms};
	struct run_log lg = {0};
	int status = cli_open(&ctx);
	if (status)
		goto out;
	status = EXIT_FAIL;
	lg.ctx = ctx;
	/* jobrun's argv must end in NULL */
	cmd = calloc((size_t)args->n + 1, sizeof *cmd);
	r = calloc(1, sizeof *r);
	if (!cmd || !r) {
		cli_err("run: out of memory");
		goto out;
	}
	memcpy(cmd, args->v, (size_t)args->n * sizeof *cmd);
	if (conf.log_path && run_log_open(&lg, &jo))
		goto out;
	if (run_job(ctx, cmd, &jo, r, &rep))
		goto out;
	int log_failed = lg.w && run_log_close(&lg) < 0;
	lg.w = NULL;
	status = run_verdict(rep, ctx, cmd, args->n, r, log_failed);
out:
	if (lg.w)
		run_log_close(&lg);
	if (rep != stderr && rep != stdout)
		fclose(rep);
	free(r);
	free(cmd);
	cli_close(ctx);
	return status;
}
