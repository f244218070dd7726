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

#endif
