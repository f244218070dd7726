/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - vramz's CSV logs: reading them back as the same snapshots the
 * live sampler produces, so `analyze`, `replay` and `top --replay` share
 * one path with the live views.
 *
 * A log is FILE (one row per GPU per tick; columns documented in
 * docs/csv.md) and, when recorded with --procs, FILE's process sibling
 * (see docs/csv.md for its name).  The reader streams: memory does not
 * grow with the file.
 */
#ifndef VRAMZ_LOG_H
#define VRAMZ_LOG_H

#include "vramz/vramz.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vramz_log_reader vramz_log_reader;

/* Opens path (and its process sibling when present).  On failure *out may
 * be set so vramz_log_error() can explain; close it either way.  The
 * snapshots come at abi's record sizes (vramz.h; NULL: the library's).
 * A path that is not a regular file (a FIFO, device, socket, directory)
 * is refused at once with VRAMZ_EUNSUPPORTED, never waited on; "-" reads
 * standard input, a pipe included. */
VRAMZ_EXPORT int vramz_log_open_abi(vramz_log_reader **out, const char *path,
				    const vramz_abi *abi);
#define vramz_log_open(out, path) vramz_log_open_abi((out), (path), vramz_abi_current())

/* The next tick.  Returns 1 with *snap set (valid until the next call), 0 at
 * the end, or a negative code with vramz_log_error() as "FILE:LINE: reason".
 * A truncated last line (a crash mid-write) is the end, not an error. */
VRAMZ_EXPORT int vramz_log_next(vramz_log_reader *r, const vramz_snapshot **snap);

VRAMZ_EXPORT const char *vramz_log_error(const vramz_log_reader *r);

/* The line of FILE holding the first row of the tick vramz_log_next last
 * returned (1 is the header); 0 before the first.  For notes such as
 * "FILE:LINE: the clock steps back 1h". */
VRAMZ_EXPORT unsigned long vramz_log_tick_line(const vramz_log_reader *r);

/* GPUs seen so far (identity from the log's columns), by the log's index. */
VRAMZ_EXPORT unsigned vramz_log_gpu_count(const vramz_log_reader *r);
VRAMZ_EXPORT const vramz_gpu_info *vramz_log_gpu(const vramz_log_reader *r,
						  unsigned index);

VRAMZ_EXPORT void vramz_log_close(vramz_log_reader *r);

#ifdef __cplusplus
}
#endif
#endif
