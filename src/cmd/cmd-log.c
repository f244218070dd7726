/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-log.c - `vramz log`: record every selected GPU (and with --procs
 * every process) to a CSV log, for minutes or months.
 *
 * The loop is src/ticker.c's: absolute deadlines on CLOCK_MONOTONIC, so a
 * 100 ms interval stays 100 ms over a day instead of drifting by each
 * tick's own cost; a tick missed (the machine was suspended, the disk
 * stalled) is skipped, not made up in a burst.  The slow readings (PCIe
 * throughput takes NVML 20 ms per GPU, energy 4 ms, the current link) are
 * read every --slow-interval (10 s) off the tick's path and each tick logs
 * their latest values.  Files, rotation and the crash-safety promises are
 * src/format/logwrite.c's; docs/logging.md is the user's side.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "commands.h"
#include "format/agentlog.h"
#include "format/fmt.h"
#include "format/logwrite.h"
#include "ticker.h"

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define KEEP_MAX_TEXT TEXT(LOG_KEEP_MAX) /* the -h text cannot drift */

static volatile sig_atomic_t stop_signal;

static void log_on_signal(int sig)
{
	stop_signal = sig;
}

static const vramz_gpu_info *info_of(void *ctx, unsigned idx)
{
	return vramz_gpu(ctx, idx);
}

/* `vramz log --replay FILE ...` is `vramz replay FILE ...`: the row's
 * .before, so replay's options are replay's to parse */
int log_replay_alias(const struct cmd_args *a)
{
	int argc = a->n;
	char **argv = a->v;
	int i = 1;
	while (i < argc && strcmp(argv[i], "--replay") && strncmp(argv[i], "--replay=", 9))
		i++;
	if (i == argc)
		return -1;
	char **av = calloc((size_t)argc + 2, sizeof *av);
	int n = 0;
	if (!av)
		return EXIT_FAIL;
	av[n++] = "replay";
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--replay"))
			continue;
		av[n++] = !strncmp(argv[i], "--replay=", 9) ? argv[i] + 9 : argv[i];
	}
	int rc = a->run(n, av);
	free(av);
	return rc;
}

static const char *out = "-";
static int64_t interval_ms = 1000, duration_ms = 0, fsync_ms = 60000;
static int procs;
static uint64_t rotate;
static unsigned keep = 5;
static int64_t slow_ms = 10000;

const struct opt log_opts[] = {
	{'o', "output", OPT_STR, &out, "FILE", "write to FILE (default: - for stdout)"},
	OPT_SAMPLE_INTERVAL(&interval_ms, "time between ticks (default 1s)"),
	{0, "duration", OPT_DURATION, &duration_ms, "D", "stop after D (default: until SIGINT/SIGTERM)"},
	{0, "procs", OPT_FLAG, &procs, NULL, "also log processes, to FILE's .procs sibling"},
	OPT_GPUS,
	{0, "rotate", OPT_SIZE, &rotate, "SIZE", "start a new file when one would pass SIZE"},
	{0, "keep", OPT_UINT, &keep, "N", "rotated files to keep (default 5, at most " KEEP_MAX_TEXT ")"},
	{0, "slow-interval", OPT_DURATION, &slow_ms, "D", "PCIe link and throughput and VRAM health every D, energy every third time; 0: never (default 10s)"},
	{0, "fsync-every", OPT_DURATION, &fsync_ms, "D", "flush to disk every D, 0: only at rotation and exit (default 1m)"},
	{0, "replay", OPT_STR, NULL, "FILE", "play a log back instead (vramz replay FILE)"},
	OPT_END,
};
const char log_synopsis[] = "[-o FILE] [-i INTERVAL] [--duration D] [--procs] [-g LIST] [--rotate SIZE]";
const char log_about[] =
	"Records every selected GPU each tick, one CSV row per GPU (docs/csv.md).\n"
	"Each tick is written whole; SIGINT/SIGTERM end the file cleanly; an\n"
	"existing file is appended to only when its header matches.";

/* The option combinations a log cannot be written with: 0, or the exit code. */
static int log_check(void)
{
	if ((rotate || procs) && !strcmp(out, "-")) {
		cli_err("log: %s needs -o FILE", procs ? "--procs (rows go to FILE's .procs sibling)" : "--rotate");
		return EXIT_USAGE;
	}
	if (keep > (unsigned)LOG_KEEP_MAX) {
		cli_err("log: --keep %u: at most %u rotated files", keep, (unsigned)LOG_KEEP_MAX);
		return EXIT_USAGE;
	}
	/* the log, its process and its events file judged by the link rule
	 * (safefile.h) before any is made: a refusal writes nothing */
	struct log_writer_opts wo = {.path = out, .procs = procs};
	char err[600];
	if (log_writer_check(&wo, strcmp(out, "-") != 0, err, sizeof err)) {
		cli_err("log: %s", err);
		return EXIT_FAIL;
	}
	if (procs && log_sibling_place(out, err, sizeof err)) {
		cli_err("log: %s", err);
		return EXIT_USAGE;
	}
	return 0;
}

struct log_count {
	uint64_t rows, ticks;
};

/* Ticks until a signal, --duration or a failure; returns the exit code. */
/* What the writer put back or set aside (a set left by kills mid-rotation),
 * one line each on stderr: a person finds their files moved, and why. */
static void say_notes(struct log_writer *w)
{
	char note[2048];
	if (!log_writer_take_note(w, note, sizeof note))
		return;
	for (char *l = note, *e; *l; l = e + 1) {
		e = strchr(l, '\n');
		*e = '\0';
		cli_err("log: %s", l);
	}
}

static int log_loop(struct ticker *tk, struct log_writer *w, struct agentlog *agents,
		    struct log_count *n)
{
	vramz_ctx *ctx = ticker_ctx(tk);
	struct logbuf gb = {0}, pb = {0};
	uint64_t max_ticks = 0;
	char err[600];
	if (duration_ms)
		max_ticks = (uint64_t)((duration_ms + interval_ms - 1) / interval_ms);
	int64_t last_sync = clock_mono_ns();
	int ex = EXIT_OK;
	while (ex == EXIT_OK && !stop_signal && (!max_ticks || n->ticks < max_ticks)) {
		const vramz_snapshot *snap;
		int rc = ticker_sample(tk, &snap, NULL);
		if (rc == VRAMZ_ENOMEM) {
			cli_err("log: out of memory");
			ex = EXIT_FAIL;
			break;
		}
		/* a failed tick still logs its rows: lost GPUs say lost, unread
		 * fields are empty - a visible gap, never a silent one */
		gb.len = pb.len = 0;
		if (log_format_tick(&gb, procs ? &pb : NULL, snap, info_of, ctx)) {
			cli_err("log: out of memory");
			ex = EXIT_FAIL;
			break;
		}
		if (log_writer_tick(w, &gb, &pb, err, sizeof err) < 0) {
			cli_err("%s", err);
			ex = EXIT_FAIL;
			break;
		}
		say_notes(w);
		agentlog_tick(agents, snap, info_of, ctx);
		n->rows += snap->gpu_count;
		n->ticks++;
		int64_t now = clock_mono_ns();
		if (fsync_ms && now - last_sync >= fsync_ms * 1000000) {
			if (log_writer_sync(w, err, sizeof err) < 0) {
				cli_err("%s", err);
				ex = EXIT_FAIL;
				break;
			}
			last_sync = now;
		}
		if (max_ticks && n->ticks >= max_ticks)
			break;
		ticker_sleep(tk, &stop_signal, 0);
	}
	logbuf_free(&gb);
	logbuf_free(&pb);
	return ex;
}

int cmd_log(const struct cmd_args *args)
{
	(void)args;
	int ex = log_check();
	if (ex)
		return ex;
	unsigned flags = procs ? VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL : 0;
	/* the driver's events beside the log: FILE.events.csv (docs/csv.md) */
	char evpath[4096];
	int evfile = strcmp(out, "-") && log_events_path(out, evpath, sizeof evpath) == 0;
	struct log_writer_opts wo = {.path = out, .procs = procs, .rotate_bytes = rotate, .keep = keep};
	char err[600];
	struct ticker_opts to = {.cmd = "log", .interval_ms = interval_ms,
				 .slow_interval_ms = slow_ms, .flags = flags, .daemon = 1,
				 .events = 1, .events_csv = evfile ? evpath : NULL};
	struct ticker *tk;
	if ((ex = ticker_open(&tk, &to)))
		return ex;
	struct log_writer *w;
	int orc = log_writer_open(&w, &wo, err, sizeof err);
	say_notes(w);
	if (orc < 0) {
		cli_err("%s", err);
		log_writer_close(w, err, sizeof err);
		ticker_close(tk);
		return EXIT_FAIL;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = log_on_signal; /* no SA_RESTART: the sleep must end */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* with --procs, the PyTorch agents' OOMs and ends to the events file */
	struct agentlog *agents = procs ? agentlog_open("log", out) : NULL;
	struct log_count n = {0};
	const int64_t start = clock_mono_ns();
	ex = log_loop(tk, w, agents, &n);
	agentlog_close(agents);
	if (log_writer_close(w, err, sizeof err) < 0 && ex == EXIT_OK) {
		cli_err("%s", err);
		ex = EXIT_FAIL;
	}
	char took[32];
	int64_t took_ms = (clock_mono_ns() - start) / 1000000;
	if (took_ms < 60000)
		snprintf(took, sizeof took, "%.1fs", (double)took_ms / 1000);
	else
		fmt_duration(took, sizeof took, took_ms);
	if (ex == EXIT_OK)
		fprintf(stderr, "vramz: log: %llu rows (%llu ticks) in %s to %s%s%s\n",
			(unsigned long long)n.rows, (unsigned long long)n.ticks, took,
			strcmp(out, "-") ? out : "stdout",
			stop_signal == SIGINT ? ", stopped by SIGINT" : stop_signal == SIGTERM ? ", stopped by SIGTERM" : "",
			procs ? " (+ processes)" : "");
	ticker_close(tk);
	return ex;
}
