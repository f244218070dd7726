/* SPDX-License-Identifier: Apache-2.0 */
/* ticker.c - one sampling loop policy for log, watch, serve, top and the
 * daemon (ticker.h says what it decides and why there is one).
 *
 * The slow thread owns a second context opened with VRAMZ_SAMPLE_SLOW_ONLY
 * reads: a 20 ms PCIe throughput read never makes a 10 Hz tick late.  The
 * first tick waits (at most a second) for the slow thread's first reading,
 * so a one-shot body (`serve --once`) or the first row of a log is whole.
 */
#include "ticker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "evwatch.h"
#include "fields.h"
#include "source.h"

/* what the slow thread reads, and what a tick carries from it when the
 * tick did not read the field itself */
#define SLOW_BITS (VRAMZ_F_PCIE_TPUT | VRAMZ_F_ENERGY | VRAMZ_F_PCIE_LINK | FIELD_HEALTH_BITS)
#define FIRST_SLOW_WAIT_NS 1000000000LL
/* The energy counter is read on every ENERGY_EVERY-th slow reading only
 * (30 s at the default 10 s): on H200 one read costs 3.4 ms of CPU a GPU,
 * more than the rest of a 1 Hz daemon's work over 7 s, and a counter
 * loses nothing by being read less often (its value is exact when read;
 * a rate over a window longer than 30 s is unchanged). */
#define ENERGY_EVERY 3

struct slow {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* timed on CLOCK_MONOTONIC */
	vramz_ctx *ctx;            /* the thread's own context */
	int64_t period_ns;
	unsigned flags;            /* VRAMZ_SAMPLE_* of each reading */
	int quit;
	int have;                  /* a first reading is in */
	unsigned n;
	vramz_gpu_sample *latest;  /* [n] by backend index */
};

struct ticker {
	struct ticker_opts o;
	vramz_ctx *ctx;            /* static facts; the samples' source too */
	vramz_ctx *live;           /* the driver, after a daemon stopped */
	int daemon;                /* ctx reads a daemon and live is not open */
	int64_t last_mono_ns;      /* the daemon snapshot handed out last */
	int64_t lag_ns;            /* its publishing after its stamp, as seen */
	int64_t wait_from_ns;      /* .nowait: since when the next is awaited */
	int64_t pause_ns;          /* the next pause of that wait (doubling) */
	int64_t retry_at_ns;       /* .nowait: when to look again */
	struct slow slow;
	struct evwatch *ev;        /* the event watcher, while live */
	int slow_on;
	int ticks;
	vramz_gpu_sample *merged;  /* [gpu_count] the tick's GPUs, slow fields in */
	vramz_snapshot snap;
	int64_t step_ns, next_ns;
};

static void wait_mono(pthread_cond_t *c, pthread_mutex_t *m, int64_t deadline_ns)
{
	struct timespec ts = {deadline_ns / 1000000000, (long)(deadline_ns % 1000000000)};
	pthread_cond_timedwait(c, m, &ts);
}

static void *slow_main(void *arg)
{
	struct slow *s = arg;
	int64_t next_ns = clock_mono_ns();
	unsigned readings = 0;
	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		pthread_mutex_unlock(&s->lock);
		const vramz_snapshot *snap = NULL;
		unsigned flags = s->flags;
		if ((flags & VRAMZ_SAMPLE_SLOW) && readings++ % ENERGY_EVERY)
			flags |= VRAMZ_SAMPLE_NO_ENERGY;
		int rc = vramz_sample(s->ctx, flags, &snap);
		pthread_mutex_lock(&s->lock);
		for (unsigned i = 0; (rc >= 0 || rc == VRAMZ_ELOST) && snap && i < snap->gpu_count; i++) {
			const vramz_gpu_sample *g = &snap->gpus[i];
			if (g->index >= s->n)
				continue;
			vramz_gpu_sample *l = &s->latest[g->index];
			/* the energy of a reading that did not ask for it stays */
			uint32_t keep = (flags & VRAMZ_SAMPLE_NO_ENERGY) && !g->lost ? l->valid & VRAMZ_F_ENERGY : 0;
			l->valid = (g->lost ? 0 : g->valid & SLOW_BITS) | keep;
			l->pcie_tx_bytes_per_s = g->pcie_tx_bytes_per_s;
			l->pcie_rx_bytes_per_s = g->pcie_rx_bytes_per_s;
			if (!keep)
				l->energy_mj = g->energy_mj;
			l->pcie_gen = g->pcie_gen;
			l->pcie_width = g->pcie_width;
			if (!g->lost)
				field_copy_bits(l, g, FIELD_HEALTH_BITS);
		}
		s->have = 1;
		pthread_cond_broadcast(&s->wake);
		/* the same lateness policy as the ticks: skip, never burst */
		int64_t now = clock_mono_ns();
		next_ns += s->period_ns;
		if (next_ns <= now)
			next_ns += ((now - next_ns) / s->period_ns + 1) * s->period_ns;
		while (!s->quit && clock_mono_ns() < next_ns)
			wait_mono(&s->wake, &s->lock, next_ns);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The slow readings every period, or with health_only VRAM health alone. */
static int slow_start(struct slow *s, unsigned ngpus, int64_t period_ns, int health_only)
{
	memset(s, 0, sizeof *s);
	s->flags = health_only ? VRAMZ_SAMPLE_SLOW_ONLY | VRAMZ_SAMPLE_HEALTH
			       : VRAMZ_SAMPLE_SLOW | VRAMZ_SAMPLE_LINK | VRAMZ_SAMPLE_SLOW_ONLY |
					 VRAMZ_SAMPLE_HEALTH;
	if (cli_open(&s->ctx))
		return -1;
	s->n = ngpus;
	s->latest = calloc(ngpus ? ngpus : 1, sizeof *s->latest);
	s->period_ns = period_ns;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* the thread takes no signals: they must reach the loop's thread (its
	 * sleep ends on them, or it waits for them with sigwait) */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int bad = !s->latest || pthread_create(&s->thread, NULL, slow_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (bad) {
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		cli_close(s->ctx);
		free(s->latest);
		s->ctx = NULL;
		return -1;
	}
	return 0;
}

static void slow_stop(struct slow *s)
{
	if (!s->ctx)
		return;
	pthread_mutex_lock(&s->lock);
	s->quit = 1;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	cli_close(s->ctx);
	free(s->latest);
	s->ctx = NULL;
}

/* Carries the latest slow readings into the GPUs of a tick that did not
 * read them itself (a field the tick read stays the tick's). */
static void slow_merge(struct slow *s, vramz_gpu_sample *g, unsigned n, int first)
{
	if (!s->ctx)
		return;
	pthread_mutex_lock(&s->lock);
	if (first) {
		int64_t until = clock_mono_ns() + FIRST_SLOW_WAIT_NS;
		while (!s->have && clock_mono_ns() < until)
			wait_mono(&s->wake, &s->lock, until);
	}
	for (unsigned i = 0; i < n; i++) {
		if (g[i].lost || g[i].index >= s->n)
			continue;
		const vramz_gpu_sample *l = &s->latest[g[i].index];
		uint32_t take = l->valid & ~g[i].valid;
		if (take & VRAMZ_F_PCIE_TPUT) {
			g[i].pcie_tx_bytes_per_s = l->pcie_tx_bytes_per_s;
			g[i].pcie_rx_bytes_per_s = l->pcie_rx_bytes_per_s;
		}
		if (take & VRAMZ_F_ENERGY)
			g[i].energy_mj = l->energy_mj;
		if (take & VRAMZ_F_PCIE_LINK) {
			g[i].pcie_gen = l->pcie_gen;
			g[i].pcie_width = l->pcie_width;
		}
		field_copy_bits(&g[i], l, take & FIELD_HEALTH_BITS);
		g[i].valid |= take;
	}
	pthread_mutex_unlock(&s->lock);
}

/* The threads of a ticker that samples the driver: the slow readings
 * (with VRAM health), or health alone, and the event watcher. */
static void live_threads(struct ticker *t, unsigned ngpus)
{
	const struct ticker_opts *o = &t->o;
	int64_t period = o->slow_interval_ms > 0 ? o->slow_interval_ms : o->health_ms;
	if (period > 0 && slow_start(&t->slow, ngpus, period * 1000000, o->slow_interval_ms <= 0))
		cli_err("%s: PCIe throughput, energy and VRAM health will be unknown (no second context)",
			o->cmd);
	if (o->events)
		t->ev = evwatch_start(o->cmd, o->events_csv, o->interval_ms);
}

int ticker_open(struct ticker **out, const struct ticker_opts *o)
{
	struct ticker *t = calloc(1, sizeof *t);
	*out = NULL;
	if (!t) {
		cli_err("%s: out of memory", o->cmd);
		return EXIT_FAIL;
	}
	t->o = *o;
	int ex = o->daemon ? source_open(&t->ctx, o->flags, o->interval_ms) : cli_open(&t->ctx);
	if (ex) {
		free(t);
		return ex;
	}
	t->daemon = source_is_daemon(t->ctx);
	unsigned n = vramz_gpu_count(t->ctx);
	t->merged = calloc(n ? n : 1, sizeof *t->merged);
	if (!t->merged) {
		cli_err("%s: out of memory", o->cmd);
		ticker_close(t);
		return EXIT_FAIL;
	}
	if (!t->daemon) /* a daemon carries its own */
		live_threads(t, n);
	t->step_ns = o->interval_ms * 1000000;
	t->lag_ns = 2000000;
	t->next_ns = clock_mono_ns();
	*out = t;
	return 0;
}

void ticker_close(struct ticker *t)
{
	if (!t)
		return;
	evwatch_stop(t->ev);
	slow_stop(&t->slow);
	free(t->merged);
	if (t->live)
		cli_close(t->live);
	cli_close(t->ctx);
	free(t);
}

vramz_ctx *ticker_ctx(const struct ticker *t)
{
	return t->ctx;
}

int ticker_from_daemon(const struct ticker *t)
{
	return t->daemon;
}

/* The daemon's next snapshot: the latest, waiting (a little) when it is
 * the one handed out last, so a reader on the daemon's cadence neither
 * repeats nor skips one.
 *
 * A snapshot is stamped when its sampling starts and published when it
 * ends, milliseconds later with processes on real GPUs.  A reader that woke
 * too early would poll every 2 ms until the publish, a wake-up and a read
 * each: the H200 showed ten readers costing 3.2x one sampling top.  So the
 * delay seen when waiting (plus a quarter and 1 ms) becomes the phase's
 * offset (ticker_advance); it only grows, up to half an interval, so a
 * steady reader waits at most once or twice in its life.  The pauses of a
 * wait double from 2 ms (to an eighth of the interval, 64 ms at most).
 * With .nowait the wait is the caller's: TICKER_NOT_YET, to come back at
 * ticker_retry_at, until the snapshot is out or half an interval has
 * passed (then the last one again). */
static int daemon_sample(struct ticker *t, const vramz_snapshot **snap)
{
	int64_t from = t->wait_from_ns ? t->wait_from_ns : clock_mono_ns();
	int64_t give_up = from + t->step_ns / 2;
	int64_t max_pause = t->step_ns / 8 < 64000000 ? t->step_ns / 8 : 64000000;
	if (max_pause < 2000000)
		max_pause = 2000000;
	if (!t->wait_from_ns)
		t->pause_ns = 2000000;
	for (int waited = t->wait_from_ns != 0;; waited = 1) {
		int rc = vramz_sample(t->ctx, t->o.flags, snap);
		t->wait_from_ns = 0;
		if (rc < 0 && rc != VRAMZ_ELOST)
			return rc;
		int64_t now = clock_mono_ns();
		int fresh = (*snap)->mono_ns != t->last_mono_ns;
		/* each pause twice the last (2, 4, 8 ms ...): a daemon much later
		 * than learned costs a few wake-ups, not one every 2 ms */
		int64_t pause = t->pause_ns;
		t->pause_ns = 2 * pause < max_pause ? 2 * pause : max_pause;
		if (!fresh && now < give_up && t->o.nowait) {
			t->wait_from_ns = from; /* the caller comes back */
			t->retry_at_ns = now + pause;
			*snap = NULL;
			return TICKER_NOT_YET;
		}
		if (fresh || now >= give_up) {
			if (fresh && waited && t->last_mono_ns) {
				int64_t lag = now - (*snap)->mono_ns;
				lag += lag / 4 + 1000000;
				if (lag > t->step_ns / 2)
					lag = t->step_ns / 2;
				if (lag > t->lag_ns)
					t->lag_ns = lag;
			}
			t->last_mono_ns = (*snap)->mono_ns;
			return rc;
		}
		struct timespec ts = {pause / 1000000000, (long)(pause % 1000000000)};
		nanosleep(&ts, NULL);
	}
}

int64_t ticker_retry_at(const struct ticker *t)
{
	return t->retry_at_ns;
}

/* The daemon stopped: the driver from now on, as if it never ran. */
static int go_live(struct ticker *t)
{
	cli_err("%s: %s; sampling the driver from now on", t->o.cmd, vramz_last_error(t->ctx));
	if (cli_open(&t->live))
		return VRAMZ_EIO;
	t->daemon = 0;
	live_threads(t, vramz_gpu_count(t->live));
	t->ticks = 0;
	return 0;
}

int ticker_sample(struct ticker *t, const vramz_snapshot **out, vramz_ctx **ctx_out)
{
	const vramz_snapshot *snap = NULL;
	int rc;
	if (t->daemon) {
		rc = daemon_sample(t, &snap);
		if (rc == TICKER_NOT_YET)
			return rc;
		if (rc < 0 && rc != VRAMZ_ELOST && rc != VRAMZ_ENOMEM && go_live(t) == 0)
			rc = vramz_sample(t->live, t->o.flags, &snap);
		else if (rc >= 0 || rc == VRAMZ_ELOST) {
			if (ctx_out)
				*ctx_out = t->ctx;
			*out = snap;
			return rc;
		}
	} else {
		rc = vramz_sample(t->live ? t->live : t->ctx, t->o.flags, &snap);
	}
	if (ctx_out)
		*ctx_out = t->live ? t->live : t->ctx;
	*out = snap;
	if (!snap) { /* nothing read at all: an empty tick, never NULL */
		memset(&t->snap, 0, sizeof t->snap);
		t->snap.time_ms = clock_real_ms();
		t->snap.mono_ns = clock_mono_ns();
		*out = &t->snap;
		return rc;
	}
	if (rc < 0 && rc != VRAMZ_ELOST)
		return rc;
	t->snap = *snap;
	memcpy(t->merged, snap->gpus, snap->gpu_count * sizeof *t->merged);
	slow_merge(&t->slow, t->merged, snap->gpu_count, t->ticks == 0);
	evwatch_merge(t->ev, t->merged, snap->gpu_count);
	t->snap.gpus = t->merged;
	t->ticks++;
	*out = &t->snap;
	return rc;
}

int64_t ticker_advance(struct ticker *t)
{
	int64_t now = clock_mono_ns();
	/* on a daemon: the phase of its publishing, a little after it */
	if (t->daemon && t->last_mono_ns)
		t->next_ns = t->last_mono_ns + t->lag_ns;
	t->next_ns += t->step_ns;
	if (t->next_ns <= now) /* late: skip to the next deadline still ahead */
		t->next_ns += ((now - t->next_ns) / t->step_ns + 1) * t->step_ns;
	return t->next_ns;
}

int64_t ticker_deadline(const struct ticker *t)
{
	return t->next_ns;
}

void ticker_restart(struct ticker *t)
{
	t->next_ns = clock_mono_ns();
}

void ticker_sleep(struct ticker *t, volatile sig_atomic_t *stop, int64_t end_ns)
{
	int64_t at = ticker_advance(t);
	if (end_ns && end_ns < at)
		at = end_ns;
	struct timespec ts = {at / 1000000000, (long)(at % 1000000000)};
	while (!(stop && *stop) && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
