/* SPDX-License-Identifier: Apache-2.0 */
/* logset.h - several CSV logs read as one: files given one by one, or a
 * rotated set (FILE.N .. FILE.1, FILE, the names lib/log's rotation
 * gives), in time order, cut to a --since / --until window.  `analyze` and
 * `report` read logs through it; each tick is the library's own
 * vramz_log_next() snapshot, the reader the replay backend uses.
 * docs/report.md ("Which ticks") documents the rules.
 */
#ifndef VRAMZ_LOGSET_H
#define VRAMZ_LOGSET_H

#include <stdint.h>

#include "vramz/diagnose.h"
#include "vramz/vramz.h"

struct logset;

struct logset_window {
	const char *since, *until; /* as the user typed them, or NULL */
};

/* Parses a --since / --until value: ISO 8601 UTC ("2026-11-30T02:00:00Z",
 * seconds and fraction optional, a space for T allowed), or a time
 * relative to the set: "-2h" counts back from its last tick, "+30m"
 * forward from its first (units ms, s, m, h, d; "1h30m" allowed).
 * Returns 0 and fills *abs_ms, or *rel_ms with *rel = -1 / +1; -1 on a
 * bad value. */
int logset_parse_time(const char *s, int *rel, int64_t *abs_ms, int64_t *rel_ms);

/* Opens paths[0..n-1], each expanded to its rotated set when FILE.1
 * exists beside it, ordered by first tick.  On failure returns a negative
 * code and err says which file and why ("FILE:LINE: reason"). */
int logset_open(struct logset **out, char *const *paths, unsigned n,
		const struct logset_window *win, char *err, size_t errlen);

/* The next tick inside the window: 1 with *snap set (valid until the next
 * call), 0 at the end, negative on error with logset_error() as
 * "FILE:LINE: reason".  A tick older than the one before it (files that
 * overlap) is skipped and counted. */
int logset_next(struct logset *s, const vramz_snapshot **snap);
const char *logset_error(const struct logset *s);

/* The window's bounds as resolved against the files (first and last tick
 * time in the window, from each file's first and last line: known before
 * reading, so a one-pass reader can lay out a time axis). */
void logset_span(const struct logset *s, int64_t *first_ms, int64_t *last_ms);

/* GPU identity from the file being read (every file of a set records
 * it), by the log's index; NULL for an index not seen. */
unsigned logset_gpu_count(const struct logset *s);
const vramz_gpu_info *logset_gpu(const struct logset *s, unsigned index);

unsigned logset_file_count(const struct logset *s);
const char *logset_file(const struct logset *s, unsigned i);
/* Ticks skipped because they went back in time. */
unsigned long logset_skipped(const struct logset *s);

/* analyze: a tick older than the one before it *in the same file* is a
 * clock step (the recording's clock was set back), not an overlap: hand
 * it out, for the diagnosis engine's time rule to absorb (docs/
 * diagnoses.md, "Time").  Ticks of a later file that go back are still
 * skipped.  Without this call every tick that goes back is skipped. */
void logset_keep_clock_steps(struct logset *s);
/* The file and line (of its GPU rows) of the tick logset_next last
 * returned; NULL / 0 before the first. */
const char *logset_tick_file(const struct logset *s);
unsigned long logset_tick_line(const struct logset *s);

/* Feeds snap (the tick logset_next just returned) to the diagnosis
 * engine d, after what it needs first: the identity of GPUs new in the
 * set, and the PyTorch agents' records (analyze/agentrecs.h) up to the
 * tick's time.  vramz_diag_feed's return. */
int logset_feed(struct logset *s, vramz_diag *d, const vramz_snapshot *snap);

/* The driver's events (Xid, ECC) in the events files beside the set's
 * files, within the window, summed by (GPU, event, code): every event,
 * merged rows counting their `count` (agentrecs_driver).  Call after the
 * last tick. */
struct agentrow_driver;
unsigned logset_driver_events(struct logset *s, struct agentrow_driver *out, unsigned max);

void logset_close(struct logset *s);

#endif
