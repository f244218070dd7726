/* SPDX-License-Identifier: Apache-2.0 */
/* proctab.h - the process table shared by `status` and `ps`: one row per
 * (GPU, process), sorted and filtered, with the columns a person scans. */
#ifndef VRAMZ_PROCTAB_H
#define VRAMZ_PROCTAB_H

#include <stdio.h>

#include "vramz/vramz.h"

enum proctab_sort { SORT_VRAM, SORT_PID, SORT_GPU, SORT_USER, SORT_SM, SORT_CMD };

struct proctab_opts {
	enum proctab_sort sort;
	int reverse;
	const char *user;       /* only this user (name or uid), or NULL */
	uint64_t min_bytes;     /* only processes holding at least this */
	int wide;               /* do not truncate the command */
	int unattributed;       /* add a row per GPU for memory no process holds */
};

/* Parses a --sort value; -1 on an unknown key. */
int proctab_sort_parse(const char *s, enum proctab_sort *out);
/* Fills idx[] with the indices of snap->procs that pass the filters, in
 * order; returns the count (idx must hold snap->proc_count entries). */
unsigned proctab_select(const vramz_snapshot *snap, const struct proctab_opts *o,
			unsigned *idx);
/* Prints the table; returns the number of process rows. */
unsigned proctab_print(FILE *f, const vramz_snapshot *snap, const struct proctab_opts *o);

#endif
