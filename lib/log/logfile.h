/* logfile.h - the inside of vramz's CSV logs, shared by the row formatter
 * (logfmt.c), the file writer with its append check and rotation
 * (logwrite.c), the reader (logread.c), the replay backend (replay.c) and
 * `vramz log`.  The public face is include/vramz/log.h; the format is
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
/* The n-th rotated file: "gpu.csv" -> "gpu.1.csv"; "gpu" -> "gpu.1".  Its
 * process sibling is log_sibling_path of that name ("gpu.1.procs.csv"), so
 * a rotated pair reads like any other log. */
int log_rotated_path(const char *path, unsigned n, char *out, size_t outlen);

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

/* Appends s as one CSV cell: quoted when it holds a comma, quote or
 * leading/trailing space (RFC 4180), line breaks replaced by spaces so a
 * row is always one line. */
int log_put_str(struct logbuf *b, const char *s);

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
int log_rotation_step(const char *base, unsigned keep, unsigned top, int procs, unsigned step);
/* Puts back a process sibling that a kill mid-rotation left one level
 * behind its GPU file (levels 0 .. keep); the number moved or -errno. */
int log_rotation_repair(const char *base, unsigned keep);

/* 0 when path can have a process sibling (log_sibling_path): a regular
 * file or none yet, and not a link into /proc such as /dev/stdout;
 * VRAMZ_EINVAL with the reason in err otherwise. */
int log_sibling_place(const char *path, char *err, size_t errlen);

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

#endif
