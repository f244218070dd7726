/* SPDX-License-Identifier: Apache-2.0 */
/* logfile.h - the inside of vramz's CSV logs, shared by the row formatter
 * (logfmt.c), the reader (logread.c), the replay backend (replay.c) and
 * the tool's file writer (src/format/logwrite.h: the append check and
 * rotation).  The public face is include/vramz/log.h; the format is
 * docs/csv.md.
 *
 * A log is two plain tables: FILE, one row per GPU per tick, and its
 * process sibling (log_sibling_path), one row per process per GPU per
 * tick.  Columns are found by header name when reading, so the order and
 * set of columns may grow without breaking old readers.
 */
#ifndef VRAMZ_LOGFILE_H
#define VRAMZ_LOGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "procfields.h"
#include "vramz/vramz.h"

/* ---- a growable byte buffer ---- */
struct logbuf {
	char *p;
	size_t len, cap;
};
/* Makes room for more bytes; VRAMZ_ENOMEM on failure. */
int logbuf_reserve(struct logbuf *b, size_t more);
void logbuf_free(struct logbuf *b);

/* ---- names ---- */
/* "gpu.csv" -> "gpu.procs.csv"; "gpu" -> "gpu.procs".  VRAMZ_ERANGE when
 * out is too small. */
int log_sibling_path(const char *path, char *out, size_t outlen);
/* The driver events' file beside a log: "gpu.csv" -> "gpu.events.csv"
 * (docs/csv.md, "Events file"; written by src/evwatch.c). */
int log_events_path(const char *path, char *out, size_t outlen);
/* The n-th rotated file: "gpu.csv" -> "gpu.1.csv"; "gpu" -> "gpu.1".  Its
 * process sibling is log_sibling_path of that name ("gpu.1.procs.csv"), so
 * a rotated pair reads like any other log. */
int log_rotated_path(const char *path, unsigned n, char *out, size_t outlen);

/* ---- the events file (docs/csv.md, "Events file") ---- */
/* Its header: the driver's events (evwatch.c) fill the first six
 * columns and `count`, a PyTorch agent's records (lib/log/agentrow.c)
 * all.  `count` (last, added in 0.3): how many events the row stands for,
 * repeats of one (GPU, event, code) merged per interval; a file without
 * the column (older vramz) is read as 1 a row. */
#define LOG_EVENT_COLUMNS                                                               \
	"time,gpu,uuid,event,xid,meaning,pid,start_time_ticks,uid,how,status,exception,"   \
	"oom,site,requested_bytes,limit_bytes,free_bytes,allocated_bytes,reserved_bytes,"  \
	"ooms,holder1_bytes,holder1_site,holder2_bytes,holder2_site,holder3_bytes,"        \
	"holder3_site,count"
/* The empty cells between a driver event's `meaning` and its `count`:
 * one per column between them (a test counts them against the header). */
#define LOG_EVENT_DRIVER_TAIL ",,,,,,,,,,,,,,,,,,,,,"

/* ---- opening ---- */
/* Opens PATH to read a log: a descriptor, or a negative VRAMZ_E* with one
 * line in err.  Never blocks: opened O_NONBLOCK, then a FIFO, device,
 * socket or directory is refused at once (VRAMZ_EUNSUPPORTED, saying what
 * it is; the reader takes a pipe only as standard input, '-'); a regular
 * file's descriptor is then made blocking again. */
int log_open_file(const char *path, char *err, size_t errlen);

/* ---- time ---- */
#define LOG_TIME_LEN 24 /* "2026-11-30T01:32:33.123Z" */
/* Writes unix_ms as ISO 8601 UTC with milliseconds; returns LOG_TIME_LEN.
 * out needs LOG_TIME_LEN + 1 bytes. */
size_t log_fmt_time(char *out, int64_t unix_ms);
/* Parses "YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z" (a space for T allowed); 0 or
 * VRAMZ_EPARSE. */
int log_parse_time(const char *s, size_t n, int64_t *unix_ms);

/* ---- columns and rows ---- */
/* Identity columns of the GPU file, before every gpu_fields[] column. */
#define LOG_GPU_ID_COLUMNS "time,gpu,uuid,name,pci_bus_id,lost,proc_count"

/* The process file's columns: the process field table (lib/procfields.c). */
#define log_pcol proc_field
#define log_proc_columns proc_fields
#define log_proc_column_count proc_field_count

/* Appends the header line (with its newline) of each file. */
int log_gpu_header(struct logbuf *b);
int log_proc_header(struct logbuf *b);

/* Identity of a GPU by backend index, for the identity columns. */
typedef const vramz_gpu_info *(*log_info_fn)(void *arg, unsigned index);

/* Appends one tick: a row per GPU of snap to gpu and, when procs is not
 * NULL, a row per process to procs (proc_count is then filled in the GPU
 * rows of GPUs whose process list was read). */
int log_format_tick(struct logbuf *gpu, struct logbuf *procs,
		    const vramz_snapshot *snap, log_info_fn info, void *arg);

/* Appends the n bytes of s as they are (no quoting). */
int log_put_raw(struct logbuf *b, const char *s, size_t n);
/* Appends s as one CSV cell: quoted when it holds a comma, quote or
 * leading/trailing space (RFC 4180), line breaks replaced by spaces so a
 * row is always one line. */
int log_put_str(struct logbuf *b, const char *s);

#endif
