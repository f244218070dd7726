/* SPDX-License-Identifier: Apache-2.0 */
/* source.h - where a command's readings come from: a live `vramz daemon`
 * (its segment, no driver loaded) or the driver itself.  One rule for
 * every command that may read a daemon (docs/daemon.md, "Who reads it"):
 * kill, run and fit never call these - what they signal or measure is read
 * from the driver at that moment. */
#ifndef VRAMZ_SOURCE_H
#define VRAMZ_SOURCE_H

#include <stdint.h>
#include <stdio.h>

#include "vramz/vramz.h"

/* Opens a daemon's context when one is fresh, publishes what need
 * (VRAMZ_SAMPLE_PROCS) asks, at least every interval_ms (0: any interval),
 * and covers the GPUs -g selects (all of them without -g); else cli_open().
 * Not with --live or --replay.  A segment that is there but unusable
 * (untrusted, malformed, its daemon gone) is named in one line on stderr,
 * once per process.  Returns as cli_open. */
int source_open(vramz_ctx **ctx, unsigned need, int64_t interval_ms);
/* source_open, then one sample (as cli_open_sample). */
int source_open_sample(vramz_ctx **ctx, unsigned flags, const vramz_snapshot **snap);
/* 1 when ctx reads a daemon. */
int source_is_daemon(const vramz_ctx *ctx);
/* "vramz daemon pid 812, snapshot 0.3 s old" into buf, or "" for the driver. */
const char *source_str(const vramz_ctx *ctx, char *buf, size_t len);
/* For views without a header of their own: one line saying the readings
 * come from a daemon (nothing for the driver). */
void source_line(FILE *f, const vramz_ctx *ctx);

#endif
