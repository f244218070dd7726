/* SPDX-License-Identifier: Apache-2.0 */
/* chart.c - the charts of `vramz top` (chart.h): a labelled plot that
 * fills whatever rows the layout gives it.
 *
 *   140.4 GiB ┤──────────────────────────── ⣿ used ⣿ reserved ─ total
 *     120 GiB ┤
 *     ...     │            ⣀⣀⣀⣤⣤⣤⣤⣶⣶⣶⣶⣿⣿⣿⣿⣿⣿
 *       0 GiB ┤⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿⣿
 *             └──────-5m────────-4m────────▲──-2m────────-1m────────now
 *
 * The y axis has a label every few rows at round values (1, 2, 2.5 or 5
 * times a power of ten, in GiB or %), and the ceiling's own value on the
 * row above the plot; a row stands for an equal slice of the range, a
 * label sits on the row its value falls in.  The time axis is labelled at
 * round times back from the newest point (one point a tick: the layout
 * passes the time between ticks), "now" at the right.
 *
 * Series are drawn into a grid of cells first - braille dot bits, or the
 * glyph itself in blocks and ASCII - then written a row at a time, so a
 * row no series reached costs its label and nothing else.  Nothing here
 * formats with glibc's printf (fmt_snprintf): charts are drawn in the
 * frames of a dashboard that is meant to cost nothing.
 */
#include "tui/chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/fmt.h"
#include "format/zoom.h"
#include "tui/fb.h"
#include "tui/term.h"

#define MAX_LABELS 64
#define MAX_MARKS 16
#define MAX_LEGEND 10

/* The grid is all zeros between charts: chart_end clears what it wrote,
 * row by row, so a chart costs the cells its series reached, not its
 * area (a plot of a few columns of history on a wide screen). */
static uint32_t *grid;             /* ph * pw: braille bits, or glyphs */
static unsigned char *roles;       /* ph * pw */
static size_t grid_cap;
static int *row_lo, *row_hi;       /* each row's cells written: [lo, hi] */
static int rows_cap;
static int pending;                /* a chart wrote to the grid, not ended */
static struct {
	int row;                   /* plot row, -1 the ceiling row */
	char text[20];
} labels[MAX_LABELS];
static int nlabels;
static struct {
	int col, role;
} marks[MAX_MARKS];
static int nmarks;
static struct {
	int role;
	const char *text;
} legend[MAX_LEGEND];
static int nlegend;

/* Braille dots of a cell column: bit of the dot ry rows from the top. */
static const unsigned char dot_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
/* The n lowest dots of a column (n = 0..4) */
static const unsigned char low_dots[2][5] = {{0, 0x40, 0x44, 0x46, 0x47}, {0, 0x80, 0xA0, 0xB0, 0xB8}};
static const wchar_t eighths[] = L" ▁▂▃▄▅▆▇█";
static const char ascii_fill[] = " .._ooOO#";

/* Rounds raw down to 1, 2, 2.5 or 5 times a power of ten. */
static double nice_down(double raw)
{
	static const double m[] = {5, 2.5, 2, 1};
	double e = 1;
	if (!(raw > 0))
		return 1;
	while (e * 10 <= raw)
		e *= 10;
	while (e > raw)
		e /= 10;
	for (unsigned i = 0; i < sizeof m / sizeof m[0]; i++)
		if (m[i] * e <= raw * (1 + 1e-9))
			return m[i] * e;
	return e;
}

double chart_nice_top(double max, double min)
{
	if (max < min)
		max = min;
	double step = zoom_nice_up(max / 4);
	double top = step;
	while (top < max * (1 - 1e-9))
		top += step;
	return top;
}

int64_t chart_step_ms(const int64_t *t, unsigned n, int64_t fallback_ms)
{
	int64_t gap[32];
	unsigned k = 0;
	for (unsigned i = 0; i + 1 < n && k < 32; i++) {
		if (t[i] <= t[i + 1])
			continue; /* a clock step back: no gap to speak of */
		int64_t d = t[i] - t[i + 1];
		unsigned j = k++;
		for (; j > 0 && gap[j - 1] > d; j--)
			gap[j] = gap[j - 1];
		gap[j] = d;
	}
	if (k < 4 && fallback_ms > 0)
		return fallback_ms;
	if (!k)
		return 0;
	int64_t step = gap[k / 2];
	return step >= 10 ? (step + 5) / 10 * 10 : step;
}

/* "%.Nf GiB" with the fewest decimals that show step */
static void label_text(char *buf, size_t len, enum chart_unit u, double v, double step)
{
	if (u != CHART_GIB) { /* whole numbers and their unit */
		static const char *const unit[] = {"", "%", "C", "W", "MHz"};
		fmt_snprintf(buf, len, "%d%s", (int)(v + 0.5), unit[u]);
		return;
	}
	int d = step >= 1 && step == (double)(int64_t)step ? 0 : step * 10 == (double)(int64_t)(step * 10) ? 1 : 2;
	fmt_snprintf(buf, len, "%.*f GiB", d, v);
}

static int width_of(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void add_label(int row, const char *text)
{
	if (nlabels >= MAX_LABELS)
		return;
	labels[nlabels].row = row;
	fmt_snprintf(labels[nlabels].text, sizeof labels[0].text, "%s", text);
	nlabels++;
}

int chart_begin(struct chart *c)
{
	nlabels = nmarks = nlegend = 0;
	c->ph = c->h - 2;
	if (c->h < CHART_MIN_ROWS || c->w < CHART_MIN_COLS || !(c->top > c->bottom) || c->bottom < 0)
		return 0;
	c->glyphs = (int)term_glyphs();
	c->ppc = c->glyphs == GLYPHS_BRAILLE ? 2 : 1;
	/* the labels: the ceiling, then a round value every four rows or so,
	 * none within a row of the ceiling */
	char t[20];
	if (c->unit != CHART_GIB)
		label_text(t, sizeof t, c->unit, c->top, 1);
	else
		fmt_snprintf(t, sizeof t, "%.1f GiB", c->top);
	add_label(-1, t);
	int count = c->ph / 4 > 2 ? c->ph / 4 : 2;
	double range = c->top - c->bottom;
	double step = zoom_nice_up(range / count);
	if (step > range * (1 - 1.0 / c->ph)) /* a short chart: a lower step, one label more */
		step = nice_down(range / count);
	/* zoomed, the foot's own value first: the scale is said on the axis */
	double first = c->bottom > 0 ? c->bottom : 0;
	int last = -2;
	for (int k = 0; k < MAX_LABELS; k++) {
		double v = k ? (floor(first / step + 1e-9) + k) * step : first;
		if (v - c->bottom > range * (1 - 1.0 / c->ph) + 1e-9)
			break;
		int r = c->ph - 1 - (int)((v - c->bottom) / range * c->ph + 1e-9);
		r = r < 0 ? 0 : r;
		if (r == last)
			continue;
		label_text(t, sizeof t, c->unit, v, k || v == 0 ? step : v);
		add_label(r, t);
		last = r;
	}
	c->lw = 0;
	for (int i = 0; i < nlabels; i++)
		if (width_of(labels[i].text) > c->lw)
			c->lw = width_of(labels[i].text);
	c->lw++; /* a blank before the axis */
	c->px = c->x + c->lw + 1;
	c->pw = c->w - c->lw - 1;
	c->py = c->y + 1;
	c->npts = c->pw * c->ppc;
	if (c->pw < 8)
		return 0;
	size_t n = (size_t)c->ph * (size_t)c->pw;
	if (n > grid_cap || pending) {
		size_t cap = n > grid_cap ? n : grid_cap;
		uint32_t *g = realloc(grid, cap * sizeof *g);
		unsigned char *r = g ? realloc(roles, cap) : NULL;
		if (g)
			grid = g;
		if (!r)
			return 0;
		roles = r;
		grid_cap = cap;
		memset(grid, 0, cap * sizeof *grid);
		memset(roles, 0, cap);
		pending = 0;
	}
	if (c->ph > rows_cap) {
		int *lo = realloc(row_lo, (size_t)c->ph * sizeof *lo);
		int *hi = lo ? realloc(row_hi, (size_t)c->ph * sizeof *hi) : NULL;
		if (lo)
			row_lo = lo;
		if (!hi)
			return 0;
		row_hi = hi;
		rows_cap = c->ph;
	}
	for (int r = 0; r < c->ph; r++) {
		row_lo[r] = c->pw;
		row_hi[r] = -1;
	}
	return 1;
}

/* Cell (r, col) was written: the row's extent grows to hold it. */
static inline void touch(int r, int col)
{
	if (col < row_lo[r])
		row_lo[r] = col;
	if (col > row_hi[r])
		row_hi[r] = col;
}

/* Level of v in [0, top] out of n, rounded */
static int level_of(const struct chart *c, double v, int n)
{
	int l = (int)((v - c->bottom) / (c->top - c->bottom) * n + 0.5);
	return l < 0 ? 0 : l > n ? n : l;
}

void chart_area(struct chart *c, const double *lo, const double *hi, int role_lo, int role_hi)
{
	int braille = c->glyphs == GLYPHS_BRAILLE;
	int lpr = braille ? 4 : 8, levels = c->ph * lpr;
	for (int dc = 0; dc < c->npts; dc++) {
		int i = c->npts - 1 - dc;
		if (hi[i] < 0)
			continue;
		int h = level_of(c, hi[i], levels);
		int l = lo && lo[i] > c->bottom ? level_of(c, lo[i], levels) : 0;
		if (h == 0 && hi[i] > c->bottom)
			h = 1; /* something is there: show it */
		int col = dc / c->ppc, sub = dc % c->ppc;
		for (int r = c->ph - 1, base = 0; r >= 0 && base < h; r--, base += lpr) {
			int n = h - base > lpr ? lpr : h - base;
			size_t k = (size_t)r * (size_t)c->pw + (size_t)col;
			if (braille)
				grid[k] |= low_dots[sub][n];
			else
				grid[k] = c->glyphs == GLYPHS_BLOCKS ? (uint32_t)eighths[n]
								   : (uint32_t)(unsigned char)ascii_fill[n];
			/* the cell is the reserved part's while all it shows is */
			if (roles[k] != role_hi)
				roles[k] = (unsigned char)(base + n > l ? role_hi : role_lo);
			touch(r, col);
		}
	}
	pending = 1;
}

void chart_line(struct chart *c, const double *v, int role, char mark)
{
	int lpr = c->glyphs == GLYPHS_BRAILLE ? 4 : c->glyphs == GLYPHS_BLOCKS ? 8 : 3;
	int top = c->ph * lpr - 1;
	for (int dc = 0; dc < c->npts; dc++) {
		int i = c->npts - 1 - dc;
		if (v[i] < 0)
			continue;
		int l = level_of(c, v[i], top), lo = l, hi = l;
		int col = dc / c->ppc, sub = dc % c->ppc;
		if (c->glyphs != GLYPHS_BRAILLE) {
			size_t k = (size_t)(c->ph - 1 - l / lpr) * (size_t)c->pw + (size_t)col;
			grid[k] = c->glyphs == GLYPHS_BLOCKS ? (uint32_t)eighths[l % lpr + 1]
				  : mark ? (uint32_t)(unsigned char)mark
					 : (uint32_t)(unsigned char)"_-'"[l % lpr];
			roles[k] = (unsigned char)role;
			touch(c->ph - 1 - l / lpr, col);
			continue;
		}
		/* braille: joined to its neighbours halfway, so the line is whole */
		for (int j = i - 1; j <= i + 1; j += 2) {
			if (j < 0 || j >= c->npts || v[j] < 0)
				continue;
			int m = (l + level_of(c, v[j], top)) / 2;
			lo = m < lo ? m : lo;
			hi = m > hi ? m : hi;
		}
		for (int d = lo; d <= hi; d++) {
			size_t k = (size_t)(c->ph - 1 - d / 4) * (size_t)c->pw + (size_t)col;
			grid[k] |= dot_bit[sub][3 - d % 4];
			roles[k] = (unsigned char)role;
			touch(c->ph - 1 - d / 4, col);
		}
	}
	pending = 1;
}

void chart_mark(struct chart *c, int64_t ago_ms, int role)
{
	if (c->step_ms <= 0 || ago_ms < 0 || nmarks >= MAX_MARKS)
		return;
	int64_t back = (ago_ms + c->step_ms / 2) / c->step_ms;
	if (back >= c->npts)
		return;
	marks[nmarks].col = (c->npts - 1 - (int)back) / c->ppc;
	marks[nmarks].role = role;
	nmarks++;
}

void chart_legend(struct chart *c, int role, const char *text)
{
	(void)c;
	if (nlegend < MAX_LEGEND) {
		legend[nlegend].role = role;
		legend[nlegend].text = text;
		nlegend++;
	}
}

/* "-30s", "-5m", "-2h": k ticks of tick_ms back */
static int time_label(char *buf, size_t len, int64_t ms)
{
	int64_t s = ms / 1000;
	if (s % 86400 == 0)
		return fmt_snprintf(buf, len, "-%dd", (int)(s / 86400));
	if (s % 3600 == 0)
		return fmt_snprintf(buf, len, "-%dh", (int)(s / 3600));
	if (s % 60 == 0)
		return fmt_snprintf(buf, len, "-%dm", (int)(s / 60));
	return fmt_snprintf(buf, len, "-%ds", (int)s);
}

static void time_axis(const struct chart *c, int y)
{
	static const int64_t ticks_s[] = {5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
					  3600, 7200, 10800, 21600, 43200, 86400};
	int u = c->glyphs != GLYPHS_ASCII;
	fb_putc(y, c->x + c->lw, ROLE_AXIS, u ? L'└' : L'+');
	fb_fill(y, c->px, c->pw, ROLE_AXIS, u ? L'─' : L'-');
	fb_put(y, c->px + c->pw - 3 - !u, 3 + !u, ROLE_NORMAL, u ? "now" : " now", 0);
	if (c->step_ms <= 0)
		return;
	/* a label every 16 columns or more; whole minutes past two minutes */
	int64_t tick = 0, span = (int64_t)c->npts * c->step_ms;
	for (unsigned i = 0; i < sizeof ticks_s / sizeof ticks_s[0] && !tick; i++)
		if (ticks_s[i] * 1000 / c->step_ms / c->ppc >= 16 && (ticks_s[i] >= 60 || span <= 120000))
			tick = ticks_s[i] * 1000;
	if (!tick)
		return;
	int limit = c->pw - 5; /* "now" and a blank */
	for (int64_t ago = tick;; ago += tick) {
		int64_t back = ago / c->step_ms;
		if (back >= c->npts)
			break;
		int col = (c->npts - 1 - (int)back) / c->ppc;
		char t[16];
		int n = time_label(t, sizeof t, ago);
		int at = col - n / 2;
		if (at < 1)
			break;
		if (at + n >= limit)
			continue;
		if (!u) /* "-1m" on a line of '-' would read "---1m" */
			fb_put(y, c->px + at - 1, n + 2, ROLE_NORMAL, " ", 1);
		fb_put(y, c->px + at, n, ROLE_NORMAL, t, 0);
		limit = at - 1 - !u;
	}
}

static void ceiling_row(const struct chart *c)
{
	int u = c->glyphs != GLYPHS_ASCII;
	if (c->open_top) /* the range's end, not a ceiling: the total is above */
		fb_fill(c->y, c->px, c->pw, ROLE_DIM, u ? L'┈' : L'.');
	else
		fb_fill(c->y, c->px, c->pw, c->ceiling_role, u ? L'─' : L'-');
	/* the legend, right-aligned over the line: a sample of each series'
	 * glyph in its colour (none for a role < 0), its name */
	const char *sample = c->glyphs == GLYPHS_BRAILLE ? "⣿" : c->glyphs == GLYPHS_BLOCKS ? "█" : "#";
	int n = nlegend, x;
	for (;; n--) { /* as many items as fit, from the first */
		int w = 1;
		for (int i = 0; i < n; i++)
			w += (legend[i].role >= 0 ? 2 : 0) + width_of(legend[i].text) + (i ? 2 : 0);
		x = c->px + c->pw - w;
		if (n == 0 || x >= c->px + 4)
			break;
	}
	for (int i = 0; i < n; i++) {
		int sep = i ? 2 : 1;
		fb_put(c->y, x, sep, ROLE_NORMAL, " ", 1);
		x += sep;
		if (legend[i].role >= 0) {
			x += fb_put(c->y, x, 1, legend[i].role, sample, 0);
			x += fb_put(c->y, x, 1, ROLE_NORMAL, " ", 0);
		}
		x += fb_put(c->y, x, c->px + c->pw - x, ROLE_NORMAL, legend[i].text, 0);
	}
}

void chart_end(struct chart *c)
{
	int u = c->glyphs != GLYPHS_ASCII;
	uint32_t row[512];
	ceiling_row(c);
	for (int r = -1; r < c->ph; r++) {
		int y = c->py + r;
		const char *lab = NULL;
		for (int i = 0; i < nlabels; i++)
			if (labels[i].row == r)
				lab = labels[i].text;
		if (lab)
			fb_put(y, c->x + c->lw - 1 - width_of(lab), width_of(lab), ROLE_NORMAL, lab, 0);
		fb_putc(y, c->x + c->lw, ROLE_AXIS, lab ? (u ? L'┤' : L'+') : (u ? L'│' : L'|'));
		if (r < 0)
			continue;
		uint32_t *g = grid + (size_t)r * (size_t)c->pw;
		unsigned char *ro = roles + (size_t)r * (size_t)c->pw;
		/* the cells a series reached; a row none reached stays as blanked */
		for (int x0 = row_lo[r]; x0 <= row_hi[r]; x0 += 512) {
			int n = row_hi[r] + 1 - x0 > 512 ? 512 : row_hi[r] + 1 - x0;
			for (int i = 0; i < n; i++) {
				uint32_t v = g[x0 + i];
				row[i] = !v ? L' ' : c->glyphs == GLYPHS_BRAILLE ? 0x2800 + v : v;
			}
			fb_cells(y, c->px + x0, n, row, ro + x0);
		}
		if (row_hi[r] >= row_lo[r]) { /* zeros again for the next chart */
			size_t n = (size_t)(row_hi[r] + 1 - row_lo[r]);
			memset(g + row_lo[r], 0, n * sizeof *g);
			memset(ro + row_lo[r], 0, n);
		}
	}
	pending = 0;
	int y = c->py + c->ph;
	time_axis(c, y);
	for (int i = 0; i < nmarks; i++)
		fb_putc(y, c->px + marks[i].col, marks[i].role, u ? L'▲' : L'^');
}
