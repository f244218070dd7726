/* SPDX-License-Identifier: Apache-2.0 */
/* smi.h - nvidia-smi's query interface, byte for byte: `status
 * --query-gpu=NAMES` and `ps --query-compute-apps=NAMES` with
 * --format=csv[,noheader][,nounits] print what nvidia-smi 580 prints for
 * the same names (see smi.c and docs/smi.md). */
#ifndef VRAMZ_SMI_H
#define VRAMZ_SMI_H

#include <stdio.h>

#include "vramz/vramz.h"

#define SMI_MAX_COLS 64

/* Which query: one row per GPU (--query-gpu) or per process and GPU
 * (--query-compute-apps). */
enum smi_rows { SMI_GPUS, SMI_APPS };

struct smi_field;

struct smi_query {
	enum smi_rows rows;
	const struct smi_field *col[SMI_MAX_COLS];
	unsigned n;
	int no_header, no_units;
	unsigned sample_flags; /* VRAMZ_SAMPLE_* the columns need */
	int details;           /* a column needs vramz_gpu_details() */
};

/* Parses the names (nvidia-smi's or their aliases) and the --format value
 * (NULL: csv, as nvidia-smi without --format).  An unknown name, a name
 * vramz does not read, or a bad format: one line naming it, EXIT_USAGE. */
int smi_parse(const char *cmd, enum smi_rows rows, const char *names, const char *format,
	      struct smi_query *q);
/* Reads what the columns need beyond a sample (vramz_gpu_details of each
 * selected GPU), once. */
void smi_prepare(vramz_ctx *ctx, const vramz_snapshot *snap, const struct smi_query *q);
void smi_header(FILE *f, const struct smi_query *q);
void smi_gpu_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const struct smi_query *q);
/* One row per process of snap->procs[idx[0..n)]. */
void smi_app_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const unsigned *idx,
		  unsigned n, const struct smi_query *q);
/* --help-query-gpu / --help-query-compute-apps: every name nvidia-smi
 * takes, its aliases, and whether vramz answers it. */
void smi_help(FILE *f, enum smi_rows rows);

#endif
