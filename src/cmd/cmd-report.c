/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-report.c - `vramz report LOG...`: a recorded log's story as one
 * HTML page with plots (docs/report.md), for opening in a browser,
 * attaching to a bug report, or printing.
 *
 * The logs are read once (src/analyze/logset.c: several files or a rotated set,
 * in time order, cut to --since / --until); every tick goes both into the
 * pixel-column reduction (src/report/reduce.c) and through the diagnosis
 * engine with analyze's settings, so the page shows the same findings as
 * `vramz analyze`.  Nothing is written until the whole log has been read:
 * a bad line fails with FILE:LINE and leaves no page behind.  The page is
 * written under a temporary name beside its destination and renamed when
 * complete, so a reader never sees half a page.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "safefile.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "analyze/logset.h"
#include "report/report.h"
#include "vramz/diagnose.h"

static const vramz_gpu_info *set_info(void *arg, unsigned idx)
{
	return logset_gpu(arg, idx);
}

/* "run.csv" -> "run.html", "run" -> "run.html", beside the log */
static void default_name(const char *log, char *out, size_t len)
{
	size_t n = strlen(log);
	const char *slash = strrchr(log, '/');
	const char *dot = strrchr(log, '.');
	if (dot && (!slash || dot > slash) && !strcmp(dot, ".csv"))
		n = (size_t)(dot - log);
	snprintf(out, len, "%.*s.html", (int)n, log);
}

static int collect_findings(struct rep *r, vramz_diag *d)
{
	const vramz_finding *cur, *past;
	unsigned n = vramz_diag_findings(d, &cur);
	unsigned np = vramz_diag_cleared(d, &past);
	r->findings = calloc((size_t)n + np + 1, sizeof *r->findings);
	if (!r->findings)
		return VRAMZ_ENOMEM;
	/* no findings: the engine may hand out NULL, which memcpy must not see */
	if (n)
		memcpy(r->findings, cur, n * sizeof *cur);
	if (np)
		memcpy(r->findings + n, past, np * sizeof *past);
	r->nfind = n + np;
	return 0;
}

/* Reads the whole set into r; 0, or an exit code after printing why. */
static int read_all(struct rep *r, struct logset *s, vramz_diag *d)
{
	const vramz_snapshot *snap;
	int rc;
	while ((rc = logset_next(s, &snap)) == 1) {
		if ((rc = rep_feed(r, snap, set_info, s)) < 0)
			break;
		if ((rc = logset_feed(s, d, snap)) < 0 && rc != VRAMZ_EINVAL)
			break;
		rc = 0;
	}
	if (rc < 0) {
		const char *why = logset_error(s);
		cli_err("%s", *why ? why : vramz_strerror(rc));
		return EXIT_FAIL;
	}
	if (!r->tick) {
		cli_err("report: no samples in the window");
		return EXIT_FAIL;
	}
	char bad[128];
	if ((rc = rep_finish(r, bad, sizeof bad)) == VRAMZ_ENOTFOUND) {
		cli_err("report: -g: no GPU '%s' in the log", bad);
		return EXIT_USAGE;
	}
	if (rc == 0)
		rc = collect_findings(r, d);
	if (rc < 0) {
		cli_err("report: %s", vramz_strerror(rc));
		return EXIT_FAIL;
	}
	r->skipped = logset_skipped(s);
	char note[256];
	if (*rep_span_note(r, note, sizeof note))
		cli_err("report: note: %s", note);
	return 0;
}

static int write_page(const struct rep *r, const char *out)
{
	if (!strcmp(out, "-")) {
		int rc = page_write(stdout, r);
		if (fflush(stdout) || rc) {
			cli_err("report: writing to standard output failed");
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	/* the link rule (safefile.h): out must be a name we may replace (none
	 * yet, or our own file where others can add names), and the page is
	 * written under a temporary name of ours beside it, then renamed */
	char err[PATH_MAX + 200];
	if (safefile_open(-1, out, SAFEFILE_CHECK, 0, err, sizeof err)) {
		cli_err("report: %s", err);
		return EXIT_FAIL;
	}
	size_t len = strlen(out) + 48;
	char *tmp = malloc(len);
	if (!tmp)
		return EXIT_FAIL;
	const char *slash = strrchr(out, '/');
	if (slash)
		snprintf(tmp, len, "%.*s.%s.%ld", (int)(slash - out + 1), out, slash + 1, (long)getpid());
	else
		snprintf(tmp, len, ".%s.%ld", out, (long)getpid());
	int fd = safefile_open(-1, tmp, SAFEFILE_TEMP, 0666, err, sizeof err);
	if (fd < 0) {
		cli_err("report: %s", err);
		free(tmp);
		return EXIT_FAIL;
	}
	FILE *f = fdopen(fd, "w");
	int rc = f ? page_write(f, r) : VRAMZ_EIO;
	int e = errno;
	if (f && fflush(f))
		rc = VRAMZ_EIO, e = errno;
	if (f && fsync(fileno(f)) && errno != EINVAL)
		rc = VRAMZ_EIO, e = errno;
	if (f ? fclose(f) : close(fd))
		rc = VRAMZ_EIO, e = errno;
	if (rc == 0 && rename(tmp, out))
		rc = VRAMZ_EIO, e = errno;
	if (rc) {
		unlink(tmp);
		cli_err("report: %s: %s", out, strerror(e));
	}
	free(tmp);
	return rc ? EXIT_FAIL : EXIT_OK;
}

/* analyze's settings, so the page and `vramz analyze` agree */
struct cmd_thresholds report_thresholds = {.cc = {.fail_on = "warning"},
					    .preset = diagconf_preset_log};
static const char *out;
static struct logset_window win;

const struct opt report_opts[] = {
	{'o', "output", OPT_STR, &out, "FILE",
	 "the page (default: beside the first log, .html); - for stdout"},
	{0, "since", OPT_STR, &win.since, "T",
	 "only ticks from T: 2026-11-30T02:00:00Z, -2h (before the end), +30m"},
	{0, "until", OPT_STR, &win.until, "T", "only ticks up to T (as --since)"},
	OPT_GPUS,
	OPT_END, /* then the thresholds (the row's .thresholds) */
};
const char report_synopsis[] =
	"LOG... [-o FILE.html] [--since T] [--until T] [-g LIST] [thresholds]";
const char report_about[] =
	"Writes a recorded log as one self-contained HTML page: per GPU, memory stacked\n"
	"by process, utilization, temperature and power on one time axis, the findings\n"
	"of `vramz analyze` drawn where they happened, and tables of findings, processes\n"
	"and hardware.  Several logs or a rotated set are read as one (docs/report.md).";

int cmd_report(const struct cmd_args *args)
{
	int nargs = args->n;
	char **argv = args->v;
	int ex, rc;
	for (int i = 0; i < nargs; i++)
		if (!strcmp(argv[i], "-")) {
			cli_err("report: name the log file; it is read twice (standard input cannot be)");
			return EXIT_USAGE;
		}
	char defname[PATH_MAX];
	if (!out) {
		default_name(argv[0], defname, sizeof defname);
		out = defname;
	}
	struct logset *s = NULL;
	char err[640];
	rc = logset_open(&s, argv, (unsigned)nargs, &win, err, sizeof err);
	if (rc < 0) {
		cli_err("%s", err);
		logset_close(s);
		return rc == VRAMZ_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	vramz_diag *d;
	int dex = cli_diag_create("report", &d, &report_thresholds.cfg);
	if (dex) {
		logset_close(s);
		return dex;
	}
	int64_t t0, t1;
	logset_span(s, &t0, &t1);
	struct rep r;
	ex = rep_init(&r, t0, t1, g_opts.gpus) ? EXIT_FAIL : 0;
	if (!ex) {
		unsigned nf = logset_file_count(s);
		snprintf(r.source, sizeof r.source, "%s%s", argv[0],
			 nf > 1 ? " and its set" : "");
		if (nargs > 1)
			snprintf(r.source, sizeof r.source, "%s and %d more", argv[0], nargs - 1);
		ex = read_all(&r, s, d);
	}
	logset_close(s);
	vramz_diag_free(d);
	if (!ex)
		ex = write_page(&r, out);
	if (!ex && strcmp(out, "-"))
		fprintf(stderr, "vramz: report: wrote %s\n", out);
	rep_free(&r);
	return ex;
}
