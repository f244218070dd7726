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
 * left out.  NULL only when out of memory. */
struct agentrecs *agentrecs_open(char *const *paths, unsigned n);
/* Hands d every record not handed yet whose time is at most until_ms.
 * 0 or VRAMZ_ENOMEM. */
int agentrecs_note(struct agentrecs *a, vramz_diag *d, int64_t until_ms);
void agentrecs_close(struct agentrecs *a);

#endif
