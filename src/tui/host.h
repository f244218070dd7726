/* SPDX-License-Identifier: Apache-2.0 */
/* host.h - the host side of the GPU processes `vramz top` shows: CPU %
 * over the last interval, resident memory and state from
 * /proc/PID/stat, and the time since each started (from the start time
 * its row already has).  What tells a stuck data loader (D, 0 % CPU)
 * from a busy one. */
#ifndef VRAMZ_TUI_HOST_H
#define VRAMZ_TUI_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "tui/model.h"

struct host;

/* live 0 (a replayed log): nothing is read and every host field stays
 * unknown, since the log's pids are not this machine's now.  NULL when
 * out of memory. */
struct host *host_new(int live);
void host_free(struct host *h);

/* After a tick was fed and arranged: gives every row the host fields of
 * its last reading, reading /proc/PID/stat now (one pread of a file kept
 * open) for the rows m->order[lo .. hi) (those on screen) and the
 * process pid_also (the process page's; 0 none).  A reading more than three intervals after the one before
 * gives no CPU %: that would be an average over minutes. */
void host_refresh(struct host *h, struct model *m, unsigned lo, unsigned hi, uint32_t pid_also,
		  int64_t interval_ms);

/* The host line of the header (live only): CPU busy over all CPUs since
 * the last call, memory used (total less available) / total, the 1-minute
 * load: "cpu 23%  mem 41.2/503.5G  load 3.21"; read once a tick. */
void host_system(struct host *h);
/* The last host line; "" before the first or when nothing could be read. */
const char *host_summary(const struct host *h);

/* The whole command line of a live process (its arguments joined by
 * spaces, made safe to print) into buf; -1 when it cannot be read or the
 * pid is another process now (start_ticks differs). */
int host_cmdline(const struct host *h, uint32_t pid, uint64_t start_ticks, char *buf, size_t len);

#endif
