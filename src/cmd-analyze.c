/* cmd-analyze.c - `vramz analyze FILE`: replays a recorded log through the
 * diagnosis engine and reports what it finds, most severe first, each with
 * its numbers and a sentence of advice.  Exit 3 when a finding at or above
 * --fail-on exists, so a CI job can record a log around its tests and fail
 * on a leak.
 *
 * A log is a post-mortem: processes that exited stay in the analysis ("it
 * leaked until it died"), and findings that held for a while and then
 * cleared are reported as earlier findings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "diagconf.h"
#include "fmt.h"
#include "vramz/diagnose.h"
#ifdef VRAMZ_HAVE_LOG_READER
#include "logset.h"
#endif

#ifdef VRAMZ_HAVE_LOG_READER
static void print_text(FILE *o, const vramz_finding *f, unsigned n, const char *title)
{
	char sev[48], b[512], a[512];
	if (title && n)
		fprintf(o, "\n%s:\n", title);
	for (unsigned i = 0; i < n; i++) {
		fprintf(o, "%s %-15s %s\n", diagconf_sev_label(o, f[i].severity, sev, sizeof sev),
			vramz_finding_kind_str(f[i].kind), vramz_finding_summary(&f[i], b, sizeof b));
		fprintf(o, "         %-15s %s\n", "", vramz_finding_advice(&f[i], a, sizeof a));
	}
}

static int worst_at_least(const vramz_finding *f, unsigned n, enum vramz_severity min)
{
	for (unsigned i = 0; i < n; i++)
		if (f[i].severity >= min)
			return 1;
	return 0;
}
#endif

int cmd_analyze(int argc, char **argv)
{
	vramz_diag_config cfg;
	struct diag_cmd_conf cc = {.fail_on = "warning"};
	vramz_diag_config_defaults(&cfg);
	cfg.keep_ended = 1;
	cfg.eval_interval_ms = 60000; /* first-seen times to the minute; cheap on long logs */
	/* evaluated once a minute, a finding is already one that held at a
	 * minute's mark; and one raised at the log's last evaluation counts */
	cfg.report_after_ms = 0;
	/* cfg.proc_root stays NULL: a log's pids belong to another time */
	int ex = diagconf_load(&cfg, &cc);
	if (ex)
		return ex;
	unsigned nk = diagconf_opt_count();
	struct logset_window win = {0};
	struct opt *opts = calloc(nk + 6, sizeof *opts);
	if (!opts)
		return EXIT_FAIL;
	opts[0] = (struct opt)OPT_JSON;
	opts[1] = (struct opt){0, "fail-on", OPT_STR, &cc.fail_on, "LEVEL",
			       "exit 3 when a finding is at least LEVEL: info, warning (default), critical"};
	opts[2] = (struct opt)OPT_NOCOLOR;
	opts[3] = (struct opt){0, "since", OPT_STR, &win.since, "T",
			       "only ticks from T: 2026-11-30T02:00:00Z, -2h (before the end), +30m"};
	opts[4] = (struct opt){0, "until", OPT_STR, &win.until, "T", "only ticks up to T (as --since)"};
	diagconf_opts(&cfg, opts + 5);
	int nargs;
	int rc = cli_parse("analyze", "LOG... [--since T] [--until T] [--json] [--fail-on LEVEL] [thresholds]",
			   "Diagnoses a log recorded by `vramz log`: leaks with time to OOM, imbalance,\n"
			   "stray contexts, idle holders, orphaned memory, throttling, PCIe link,\n"
			   "memory temperature.  Thresholds also come from $XDG_CONFIG_HOME/vramz/config\n"
			   "(docs/diagnoses.md).  Several logs, or a rotated set (LOG.N .. LOG.1, LOG),\n"
			   "read as one, in time order (docs/report.md).  Exit 0 clean, 3 a finding at or above --fail-on, 1 read error.",
			   opts, argc, argv, &nargs);
	free(opts);
	if (cli_parse_exit(rc) >= 0)
		return cli_parse_exit(rc);
	enum vramz_severity fail_on;
	if (vramz_severity_parse(cc.fail_on, &fail_on)) {
		cli_err("analyze: bad --fail-on '%s' (info, warning, critical)", cc.fail_on);
		return EXIT_USAGE;
	}
	if (nargs < 1) {
		cli_err("analyze: which log? (vramz analyze FILE)");
		return EXIT_USAGE;
	}
	const char *path = argv[0];
	vramz_diag *d = vramz_diag_new(&cfg);
	if (!d) {
		cli_err("analyze: invalid thresholds (see vramz analyze -h)");
		return EXIT_USAGE;
	}
#ifndef VRAMZ_HAVE_LOG_READER
	cli_err("analyze: %s: this build has no log reader", path);
	vramz_diag_free(d);
	return EXIT_FAIL;
#else
	struct logset *r = NULL;
	char err[640];
	rc = logset_open(&r, argv, (unsigned)nargs, &win, err, sizeof err);
	if (rc < 0) {
		cli_err("%s", err);
		logset_close(r);
		vramz_diag_free(d);
		return rc == VRAMZ_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	const vramz_snapshot *snap;
	unsigned ticks = 0, ngpu_info = 0;
	int64_t first_ms = 0, last_ms = 0;
	while ((rc = logset_next(r, &snap)) == 1) {
		unsigned ng = logset_gpu_count(r);
		for (; ngpu_info < ng; ngpu_info++) {
			const vramz_gpu_info *gi = logset_gpu(r, ngpu_info);
			if (gi)
				vramz_diag_set_gpu_info(d, gi, 1);
		}
		if (!ticks)
			first_ms = snap->time_ms;
		last_ms = snap->time_ms;
		ticks++;
		int frc = vramz_diag_feed(d, snap);
		if (frc == VRAMZ_EINVAL) {
			cli_err("%s: time goes backwards at tick %u", path, ticks);
			rc = frc;
			break;
		}
		if (frc < 0) {
			cli_err("analyze: %s", vramz_strerror(frc));
			rc = frc;
			break;
		}
	}
	if (rc < 0) {
		if (rc != VRAMZ_EINVAL)
			cli_err("%s", *logset_error(r) ? logset_error(r) : vramz_strerror(rc));
		logset_close(r);
		vramz_diag_free(d);
		return EXIT_FAIL;
	}
	const vramz_finding *cur, *past;
	unsigned n = vramz_diag_findings(d, &cur);
	unsigned np = vramz_diag_cleared(d, &past);
	char dur[32];
	if (g_opts.json) {
		struct jsonw w;
		jw_init(&w, stdout, 1);
		jw_obj(&w, NULL);
		jw_u64(&w, "schema_version", VRAMZ_JSON_SCHEMA_VERSION);
		jw_str(&w, "file", path);
		jw_u64(&w, "ticks", ticks);
		jw_i64_if(&w, "span_ms", ticks > 0, last_ms - first_ms);
		jw_arr(&w, "findings");
		for (unsigned i = 0; i < n; i++)
			diagconf_json(&w, NULL, &cur[i]);
		jw_end_arr(&w);
		jw_arr(&w, "cleared");
		for (unsigned i = 0; i < np; i++)
			diagconf_json(&w, NULL, &past[i]);
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_finish(&w);
	} else {
		printf("%s: %u ticks over %s, %u GPUs\n", path, ticks,
		       fmt_duration(dur, sizeof dur, last_ms - first_ms), logset_gpu_count(r));
		if (!n && !np)
			printf("no findings\n");
		print_text(stdout, cur, n, NULL);
		print_text(stdout, past, np, "earlier, since cleared");
	}
	int fail = worst_at_least(cur, n, fail_on) || worst_at_least(past, np, fail_on);
	logset_close(r);
	vramz_diag_free(d);
	fflush(stdout);
	return fail ? EXIT_FINDING : EXIT_OK;
#endif
}
