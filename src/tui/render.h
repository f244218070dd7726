/* SPDX-License-Identifier: Apache-2.0 */
/* render.h - the parts of one frame of `vramz top`: render.c (the
 * frame's layout, header, findings, status, keys and dialogs) calls
 * gpus.c (the GPUs and their charts), table.c (the process table) and
 * procpage.c (the process page); they draw with draw.h's primitives and
 * never call back into render.c.  Internal to src/tui/. */
#ifndef VRAMZ_TUI_RENDER_H
#define VRAMZ_TUI_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/fb.h"

/* The table's least rows (its header and three) when the GPUs want room */
#define TABLE_MIN_ROWS 4

/* A framed box (dialogs). */
void draw_box(int y, int x, int h, int w, const char *title);

/* ---- the GPU area (gpus.c) ----------------------------------------------- */

/* How the GPUs take the rows they are given: a block per GPU (its
 * sensors, memory bar and charts), bands of one or two side by side; or
 * one line per GPU, then a chart of all of them when rows are left. */
struct gpus_plan {
	int compact;                  /* one line per GPU */
	int cols;                     /* blocks: side by side */
	int bands;                    /* blocks: rows of blocks shown */
	int band_rows, band_extra;    /* each band's rows; the first band_extra
					 bands one more */
	int lines;                    /* compact: its legend and GPU lines */
	int chart_rows;               /* compact: the chart of all; 0 none */
	int rows;                     /* the area's rows */
};

/* Plans the area in avail rows, leaving the process table what it needs
 * (table_need rows), or a third of avail when it needs more. */
void gpus_plan(const struct app *a, int avail, int table_need, struct gpus_plan *p);
void gpus_draw(const struct app *a, int y, const struct gpus_plan *p);
/* The time from one history point to the next of g, rounded (0 unknown);
 * fallback_ms (the interval asked for, live) until a few points came. */
int64_t gpus_step_ms(const struct model_gpu *g, int64_t fallback_ms);

/* ---- the process table (table.c) ----------------------------------------- */

/* Rows the table would fill: its header and a row a process (or the
 * line saying there is none). */
int table_need(const struct app *a);
void table_draw(struct app *a, int y, int rows);
/* Whether column c is shown at this width (the columns dialog). */
int table_shown(const struct app *a, enum model_col c);

/* ---- the process page (procpage.c) ------------------------------------------- */

void page_draw(struct app *a, int y, int bottom);

#endif
