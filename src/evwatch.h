/* SPDX-License-Identifier: Apache-2.0 */
/* evwatch.h - the driver-event watcher of the live commands (daemon,
 * serve, watch, top, log): a thread of its own, on a context of its own,
 * waiting in the driver for Xid and ECC events (vramz_events_wait, a 1 s
 * timeout so it can be stopped; no other wake-up).  It keeps each GPU's
 * last Xid, its time and the count, which ticks carry in (the xid_*
 * fields), and appends each event to a CSV file when given one (`log`:
 * FILE.events.csv, docs/csv.md).  The ticker starts and stops it. */
#ifndef VRAMZ_EVWATCH_H
#define VRAMZ_EVWATCH_H

#include <stdint.h>

#include "vramz/vramz.h"

struct evwatch;

/* Starts the watcher for the selected GPUs (-g).  events_csv: a file to
 * append the events to, or NULL; repeats of one (GPU, event, Xid code)
 * within merge_ms (at least 1 s) are one row with their count.  NULL when nothing can be watched (a
 * replay, no NVML, no GPU with events), after one line on stderr only for
 * a file that cannot be opened. */
struct evwatch *evwatch_start(const char *cmd, const char *events_csv, int64_t merge_ms);
void evwatch_stop(struct evwatch *w);
/* Sets the xid_* fields (and VRAMZ_F_XID) of the n samples of a tick from
 * what the watcher has seen, lost GPUs included: a lost GPU's finding
 * names the last Xid before the loss. */
void evwatch_merge(struct evwatch *w, vramz_gpu_sample *g, unsigned n);

#endif
