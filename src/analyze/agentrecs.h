/* SPDX-License-Identifier: Apache-2.0 */
/* agentrecs.h - the PyTorch agents' records beside a set of logs (each
 * log's FILE.events.csv: lib/internal/agentrec.h), handed to the
 * diagnosis engine in time order, each before the tick of its time, so
 * `analyze` and `report` judge a process's end as a live watch did. */
#ifndef VRAMZ_AGENTRECS_H
#define VRAMZ_AGENTRECS_H

#include <stdint.h>

#include "vramz/diagnose.h"

struct agentrecs;

/* The events files of logs paths[0..n-1] ("-" has none; a log recorded
 * without --procs, or by an older vramz, has none or no agent rows).  A
 * file that exists but cannot be read is said on stderr, one line, and
 * left out.  The driver's events between since_ms and until_ms are
 * counted as they pass (agentrecs_driver).  NULL only when out of memory. */
struct agentrecs *agentrecs_open(char *const *paths, unsigned n, int64_t since_ms,
				 int64_t until_ms);
/* Hands d every record not handed yet whose time is at most until_ms.
 * 0 or VRAMZ_ENOMEM. */
int agentrecs_note(struct agentrecs *a, vramz_diag *d, int64_t until_ms);
/* The driver's events (Xid, ECC) of the window, summed over the files
 * by (GPU, event, code), each row counting its `count`: reads the files
 * to their end first (no record is handed to an engine after).  Up to
 * max sums into out; how many there are. */
struct agentrow_driver;
unsigned agentrecs_driver(struct agentrecs *a, struct agentrow_driver *out, unsigned max);
void agentrecs_close(struct agentrecs *a);

#endif
