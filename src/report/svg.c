/* SPDX-License-Identifier: Apache-2.0 */
/* svg.c - one GPU's plots in `vramz report`: memory stacked by process
 * over the range it moved in (format/zoom.h: the used range with a
 * margin, the total its ceiling when the data comes near it, issue 40: a
 * 1 GiB/min leak on a 140 GiB GPU is a slope, not a strip at the foot;
 * the foot is labelled when it is not 0), then lanes for utilization (the
 * GPU's and the memory's), temperature and power against its limit, and
 * for the clocks, the fan and the PCIe throughput where the log has them
 * (the live page's detail view draws the same sensors), on the report's
 * shared time axis, with the findings drawn where they happened.
 *
 * Everything is plain SVG with classes (colours and themes live in the
 * page's one stylesheet), so the page needs no inline style attribute and
 * prints as it shows.  Paths use relative steps ("h3", "l1 -2.5") to stay
 * small: a day of 8 GPUs must fit in a few megabytes.  A path breaks at a
 * gap in the log or a lost GPU; columns no tick fell in (a log slower than
 * the pixel grid) are stepped over, not drawn as zero.  Each marker
 * carries its time and x in data attributes, which the tests check.
 */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kinds.h"
#include "format/fmt.h"
#include "format/zoom.h"

#define L 72.0      /* left margin: lane titles and scales */
#define W ((double)REP_COLS)
#define MEM_H 220.0
#define LANE_H 64.0
#define GAP_H 22.0

struct lane {
	double y0, h, vmax; /* top, height, value at the top */
	double vmin;
};

static double ly(const struct lane *l, double v)
{
	if (v < l->vmin)
		v = l->vmin;
	if (v > l->vmax)
		v = l->vmax;
	return l->y0 + l->h - (v - l->vmin) / (l->vmax - l->vmin) * l->h;
}

/* ---- a path of one value per column, broken at gaps ---- */

typedef int (*col_val)(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v,
		       const void *arg);

static int brk(const struct rep_col *c)
{
	return c->gap || c->lost;
}

/* Writes the d attribute of a polyline through every column that has a
 * value; a new subpath starts after a gap.  baseline >= 0 closes each
 * subpath down to it (an area). */
static void path_d(FILE *o, const struct rep *r, const struct rep_gpu *g, const struct lane *ln,
		   col_val fn, const void *arg, double baseline_y)
{
	int open = 0;
	double px = 0, py = 0, sx = 0;
	unsigned flat = 0;
	for (unsigned col = 0; col < REP_COLS; col++) {
		const struct rep_col *c = &g->cols[col];
		double v;
		if (c->n && brk(c) && open) {
			if (flat)
				fprintf(o, "h%u", flat);
			if (baseline_y >= 0)
				fprintf(o, "V%.1fH%.1fZ", baseline_y, sx);
			open = 0;
			flat = 0;
		}
		if (!c->n || c->lost || !fn(r, g, col, &v, arg))
			continue;
		double x = L + col + 0.5, y = round(ly(ln, v) * 10) / 10;
		if (!open) {
			fprintf(o, baseline_y >= 0 ? "M%.1f %.1fV%.1f" : "M%.1f %.1f", x,
				baseline_y >= 0 ? baseline_y : y, y);
			sx = x;
			open = 1;
		} else if (y == py && x - px == 1) {
			flat++;
		} else {
			if (flat)
				fprintf(o, "h%u", flat);
			flat = 0;
			if (y == py)
				fprintf(o, "h%g", x - px);
			else
				fprintf(o, "l%g %.1f", x - px, y - py);
		}
		px = x;
		py = y;
	}
	if (open) {
		if (flat)
			fprintf(o, "h%u", flat);
		if (baseline_y >= 0)
			fprintf(o, "V%.1fH%.1fZ", baseline_y, sx);
	}
}

/* ---- values ---- */

/* memory: the cumulative stack at the column's winner, up to band k
 * (0 reserved, 1..ntop the top processes, ntop+1 other, ntop+2 unattributed) */
static int v_stack(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *arg)
{
	unsigned k = *(const unsigned *)arg;
	const struct rep_col *c = &g->cols[col];
	if (!(c->valid & VRAMZ_F_MEM) || !c->win)
		return 0;
	uint64_t top = 0;
	for (unsigned i = 0; i < g->ntop; i++)
		top += rep_proc_at(r, &r->procs[g->top[i]], c, col);
	uint64_t listed = c->used > c->unattr ? c->used - c->unattr : 0;
	uint64_t other = listed > top ? listed - top : 0;
	uint64_t s = c->reserved;
	for (unsigned i = 0; i < g->ntop && i + 1 <= k; i++)
		s += rep_proc_at(r, &r->procs[g->top[i]], c, col);
	if (k >= g->ntop + 1)
		s += other;
	if (k >= g->ntop + 2)
		s = c->reserved + c->used;
	*v = (double)s;
	return 1;
}

static int v_total(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = (double)c->total;
	return (c->valid & VRAMZ_F_MEM) && c->total;
}

static int v_memmin(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = (double)c->mem_min;
	return (c->valid & VRAMZ_F_MEM) != 0;
}

static int v_util(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = *(const int *)a ? c->util_max : c->util_min;
	return (c->valid & VRAMZ_F_UTIL) != 0;
}

static int v_temp(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	int mem = *(const int *)a;
	*v = mem ? c->tmem_max : c->temp_max;
	return (c->valid & (mem ? VRAMZ_F_TEMP_MEM : VRAMZ_F_TEMP)) != 0;
}

static int v_power(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	int lim = *(const int *)a;
	*v = (lim ? c->limit_mw : c->power_max_mw) / 1000.0;
	return (c->valid & (lim ? VRAMZ_F_POWER_LIMIT : VRAMZ_F_POWER)) != 0;
}

static int v_umem(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = c->umem_max;
	return (c->valid & VRAMZ_F_UTIL) != 0;
}

static int v_clock(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	int mem = *(const int *)a;
	*v = mem ? c->mclk_max : c->sm_max;
	return (c->valid & (mem ? VRAMZ_F_CLK_MEM : VRAMZ_F_CLK_SM)) != 0;
}

static int v_fan(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = c->fan_max;
	return (c->valid & VRAMZ_F_FAN) != 0;
}

static int v_io(const struct rep *r, const struct rep_gpu *g, unsigned col, double *v, const void *a)
{
	const struct rep_col *c = &g->cols[col];
	*v = (double)(*(const int *)a ? c->rx_max : c->tx_max);
	return (c->valid & VRAMZ_F_PCIE_TPUT) != 0;
}

/* ---- pieces ---- */

static void title(FILE *o, double y, const char *t, const char *scale)
{
	fprintf(o, "<text class=\"lt\" x=\"4\" y=\"%.1f\">%s</text>", y + 12, t);
	if (scale)
		fprintf(o, "<text class=\"ls\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			L - 4, y + 24, scale);
}

/* the lane's box, and lines at a quarter, half and three quarters */
static void frame(FILE *o, const struct lane *ln)
{
	fprintf(o, "<rect class=\"fr\" x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\"/>", L, ln->y0,
		W, ln->h);
	fputs("<path class=\"gr\" d=\"", o);
	for (int q = 1; q < 4; q++)
		fprintf(o, "M%.0f %.1fh%.0f", L, ln->y0 + ln->h * q / 4, W);
	fputs("\"/>", o);
}

/* runs of columns with a flag, as rectangles over the lane */
static void runs(FILE *o, const struct rep_gpu *g, const struct lane *ln, const char *cls,
		 int (*flag)(const struct rep_col *, int), int arg, double y, double h)
{
	for (unsigned col = 0; col < REP_COLS;) {
		if (!g->cols[col].n || !flag(&g->cols[col], arg)) {
			col++;
			continue;
		}
		unsigned end = col + 1;
		while (end < REP_COLS && (!g->cols[end].n || flag(&g->cols[end], arg)) &&
		       !(g->cols[end].n && g->cols[end].gap))
			end++;
		fprintf(o, "<rect class=\"%s\" x=\"%.0f\" y=\"%.1f\" width=\"%u\" height=\"%.1f\"/>", cls,
			L + col, y, end - col, h);
		col = end;
	}
	(void)ln;
}

static int f_thr(const struct rep_col *c, int cls)
{
	return (c->thr & cls) != 0;
}

static int f_lost(const struct rep_col *c, int unused)
{
	return c->lost;
}

static void gaps(FILE *o, const struct rep *r, double y, double h)
{
	for (unsigned i = 0; i < r->ngaps; i++) {
		double a = rep_x_of(r, r->gaps[i].from_ms), b = rep_x_of(r, r->gaps[i].to_ms);
		if (b < 0 || a > W)
			continue;
		a = a < 0 ? 0 : a;
		b = b > W ? W : b;
		char d[32];
		fprintf(o, "<g class=\"gap\" data-from-ms=\"%" PRId64 "\" data-to-ms=\"%" PRId64 "\">"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
			"<text class=\"gl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no data %s</text></g>",
			r->gaps[i].from_ms, r->gaps[i].to_ms, L + a, y, b - a < 1 ? 1 : b - a, h,
			L + (a + b) / 2, y + 40,
			fmt_duration(d, sizeof d, r->gaps[i].to_ms - r->gaps[i].from_ms));
	}
}

/* ---- findings ---- */

static uint64_t mem_at(const struct rep *r, const struct rep_gpu *g, int64_t t)
{
	int col = rep_col_of(r, t);
	for (int d = 0; d < (int)REP_COLS; d++) {
		if (col - d >= 0 && g->cols[col - d].n && (g->cols[col - d].valid & VRAMZ_F_MEM))
			return g->cols[col - d].mem_max;
		if (col + d < (int)REP_COLS && g->cols[col + d].n && (g->cols[col + d].valid & VRAMZ_F_MEM))
			return g->cols[col + d].mem_max;
	}
	return 0;
}

/* How the kind spans time (its row in the kinds table); KIND_EVENT for
 * a kind this build does not know. */
static enum kind_span span_of(enum vramz_finding_kind k)
{
	const struct finding_kind *fk = kind_of(k);
	return fk ? fk->span : KIND_EVENT;
}

static void findings(FILE *o, const struct rep *r, const struct rep_gpu *g, const struct lane *mem,
		     double bottom)
{
	for (unsigned i = 0; i < r->nfind; i++) {
		const vramz_finding *f = &r->findings[i];
		if (f->gpu != (int)g->index)
			continue;
		const char *sev = vramz_severity_str(f->severity);
		double x = L + rep_x_of(r, f->first_seen_ms);
		fprintf(o, "<g class=\"fm %s\" data-finding=\"%u\" data-kind=\"%s\" data-t-ms=\"%" PRId64
			"\" data-x=\"%.2f\">", sev, i + 1, vramz_finding_kind_str(f->kind),
			f->first_seen_ms, x);
		int64_t end = f->last_update_ms, start = end;
		if ((f->figures & VRAMZ_FG_DURATION) && f->duration_ms > 0)
			start = end - f->duration_ms;
		enum kind_span span = span_of(f->kind);
		if (span == KIND_LASTS && end > start) {
			double a = L + rep_x_of(r, start), b = L + rep_x_of(r, end);
			fprintf(o, "<rect class=\"span\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
				a, mem->y0, b - a < 1 ? 1 : b - a, bottom - mem->y0);
		}
		if (span == KIND_TREND && (f->figures & VRAMZ_FG_RATE) && end > start) {
			/* the fitted slope over the rise, on the GPU's total */
			double top = (double)mem_at(r, g, end);
			double rate = f->rate_bytes_per_s;
			double a = L + rep_x_of(r, start), b = L + rep_x_of(r, end);
			double ya = ly(mem, top - rate * (double)(end - start) / 1000), yb = ly(mem, top);
			fprintf(o, "<line class=\"fit\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", a, ya,
				b, yb);
			if ((f->figures & VRAMZ_FG_TTO) && f->time_to_oom_s >= 0 && rate > 0) {
				double t_oom = (double)end + f->time_to_oom_s * 1000;
				double xo = L + rep_x_of(r, (int64_t)t_oom);
				double yo = ly(mem, mem->vmax);
				double total = (double)g->total_max;
				if (total > mem->vmax && total > top) { /* zoomed: the total is above the
									  lane; the line leaves at its top */
					double t_top = (double)end + (mem->vmax - top) / rate * 1000;
					if (t_top < t_oom)
						xo = L + rep_x_of(r, (int64_t)t_top);
				}
				if (xo > L + W) { /* clip at the axis's end, on the line */
					double fr = (L + W - b) / (xo - b);
					yo = yb + (yo - yb) * fr;
					xo = L + W;
				}
				char d[32];
				fprintf(o, "<line class=\"proj\" data-oom-ms=\"%.0f\" x1=\"%.1f\" y1=\"%.1f\" "
					"x2=\"%.1f\" y2=\"%.1f\"/><text class=\"ml\" x=\"%.1f\" y=\"%.1f\" "
					"text-anchor=\"end\">OOM in %s</text>", t_oom, b, yb, xo, yo, xo - 2,
					yo < mem->y0 + 24 ? mem->y0 + 24 : yo - 4,
					fmt_duration(d, sizeof d, (int64_t)(f->time_to_oom_s * 1000)));
			}
		}
		/* the marker's hover says what was seen ("... died out of memory at
		 * model.py:88 in forward() ..."), not only its kind */
		char text[512];
		fprintf(o, "<line class=\"mk\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>"
			"<circle class=\"mc\" cx=\"%.2f\" cy=\"%.1f\" r=\"8\"/>"
			"<text class=\"mn\" x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%u</text>"
			"<title>#%u %s %s: ",
			x, mem->y0, x, bottom, x, mem->y0 + 9, x, mem->y0 + 13, i + 1, i + 1, sev,
			vramz_finding_kind_str(f->kind));
		html_esc(o, vramz_finding_summary(f, text, sizeof text));
		fputs("</title></g>", o);
	}
}

/* ---- the time axis ---- */

/* A tick every step_ms: the first step that leaves at most 8 across the
 * span, up to a thousand years; past that (a clock that jumped to 9999) a
 * step of a ninth of the span, so the axis is a handful of ticks whatever
 * the log claims (an 8,000-year span once drew 418,985). */
int64_t svg_axis_step(int64_t span_ms)
{
#define DAY_MS 86400000LL
#define YEAR_MS 31556952000LL /* 365.2425 days */
	static const int64_t steps[] = {
		1000, 2000, 5000, 10000, 15000, 30000, 60000, 120000, 300000, 600000, 900000,
		1800000, 3600000, 7200000, 10800000, 21600000, 43200000, DAY_MS, 2 * DAY_MS,
		7 * DAY_MS, 14 * DAY_MS, 30 * DAY_MS, 91 * DAY_MS, 182 * DAY_MS, YEAR_MS,
		2 * YEAR_MS, 5 * YEAR_MS, 10 * YEAR_MS, 20 * YEAR_MS, 50 * YEAR_MS, 100 * YEAR_MS,
		200 * YEAR_MS, 500 * YEAR_MS, 1000 * YEAR_MS};
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (span_ms / steps[i] <= 8)
			return steps[i];
	return span_ms / 9 + 1;
#undef DAY_MS
#undef YEAR_MS
}

static void axis(FILE *o, const struct rep *r, double y)
{
	int64_t step = svg_axis_step(r->t1_ms - r->t0_ms);
	int64_t t = (r->t0_ms / step + 1) * step;
	for (; t <= r->t1_ms; t += step) {
		double x = L + rep_x_of(r, t);
		char iso[40];
		fmt_iso_ms(iso, sizeof iso, t);
		/* "2026-11-30T02:05:00.000Z" -> "02:05" or "02:05:30"; a day or
		 * more apart: the date */
		char lab[16];
		if (step >= 86400000LL)
			snprintf(lab, sizeof lab, "%.10s", iso);
		else
			snprintf(lab, sizeof lab, "%.*s", step % 60000 ? 8 : 5, iso + 11);
		fprintf(o, "<line class=\"tk\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tl\" data-t-ms=\"%" PRId64 "\" x=\"%.1f\" y=\"%.1f\" "
			"text-anchor=\"middle\">%s</text>", x, y, x, y + 4, t, x, y + 16, lab);
		if (t > INT64_MAX - step)
			break;
	}
}

/* The lanes after power, one for each sensor the log has (the live
 * page's detail view draws the same): clocks, fan, PCIe throughput. */
struct extra {
	struct lane clk, fan, io;
	int has_clk, has_fan, has_io;
};

/* Lays them out from y; returns the bottom of the last. */
static double extra_layout(struct extra *e, const struct rep_gpu *g, double y)
{
	e->has_clk = (g->seen & (VRAMZ_F_CLK_SM | VRAMZ_F_CLK_MEM)) != 0;
	e->has_fan = (g->seen & VRAMZ_F_FAN) != 0;
	e->has_io = (g->seen & VRAMZ_F_PCIE_TPUT) != 0;
	struct lane *l[] = {&e->clk, &e->fan, &e->io};
	int has[] = {e->has_clk, e->has_fan, e->has_io};
	/* the top: a round 500 MHz above the fastest clock; 100 %; the
	 * busiest direction with a tenth of room, rounded by zoom.c's rule */
	double top[] = {ceil((g->clk_peak + 1) * 1.05 / 500) * 500, 100,
			g->io_peak ? zoom_nice_up(g->io_peak * 1.1 / 4) * 4 : 1};
	for (int i = 0; i < 3; i++) {
		*l[i] = (struct lane){y + GAP_H, LANE_H, top[i], 0};
		if (has[i])
			y += GAP_H + LANE_H;
	}
	return y;
}

static void extra_frames(FILE *o, const struct extra *e)
{
	char b[40], b2[32];
	if (e->has_clk) {
		snprintf(b, sizeof b, "%.0f MHz", e->clk.vmax);
		title(o, e->clk.y0, "clocks", b);
		frame(o, &e->clk);
	}
	if (e->has_fan) {
		title(o, e->fan.y0, "fan", "100 %");
		frame(o, &e->fan);
	}
	if (e->has_io) {
		snprintf(b, sizeof b, "%s/s", fmt_bytes(b2, sizeof b2, (uint64_t)e->io.vmax));
		title(o, e->io.y0, "PCIe", b);
		frame(o, &e->io);
	}
}

static void extra_paths(FILE *o, const struct rep *r, const struct rep_gpu *g, const struct extra *e)
{
	int one = 1, zero = 0;
	if (e->has_clk) {
		fputs("<path class=\"l-sm\" d=\"", o);
		path_d(o, r, g, &e->clk, v_clock, &zero, -1);
		fputs("\"/><path class=\"l-mclk\" d=\"", o);
		path_d(o, r, g, &e->clk, v_clock, &one, -1);
		fputs("\"/>", o);
	}
	if (e->has_fan) {
		fputs("<path class=\"l-fan\" d=\"", o);
		path_d(o, r, g, &e->fan, v_fan, NULL, -1);
		fputs("\"/>", o);
	}
	if (e->has_io) {
		fputs("<path class=\"l-tx\" d=\"", o);
		path_d(o, r, g, &e->io, v_io, &zero, -1);
		fputs("\"/><path class=\"l-rx\" d=\"", o);
		path_d(o, r, g, &e->io, v_io, &one, -1);
		fputs("\"/>", o);
	}
}

void svg_gpu(FILE *o, const struct rep *r, const struct rep_gpu *g)
{
	char b1[32], b2[32];
	struct lane mem = {8, MEM_H, 1, 0};
	mem.vmax = (double)(g->total_max ? g->total_max : g->mem_peak ? g->mem_peak : 1);
	/* the range used + reserved memory moved in over the log, zoomed */
	const double gib = 1073741824.0;
	double mn = 1e300, mx = -1, lo, hi;
	for (unsigned col = 0; col < REP_COLS; col++) {
		const struct rep_col *c = &g->cols[col];
		if (!c->n || c->lost || !(c->valid & VRAMZ_F_MEM))
			continue;
		mn = (double)c->mem_min < mn ? (double)c->mem_min : mn;
		mx = (double)c->mem_max > mx ? (double)c->mem_max : mx;
	}
	int at_total = 1;
	if (g->total_max) {
		at_total = zoom_range(mn / gib, mx / gib, (double)g->total_max / gib, 0.25, &lo, &hi);
		mem.vmin = lo * gib;
		mem.vmax = at_total ? (double)g->total_max : hi * gib;
	}
	struct lane util = {mem.y0 + MEM_H + GAP_H, LANE_H, 100, 0};
	int tpeak = g->temp_peak > g->tmem_peak ? g->temp_peak : g->tmem_peak;
	struct lane temp = {util.y0 + LANE_H + GAP_H, LANE_H, tpeak + 10 > 100 ? tpeak + 10 : 100, 0};
	double pmax = (g->limit_max_mw > g->power_peak_mw ? g->limit_max_mw : g->power_peak_mw) / 1000.0;
	struct lane pow = {temp.y0 + LANE_H + GAP_H, LANE_H, pmax > 0 ? pmax * 1.1 : 1, 0};
	struct extra ex;
	double bottom = extra_layout(&ex, g, pow.y0 + LANE_H);
	double height = bottom + 24;
	fprintf(o, "<svg class=\"plot\" data-gpu=\"%u\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"GPU %u over time\" "
		"data-mem-lo=\"%.0f\" data-mem-hi=\"%.0f\">",
		g->index, L + W + 8, height, g->index, mem.vmin, mem.vmax);
	fprintf(o, "<clipPath id=\"c%u\"><rect x=\"%.0f\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/></clipPath>",
		g->index, L, W, height);
	title(o, mem.y0, "memory", fmt_bytes(b1, sizeof b1, (uint64_t)mem.vmax));
	if (mem.vmin > 0) /* zoomed: the foot's value, and where the total is */
		fprintf(o, "<text class=\"ls\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", L - 4,
			mem.y0 + mem.h, fmt_bytes(b2, sizeof b2, (uint64_t)mem.vmin));
	if (!at_total) /* the total is above the plot: said in the margin */
		fprintf(o, "<text class=\"ls ta\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">"
			"<tspan x=\"%.0f\">total</tspan><tspan x=\"%.0f\" dy=\"12\">%s \xe2\x86\x91</tspan>"
			"</text>", L - 4, mem.y0 + 40, L - 4, L - 4, fmt_bytes(b2, sizeof b2, g->total_max));
	title(o, util.y0, "util", "100 %");
	snprintf(b2, sizeof b2, "%.0f °C", temp.vmax);
	title(o, temp.y0, "temp", b2);
	snprintf(b2, sizeof b2, "%.0f W", pow.vmax);
	title(o, pow.y0, "power", b2);
	frame(o, &mem);
	frame(o, &util);
	frame(o, &temp);
	frame(o, &pow);
	extra_frames(o, &ex);
	fprintf(o, "<rect class=\"hov\" x=\"%.0f\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>", L, W, bottom);
	fprintf(o, "<g class=\"z\" clip-path=\"url(#c%u)\">", g->index);
	/* the stack, drawn from its top band down, each from the baseline */
	unsigned nb = g->ntop + 3;
	for (unsigned k = nb; k-- > 0;) {
		const char *cls = k == 0 ? "b-res" : k == nb - 1 ? "b-un" : k == nb - 2 ? "b-oth" : NULL;
		char c[16];
		if (!cls) {
			snprintf(c, sizeof c, "b-p%u", k - 1);
			cls = c;
		}
		fprintf(o, "<path class=\"%s\" d=\"", cls);
		path_d(o, r, g, &mem, v_stack, &k, mem.y0 + mem.h);
		fputs("\"/>", o);
	}
	fputs("<path class=\"l-min\" d=\"", o);
	path_d(o, r, g, &mem, v_memmin, NULL, -1);
	fputs("\"/><path class=\"l-tot\" d=\"", o);
	if (at_total) /* the total, where it is in view */
		path_d(o, r, g, &mem, v_total, NULL, -1);
	int one = 1, zero = 0;
	fputs("\"/><path class=\"a-util\" d=\"", o);
	/* utilization: the band between each column's min and max */
	path_d(o, r, g, &util, v_util, &one, util.y0 + util.h);
	fputs("\"/><path class=\"a-umin\" d=\"", o);
	path_d(o, r, g, &util, v_util, &zero, util.y0 + util.h);
	fputs("\"/><path class=\"l-umem\" d=\"", o);
	path_d(o, r, g, &util, v_umem, NULL, -1);
	fputs("\"/><path class=\"l-temp\" d=\"", o);
	path_d(o, r, g, &temp, v_temp, &zero, -1);
	fputs("\"/><path class=\"l-tmem\" d=\"", o);
	path_d(o, r, g, &temp, v_temp, &one, -1);
	fputs("\"/><path class=\"l-lim\" d=\"", o);
	path_d(o, r, g, &pow, v_power, &one, -1);
	fputs("\"/><path class=\"l-pow\" d=\"", o);
	path_d(o, r, g, &pow, v_power, &zero, -1);
	fputs("\"/>", o);
	extra_paths(o, r, g, &ex);
	runs(o, g, &pow, "thr-t", f_thr, REP_THR_THERMAL, pow.y0 + pow.h - 6, 6);
	runs(o, g, &pow, "thr-p", f_thr, REP_THR_POWER, pow.y0 + pow.h - 12, 6);
	runs(o, g, &mem, "lost", f_lost, 0, mem.y0, bottom - mem.y0);
	gaps(o, r, mem.y0, bottom - mem.y0);
	findings(o, r, g, &mem, bottom);
	fputs("</g>", o);
	axis(o, r, bottom);
	fprintf(o, "<line class=\"cur\" x1=\"-9\" x2=\"-9\" y1=\"0\" y2=\"%.0f\"/>", bottom);
	fputs("</svg>\n", o);
}
