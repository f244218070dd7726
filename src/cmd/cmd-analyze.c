/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-analyze.c - `vramz analyze FILE`: replays a recorded log through the
 * diagnosis engine and reports what it finds, most severe first, each with
 * its numbers and a sentence of advice.  Exit 3 when a finding at or above
 * --fail-on exists, so a CI job can record a log around its tests and fail
 * on a leak.
 *
 * A log is a post-mortem: processes that exited stay in the analysis ("it
 * leaked until it died", "it probably ended out of memory"), and findings
 * that held for a while and then cleared are reported as earlier findings.
 * Besides the findings it says which rules the log is too short to judge,
 * where its clock stepped (accepted by the engine's one time rule and
 * noted with the line), and what grew, per process, named by its command
 * line (analyze/procs.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentrec.h"
#include "analyze/procs.h"
#include "cli.h"
#include "format/jsondoc.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "kinds.h"
#include "format/fmt.h"
#include "vramz/diagnose.h"
#include "analyze/logset.h"
#include "logfile.h"
#include "xid.h"

static void print_text(FILE *o, const vramz_finding *f, unsigned n, const char *title,
		       const struct aprocs *ap)
{
	char sev[48], b[512], a[512], c[VRAMZ_CMD_LEN];
	if (title && n)
		fprintf(o, "\n%s:\n", title);
	for (unsigned i = 0; i < n; i++) {
		fprintf(o, "%s %-15s %s\n", diagconf_sev_label(o, f[i].severity, sev, sizeof sev),
			vramz_finding_kind_str(f[i].kind), vramz_finding_summary(&f[i], b, sizeof b));
		/* the command line says which python3 */
		const struct aproc *p = f[i].pid && f[i].gpu >= 0
			? aprocs_find(ap, (unsigned)f[i].gpu, f[i].pid, f[i].start_time_ticks) : NULL;
		if (p && p->cmd[0])
			fprintf(o, "         %-15s command: %s\n", "", aprocs_safe(c, sizeof c, p->cmd));
		fprintf(o, "         %-15s %s\n", "", vramz_finding_advice(&f[i], a, sizeof a));
	}
}

/* The rules a log of span_ms is too short to judge, and what each needs. */
struct rule_need {
	const char *rule, *what;
	int64_t need_ms;
};

/* The kinds a log of span_ms is too short to judge, from the kinds
 * table (each row's `needs`), in table order. */
static unsigned too_short(const vramz_diag_config *c, int64_t span_ms, struct rule_need *out)
{
	unsigned n = 0;
	for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		const struct finding_kind *fk = &finding_kinds[k];
		int64_t need = kind_needs_ms(fk, c);
		if (fk->what && need > 0 && span_ms < need && n < VRAMZ_FK_COUNT)
			out[n++] = (struct rule_need){fk->name, fk->what, need};
	}
	return n;
}

static void print_too_short(FILE *o, const vramz_diag_config *c, int64_t span_ms)
{
	struct rule_need r[VRAMZ_FK_COUNT];
	unsigned n = too_short(c, span_ms, r);
	char a[32], b[32], w[32], m[32];
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(r[i].rule, "leak"))
			fprintf(o, "note: too short for leaks: they need %s after the warm-up of %s "
				"(fast leaks, near out of memory, sooner); this log covers %s\n",
				fmt_duration(m, sizeof m, c->leak_min_span_ms),
				fmt_duration(w, sizeof w, c->leak_warmup_ms),
				fmt_duration(b, sizeof b, span_ms));
		else
			fprintf(o, "note: too short for %s: they need %s; this log covers %s\n", r[i].what,
				fmt_duration(a, sizeof a, r[i].need_ms), fmt_duration(b, sizeof b, span_ms));
	}
}

/* clock steps, noted with the line where they happened */
struct step_note {
	const char *file;              /* valid until logset_close */
	unsigned long line;
	int64_t step_ms;
};
#define STEP_NOTES_MAX 16

static int worst_at_least(const vramz_finding *f, unsigned n, enum vramz_severity min)
{
	for (unsigned i = 0; i < n; i++)
		if (f[i].severity >= min)
			return 1;
	return 0;
}

struct cmd_thresholds analyze_thresholds = {.cc = {.fail_on = "warning"},
					     .preset = diagconf_preset_log};
static struct logset_window win;

const struct opt analyze_opts[] = {
	OPT_JSON,
	{0, "fail-on", OPT_STR, &analyze_thresholds.cc.fail_on, "LEVEL",
	 "exit 3 when a finding is at least LEVEL: info, warning (default), critical"},
	OPT_NOCOLOR,
	{0, "since", OPT_STR, &win.since, "T",
	 "only ticks from T: 2026-11-30T02:00:00Z, -2h (before the end), +30m"},
	{0, "until", OPT_STR, &win.until, "T", "only ticks up to T (as --since)"},
	OPT_END, /* then the thresholds (the row's .thresholds) */
};
const char analyze_synopsis[] =
	"LOG... [--since T] [--until T] [--json] [--fail-on LEVEL] [thresholds]";
const char analyze_about[] =
	"Diagnoses a log recorded by `vramz log`: leaks with time to OOM, imbalance,\n"
	"stray contexts, idle holders, orphaned memory, throttling, PCIe link,\n"
	"memory temperature.  Thresholds also come from $XDG_CONFIG_HOME/vramz/config\n"
	"(docs/diagnoses.md).  Several logs, or a rotated set (LOG.N .. LOG.1, LOG),\n"
	"read as one, in time order (docs/report.md).  Exit 0 clean, 3 a finding at or above --fail-on, 1 read error.";

#define DRIVER_SUMS_MAX 64

/* What reading the logs through the engine found out besides findings. */
struct analysis {
	unsigned ticks, nsteps;
	int64_t covered_ms;
	struct step_note steps[STEP_NOTES_MAX];
	struct aprocs ap;
	/* the driver's events of the events files, every one counted (a
	 * merged row counts its `count`) */
	unsigned ndrv;
	struct agentrow_driver drv[DRIVER_SUMS_MAX];
};

/* Every tick of r into d and an; 0, or the exit code after saying why. */
static int analyze_read(struct logset *r, vramz_diag *d, struct analysis *an)
{
	const vramz_snapshot *snap;
	int64_t last_ms = 0;
	int rc;
	logset_keep_clock_steps(r); /* the engine's time rule takes them */
	while ((rc = logset_next(r, &snap)) == 1) {
		if (an->ticks && snap->time_ms > last_ms)
			an->covered_ms += snap->time_ms - last_ms; /* steps back cover nothing */
		last_ms = snap->time_ms;
		an->ticks++;
		/* a clock step is accepted (the engine's one time rule) and noted */
		unsigned before = vramz_diag_clock_steps(d, NULL);
		int frc = logset_feed(r, d, snap);
		if (frc < 0) {
			cli_err("analyze: %s", vramz_strerror(frc));
			rc = frc;
			break;
		}
		int64_t step_ms;
		if (vramz_diag_clock_steps(d, &step_ms) > before) {
			if (an->nsteps < STEP_NOTES_MAX)
				an->steps[an->nsteps] = (struct step_note){logset_tick_file(r),
									   logset_tick_line(r), step_ms};
			an->nsteps++;
		}
		if (aprocs_add(&an->ap, snap)) {
			cli_err("analyze: out of memory");
			rc = VRAMZ_ENOMEM;
			break;
		}
	}
	if (rc >= 0)
		return 0;
	if (rc != VRAMZ_ENOMEM)
		cli_err("%s", *logset_error(r) ? logset_error(r) : vramz_strerror(rc));
	return EXIT_FAIL;
}

static void analyze_json(const char *path, const vramz_diag_config *cfg, const struct analysis *an,
			 const vramz_finding *cur, unsigned n, const vramz_finding *past, unsigned np)
{
	struct jsonw w;
	jw_init(&w, stdout, 1);
	json_envelope(&w, "analyze");
	jw_str(&w, "file", path);
	jw_u64(&w, "ticks", an->ticks);
	jw_i64_if(&w, "span_ms", an->ticks > 0, an->covered_ms);
	struct rule_need need[VRAMZ_FK_COUNT];
	unsigned nn = too_short(cfg, an->covered_ms, need);
	jw_arr(&w, "too_short");
	for (unsigned i = 0; i < nn; i++) {
		jw_obj(&w, NULL);
		jw_str(&w, "rule", need[i].rule);
		jw_i64(&w, "needs_ms", need[i].need_ms);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_arr(&w, "clock_steps");
	for (unsigned i = 0; i < an->nsteps && i < STEP_NOTES_MAX; i++) {
		jw_obj(&w, NULL);
		jw_str(&w, "file", an->steps[i].file);
		jw_u64(&w, "line", an->steps[i].line);
		jw_i64(&w, "step_ms", an->steps[i].step_ms);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_u64(&w, "clock_step_count", an->nsteps);
	aprocs_json(&an->ap, &w);
	jw_arr(&w, "driver_events");
	for (unsigned i = 0; i < an->ndrv; i++) {
		const struct agentrow_driver *e = &an->drv[i];
		char t[LOG_TIME_LEN + 1];
		jw_obj(&w, NULL);
		jw_i64(&w, "gpu", e->gpu);
		jw_str(&w, "event", e->event);
		jw_u64(&w, "xid", e->xid);
		jw_u64(&w, "count", e->count);
		log_fmt_time(t, e->first_ms);
		jw_str(&w, "first", t);
		log_fmt_time(t, e->last_ms);
		jw_str(&w, "last", t);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
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
}

static void analyze_text(const char *path, unsigned ngpus, const vramz_diag_config *cfg,
			 const struct analysis *an, const vramz_finding *cur, unsigned n,
			 const vramz_finding *past, unsigned np)
{
	char dur[32];
	printf("%s: %u ticks over %s, %u GPUs\n", path, an->ticks,
	       fmt_duration(dur, sizeof dur, an->covered_ms), ngpus);
	for (unsigned i = 0; i < an->nsteps && i < STEP_NOTES_MAX; i++) {
		char a[32];
		int64_t m = an->steps[i].step_ms, am = m < 0 ? -m : m;
		if (am >= 60000)
			am = (am + 30000) / 60000 * 60000; /* to the minute */
		printf("note: %s:%lu: the clock steps %s %s; the data after it is taken to follow "
		       "at the log's cadence\n", an->steps[i].file, an->steps[i].line,
		       m < 0 ? "back" : "forward", fmt_duration(a, sizeof a, am));
	}
	if (an->nsteps > STEP_NOTES_MAX)
		printf("note: %u more clock steps\n", an->nsteps - STEP_NOTES_MAX);
	print_too_short(stdout, cfg, an->covered_ms);
	for (unsigned i = 0; i < an->ndrv; i++) {
		const struct agentrow_driver *e = &an->drv[i];
		char t[LOG_TIME_LEN + 1];
		log_fmt_time(t, e->last_ms);
		if (!strcmp(e->event, "xid"))
			printf("events: GPU %d: Xid %u x %llu (%s), the last at %s\n", e->gpu, e->xid,
			       (unsigned long long)e->count, xid_meaning(e->xid), t);
		else
			printf("events: GPU %d: %s x %llu, the last at %s\n", e->gpu, e->event,
			       (unsigned long long)e->count, t);
	}
	if (!n && !np)
		printf("no findings\n");
	print_text(stdout, cur, n, NULL, &an->ap);
	print_text(stdout, past, np, "earlier, since cleared", &an->ap);
	aprocs_print(&an->ap, stdout, 10);
}

int cmd_analyze(const struct cmd_args *args)
{
	const vramz_diag_config *cfg = &analyze_thresholds.cfg;
	const char *fail_word = analyze_thresholds.cc.fail_on;
	enum vramz_severity fail_on;
	if (vramz_severity_parse(fail_word, &fail_on)) {
		cli_err("analyze: bad --fail-on '%s' (info, warning, critical)", fail_word);
		return EXIT_USAGE;
	}
	const char *path = args->v[0];
	vramz_diag *d;
	int ex = cli_diag_create("analyze", &d, cfg);
	if (ex)
		return ex;
	struct logset *r = NULL;
	char err[640];
	int rc = logset_open(&r, args->v, (unsigned)args->n, &win, err, sizeof err);
	if (rc < 0) {
		cli_err("%s", err);
		logset_close(r);
		vramz_diag_free(d);
		return rc == VRAMZ_EINVAL ? EXIT_USAGE : EXIT_FAIL;
	}
	struct analysis an = {0};
	if ((ex = analyze_read(r, d, &an))) {
		aprocs_free(&an.ap);
		logset_close(r);
		vramz_diag_free(d);
		return ex;
	}
	an.ndrv = logset_driver_events(r, an.drv, DRIVER_SUMS_MAX);
	const vramz_finding *cur, *past;
	unsigned n = vramz_diag_findings(d, &cur);
	unsigned long dropped = vramz_diag_series_dropped(d);
	if (dropped) /* the engine's memory bound: say what it cost */
		cli_err("analyze: %s: more than %d processes at once: %lu process series "
			"dropped (exited first, then the smallest); findings about them may "
			"be missing", path, VRAMZ_DIAG_SERIES_MAX, dropped);
	unsigned np = vramz_diag_cleared(d, &past);
	if (g_opts.json)
		analyze_json(path, cfg, &an, cur, n, past, np);
	else
		analyze_text(path, logset_gpu_count(r), cfg, &an, cur, n, past, np);
	int fail = worst_at_least(cur, n, fail_on) || worst_at_least(past, np, fail_on);
	aprocs_free(&an.ap);
	logset_close(r);
	vramz_diag_free(d);
	fflush(stdout);
	return fail ? EXIT_FINDING : EXIT_OK;
}
