/* SPDX-License-Identifier: Apache-2.0 */
/* zoom.h - the one rule for the range a memory chart shows (issue 40):
 * the used range with a margin, not 0 to the GPU's total.  A 14 GiB job
 * leaking 1 GiB/min on a 140 GiB GPU is a flat strip at the bottom of a
 * chart drawn to the total; drawn to the range its memory moves in, the
 * slope is the chart.  `vramz top` (src/tui/gpus.c) and the report
 * (src/report/svg.c) call it; the live page's script restates it
 * (src/serve/page.js, zoomRange(), checked against this by t4040's slope
 * test and the unit test's table). */
#ifndef VRAMZ_FORMAT_ZOOM_H
#define VRAMZ_FORMAT_ZOOM_H

/* The range [*lo, *hi] to draw values from min to max of a GPU with
 * total (all in one unit, total > 0; total <= 0: unknown).  At least
 * ZOOM_MIN_SPAN of the total or ZOOM_MIN_UNITS wide, so a flat line is
 * not noise blown up; a tenth of the data's span as margin on each side;
 * ends rounded to a round step (1, 2, 2.5 or 5 times a power of ten);
 * never below 0, and the total itself as the top once the range comes
 * within a tenth of the total of it (the total is then a line on the
 * chart).  Returns 1 when the top is the total. */
#define ZOOM_MIN_SPAN 0.01
int zoom_range(double min, double max, double total, double min_units, double *lo, double *hi);

/* Rounds raw up to 1, 2, 2.5 or 5 times a power of ten (1 for raw <= 0). */
double zoom_nice_up(double raw);

#endif
