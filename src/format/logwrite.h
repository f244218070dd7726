/* SPDX-License-Identifier: Apache-2.0 */
/* logwrite.h - the tool's CSV log file writer (logwrite.c): the append
 * check, whole-line writes, rotation and fsync, for `vramz log` and
 * `vramz run --log`.  The format it writes (columns, rows, times) is the
 * library's (lib/internal/logfile.h), beside the public reader that parses it;
 * the file handling is the tool's (docs/architecture.md says why).
 */
#ifndef VRAMZ_LOGWRITE_H
#define VRAMZ_LOGWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "logfile.h"

/* ---- the file writer ---- */
struct log_writer;

struct log_writer_opts {
	const char *path;       /* "-": stdout, no rotation, no sibling */
	int procs;              /* also write the process sibling */
	uint64_t rotate_bytes;  /* 0: never rotate */
	unsigned keep;          /* rotated files kept (FILE.1 .. FILE.keep),
				   at most LOG_KEEP_MAX */
};

/* The most rotated files --keep may ask for: each rotation renames every
 * one of them, so the bound is what keeps a rotation short. */
#define LOG_KEEP_MAX 1000 /* the -h text of `log --keep` spells it */

/* Rotating the set at base (keep rotated files) fills its lowest hole:
 * the first level 1..keep without a GPU file (a kill mid-rotation can
 * leave one), or keep + 1 when there is none, and then level keep is
 * deleted.  log_rotation_step does step `step` (from 0) of it: 0 when
 * done (a missing file is not an error), 1 past the last step, or -errno.
 * rotate() runs them all; tests stop between any two to make the states
 * a kill can leave. */
unsigned log_rotation_top(const char *base, unsigned keep);
int log_rotation_step(const char *base, unsigned keep, unsigned top, int procs, unsigned step,
		      char *note, size_t notelen);
/* Puts back a process sibling that a kill mid-rotation left one level
 * behind its GPU file, and sets aside (as FILE.unpaired) a process file
 * whose GPU file is gone or whose rows are of other times than its GPU
 * file's (two kills: one in a delete, one in a move), levels 0 .. keep;
 * the number moved or -errno.  What it did, one line each, is appended
 * to note (notelen bytes, NULL for none).  A rotation step sets aside a
 * process file in its way the same way, never overwriting it. */
int log_rotation_repair(const char *base, unsigned keep, char *note, size_t notelen);

/* 0 when path can have a process sibling (log_sibling_path): a regular
 * file or none yet, and not a link into /proc such as /dev/stdout;
 * VRAMZ_EINVAL with the reason in err otherwise. */
int log_sibling_place(const char *path, char *err, size_t errlen);

/* Whether the link rule (safefile.h) lets the log, its process sibling
 * (o->procs) and its events file (events) be written, judged before any
 * is opened, so a refused name leaves nothing written: 0, or VRAMZ_EPERM
 * with err "refusing to write PATH: WHY".  The opens judge again. */
int log_writer_check(const struct log_writer_opts *o, int events, char *err, size_t errlen);

/* Opens (creating, or appending when the existing header matches) the log
 * and its sibling.  err gets a one-line reason naming the file. */
int log_writer_open(struct log_writer **out, const struct log_writer_opts *o,
		    char *err, size_t errlen);
/* Writes one tick: the process rows first, then the GPU rows, each with a
 * single write(2) of whole lines, rotating first when either file would
 * pass rotate_bytes.  A GPU tick in the file thus always has its process
 * rows before it, and a kill leaves no torn line. */
int log_writer_tick(struct log_writer *w, const struct logbuf *gpu,
		    const struct logbuf *procs, char *err, size_t errlen);
/* fsync of both files. */
int log_writer_sync(struct log_writer *w, char *err, size_t errlen);
/* Syncs and closes; the return says whether the last sync worked. */
int log_writer_close(struct log_writer *w, char *err, size_t errlen);
/* Bytes written to the current GPU file (header included), rotations so far. */
uint64_t log_writer_size(const struct log_writer *w);
unsigned log_writer_rotations(const struct log_writer *w);
/* What the open or a rotation put back or set aside since last asked,
 * one line each, into buf; 0 when nothing. */
int log_writer_take_note(struct log_writer *w, char *buf, size_t len);

#endif
