/* SPDX-License-Identifier: Apache-2.0 */
/* chart.h - the dashboard's charts: a plot with a y axis labelled in GiB
 * or %, a ceiling line (a GPU's total memory, 100 % of utilization), a
 * time axis (-5m ... now); zoomed, a memory chart's y axis runs over the
 * used range and its foot is labelled with the value there, not 0, series drawn as a filled area (memory used
 * over reserved) or as lines (one per GPU), and marks on the time axis
 * where findings began.  Drawn in braille dots (2 x 4 a cell), block
 * elements or ASCII, as the terminal allows (term_glyphs).
 *
 * One chart at a time: chart_begin lays it out, the series and marks are
 * added, chart_end writes its rows into the frame buffer. */
#ifndef VRAMZ_TUI_CHART_H
#define VRAMZ_TUI_CHART_H

#include <stdint.h>

/* The y axis's unit: GiB, %, °C (drawn "C"), W, MHz */
enum chart_unit { CHART_GIB, CHART_PCT, CHART_C, CHART_W, CHART_MHZ };

struct chart {
	/* set by the caller */
	int y, x, w, h;            /* the whole chart: h rows (the ceiling row,
				      the plot, the time axis row), w columns */
	enum chart_unit unit;
	double top;                /* the ceiling's value, in the unit (> bottom) */
	double bottom;             /* the value at the plot's foot (0: the
				      classic chart; above 0: zoomed to the
				      used range, format/zoom.h) */
	int open_top;              /* the top row is the range's end, not a
				      ceiling the data cannot pass (the
				      total above it): drawn dashed, dim */
	int64_t step_ms;           /* time from one point to the next; 0 unknown */
	int ceiling_role;          /* the ceiling line's role */
	/* set by chart_begin */
	int lw;                    /* label columns left of the axis */
	int px, pw, py, ph;        /* the plot's cells */
	int ppc;                   /* points a cell column: 2 in braille, else 1 */
	int npts;                  /* points shown: pw * ppc */
	int glyphs;                /* enum term_glyphs */
};

/* The smallest chart: 3 rows of plot under its ceiling, over its axis. */
#define CHART_MIN_ROWS 5
#define CHART_MIN_COLS 24

/* Lays the chart out and clears its grid; 0 when it is too small. */
int chart_begin(struct chart *c);
/* A filled area: the points below lo[i] in role_lo, up to hi[i] in
 * role_hi.  Point 0 is the newest (at the right); a negative hi is
 * unknown (nothing drawn).  Each array holds c->npts values in the
 * chart's unit. */
void chart_area(struct chart *c, const double *lo, const double *hi, int role_lo, int role_hi);
/* A line through v[0..npts) in role; in ASCII drawn with the character
 * mark when it is not 0 (a GPU's index), else with _ - '. */
void chart_line(struct chart *c, const double *v, int role, char mark);
/* A mark on the time axis ago_ms before the newest point. */
void chart_mark(struct chart *c, int64_t ago_ms, int role);
/* An item of the legend at the right end of the ceiling row: a sample
 * of the series' glyph in role, then text.  At most 10. */
void chart_legend(struct chart *c, int role, const char *text);
/* Writes the chart into the frame buffer. */
void chart_end(struct chart *c);

/* The time between points of a series whose times are t[0..n) (newest
 * first): the median of the gaps, to the 10 ms (a daemon's ticks come a
 * few ms early or late, a first tick may come early, and the time axis
 * should move with neither); with fewer than 4 gaps fallback_ms (the
 * interval asked for) when it is not 0.  0: unknown. */
int64_t chart_step_ms(const int64_t *t, unsigned n, int64_t fallback_ms);

/* A ceiling for values up to max: max rounded up to a step of the axis
 * (at least min). */
double chart_nice_top(double max, double min);

#endif
