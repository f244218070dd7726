/* SPDX-License-Identifier: Apache-2.0 */
/* sampler.h - the dashboard's background thread: it samples the GPUs (or
 * plays a recorded log) on its own cadence and hands each tick to the UI
 * thread as a copied snapshot, waking it through a file descriptor, so a
 * slow NVML call never freezes the keyboard. */
#ifndef VRAMZ_TUI_SAMPLER_H
#define VRAMZ_TUI_SAMPLER_H

#include <stdint.h>

#include "tui/model.h"
#include "vramz/diagnose.h"
#include "vramz/vramz.h"

struct sampler;
struct ticker;

struct sampler_opts {
	struct ticker *ticker;     /* live: the source and cadence (src/ticker.h) */
	const char *replay_path;   /* replay: a log file (ticker NULL) */
	double speed;              /* replay: 1 = recorded pace */
	const vramz_diag_config *diag; /* thresholds of the findings; NULL none */
	int daemon_findings;       /* 1: reading a daemon that publishes findings,
				      show those, and run no engine here (the
				      thresholds are the defaults: top.c) */
};

/* Starts the thread; on failure returns a negative VRAMZ_E* code and a
 * one-line reason in err. */
int sampler_start(struct sampler **out, const struct sampler_opts *o,
		  char *err, size_t errlen);
/* Stops and joins the thread, frees what was not taken. */
void sampler_stop(struct sampler *s);
/* The same, waiting at most wait_ms for a tick in progress (-1: as long
 * as it takes).  -1 when it did not end in time: the thread is left
 * running, detached, with everything it uses (the ticker too); for a
 * program about to exit, so that `q` never waits for a slow tick. */
int sampler_stop_within(struct sampler *s, int wait_ms);
/* Readable while snapshots wait; sampler_take drains it. */
int sampler_fd(const struct sampler *s);
/* The waiting snapshots, oldest first (a list through ->next); NULL none. */
struct tui_snap *sampler_take(struct sampler *s);
void snap_free(struct tui_snap *list);
/* Reading a live daemon, the sampler has no thread: the caller takes each
 * tick on its own thread.  sampler_due_ms is when the next is due (CLOCK_
 * MONOTONIC ms; -1: a thread samples, wait on sampler_fd instead), and
 * sampler_run takes it when due (1: a tick was queued for sampler_take),
 * never waiting for the daemon (the ticker must be opened .nowait): when
 * its next snapshot is not out yet, the next due time is the ticker's
 * retry (2, 4, 8 ms ... on).  A
 * daemon that goes away hands the sampling to a thread of its own. */
int64_t sampler_due_ms(struct sampler *s);
int sampler_run(struct sampler *s);
/* Live: sample now instead of at the next tick (after a kill); reading a
 * daemon, the next tick is its next snapshot anyway. */
void sampler_poke(struct sampler *s);

/* Replay controls; no effect on a live sampler. */
void sampler_pause(struct sampler *s, int paused);
void sampler_seek(struct sampler *s, int64_t delta_ms);
void sampler_speed(struct sampler *s, double factor);

struct sampler_state {
	int replay, paused, ended;
	double speed;
	int64_t pos_ms;            /* time of the latest tick handed over */
	int64_t first_ms;          /* replay: the log's first tick */
};
void sampler_get_state(struct sampler *s, struct sampler_state *st);

#endif
