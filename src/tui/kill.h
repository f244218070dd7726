/* SPDX-License-Identifier: Apache-2.0 */
/* kill.h - sending a signal to a GPU process from the dashboard, safely
 * (the checks and the pidfd signal of `vramz kill`, src/jobs/safekill.c), then
 * watching whether its GPU memory comes back. */
#ifndef VRAMZ_TUI_KILL_H
#define VRAMZ_TUI_KILL_H

#include <stddef.h>
#include <stdint.h>

#include "tui/model.h"

struct killwatch {
	int active;
	uint32_t pid;
	int sig;
	uint64_t gpu_mask;
	uint64_t held_bytes;             /* what the process held when signalled */
	uint64_t used_before[MODEL_MAX_GPUS]; /* GPU used memory then */
	int64_t sent_ms;                 /* model time of the signal */
	int64_t gone_ms;                 /* model time it left the list, 0 not yet */
	unsigned ticks_since;
};

/* 0 when the row may be signalled by this user now; else -1 and why. */
int kill_allowed(const struct model_row *r, char *why, size_t len);
/* Re-checks, verifies the start time, signals, starts watching.  Writes
 * the outcome for the status line; returns 0 when the signal was sent. */
int kill_send(struct killwatch *w, const struct model *m, const struct model_row *r,
	      int sig, char *msg, size_t len);
/* After each new snapshot: 1 when msg has a new report. */
int kill_observe(struct killwatch *w, const struct model *m, char *msg, size_t len);
/* "TERM", "KILL", ... */
const char *kill_signame(int sig);

#endif
