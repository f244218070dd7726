/* SPDX-License-Identifier: Apache-2.0 */
/* script.h - script mode: the `status --csv` and `ps --csv` columns (with
 * nvidia-smi's names for them) and the -l/--loop repeat of status and ps
 * (see script.c). */
#ifndef VRAMZ_SCRIPT_H
#define VRAMZ_SCRIPT_H

#include <stdint.h>
#include <stdio.h>

#include "vramz/vramz.h"

#include "format/smi.h"

#define SCRIPT_MAX_COLS 64

/* Which rows a CSV has, and so which columns it takes: one row per GPU
 * (the CSV log's columns, lib/fields.c) or per process and GPU (the
 * process log's, lib/procfields.c). */
enum script_rows { SCRIPT_GPUS, SCRIPT_PROCS };

struct script_col {
	int field;          /* >= 0: its row in the table; < 0: a GPU identity column */
};

struct script_cols {
	enum script_rows rows;
	struct script_col col[SCRIPT_MAX_COLS];
	unsigned n;
	int units;          /* --units: values for people with their unit, and
			     * headers that say it ("mem_used [MiB]") */
	int smi;            /* --query-gpu / --query-compute-apps: nvidia-smi's
			     * names and text instead (smi.h) */
	struct smi_query q;
};

/* The script-mode options status and ps share (their tables point here). */
struct script_opts {
	int csv, no_header, units;
	const char *fields;  /* --fields: vramz's column names */
	const char *query;   /* --query-gpu, --query-compute-apps: nvidia-smi's */
	int help_query;      /* --help-query-gpu, --help-query-compute-apps */
	const char *format;  /* nvidia-smi's --format=csv[,noheader][,nounits] */
};
/* Checks o for cmd (`--fields help` is the columns' help) and, in script
 * mode (--csv, or --format, or nvidia-smi's --query-*), parses the
 * columns into c.  -1: go on, o->csv
 * saying whether in script mode; else the exit code: EXIT_OK after the
 * help, EXIT_USAGE after one line. */
int script_setup(const char *cmd, enum script_rows rows, struct script_opts *o,
		 struct script_cols *c);
/* Parses a comma-separated list of vramz's column names (NULL: the
 * default set) for cmd's rows.  Prints one line (the nearest
 * name, when a typo is near one) and returns EXIT_USAGE on an unknown
 * name. */
int script_parse_fields(const char *cmd, enum script_rows rows, const char *list,
			struct script_cols *c);
/* `--fields help`: every name with a line about it. */
void script_fields_help(FILE *f, enum script_rows rows);
/* The header (nvidia-smi's with --query-*), unless --no-header. */
void script_header(FILE *f, const struct script_cols *c);
/* One row per GPU of snap (SCRIPT_GPUS). */
void script_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const struct script_cols *c);
/* One row per process of snap->procs[idx[0..n)] (SCRIPT_PROCS). */
void script_proc_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const unsigned *idx,
		      unsigned n, const struct script_cols *c);

/* Shows one sample; tick counts from 0.  Non-zero stops the loop. */
typedef int script_show_fn(vramz_ctx *ctx, const vramz_snapshot *snap, unsigned tick, void *arg);
/* Opens a ticker (the global options: -g, --replay), samples every
 * interval_ms and shows each sample until SIGINT or SIGTERM (exit 0).
 * Returns the exit code. */
int script_loop(const char *cmd, unsigned flags, int64_t interval_ms,
		script_show_fn show, void *arg);

#endif
