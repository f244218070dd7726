/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-watch.c - `vramz watch`: samples the GPUs live, feeds the diagnosis
 * engine and prints a line whenever a finding is new, changed (severity or
 * a headline figure moved) or cleared; --json prints the same as JSON
 * lines.  --exec runs a command (argv, no shell) per event with the
 * finding in VRAMZ_FINDING_* environment variables.
 *
 * The sampling loop never waits on those commands: children are reaped
 * without blocking each tick, killed past --exec-timeout, and at most
 * WATCH_MAX_CHILDREN run at once (further events are reported, not run).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "format/jsondoc.h"
#include "clock.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "format/fmt.h"
#include "ticker.h"
#include "vramz/diagnose.h"

#define WATCH_MAX_CHILDREN 8

extern char **environ;

static volatile sig_atomic_t stop_flag;

static void watch_on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct child {
	pid_t pid;
	int64_t started_ms;
	int killed;
};

struct watch {
	char **exec_argv;         /* NULL: no --exec */
	int64_t exec_timeout_ms;
	struct child kids[WATCH_MAX_CHILDREN];
	unsigned nkids;
	enum vramz_severity min_sev;
	int json;
};

static void reap(struct watch *w, int64_t now, int final)
{
	for (unsigned i = 0; i < w->nkids;) {
		struct child *c = &w->kids[i];
		int st;
		pid_t r = waitpid(c->pid, &st, final ? 0 : WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {
			if (r == c->pid && !c->killed && WIFEXITED(st) && WEXITSTATUS(st))
				cli_err("watch: --exec %s exited with %d", w->exec_argv[0], WEXITSTATUS(st));
			w->kids[i] = w->kids[--w->nkids];
			continue;
		}
		if (!c->killed && now - c->started_ms > w->exec_timeout_ms) {
			cli_err("watch: --exec %s still running after %lld ms: killed", w->exec_argv[0],
				(long long)w->exec_timeout_ms);
			kill(c->pid, SIGKILL);
			c->killed = 1;
		}
		i++;
	}
}

/* Appends NAME=VALUE to env (NULL-terminated later). */
static void env_add(char **env, unsigned *n, const char *name, const char *val)
{
	size_t len = strlen(name) + strlen(val) + 2;
	char *s = malloc(len);
	if (!s)
		return;
	snprintf(s, len, "%s=%s", name, val);
	env[(*n)++] = s;
}

static void run_exec(struct watch *w, const char *event, const vramz_finding *f)
{
	if (w->nkids == WATCH_MAX_CHILDREN) {
		cli_err("watch: %u --exec commands still running: not running one for this event",
			WATCH_MAX_CHILDREN);
		return;
	}
	unsigned ne = 0, nenv = 0;
	while (environ[nenv])
		nenv++;
	char **env = calloc(nenv + 16, sizeof *env);
	if (!env)
		return;
	for (unsigned i = 0; i < nenv; i++)
		if (strncmp(environ[i], "VRAMZ_FINDING_", 14))
			env[ne++] = environ[i];
	unsigned own = ne;
	char v[512];
	env_add(env, &ne, "VRAMZ_FINDING_EVENT", event);
	snprintf(v, sizeof v, "%016llx", (unsigned long long)f->id);
	env_add(env, &ne, "VRAMZ_FINDING_ID", v);
	env_add(env, &ne, "VRAMZ_FINDING_KIND", vramz_finding_kind_str(f->kind));
	env_add(env, &ne, "VRAMZ_FINDING_SEVERITY", vramz_severity_str(f->severity));
	/* unknown figures are left unset, never a sentinel */
	if (f->gpu >= 0) {
		snprintf(v, sizeof v, "%d", f->gpu);
		env_add(env, &ne, "VRAMZ_FINDING_GPU", v);
	}
	if (f->pid) {
		snprintf(v, sizeof v, "%u", (unsigned)f->pid);
		env_add(env, &ne, "VRAMZ_FINDING_PID", v);
	}
	if (f->job[0])
		env_add(env, &ne, "VRAMZ_FINDING_JOB", f->job);
	if (f->figures & VRAMZ_FG_RATE) {
		snprintf(v, sizeof v, "%.0f", f->rate_bytes_per_s);
		env_add(env, &ne, "VRAMZ_FINDING_RATE_BYTES_PER_S", v);
	}
	if (f->figures & VRAMZ_FG_TTO) {
		snprintf(v, sizeof v, "%.0f", f->time_to_oom_s);
		env_add(env, &ne, "VRAMZ_FINDING_TTO_S", v);
	}
	if (f->figures & VRAMZ_FG_BYTES) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)f->bytes);
		env_add(env, &ne, "VRAMZ_FINDING_BYTES", v);
	}
	if (f->figures & VRAMZ_FG_DURATION) {
		snprintf(v, sizeof v, "%lld", (long long)f->duration_ms);
		env_add(env, &ne, "VRAMZ_FINDING_DURATION_MS", v);
	}
	env_add(env, &ne, "VRAMZ_FINDING_MESSAGE", vramz_finding_summary(f, v, sizeof v));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execvpe(w->exec_argv[0], w->exec_argv, env);
		fprintf(stderr, "vramz: watch: cannot run '%s': %s\n", w->exec_argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		cli_err("watch: fork: %s", strerror(errno));
	else
		w->kids[w->nkids++] = (struct child){pid, clock_mono_ms(), 0};
	for (unsigned i = own; i < ne; i++)
		free(env[i]);
	free(env);
}

static void report(struct watch *w, const char *event, const vramz_finding *f, int64_t now_ms)
{
	if (f->severity < w->min_sev)
		return;
	if (w->json) {
		struct jsonw jw;
		char t[40];
		jw_init(&jw, stdout, 0);
		json_envelope(&jw, "watch");
		jw_str(&jw, "event", event);
		jw_str(&jw, "time", fmt_iso_ms(t, sizeof t, now_ms));
		diagconf_json(&jw, "finding", f);
		jw_end_obj(&jw);
		jw_finish(&jw);
	} else {
		char t[40], sev[48], b[512];
		printf("%s %-7s %s %-15s %s\n", fmt_iso_ms(t, sizeof t, now_ms), event,
		       diagconf_sev_label(stdout, f->severity, sev, sizeof sev),
		       vramz_finding_kind_str(f->kind), vramz_finding_summary(f, b, sizeof b));
	}
	fflush(stdout);
	if (w->exec_argv)
		run_exec(w, event, f);
}

/* Prints new / changed / cleared between prev (n_prev) and cur. */
static void diff_findings(struct watch *w, const vramz_finding *prev, unsigned n_prev,
			  const vramz_finding *cur, unsigned n_cur, int64_t now_ms)
{
	for (unsigned i = 0; i < n_cur; i++) {
		const vramz_finding *old = NULL;
		for (unsigned j = 0; j < n_prev && !old; j++)
			if (prev[j].id == cur[i].id)
				old = &prev[j];
		if (!old)
			report(w, "new", &cur[i], now_ms);
		else if (old->revision != cur[i].revision)
			report(w, "changed", &cur[i], now_ms);
	}
	for (unsigned j = 0; j < n_prev; j++) {
		int still = 0;
		for (unsigned i = 0; i < n_cur && !still; i++)
			still = prev[j].id == cur[i].id;
		if (!still)
			report(w, "cleared", &prev[j], now_ms);
	}
}

struct cmd_thresholds watch_thresholds = {.cc = {.min_severity = "info"}};
static int64_t interval_ms = 1000, duration_ms, exec_timeout_ms = 30000;

const struct opt watch_opts[] = {
	OPT_SAMPLE_INTERVAL(&interval_ms, "time between samples (1s)"),
	{'d', "duration", OPT_DURATION, &duration_ms, "DURATION",
	 "stop after DURATION (default: until interrupted)"},
	OPT_GPUS,
	OPT_JSON,
	{0, "min-severity", OPT_STR, &watch_thresholds.cc.min_severity, "LEVEL",
	 "report findings at least LEVEL: info (default), warning, critical",
	 "info warning critical"},
	{0, "exec-timeout", OPT_DURATION, &exec_timeout_ms, "DURATION",
	 "kill an --exec command running longer (30s)"},
	OPT_NOCOLOR,
	OPT_END, /* then the thresholds (the row's .thresholds) */
};
const char watch_synopsis[] =
	"[-i INTERVAL] [-d DURATION] [-g LIST] [--json] [thresholds] [--exec CMD ARGS...]";
const char watch_about[] =
	"Samples live and prints a line per new, changed or cleared finding.\n"
	"--exec CMD ARGS... (last option; argv, no shell) runs per event with\n"
	"VRAMZ_FINDING_EVENT, _KIND, _SEVERITY, _GPU, _PID, _JOB, _RATE_BYTES_PER_S,\n"
	"_TTO_S, _BYTES, _DURATION_MS, _MESSAGE in its environment (unknown: unset).";

/* Samples, feeds d and reports until a signal or --duration; the exit code. */
static int watch_loop(struct watch *w, struct ticker *tk, vramz_diag *d)
{
	vramz_finding *prev = NULL;
	unsigned nprev = 0;
	int64_t start = clock_mono_ms();
	int ex = EXIT_OK, rc;
	while (!stop_flag) {
		const vramz_snapshot *snap;
		rc = ticker_sample(tk, &snap, NULL);
		if (rc < 0 && rc != VRAMZ_ELOST) {
			cli_err("watch: sampling failed: %s", vramz_strerror(rc));
			ex = EXIT_FAIL;
			break;
		}
		/* a clock step is no error: the engine keeps its own time
		 * (monotonic live; docs/diagnoses.md, "Time") */
		if ((rc = vramz_diag_feed(d, snap)) < 0) {
			cli_err("watch: %s", vramz_strerror(rc));
			ex = EXIT_FAIL;
			break;
		}
		const vramz_finding *cur;
		unsigned n = vramz_diag_findings(d, &cur);
		diff_findings(w, prev, nprev, cur, n, snap->time_ms);
		vramz_finding *np = realloc(prev, (n ? n : 1) * sizeof *np);
		if (np) {
			memcpy(np, cur, n * sizeof *np);
			prev = np;
			nprev = n;
		}
		int64_t now = clock_mono_ms();
		if (w->exec_argv)
			reap(w, now, 0);
		if (duration_ms && now - start >= duration_ms)
			break;
		ticker_sleep(tk, &stop_flag, duration_ms ? (start + duration_ms) * 1000000 : 0);
	}
	free(prev);
	return ex;
}

/* Gives running --exec commands their timeout, then kills them. */
static void watch_end_exec(struct watch *w)
{
	int64_t end = clock_mono_ms() + w->exec_timeout_ms;
	while (w->nkids && clock_mono_ms() < end) {
		reap(w, clock_mono_ms(), 0);
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
	}
	reap(w, end + 1 + w->exec_timeout_ms, 0);
	reap(w, clock_mono_ms(), 1);
}

int cmd_watch(const struct cmd_args *args)
{
	struct watch w = {.exec_timeout_ms = exec_timeout_ms, .min_sev = VRAMZ_SEV_INFO};
	vramz_diag_config *cfg = &watch_thresholds.cfg;
	const char *min_sev = watch_thresholds.cc.min_severity;
	/* --exec takes the rest of the command line as the command's argv */
	if (args->n)
		w.exec_argv = args->v;
	if (vramz_severity_parse(min_sev, &w.min_sev)) {
		cli_err("watch: bad --min-severity '%s' (info, warning, critical)", min_sev);
		return EXIT_USAGE;
	}
	w.json = g_opts.json;
	cfg->keep_ended = 0;
	cfg->proc_root = "/proc"; /* environments and parents tell jobs apart */
	diagconf_live_interval(cfg, interval_ms);
	vramz_diag *d;
	int ex = cli_diag_create("watch", &d, cfg);
	if (ex)
		return ex;
	struct ticker_opts to = {.cmd = "watch", .interval_ms = interval_ms,
				 .flags = VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL | VRAMZ_SAMPLE_LINK,
				 .daemon = 1, .health_ms = TICKER_HEALTH_MS, .events = 1};
	struct ticker *tk;
	if ((ex = ticker_open(&tk, &to))) {
		vramz_diag_free(d);
		return ex;
	}
	vramz_ctx *ctx = ticker_ctx(tk);
	for (unsigned i = 0; i < vramz_selected_count(ctx); i++) {
		unsigned idx = vramz_selected_index(ctx, i);
		vramz_gpu_details(ctx, idx); /* PCIe max, memory temperature limit */
		vramz_diag_set_gpu_info(d, vramz_gpu(ctx, idx), 1);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = watch_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ex = watch_loop(&w, tk, d);
	if (w.exec_argv)
		watch_end_exec(&w);
	ticker_close(tk);
	vramz_diag_free(d);
	return ex;
}
