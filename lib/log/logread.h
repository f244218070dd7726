/* SPDX-License-Identifier: Apache-2.0 */
/* logread.h - inside the log reader: its state, shared by logread.c (the
 * ticks: opening a log and its process sibling, pairing the two, the
 * public API) and logrows.c (the files row by row: lines, the header's
 * column mapping, each row's parse, fast and careful).  Not installed. */
#ifndef VRAMZ_LOG_LOGREAD_H
#define VRAMZ_LOG_LOGREAD_H

#include <stddef.h>
#include <stdint.h>

#include "abi.h"
#include "log/csvrow.h"
#include "vramz/log.h"

#define BUF_BYTES (1u << 20)      /* per file; also the longest line */
#define MAX_GPU_INDEX 1023u
#define MAX_TICK_PROCS (1u << 20) /* a bound a fuzzed file cannot pass */

struct csv_in {
	int fd;
	char *path;
	char *buf;
	size_t pos, end;
	int eof, torn;
	unsigned long line;
	int ncols;
	struct cell *cells;        /* [ncols + 1] */
	unsigned char *act;        /* per column: what it fills */
	struct row_col *prog;      /* the same for row_fast (csvrow.h) */
	int id_col[3];             /* the uuid, name and pci_bus_id columns, or -1 */
	struct row_time tc;        /* the previous row's time */
};

enum { GA_IGNORE, GA_TIME, GA_GPU, GA_UUID, GA_NAME, GA_BUS, GA_LOST,
       GA_PROC_COUNT, GA_FIELD0 };

struct vramz_log_reader {
	struct csv_in g, p;
	int have_procs;
	vramz_gpu_sample *gpus;    /* tick rows; one past the tick may hold
				      the first row of the next (carry) */
	unsigned gcap;
	int carry;
	int64_t carry_time;
	unsigned long carry_line, tick_line; /* GPU-file line of the carried row, of the tick's first row */
	int64_t prev_time;         /* the previous tick's time (have_prev) */
	int have_prev;
	vramz_proc_sample *praw;   /* the tick's rows as read, then one read ahead */
	vramz_proc_sample *procs;  /* the rows by GPU, where praw is not in that order */
	const vramz_proc_sample *tick_procs; /* praw or procs */
	unsigned pcap, procs_cap;
	unsigned *want;            /* per tick row: processes the GPU file lists */
	unsigned wcap;
	int prev_listed;           /* the previous tick listed its processes */
	unsigned pahead;           /* where in praw the row read ahead is */
	int64_t pnext_time;
	int have_pnext, procs_done;
	vramz_gpu_info *info;      /* [ninfo], by the log's GPU index */
	unsigned char *known;
	unsigned *stamp, *slot;    /* which tick a GPU was last in, and where */
	unsigned ninfo, icap, tick;
	int done, failed;          /* failed: the error, repeated once hit */
	int deferred;              /* an error found reading ahead, for the next call */
	vramz_snapshot snap;
	struct abi_state abi;      /* the caller's record sizes (lib/abi.h) */
	char err[512];
};


/* "FILE:LINE: " and the message into r->err; VRAMZ_EPARSE */
int lr_fail(vramz_log_reader *r, const struct csv_in *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Opens path (or takes fd, >= 0) and reads its header line into c. */
int lr_open_csv(vramz_log_reader *r, struct csv_in *c, const char *path, int fd);
/* Maps c's header to what each column fills (procs: the process sibling). */
int lr_map_columns(vramz_log_reader *r, struct csv_in *c, int procs);
/* The next row of the GPU file / the process sibling: 1, 0 at the end, or
 * an error (r->err says FILE:LINE and why). */
int lr_read_gpu_row(vramz_log_reader *r, vramz_gpu_sample *g, int64_t *t);
int lr_read_proc_row(vramz_log_reader *r, vramz_proc_sample *p, int64_t *t);
void lr_close_csv(struct csv_in *c);

#endif
