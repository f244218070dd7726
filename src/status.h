/* SPDX-License-Identifier: Apache-2.0 */
/* status.h - the status views, reused by replay and watch-style commands. */
#ifndef VRAMZ_STATUS_H
#define VRAMZ_STATUS_H

#include <stdio.h>

#include "vramz/vramz.h"

/* The GPU table only. */
void status_print_gpus(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap);
/* Header line, GPU table and (procs) the process table. */
void status_print(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, int procs);
int status_lost_count(const vramz_snapshot *snap);
/* The HEALTH column's words for g's VRAM into buf ("REMAP FAILED",
 * "ECC 12", ...; "" when healthy): 1 when unhealthy. */
int status_health(char *buf, size_t len, const vramz_gpu_sample *g);
/* EXIT_FAIL with one line on stderr when a selected GPU is lost, else EXIT_OK:
 * what a view of a lost GPU's memory or processes cannot show is a failure. */
int status_exit_code(const vramz_snapshot *snap);

#endif
