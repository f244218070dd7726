/* SPDX-License-Identifier: Apache-2.0 */
/* evwatch.c - the driver-event watcher (evwatch.h).
 *
 * Why a thread and a context of its own: nvmlEventSetWait blocks inside
 * the driver until an event comes or its timeout passes, so an Xid is
 * seen within a second even between ticks of a 10 s daemon, and the
 * sampling thread never waits for it.  With no event the thread sleeps in
 * the driver and wakes once a second (docs/health.md measures it) to see
 * whether it should stop; a stop waits for it at most STOP_WAIT_MS, then
 * leaves it to free itself, so no command's exit waits on the driver.
 *
 * The events file: the first event of a kind (GPU, event, Xid code) is
 * written at once, so a GPU that takes the machine down with it leaves
 * its Xid on disk; its repeats within the merge interval (the log's, at
 * least a second) are counted and written as one row with their count
 * when the interval has passed (or at the stop).  An Xid storm (800 a
 * second, which a user's faulting kernel can cause) is then a row a
 * second, not 800: the file grows with time, not with the storm.
 */
#include "evwatch.h"

#include <pthread.h>
#include <signal.h>
#include <inttypes.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "format/evfile.h"
#include "joinwait.h"
#include "logfile.h"
#include "xid.h"

#define WAIT_MS 1000
/* kinds of event merged at once; past it a kind's rows are not merged */
#define MERGE_KINDS 256

struct ev_gpu {
	unsigned count;            /* Xid events seen */
	unsigned last;             /* the last one's code */
	uint64_t time_ms;
};

/* one kind of event in the file: what was written last, what waits */
struct ev_merge {
	unsigned gpu, type;
	uint64_t data;             /* the Xid code */
	int64_t written_ms;        /* the last row's wall time */
	unsigned pending;          /* events since, not yet in a row */
	vramz_event last;          /* the last of them */
};

struct evwatch {
	pthread_t thread;
	pthread_mutex_t lock;
	vramz_ctx *ctx;            /* the thread's own */
	int csv;                   /* the events file, or -1 */
	char path[4096];           /* its name, followed across rotations */
	int64_t merge_ms;          /* repeats of a kind within it: one row */
	unsigned nmerge;
	struct ev_merge merge[MERGE_KINDS];
	unsigned n;
	struct ev_gpu *gpu;        /* [n] by global index */
	int quit;
	int done;                  /* the thread has left its loop */
	int detached;              /* stop did not wait for it: it frees w */
};

/* Everything of w; by whichever of the thread and evwatch_stop() is last. */
static void release(struct evwatch *w)
{
	pthread_mutex_destroy(&w->lock);
	if (w->csv >= 0)
		close(w->csv);
	cli_close(w->ctx);
	free(w->gpu);
	free(w);
}

static const char *ev_name(unsigned type)
{
	return type == VRAMZ_EV_XID ? "xid" : type == VRAMZ_EV_ECC_DBE ? "ecc_dbe" : "ecc_sbe";
}

/* One row of the events file: time,gpu,uuid,event,xid,meaning, the
 * agent records' columns empty, and count (the events it stands for). */
static void ev_write(struct evwatch *w, const vramz_event *ev, unsigned count)
{
	struct logbuf b = {0};
	char t[LOG_TIME_LEN + 1], head[LOG_TIME_LEN + 32], mid[64], tail[48], err[600];
	if (evfile_follow(&w->csv, w->path, err, sizeof err))
		return; /* moved by a rotation and no new one: the next tries again */
	const vramz_gpu_info *gi = vramz_gpu(w->ctx, ev->gpu);
	log_fmt_time(t, (int64_t)ev->time_ms);
	snprintf(head, sizeof head, "%s,%u,", t, ev->gpu);
	const char *meaning = ev->type == VRAMZ_EV_XID ? xid_meaning((unsigned)ev->data)
			      : ev->type == VRAMZ_EV_ECC_DBE ? "double-bit (uncorrected) ECC error"
							     : "single-bit (corrected) ECC error";
	if (ev->type == VRAMZ_EV_XID)
		snprintf(mid, sizeof mid, ",%s,%llu,", ev_name(ev->type), (unsigned long long)ev->data);
	else
		snprintf(mid, sizeof mid, ",%s,,", ev_name(ev->type));
	snprintf(tail, sizeof tail, LOG_EVENT_DRIVER_TAIL "%u\n", count);
	if (!log_put_raw(&b, head, strlen(head)) && !log_put_str(&b, gi ? gi->uuid : "") &&
	    !log_put_raw(&b, mid, strlen(mid)) && !log_put_str(&b, meaning) &&
	    !log_put_raw(&b, tail, strlen(tail)))
		evfile_append(w->csv, &b);
	logbuf_free(&b);
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Lock held: the rows of repeats whose interval has passed (all with
 * every set: the stop), and kinds quiet for an interval forgotten. */
static void ev_flush(struct evwatch *w, int64_t now_ms, int every)
{
	unsigned keep = 0;
	for (unsigned i = 0; i < w->nmerge; i++) {
		struct ev_merge *m = &w->merge[i];
		int due = now_ms - m->written_ms >= w->merge_ms;
		if (m->pending && (due || every)) {
			ev_write(w, &m->last, m->pending);
			m->pending = 0;
			m->written_ms = now_ms; /* kept: the next repeat within the interval waits */
		} else if (!m->pending && due) {
			continue; /* quiet for an interval: its next event is written at once */
		}
		w->merge[keep++] = *m;
	}
	w->nmerge = keep;
}

/* Lock held: ev into the file, or into its kind's count */
static void ev_log(struct evwatch *w, const vramz_event *ev)
{
	int64_t now = wall_ms();
	ev_flush(w, now, 0);
	for (unsigned i = 0; i < w->nmerge; i++) {
		struct ev_merge *m = &w->merge[i];
		if (m->gpu == ev->gpu && m->type == ev->type && m->data == ev->data) {
			m->pending++; /* written within the interval: counted */
			m->last = *ev;
			return;
		}
	}
	ev_write(w, ev, 1);
	if (w->nmerge < MERGE_KINDS)
		w->merge[w->nmerge++] = (struct ev_merge){.gpu = ev->gpu, .type = ev->type,
							  .data = ev->data, .written_ms = now};
}

static void *ev_main(void *arg)
{
	struct evwatch *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		int quit = w->quit;
		pthread_mutex_unlock(&w->lock);
		if (quit)
			break;
		vramz_event ev;
		int rc = vramz_events_wait(w->ctx, WAIT_MS, &ev);
		if (rc < 0)
			break; /* the driver went away: the fields keep what was seen */
		if (rc == 0 || ev.gpu >= w->n) {
			pthread_mutex_lock(&w->lock);
			if (w->csv >= 0 && !w->quit)
				ev_flush(w, wall_ms(), 0);
			pthread_mutex_unlock(&w->lock);
			continue;
		}
		pthread_mutex_lock(&w->lock);
		if (ev.type == VRAMZ_EV_XID) {
			struct ev_gpu *g = &w->gpu[ev.gpu];
			g->count++;
			g->last = (unsigned)ev.data;
			g->time_ms = ev.time_ms;
		}
		if (w->csv >= 0 && !w->quit) /* after the stop's last rows: none */
			ev_log(w, &ev);
		pthread_mutex_unlock(&w->lock);
	}
	pthread_mutex_lock(&w->lock);
	w->done = 1;
	int detached = w->detached;
	pthread_mutex_unlock(&w->lock);
	if (detached)
		release(w);
	return NULL;
}

struct evwatch *evwatch_start(const char *cmd, const char *events_csv, int64_t merge_ms)
{
	struct evwatch *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	if (cli_open(&w->ctx)) {
		free(w);
		return NULL;
	}
	w->n = vramz_gpu_count(w->ctx);
	w->gpu = calloc(w->n ? w->n : 1, sizeof *w->gpu);
	if (!w->gpu || vramz_events_open(w->ctx) <= 0)
		goto fail;
	w->csv = -1;
	char err[600];
	if (events_csv && (w->csv = evfile_open(events_csv, err, sizeof err)) < 0)
		cli_err("%s: %s; events are not logged", cmd, err);
	if (events_csv)
		snprintf(w->path, sizeof w->path, "%s", events_csv);
	w->merge_ms = merge_ms > WAIT_MS ? merge_ms : WAIT_MS;
	pthread_mutex_init(&w->lock, NULL);
	/* the thread takes no signals: they must reach the loop's thread */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int bad = pthread_create(&w->thread, NULL, ev_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!bad) {
		/* named, so its wake-ups can be counted (tests/gpu/health_check.sh) */
		pthread_setname_np(w->thread, "vramz-events");
		return w;
	}
	pthread_mutex_destroy(&w->lock);
	if (w->csv >= 0)
		close(w->csv);
fail:
	cli_close(w->ctx);
	free(w->gpu);
	free(w);
	return NULL;
}

/* how long a stop waits for the thread to leave the driver's wait: a
 * command's exit (q in top, the end of serve --once) is not held up by
 * the rest of its WAIT_MS; a thread still waiting then is detached and
 * frees itself when it wakes (or the process ends first) */
#define STOP_WAIT_MS 20

void evwatch_stop(struct evwatch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	if (w->csv >= 0 && !w->quit)
		ev_flush(w, wall_ms(), 1); /* the repeats still counted: their rows */
	w->quit = 1;
	pthread_mutex_unlock(&w->lock);
	if (join_within_ms(w->thread, STOP_WAIT_MS) == 0) {
		release(w);
		return;
	}
	pthread_mutex_lock(&w->lock);
	w->detached = 1;
	int done = w->done;
	pthread_mutex_unlock(&w->lock);
	if (done) /* it left its loop after the wait timed out */
		release(w);
}

void evwatch_merge(struct evwatch *w, vramz_gpu_sample *g, unsigned n)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	for (unsigned i = 0; i < n; i++) {
		if (g[i].index >= w->n)
			continue;
		const struct ev_gpu *e = &w->gpu[g[i].index];
		g[i].xid_events = e->count;
		g[i].xid_last = e->last;
		g[i].xid_time_ms = e->time_ms;
		g[i].valid |= VRAMZ_F_XID;
	}
	pthread_mutex_unlock(&w->lock);
}
