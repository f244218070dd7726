/* SPDX-License-Identifier: Apache-2.0 */
/* ticker.h - the one sampling loop helper of every long-running command
 * (log, watch, serve, top's sampler and the daemon).
 *
 * It decides three things once, so the loops cannot differ:
 *   - lateness: ticks follow absolute deadlines on CLOCK_MONOTONIC; a tick
 *     that ends past one or more deadlines skips them (no burst to catch
 *     up) and the next tick keeps the original phase;
 *   - slow readings: PCIe throughput (byte counters, or a 20 ms window
 *     on drivers without them), the current PCIe link and, every third
 *     time, energy (3.4 ms of CPU a GPU) are read by a second context on a
 *     thread of its own every slow_interval_ms, and their latest values
 *     are carried into every tick that did not read them itself;
 *   - VRAM health and events: the health counters are read with the slow
 *     readings (or alone on that thread, health_ms), and while the
 *     ticks come from the driver a watcher thread (src/evwatch.c) waits
 *     for its Xid and ECC events, whose last Xid each tick carries;
 *   - the source: a live `vramz daemon` (its segment) when one is fresh,
 *     publishes at least as often as this loop asks, covers the selected
 *     GPUs and carries what the loop needs (processes); otherwise the
 *     command samples NVML itself.  A daemon that stops mid-run is
 *     replaced by live sampling, with one line on stderr.
 */
#ifndef VRAMZ_TICKER_H
#define VRAMZ_TICKER_H

#include <signal.h>
#include <stdint.h>

#include "vramz/vramz.h"

struct ticker;

struct ticker_opts {
	const char *cmd;           /* "log": prefixes its messages */
	int64_t interval_ms;       /* > 0 */
	int64_t slow_interval_ms;  /* 0: never read the slow fields */
	unsigned flags;            /* VRAMZ_SAMPLE_* of every tick (no _SLOW) */
	int daemon;                /* 1: may read a live daemon (cli_open's rule) */
	int nowait;                /* 1: ticker_sample never waits for a daemon's
				      next snapshot: TICKER_NOT_YET instead */
	/* VRAM health (docs/health.md): read with the slow readings; without
	 * a slow interval, every health_ms on the slow thread alone (0: not) */
	int64_t health_ms;
	/* the driver's Xid and ECC events are watched (src/evwatch.c) while
	 * the ticks come from the driver, and each is appended to this file
	 * when not NULL (log: FILE.events.csv) */
	int events;
	const char *events_csv;
};

/* How often the commands without a slow interval (watch, top) read VRAM
 * health: its counters move rarely, and the events come between. */
#define TICKER_HEALTH_MS 10000

/* ticker_sample with .nowait: the daemon's next snapshot is not out yet
 * (nothing read, *snap NULL); call again at ticker_retry_at (CLOCK_
 * MONOTONIC ns; the pauses double while it is late). */
#define TICKER_NOT_YET 1000

/* Opens the source with the global options (-g, --live) and, with
 * slow_interval_ms, starts the slow thread.  Prints one line and returns an
 * exit code on failure, 0 on success. */
int ticker_open(struct ticker **out, const struct ticker_opts *o);
void ticker_close(struct ticker *t);

/* The context of the static facts (names, details, selection): the same
 * for the ticker's whole life, whatever the source of the samples. */
vramz_ctx *ticker_ctx(const struct ticker *t);
/* 1 while the samples come from a daemon's segment. */
int ticker_from_daemon(const struct ticker *t);

/* One tick: samples (or reads the daemon's latest snapshot), carries the
 * slow readings in.  Same returns as vramz_sample; the snapshot stays valid
 * until the next call.  *ctx_out (optional) gets the context to ask
 * vramz_last_error on a failure. */
int ticker_sample(struct ticker *t, const vramz_snapshot **snap, vramz_ctx **ctx_out);

/* The next deadline (CLOCK_MONOTONIC ns) after the tick just taken, with
 * the lateness policy applied: the deadline moves by whole intervals past
 * now.  Call once per tick. */
int64_t ticker_advance(struct ticker *t);
/* After TICKER_NOT_YET: when to call ticker_sample again. */
int64_t ticker_retry_at(const struct ticker *t);
/* The deadline ticker_advance gave last. */
int64_t ticker_deadline(const struct ticker *t);
/* The next tick is taken now, not at the deadline (a key asked for a
 * refresh): the phase starts over from here. */
void ticker_restart(struct ticker *t);

/* ticker_advance, then sleeps until that deadline (or end_ns first, when
 * not 0) or until *stop is set by a signal handler (install it without
 * SA_RESTART). */
void ticker_sleep(struct ticker *t, volatile sig_atomic_t *stop, int64_t end_ns);

#endif
