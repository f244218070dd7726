/* SPDX-License-Identifier: Apache-2.0 */
/* procs.h - what `vramz analyze` tells about each process of a
 * log: its memory's first, peak and last figures and growth, and its
 * command line (analyze/procs.c). */
#ifndef VRAMZ_ANALYZE_PROCS_H
#define VRAMZ_ANALYZE_PROCS_H

#include <stdint.h>
#include <stdio.h>

#include "format/jsonw.h"
#include "hashtab.h"
#include "vramz/vramz.h"

struct aproc {
	unsigned gpu;
	uint32_t pid;
	uint64_t start_ticks;
	char cmd[VRAMZ_CMD_LEN];       /* command line, else comm; "" unknown */
	char user[VRAMZ_USER_LEN];
	int64_t first_ms, last_ms;     /* the log's times of its first and last sample */
	int64_t seen_ms;               /* time seen: forward steps only (a clock step back counts 0) */
	uint64_t first_bytes, peak_bytes, last_bytes;
	int have_bytes;
};

struct aprocs {
	struct aproc *p;
	unsigned n, cap;
	unsigned dropped;              /* processes beyond APROCS_MAX, not tracked */
	struct htab index;             /* p by (gpu, pid, start): lib/internal/hashtab.h */
};

#define APROCS_MAX 16384

void aprocs_free(struct aprocs *a);
/* Adds one tick's processes.  0, or -1 out of memory. */
int aprocs_add(struct aprocs *a, const vramz_snapshot *snap);
/* The process a finding names; NULL unknown. */
const struct aproc *aprocs_find(const struct aprocs *a, unsigned gpu, uint32_t pid,
				uint64_t start_ticks);
/* The "what grew" table, most growth first: at most max rows (0: all). */
void aprocs_print(const struct aprocs *a, FILE *o, unsigned max);
void aprocs_json(const struct aprocs *a, struct jsonw *w);
/* cmd with control characters (C0, DEL, C1) shown as '?', into buf */
const char *aprocs_safe(char *buf, size_t len, const char *s);

#endif
