/* SPDX-License-Identifier: Apache-2.0 */
/* sampler.c - the background thread of `vramz top`.
 *
 * The UI thread must answer a key within milliseconds, but an NVML call
 * can take milliseconds to seconds (a GPU falling off the bus, a driver
 * busy with a reset).  So one thread owns the library context (or the log
 * reader when replaying) and nothing else; each tick it copies the
 * snapshot - vramz_sample reuses its buffers on the next call - into one
 * allocation, queues it, and bumps an eventfd the UI thread polls along
 * with stdin.  Ticks are never dropped: the history plots want every one.
 * But when the UI falls behind with many processes queued (100,000 a
 * tick), the process rows of all but the newest queued ticks are freed
 * (QUEUE_MAX_ROWS): the UI then feeds one process table, not a backlog of
 * them, memory stays bounded, and `q` is read at once.
 *
 * Replay reads the log one tick ahead so it can wait the recorded gap
 * (divided by the speed) before handing the next one over.  A seek
 * forward reads on; a seek back reopens the log (the reader streams and
 * keeps nothing) and reads to the target.  Either way only the last
 * history window of skipped ticks is handed over, marked catch-up, so the
 * plots are right after a jump without the UI redrawing thousands of
 * times.
 *
 * Reading a daemon that publishes findings, the findings shown are the
 * daemon's (unless thresholds of top's own were set): its engine has seen
 * the machine since it started, so a leak that began before this `top` is
 * shown at once, and ten `top`s on one daemon run no engine of their own.
 * When the daemon goes away the engine here takes over, from that tick.
 *
 * The diagnosis engine (vramz/diagnose.h) lives on this thread too: it
 * sees every tick read - the skipped ones of a seek included, so the
 * findings at any point of a replay are those of the log up to there -
 * and each tick handed over carries a copy of the findings after it.  The
 * UI thread only shows them, and asks for an evaluation only of the ticks
 * it will show, not of every tick a seek reads through.
 */
#include "tui/sampler.h"
#include "format/fmt.h"
#include "clock.h"
#include "joinwait.h"
#include "ticker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "vramz/daemon.h"
#include "vramz/log.h"

#define SEEK_WINDOW_MS (20 * 60 * 1000) /* history handed over on a jump */
#define MAX_GAP_MS 5000                  /* a replay never sits longer */
#define QUEUE_MAX_ROWS 50000             /* process rows waiting for the UI */

struct sampler {
	struct sampler_opts o;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int efd;
	int quit, poke;
	int started;               /* the thread runs: join it */
	/* live from a daemon's segment: no thread; the UI thread takes each
	 * tick itself when sampler_due_ms says (sampler_run) */
	int inline_ticks;
	int64_t due_ms;
	int live_ready;            /* live_init done */
	struct tui_snap *head, *tail;
	/* replay */
	int paused, ended;
	double speed;
	int64_t seek_ms;           /* pending relative seek, 0 none */
	int64_t pos_ms, first_ms;
	vramz_diag *diag;          /* NULL: findings off */
	struct tui_snap *first;    /* replay: the first tick, read by sampler_start */
	unsigned diag_gpus;        /* replay: GPUs whose facts it has */
	vramz_log_reader *log;
};

typedef const vramz_gpu_info *(*info_fn)(const void *src, unsigned index);

static struct tui_snap *snap_copy(const vramz_snapshot *v, info_fn info, const void *src)
{
	size_t sz = sizeof(struct tui_snap) + v->gpu_count * sizeof(struct tui_gpu) +
		    v->proc_count * sizeof(vramz_proc_sample);
	struct tui_snap *s = calloc(1, sz);
	if (!s)
		return NULL;
	s->time_ms = v->time_ms;
	s->ngpus = v->gpu_count;
	s->nprocs = v->proc_count;
	s->gpus = (struct tui_gpu *)(s + 1);
	s->procs = (vramz_proc_sample *)(s->gpus + s->ngpus);
	for (unsigned i = 0; i < v->gpu_count; i++) {
		struct tui_gpu *g = &s->gpus[i];
		g->s = v->gpus[i];
		const vramz_gpu_info *gi = info(src, g->s.index);
		if (!gi)
			continue;
		fmt_snprintf(g->name, sizeof g->name, "%.*s", (int)sizeof g->name - 1, gi->name);
		if (gi->valid & VRAMZ_I_PCIE_MAX) {
			g->pcie_max_gen = gi->pcie_max_gen;
			g->pcie_max_width = gi->pcie_max_width;
		}
	}
	if (v->proc_count)
		memcpy(s->procs, v->procs, v->proc_count * sizeof *s->procs);
	return s;
}

/* q's GPUs (and findings) in an allocation of their own, marked
 * procs_dropped; q freed.  q itself when there is no memory for the copy
 * (then nothing is saved, nothing lost). */
static struct tui_snap *snap_without_procs(struct tui_snap *q)
{
	if (!q->nprocs)
		return q;
	struct tui_snap *n = malloc(sizeof *n + q->ngpus * sizeof(struct tui_gpu));
	if (!n)
		return q;
	*n = *q;
	n->gpus = (struct tui_gpu *)(n + 1);
	memcpy(n->gpus, q->gpus, q->ngpus * sizeof *n->gpus);
	n->procs = NULL;
	n->nprocs = 0;
	n->procs_dropped = 1;
	free(q); /* its findings are n's now */
	return n;
}

void snap_free(struct tui_snap *list)
{
	while (list) {
		struct tui_snap *n = list->next;
		free(list->findings);
		free(list);
		list = n;
	}
}

/* ---- findings ------------------------------------------------------------ */

/* Feeds one tick.  A clock step (live, or in a log recorded across one)
 * is no error: the engine keeps its own time and its findings (one rule
 * for every caller: docs/diagnoses.md, "Time"). */
static void diag_feed(struct sampler *sp, const vramz_snapshot *v)
{
	if (!sp->diag || !v)
		return;
	vramz_diag_feed(sp->diag, v); /* out of memory: the last findings stay */
}

/* Copies the current findings into s (the engine's are valid until the
 * next feed only). */
static void diag_attach(struct sampler *sp, struct tui_snap *s)
{
	const vramz_finding *f;
	unsigned n = sp->diag && s ? vramz_diag_findings(sp->diag, &f) : 0;
	if (!n || !(s->findings = malloc(n * sizeof *f)))
		return;
	memcpy(s->findings, f, n * sizeof *f);
	s->nfindings = n;
}

/* A daemon's findings (valid until the next sample) into s: those about
 * the GPUs read (-g) and about no GPU. */
static void daemon_attach(struct tui_snap *s, const vramz_finding *f, unsigned n,
			  const vramz_snapshot *v)
{
	if (!s || !n || !(s->findings = malloc(n * sizeof *f)))
		return;
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		int read = f[i].gpu < 0;
		for (unsigned g = 0; !read && g < v->gpu_count; g++)
			read = (int)v->gpus[g].index == f[i].gpu;
		if (!read)
			continue;
		s->findings[k++] = f[i];
	}
	s->nfindings = k;
	if (!k) {
		free(s->findings);
		s->findings = NULL;
	}
}

/* Queues s (lock held) and wakes the UI thread. */
static void deliver(struct sampler *sp, struct tui_snap *s)
{
	if (!s)
		return;
	if (sp->tail)
		sp->tail->next = s;
	else
		sp->head = s;
	sp->tail = s;
	/* a backlog of big ticks: only the newest keeps its processes */
	size_t rows = 0;
	for (struct tui_snap *q = sp->head; q; q = q->next)
		rows += q->nprocs;
	for (struct tui_snap **q = &sp->head; *q != s && rows > QUEUE_MAX_ROWS; q = &(*q)->next) {
		rows -= (*q)->nprocs;
		*q = snap_without_procs(*q);
	}
	sp->pos_ms = s->time_ms;
	if (sp->inline_ticks)
		return; /* the UI thread takes it itself, awake already */
	uint64_t one = 1;
	if (write(sp->efd, &one, sizeof one) < 0) {
		/* the counter is saturated: the UI is awake anyway */
	}
}

static void wait_until(struct sampler *sp, int64_t deadline_mono_ms)
{
	struct timespec ts = {deadline_mono_ms / 1000, (deadline_mono_ms % 1000) * 1000000};
	pthread_cond_timedwait(&sp->cv, &sp->mu, &ts);
}

/* ---- live ----------------------------------------------------------------- */

static const vramz_gpu_info *live_info(const void *src, unsigned index)
{
	return vramz_gpu(src, index);
}

/* Once per source: the PCIe maximum tells a degraded link (to the table
 * and the engine); read once, off the UI thread unless read from a
 * daemon's segment (microseconds) */
static void live_init(struct sampler *sp)
{
	vramz_ctx *ctx = ticker_ctx(sp->o.ticker);
	if (sp->live_ready)
		return;
	sp->live_ready = 1;
	for (unsigned i = 0; i < vramz_selected_count(ctx); i++) {
		unsigned idx = vramz_selected_index(ctx, i);
		vramz_gpu_details(ctx, idx);
		if (sp->diag)
			vramz_diag_set_gpu_info(sp->diag, vramz_gpu(ctx, idx), 1);
	}
}

/* One tick: sampled (or read from the daemon), copied, findings after
 * it, queued for the UI.  0: the daemon's next snapshot is not out yet
 * (TICKER_NOT_YET), nothing queued. */
static int live_once(struct sampler *sp)
{
	struct ticker *tk = sp->o.ticker;
	vramz_ctx *ctx = ticker_ctx(tk);
	const vramz_snapshot *v = NULL;
	vramz_ctx *src = ctx;
	int rc = ticker_sample(tk, &v, &src);
	if (rc == TICKER_NOT_YET)
		return 0;
	/* the daemon's findings, when it publishes any (NULL: it runs no
	 * engine) and top has no thresholds of its own */
	const vramz_finding *df = NULL;
	unsigned ndf = 0;
	if (rc >= 0 && sp->diag && sp->o.daemon_findings && ticker_from_daemon(tk))
		ndf = vramz_daemon_findings(src, &df);
	if (rc >= 0 && !df)
		diag_feed(sp, v);
	struct tui_snap *s = v && v->gpu_count ? snap_copy(v, live_info, ctx) : calloc(1, sizeof *s);
	if (rc >= 0 && df)
		daemon_attach(s, df, ndf, v);
	else if (rc >= 0)
		diag_attach(sp, s);
	if (s && rc < 0) {
		s->err = rc;
		fmt_snprintf(s->errmsg, sizeof s->errmsg, "sampling failed: %s%s%s",
			 vramz_strerror(rc), *vramz_last_error(src) ? ": " : "",
			 vramz_last_error(src));
	}
	pthread_mutex_lock(&sp->mu);
	deliver(sp, s);
	pthread_mutex_unlock(&sp->mu);
	return 1;
}

/* When the next tick is due (CLOCK_MONOTONIC ms), on the thread or the UI's:
 * the ticker's next deadline after a tick taken, or, when the daemon's
 * snapshot was not out yet, when the ticker says to look again (rounded
 * up, so a poll's timeout never wakes before it). */
static int64_t next_due_ms(struct ticker *tk, int got)
{
	return got ? ticker_advance(tk) / 1000000 : (ticker_retry_at(tk) + 999999) / 1000000;
}

static void *live_main(void *arg)
{
	struct sampler *sp = arg;
	struct ticker *tk = sp->o.ticker;
	live_init(sp);
	pthread_mutex_lock(&sp->mu);
	/* 0 from the start; taken over from the UI thread (sampler_run), the
	 * tick it took last is out and the next is due then */
	int64_t next_ms = sp->due_ms;
	for (;;) {
		/* the ticker's deadlines (ticker.c: late ticks are skipped) */
		while (!sp->quit && !sp->poke && clock_mono_ms() < next_ms)
			wait_until(sp, next_ms);
		if (sp->quit)
			break;
		if (sp->poke) {
			sp->poke = 0;
			ticker_restart(tk);
		}
		pthread_mutex_unlock(&sp->mu);
		int got = live_once(sp);
		pthread_mutex_lock(&sp->mu);
		next_ms = next_due_ms(tk, got);
	}
	pthread_mutex_unlock(&sp->mu);
	return NULL;
}

/* Reading a daemon needs no thread: a segment read takes microseconds,
 * and a thread of its own costs a reader a second wake-up a frame (its
 * timer, then the UI's), most of what ten `top`s on one daemon cost. */
int64_t sampler_due_ms(struct sampler *sp)
{
	return sp->inline_ticks ? sp->due_ms : -1;
}

/* A poke (after a kill) asks for a tick now; on a daemon the next news is
 * its next snapshot, which the deadline already waits for, so it is
 * ignored.  Neither it nor a late daemon blocks the keys: the ticker does
 * not wait here (.nowait), this comes back when it says (2, 4, 8 ms ...). */
int sampler_run(struct sampler *sp)
{
	if (!sp->inline_ticks || clock_mono_ms() < sp->due_ms)
		return 0;
	struct ticker *tk = sp->o.ticker;
	sp->poke = 0;
	int got = live_once(sp);
	sp->due_ms = next_due_ms(tk, got);
	if (!got)
		return 0;
	if (!ticker_from_daemon(tk)) {
		/* the daemon went away and the ticker samples NVML now: that
		 * can block, so off this thread from here on; the thread must
		 * not take the UI's signals (top.c), so it starts with them
		 * blocked */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		pthread_mutex_lock(&sp->mu);
		if (pthread_create(&sp->thread, NULL, live_main, sp) == 0) {
			sp->started = 1;
			sp->inline_ticks = 0; /* else ticks stay on this thread */
		}
		pthread_mutex_unlock(&sp->mu);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return 1;
}

/* ---- replay --------------------------------------------------------------- */

static const vramz_gpu_info *log_info(const void *src, unsigned index)
{
	return vramz_log_gpu(src, index);
}

/* The next tick of the log, fed to the engine and copied (with the
 * findings when findings); NULL at the end or on an error (which then
 * comes as an error snapshot in *err_snap). */
static struct tui_snap *replay_next(struct sampler *sp, struct tui_snap **err_snap,
				    int findings)
{
	const vramz_snapshot *v;
	int rc = vramz_log_next(sp->log, &v);
	if (rc == 1) {
		if (sp->diag)
			for (unsigned n = vramz_log_gpu_count(sp->log); sp->diag_gpus < n;
			     sp->diag_gpus++) {
				const vramz_gpu_info *gi = vramz_log_gpu(sp->log, sp->diag_gpus);
				if (gi)
					vramz_diag_set_gpu_info(sp->diag, gi, 1);
			}
		diag_feed(sp, v);
		struct tui_snap *s = snap_copy(v, log_info, sp->log);
		if (findings)
			diag_attach(sp, s);
		return s;
	}
	if (rc < 0 && (*err_snap = calloc(1, sizeof **err_snap))) {
		(*err_snap)->err = rc;
		(*err_snap)->keep_last = 1; /* a bad row does not blank the GPUs */
		(*err_snap)->time_ms = sp->pos_ms;
		fmt_snprintf((*err_snap)->errmsg, sizeof (*err_snap)->errmsg, "%s",
			 vramz_log_error(sp->log));
	}
	return NULL;
}

/* Moves to target_ms (lock held, released while reading). */
static struct tui_snap *replay_seek(struct sampler *sp, struct tui_snap *pending,
				    int64_t target_ms)
{
	struct tui_snap *err = NULL, *batch = NULL, *btail = NULL, *last = NULL;
	int reset = 0;
	pthread_mutex_unlock(&sp->mu);
	if (target_ms <= sp->pos_ms) { /* the shown tick or before: from the start */
		snap_free(pending);
		pending = NULL;
		vramz_log_close(sp->log);
		sp->log = NULL;
		if (vramz_log_open(&sp->log, sp->o.replay_path) < 0) {
			pthread_mutex_lock(&sp->mu);
			sp->ended = 1;
			return NULL;
		}
		reset = 1;
		if (sp->diag) { /* the findings of the log up to the target */
			vramz_diag *d = vramz_diag_new(sp->o.diag);
			if (d) {
				vramz_diag_free(sp->diag);
				sp->diag = d;
				sp->diag_gpus = 0;
			}
		}
	}
	if (!pending)
		pending = replay_next(sp, &err, 0);
	/* read on to the target, keeping the last window of skipped ticks */
	while (pending && pending->time_ms < target_ms) {
		struct tui_snap *n = replay_next(sp, &err, 0);
		if (!n)
			break; /* the target is past the end: stop at the last tick */
		if (pending->time_ms >= target_ms - SEEK_WINDOW_MS) {
			pending->catchup = 1;
			if (btail)
				btail->next = pending;
			else
				batch = pending;
			btail = pending;
		} else {
			free(pending);
		}
		pending = n;
	}
	if (pending && !pending->findings)
		diag_attach(sp, pending); /* the engine has read up to it */
	pthread_mutex_lock(&sp->mu);
	last = pending;
	if (batch)
		batch->reset = reset;
	else if (last)
		last->reset = reset;
	for (struct tui_snap *b = batch, *nb; b; b = nb) {
		nb = b->next;
		b->next = NULL;
		deliver(sp, b);
	}
	deliver(sp, err);
	return last; /* handed over by the caller, right away */
}

static void *replay_main(void *arg)
{
	struct sampler *sp = arg;
	struct tui_snap *cur = sp->first; /* the tick shown next */
	sp->first = NULL;
	pthread_mutex_lock(&sp->mu);
	if (cur)
		sp->first_ms = cur->time_ms;
	int64_t due = clock_mono_ms();
	int show_now = 0; /* a seek's target: shown even while paused */
	while (!sp->quit) {
		if (sp->seek_ms) {
			int64_t target = sp->pos_ms + sp->seek_ms;
			sp->seek_ms = 0;
			if (target < sp->first_ms)
				target = sp->first_ms;
			sp->ended = 0;
			cur = replay_seek(sp, cur, target);
			due = clock_mono_ms();
			show_now = 1;
			continue;
		}
		if (!cur) {
			sp->ended = 1;
			uint64_t one = 1;
			if (write(sp->efd, &one, sizeof one) < 0) {
				/* the UI is awake anyway */
			}
			while (!sp->quit && !sp->seek_ms)
				pthread_cond_wait(&sp->cv, &sp->mu);
			continue;
		}
		if (!show_now && (sp->paused || clock_mono_ms() < due)) {
			if (sp->paused)
				pthread_cond_wait(&sp->cv, &sp->mu);
			else
				wait_until(sp, due);
			continue;
		}
		struct tui_snap *shown = cur;
		show_now = 0;
		deliver(sp, shown);
		pthread_mutex_unlock(&sp->mu);
		struct tui_snap *err = NULL;
		cur = replay_next(sp, &err, 1);
		pthread_mutex_lock(&sp->mu);
		deliver(sp, err);
		if (cur) {
			int64_t gap = cur->time_ms - sp->pos_ms;
			if (gap < 0)
				gap = 0;
			if (gap > MAX_GAP_MS * sp->speed)
				gap = (int64_t)(MAX_GAP_MS * sp->speed);
			due = clock_mono_ms() + (int64_t)(gap / sp->speed);
		}
	}
	pthread_mutex_unlock(&sp->mu);
	snap_free(cur);
	return NULL;
}

/* ---- public ---------------------------------------------------------------- */

int sampler_start(struct sampler **out, const struct sampler_opts *o, char *err,
		  size_t errlen)
{
	struct sampler *sp = calloc(1, sizeof *sp);
	*out = NULL;
	if (!sp)
		return VRAMZ_ENOMEM;
	sp->o = *o;
	sp->speed = o->speed > 0 ? o->speed : 1;
	pthread_mutex_init(&sp->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sp->cv, &ca);
	pthread_condattr_destroy(&ca);
	sp->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int drc = o->diag ? vramz_diag_create(&sp->diag, o->diag) : 0;
	if (drc < 0) {
		fmt_snprintf(err, errlen, "%s", drc == VRAMZ_ENOMEM ? "out of memory"
								: vramz_diag_error(sp->diag));
		vramz_diag_free(sp->diag);
		sp->diag = NULL;
		sampler_stop(sp);
		return drc;
	}
	void *(*fn)(void *) = live_main;
	if (o->replay_path) {
		int rc = vramz_log_open(&sp->log, o->replay_path);
		if (rc < 0) {
			if (sp->log && *vramz_log_error(sp->log))
				fmt_snprintf(err, errlen, "%s", vramz_log_error(sp->log));
			else
				fmt_snprintf(err, errlen, "%s: %s", o->replay_path, vramz_strerror(rc));
			sampler_stop(sp);
			return rc;
		}
		/* the first tick now, so a log that is not one fails before the
		 * terminal is taken, with FILE:LINE */
		struct tui_snap *bad = NULL;
		if (!(sp->first = replay_next(sp, &bad, 1))) {
			fmt_snprintf(err, errlen, "%s", bad ? bad->errmsg : "");
			if (!bad)
				fmt_snprintf(err, errlen, "%s: holds no samples", o->replay_path);
			snap_free(bad);
			sampler_stop(sp);
			return VRAMZ_EINVAL;
		}
		fn = replay_main;
	}
	if (!o->replay_path && sp->efd >= 0 && ticker_from_daemon(o->ticker)) {
		live_init(sp);
		sp->inline_ticks = 1;
		sp->due_ms = clock_mono_ms();
		*out = sp;
		return 0;
	}
	if (sp->efd < 0 || pthread_create(&sp->thread, NULL, fn, sp)) {
		fmt_snprintf(err, errlen, "cannot start the sampler thread: %s", strerror(errno));
		sampler_stop(sp);
		return VRAMZ_ENOMEM;
	}
	sp->started = 1;
	*out = sp;
	return 0;
}

int sampler_stop_within(struct sampler *sp, int wait_ms)
{
	if (!sp)
		return 0;
	pthread_mutex_lock(&sp->mu);
	int running = sp->started;
	sp->quit = 1;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	if (running && wait_ms >= 0) {
		/* a tick of 100,000 processes is in the library: detached, the
		 * process is about to exit, which ends it */
		if (join_within_ms(sp->thread, wait_ms))
			return -1;
	} else if (running) {
		pthread_join(sp->thread, NULL);
	}
	vramz_log_close(sp->log);
	vramz_diag_free(sp->diag);
	snap_free(sp->first);
	snap_free(sp->head);
	if (sp->efd >= 0)
		close(sp->efd);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	free(sp);
	return 0;
}

void sampler_stop(struct sampler *sp)
{
	sampler_stop_within(sp, -1);
}

int sampler_fd(const struct sampler *sp)
{
	return sp->efd;
}

struct tui_snap *sampler_take(struct sampler *sp)
{
	uint64_t n;
	if (!sp->inline_ticks && read(sp->efd, &n, sizeof n) < 0) {
		/* EAGAIN: nothing new, the list below is empty or short */
	}
	pthread_mutex_lock(&sp->mu);
	struct tui_snap *list = sp->head;
	sp->head = sp->tail = NULL;
	pthread_mutex_unlock(&sp->mu);
	return list;
}

void sampler_poke(struct sampler *sp)
{
	pthread_mutex_lock(&sp->mu);
	sp->poke = 1;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

void sampler_pause(struct sampler *sp, int paused)
{
	pthread_mutex_lock(&sp->mu);
	sp->paused = paused;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

void sampler_seek(struct sampler *sp, int64_t delta_ms)
{
	pthread_mutex_lock(&sp->mu);
	sp->seek_ms += delta_ms;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

void sampler_speed(struct sampler *sp, double factor)
{
	pthread_mutex_lock(&sp->mu);
	sp->speed *= factor;
	if (sp->speed < 0.125)
		sp->speed = 0.125;
	if (sp->speed > 64)
		sp->speed = 64;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

void sampler_get_state(struct sampler *sp, struct sampler_state *st)
{
	pthread_mutex_lock(&sp->mu);
	st->replay = sp->o.replay_path != NULL;
	st->paused = sp->paused;
	st->ended = sp->ended;
	st->speed = sp->speed;
	st->pos_ms = sp->pos_ms;
	st->first_ms = sp->first_ms;
	pthread_mutex_unlock(&sp->mu);
}
