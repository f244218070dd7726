/* SPDX-License-Identifier: Apache-2.0 */
/* script.h - script mode: `status --csv` columns and the -l/--loop repeat
 * of status and ps (see script.c). */
#ifndef VRAMZ_SCRIPT_H
#define VRAMZ_SCRIPT_H

#include <stdint.h>
#include <stdio.h>

#include "vramz/vramz.h"

#define SCRIPT_MAX_COLS 64

struct script_cols {
	int col[SCRIPT_MAX_COLS]; /* >= 0: gpu_fields index; < 0: an identity column */
	unsigned n;
};

/* Parses a comma-separated list of column names (NULL: the default set).
 * Prints one line and returns EXIT_USAGE on an unknown name. */
int script_parse_fields(const char *list, struct script_cols *c);
/* `--fields help`: every name with a line about it. */
void script_fields_help(FILE *f);
void script_header(FILE *f, const struct script_cols *c);
/* One row per GPU of snap. */
void script_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap,
		 const struct script_cols *c, int units);

/* Shows one sample; tick counts from 0.  Non-zero stops the loop. */
typedef int script_show_fn(vramz_ctx *ctx, const vramz_snapshot *snap, unsigned tick, void *arg);
/* Opens a ticker (the global options: -g, --replay), samples every
 * interval_ms and shows each sample until SIGINT or SIGTERM (exit 0).
 * Returns the exit code. */
int script_loop(const char *cmd, unsigned flags, int64_t interval_ms,
		script_show_fn show, void *arg);

#endif
