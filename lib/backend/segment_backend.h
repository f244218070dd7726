/* SPDX-License-Identifier: Apache-2.0 */
/* segment_backend.h - what the public daemon API (lib/daemon.c,
 * vramz/daemon.h) asks of an opened segment backend (backend/segment.c):
 * the front calls down into the back, never the other way. */
#ifndef VRAMZ_SEGMENT_BACKEND_H
#define VRAMZ_SEGMENT_BACKEND_H

#include "backend.h"
#include "vramz/daemon.h"

/* The daemon behind the segment, as of the latest tick (out zeroed first). */
void segment_backend_info(const struct backend *b, vramz_daemon_info *out);
/* 1 when the daemon samples GPU index (its own numbering, the context's). */
int segment_backend_covers(const struct backend *b, unsigned index);
/* The daemon's findings of the latest tick: their count, and *out (NULL
 * with 0 when the daemon publishes none, or out of memory).  In a
 * redacted segment the user and command are filled in from procs, the
 * context's latest processes (those this reader could attribute). */
unsigned segment_backend_findings(struct backend *b, const struct proc_vec *procs,
				  const vramz_finding **out);

#endif
