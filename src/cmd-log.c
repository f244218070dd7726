/* cmd-log.c - `vramz log`: record every selected GPU (and with --procs
 * every process) to a CSV log, for minutes or months.
 *
 * Ticks follow absolute deadlines on CLOCK_MONOTONIC, so a 100 ms interval
 * stays 100 ms over a day instead of drifting by each tick's own cost; a
 * tick missed (the machine was suspended, the disk stalled) is skipped, not
 * made up in a burst.  The slow readings (PCIe throughput takes NVML 20 ms
 * per GPU, energy 4 ms) come from a second context in a thread of their
 * own every --slow-interval (10 s), and each tick logs their latest values, so
 * a 10 Hz tick is never late because of them.  Files, rotation and the
 * crash-safety promises are lib/log/logwrite.c's; docs/logging.md is the
 * user's side.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "commands.h"
#include "fmt.h"
#include "log/logfile.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static const vramz_gpu_info *info_of(void *ctx, unsigned idx)
{
	return vramz_gpu(ctx, idx);
}

/* ---- the slow readings, off the tick's path ---- */

/* What the slow thread reads: PCIe throughput (NVML samples it for 20 ms)
 * and energy (4 ms), and the current PCIe link (30 us a GPU, and it only
 * changes when the GPU's load does). */
#define SLOW_BITS (VRAMZ_F_PCIE_TPUT | VRAMZ_F_ENERGY | VRAMZ_F_PCIE_LINK)

struct slow {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* timed on wake_clock */
	clockid_t wake_clock;
	vramz_ctx *ctx;            /* the thread's own context */
	int64_t period_ns;
	_Atomic int quit;
	unsigned n;
	vramz_gpu_sample *latest;  /* [n] by backend index: PCIe throughput, energy */
};

static void *slow_main(void *arg)
{
	struct slow *s = arg;
	const uint32_t bits = SLOW_BITS;
	int64_t next_ns = clock_mono_ns();
	for (;;) {
		const vramz_snapshot *snap;
		if (s->quit)
			break;
		int rc = vramz_sample(s->ctx, VRAMZ_SAMPLE_SLOW | VRAMZ_SAMPLE_LINK | VRAMZ_SAMPLE_SLOW_ONLY, &snap);
		pthread_mutex_lock(&s->lock);
		for (unsigned i = 0; rc >= 0 || rc == VRAMZ_ELOST ? i < snap->gpu_count : 0; i++) {
			const vramz_gpu_sample *g = &snap->gpus[i];
			if (g->index >= s->n)
				continue;
			vramz_gpu_sample *l = &s->latest[g->index];
			l->valid = g->lost ? 0 : g->valid & bits;
			l->pcie_tx_bytes_per_s = g->pcie_tx_bytes_per_s;
			l->pcie_rx_bytes_per_s = g->pcie_rx_bytes_per_s;
			l->energy_mj = g->energy_mj;
			l->pcie_gen = g->pcie_gen;
			l->pcie_width = g->pcie_width;
		}
		pthread_mutex_unlock(&s->lock);
		next_ns += s->period_ns;
		int64_t now = clock_mono_ns();
		if (next_ns < now) /* a slow reading overran: keep the cadence, no burst */
			next_ns = now + s->period_ns;
		/* one wake-up a period; slow_stop signals to end it early.  The
		 * deadline is on the condition variable's clock (monotonic, unless
		 * this libc refused that: then real time). */
		struct timespec until;
		clock_gettime(s->wake_clock, &until);
		int64_t at = (int64_t)until.tv_sec * 1000000000 + until.tv_nsec + (next_ns - now);
		until.tv_sec = (time_t)(at / 1000000000);
		until.tv_nsec = (long)(at % 1000000000);
		pthread_mutex_lock(&s->lock);
		while (!s->quit && clock_mono_ns() < next_ns &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static int slow_start(struct slow *s, vramz_ctx *main_ctx, int64_t period_ns)
{
	memset(s, 0, sizeof *s);
	if (cli_open(&s->ctx))
		return -1;
	s->n = vramz_gpu_count(main_ctx);
	s->latest = calloc(s->n ? s->n : 1, sizeof *s->latest);
	s->period_ns = period_ns;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	s->wake_clock = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ? CLOCK_REALTIME
									: CLOCK_MONOTONIC;
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!s->latest || pthread_create(&s->thread, NULL, slow_main, s)) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		cli_close(s->ctx);
		free(s->latest);
		s->ctx = NULL;
		return -1;
	}
	return 0;
}

static void slow_merge(struct slow *s, vramz_gpu_sample *g, unsigned n)
{
	const uint32_t bits = SLOW_BITS;
	if (!s->ctx)
		return;
	pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < n; i++) {
		if (g[i].lost || g[i].index >= s->n)
			continue;
		const vramz_gpu_sample *l = &s->latest[g[i].index];
		g[i].valid = (g[i].valid & ~bits) | l->valid;
		g[i].pcie_tx_bytes_per_s = l->pcie_tx_bytes_per_s;
		g[i].pcie_rx_bytes_per_s = l->pcie_rx_bytes_per_s;
		g[i].energy_mj = l->energy_mj;
		g[i].pcie_gen = l->pcie_gen;
		g[i].pcie_width = l->pcie_width;
	}
	pthread_mutex_unlock(&s->lock);
}

static void slow_stop(struct slow *s)
{
	if (!s->ctx)
		return;
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	cli_close(s->ctx);
	free(s->latest);
}

/* `vramz log --replay FILE ...` is `vramz replay FILE ...` */
static int replay_alias(int argc, char **argv)
{
	char **av = calloc((size_t)argc + 2, sizeof *av);
	int n = 0;
	if (!av)
		return EXIT_FAIL;
	av[n++] = "replay";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--replay"))
			continue;
		av[n++] = !strncmp(argv[i], "--replay=", 9) ? argv[i] + 9 : argv[i];
	}
	int rc = cmd_replay(n, av);
	free(av);
	return rc;
}

int cmd_log(int argc, char **argv)
{
	const char *out = "-";
	int64_t interval_ms = 1000, duration_ms = 0, fsync_ms = 60000;
	int procs = 0, nargs;
	uint64_t rotate = 0;
	unsigned keep = 5;
	int64_t slow_ms = 10000;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--replay") || !strncmp(argv[i], "--replay=", 9))
			return replay_alias(argc, argv);
	const struct opt opts[] = {
		{'o', "output", OPT_STR, &out, "FILE", "write to FILE (default: - for stdout)"},
		{'i', "interval", OPT_DURATION, &interval_ms, "D", "time between ticks, 10ms or more (default 1s)"},
		{0, "duration", OPT_DURATION, &duration_ms, "D", "stop after D (default: until SIGINT/SIGTERM)"},
		{0, "procs", OPT_FLAG, &procs, NULL, "also log processes, to FILE's .procs sibling"},
		OPT_GPUS,
		{0, "rotate", OPT_SIZE, &rotate, "SIZE", "start a new file when one would pass SIZE"},
		{0, "keep", OPT_UINT, &keep, "N", "rotated files to keep (default 5)"},
		{0, "slow-interval", OPT_DURATION, &slow_ms, "D", "PCIe link, throughput and energy every D, 0: never (default 10s)"},
		{0, "fsync-every", OPT_DURATION, &fsync_ms, "D", "flush to disk every D, 0: only at rotation and exit (default 1m)"},
		{0, "replay", OPT_STR, NULL, "FILE", "play a log back instead (vramz replay FILE)"},
		OPT_END,
	};
	int rc = cli_parse("log", "[-o FILE] [-i INTERVAL] [--duration D] [--procs] [-g LIST] [--rotate SIZE]",
			   "Records every selected GPU each tick, one CSV row per GPU (docs/csv.md).\n"
			   "Each tick is written whole; SIGINT/SIGTERM end the file cleanly; an\n"
			   "existing file is appended to only when its header matches.",
			   opts, argc, argv, &nargs);
	if (cli_parse_exit(rc) >= 0)
		return cli_parse_exit(rc);
	if (nargs) {
		cli_err("log: unexpected argument '%s' (the file goes after -o)", argv[0]);
		return EXIT_USAGE;
	}
	if (interval_ms < 10) {
		cli_err("log: interval %lldms is below the 10ms minimum", (long long)interval_ms);
		return EXIT_USAGE;
	}
	if ((rotate || procs) && !strcmp(out, "-")) {
		cli_err("log: %s needs -o FILE", procs ? "--procs (rows go to FILE's .procs sibling)" : "--rotate");
		return EXIT_USAGE;
	}

	vramz_ctx *ctx;
	int ex = cli_open(&ctx);
	if (ex)
		return ex;
	char err[600];
	struct log_writer *w;
	struct log_writer_opts wo = {.path = out, .procs = procs, .rotate_bytes = rotate, .keep = keep};
	if (log_writer_open(&w, &wo, err, sizeof err) < 0) {
		cli_err("%s", err);
		log_writer_close(w, err, sizeof err);
		cli_close(ctx);
		return EXIT_FAIL;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART: the sleep must end */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct slow slow = {0};
	if (slow_ms && slow_start(&slow, ctx, slow_ms * 1000000))
		cli_err("log: PCIe throughput and energy will be empty (no second NVML context)");

	unsigned flags = procs ? VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL : 0;
	struct logbuf gb = {0}, pb = {0};
	vramz_gpu_sample *gpus = calloc(vramz_gpu_count(ctx) ? vramz_gpu_count(ctx) : 1, sizeof *gpus);
	uint64_t rows = 0, ticks = 0, max_ticks = 0;
	if (duration_ms)
		max_ticks = (uint64_t)((duration_ms + interval_ms - 1) / interval_ms);
	const int64_t step = interval_ms * 1000000, start = clock_mono_ns();
	int64_t next = start, last_sync = start;
	ex = gpus ? EXIT_OK : EXIT_FAIL;
	while (ex == EXIT_OK && !stop_signal && (!max_ticks || ticks < max_ticks)) {
		const vramz_snapshot *snap;
		rc = vramz_sample(ctx, flags, &snap);
		if (rc == VRAMZ_ENOMEM) {
			cli_err("log: out of memory");
			ex = EXIT_FAIL;
			break;
		}
		/* a failed tick still logs its rows: lost GPUs say lost, unread
		 * fields are empty - a visible gap, never a silent one */
		vramz_snapshot s = *snap;
		memcpy(gpus, snap->gpus, snap->gpu_count * sizeof *gpus);
		slow_merge(&slow, gpus, snap->gpu_count);
		s.gpus = gpus;
		gb.len = pb.len = 0;
		if (log_format_tick(&gb, procs ? &pb : NULL, &s, info_of, ctx)) {
			cli_err("log: out of memory");
			ex = EXIT_FAIL;
			break;
		}
		if (log_writer_tick(w, &gb, &pb, err, sizeof err) < 0) {
			cli_err("%s", err);
			ex = EXIT_FAIL;
			break;
		}
		rows += snap->gpu_count;
		ticks++;
		int64_t now = clock_mono_ns();
		if (fsync_ms && now - last_sync >= fsync_ms * 1000000) {
			if (log_writer_sync(w, err, sizeof err) < 0) {
				cli_err("%s", err);
				ex = EXIT_FAIL;
				break;
			}
			last_sync = now;
		}
		if (max_ticks && ticks >= max_ticks)
			break;
		next += step;
		if (next <= now) /* late: skip to the next deadline still ahead */
			next += ((now - next) / step + 1) * step;
		struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
		while (!stop_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	slow_stop(&slow);
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
			(unsigned long long)rows, (unsigned long long)ticks, took,
			strcmp(out, "-") ? out : "stdout",
			stop_signal == SIGINT ? ", stopped by SIGINT" : stop_signal == SIGTERM ? ", stopped by SIGTERM" : "",
			procs ? " (+ processes)" : "");
	logbuf_free(&gb);
	logbuf_free(&pb);
	free(gpus);
	cli_close(ctx);
	return ex;
}
