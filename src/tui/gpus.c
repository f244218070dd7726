/* SPDX-License-Identifier: Apache-2.0 */
/* gpus.c - the GPU area of `vramz top`: it takes the rows the process
 * table does not need.
 *
 * A block per GPU when every block gets a chart of a few rows: the name
 * and sensors, a memory bar split used / reserved / free with the
 * numbers, then charts of its history as tall as the rows allow - memory
 * (used over reserved, the total as the ceiling, a y axis in GiB) and,
 * where the block is wide, utilization (in %) beside it; findings are
 * marked on the time axis where they began.  Blocks stand one above the
 * other while each keeps a dozen rows, else two side by side (from 160
 * columns).  When blocks do not fit (8 GPUs at 80x24 or 120x40) each GPU
 * is one line with a short bar and a sparkline, and the rows left over,
 * if enough, hold one chart of all the GPUs: a line each, coloured and
 * numbered by index.
 *
 * Rows are kept from the frame before (fb_keep) where what they show
 * cannot have changed: a band's sensor and bar rows when the figures
 * shown are the same, its charts when every point plotted is one value
 * (model.c counts the run) and no finding is marked on them.
 */
#include "tui/render.h"

#include <string.h>

#include "format/fmt.h"
#include "format/zoom.h"
#include "tui/chart.h"
#include "tui/term.h"

#define BLOCK_HEAD 2                               /* name line, bar line */
#define BLOCK_MIN (BLOCK_HEAD + CHART_MIN_ROWS)    /* a block with a chart */
#define BLOCK_PREF 12                              /* fewer: two side by side */
#define UTIL_AUTO_COLS 120                         /* a block this wide shows util */
#define GIB 1073741824.0

/* ---- the plan ------------------------------------------------------------ */

void gpus_plan(const struct app *a, int avail, int table_need, struct gpus_plan *p)
{
	int n = (int)a->m.ngpus;
	memset(p, 0, sizeof *p);
	if (n == 0 || avail <= 0)
		return;
	int tmin = table_need < TABLE_MIN_ROWS ? table_need : TABLE_MIN_ROWS;
	int third = avail / 3 > TABLE_MIN_ROWS ? avail / 3 : TABLE_MIN_ROWS;
	int tshare = table_need < third ? table_need : third;
	enum layout l = a->v.layout;
	if (l != LAYOUT_COMPACT && COLS >= 70) {
		int room = avail - (l == LAYOUT_FULL ? tmin : tshare);
		int cols = COLS >= 160 && n > 1 && n * BLOCK_PREF > room ? 2 : 1;
		int bands = (n + cols - 1) / cols;
		if (l == LAYOUT_FULL && bands * BLOCK_MIN > room && room >= BLOCK_MIN)
			bands = room / BLOCK_MIN; /* as many as fit */
		if (bands * BLOCK_MIN <= room) {
			p->cols = cols;
			p->bands = bands;
			p->band_rows = room / bands;
			p->band_extra = room % bands;
			p->rows = room;
			return;
		}
	}
	p->compact = 1;
	p->lines = n + 1 <= avail ? n + 1 : avail;
	int rest = avail - p->lines;
	int half = avail / 2 > TABLE_MIN_ROWS ? avail / 2 : TABLE_MIN_ROWS;
	int tc = l == LAYOUT_COMPACT ? tmin : table_need < half ? table_need : half;
	if (rest - tc >= CHART_MIN_ROWS && COLS >= CHART_MIN_COLS)
		p->chart_rows = rest - tc;
	p->rows = p->lines + p->chart_rows;
}

/* ---- pieces -------------------------------------------------------------- */

/* A memory bar of w columns: used, reserved, free. */
static void mem_bar(int y, int x, int w, const vramz_gpu_sample *s)
{
	if (w < 3)
		return;
	int utf = term_utf8();
	put(y, x, 1, ROLE_DIM, "[", 0);
	put(y, x + w - 1, 1, ROLE_DIM, "]", 0);
	w -= 2;
	x++;
	if (!(s->valid & VRAMZ_F_MEM) || !s->mem_total_bytes) {
		put(y, x, w, ROLE_DIM, " memory unknown", 1);
		return;
	}
	uint64_t total = s->mem_total_bytes;
	uint64_t rsv = (s->valid & VRAMZ_F_MEM_RESERVED) ? s->mem_reserved_bytes : 0;
	int nu = (int)((double)s->mem_used_bytes / (double)total * w + 0.5);
	int nr = (int)((double)rsv / (double)total * w + 0.5);
	if (s->mem_used_bytes && nu == 0)
		nu = 1; /* something is there: show it */
	if (rsv && nr == 0)
		nr = 1;
	if (nu > w)
		nu = w;
	if (nu + nr > w)
		nr = w - nu;
	int role = used_role(s->mem_used_bytes + rsv, total);
	fb_fill(y, x, nr, ROLE_RSV, utf ? L'▒' : L'%');
	fb_fill(y, x + nr, nu, role, utf ? L'█' : L'#');
	fb_fill(y, x + nr + nu, w - nr - nu, ROLE_FREE, utf ? L'·' : L'.');
}

static void mem_span(const struct model_gpu *g, int n, double *min, double *max);
static void mem_range(const struct app *a, struct chart *c, double min, double max, double total);

/* The value of one sparkline column in [0, 1] of [lo, hi] (GiB), or -1
 * when unknown. */
static double spark_value(const struct hist_point *h, double lo, double hi)
{
	if (!h || !h->mem_valid || !h->total_bytes)
		return -1;
	double v = ((double)(h->used_bytes + h->reserved_bytes) / GIB - lo) / (hi - lo);
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* used + reserved over the last w ticks, a column each, in eighths, over
 * the used range as the charts (or the total, `z`) */
static void sparkline(const struct app *a, int y, int x, int w, const struct model_gpu *g)
{
	static const wchar_t blocks[] = L" ▁▂▃▄▅▆▇█";
	static const wchar_t ascii[] = L" .._ooOO#";
	const wchar_t *glyph = term_utf8() ? blocks : ascii;
	const struct hist_point *now = model_hist(g, 0);
	struct chart r = {0};
	double min, max;
	mem_span(g, w, &min, &max);
	mem_range(a, &r, min, max, now && now->mem_valid ? (double)now->total_bytes / GIB : 0);
	if (!(r.top > r.bottom))
		return;
	for (int c = 0; c < w; c++) {
		double v = spark_value(model_hist(g, (unsigned)(w - 1 - c)), r.bottom, r.top);
		if (v >= 0) /* unknown: the blank the frame starts with */
			fb_putc(y, x + c, ROLE_PLOT, glyph[(int)(v * 8 + 0.5) > 8 ? 8 : (int)(v * 8 + 0.5)]);
	}
}

static void sensors(char *buf, size_t len, const vramz_gpu_sample *s, int wide)
{
	char u[16], t[16], p[40];
	fmt_uint_if(u, sizeof u, s->valid & VRAMZ_F_UTIL, s->util_gpu_pct, "%");
	if (s->valid & VRAMZ_F_TEMP)
		fmt_snprintf(t, sizeof t, "%dC", s->temp_c);
	else
		fmt_snprintf(t, sizeof t, "-");
	if ((s->valid & VRAMZ_F_POWER) && (s->valid & VRAMZ_F_POWER_LIMIT))
		fmt_snprintf(p, sizeof p, "%u/%uW", s->power_mw / 1000, s->power_limit_mw / 1000);
	else if (s->valid & VRAMZ_F_POWER)
		fmt_snprintf(p, sizeof p, "%uW", s->power_mw / 1000);
	else
		fmt_snprintf(p, sizeof p, "-");
	if (wide && (s->valid & VRAMZ_F_TEMP_MEM)) /* HBM runs hotter than the core */
		fmt_snprintf(buf, len, "util %4s  temp %4s mem %dC  power %s", u, t, s->temp_mem_c, p);
	else if (wide)
		fmt_snprintf(buf, len, "util %4s  temp %4s  power %s", u, t, p);
	else
		fmt_snprintf(buf, len, "%4s %4s %9s", u, t, p);
}

static void pcie(char *buf, size_t len, const struct tui_gpu *g)
{
	const vramz_gpu_sample *s = &g->s;
	if (!(s->valid & VRAMZ_F_PCIE_LINK))
		fmt_snprintf(buf, len, "-");
	else if (g->pcie_max_gen && (s->pcie_width < g->pcie_max_width))
		fmt_snprintf(buf, len, "%ux%u (max %ux%u)", s->pcie_gen, s->pcie_width,
			     g->pcie_max_gen, g->pcie_max_width);
	else
		fmt_snprintf(buf, len, "%ux%u", s->pcie_gen, s->pcie_width);
}

static int gpu_lost(int y, int x0, int w, const struct model_gpu *g, int compact)
{
	const vramz_gpu_sample *s = &g->cur.s;
	if (!s->lost && g->present)
		return 0;
	putf(y, x0, w, ROLE_CRIT, compact ? "%2u  %-10.10s %s" : "GPU %u  %s  %s", s->index,
	     gpu_short_name(g->cur.name), s->lost ? "LOST: fell off the bus" : "not read this tick");
	return 1;
}

int64_t gpus_step_ms(const struct model_gpu *g, int64_t fallback_ms)
{
	int64_t t[17];
	unsigned n = 0;
	for (const struct hist_point *p; n < 17 && (p = model_hist(g, n)); n++)
		t[n] = p->time_ms;
	return chart_step_ms(t, n, fallback_ms);
}

/* ---- charts -------------------------------------------------------------- */

static double points_a[1024], points_b[1024];

/* The findings that began on GPU index (any GPU: index < 0), marked on the
 * chart's time axis. */
static void mark_findings(const struct app *a, struct chart *c, int index)
{
	for (unsigned k = a->f.n; k-- > 0;) { /* the worst drawn last */
		const vramz_finding *x = &a->f.v[k];
		if ((index >= 0 && x->gpu != index) || !x->first_seen_ms)
			continue;
		chart_mark(c, a->m.now_ms - x->first_seen_ms, finding_role((int)x->severity, ROLE_NORMAL));
	}
}

/* The range of used + reserved memory over g's newest n points, in GiB:
 * *min > *max when none is known. */
static void mem_span(const struct model_gpu *g, int n, double *min, double *max)
{
	*min = 1e300, *max = -1;
	for (int i = 0; i < n; i++) {
		const struct hist_point *p = model_hist(g, (unsigned)i);
		if (!p)
			break;
		if (!p->mem_valid)
			continue;
		double v = (double)(p->used_bytes + p->reserved_bytes) / GIB;
		*min = v < *min ? v : *min;
		*max = v > *max ? v : *max;
	}
}

/* The chart's range: the used range (format/zoom.h) unless `z` asked for
 * the total; the top row is then a ceiling only when it is the total. */
static void mem_range(const struct app *a, struct chart *c, double min, double max, double total)
{
	c->bottom = 0, c->top = total, c->open_top = 0;
	if (a->v.zoom_total || !(total > 0))
		return;
	c->open_top = !zoom_range(min, max, total, 0.25, &c->bottom, &c->top);
}

/* The memory chart of one GPU: used over reserved, over the used range
 * (the total its ceiling when in view), or 0 .. the total with `z`. */
static void mem_chart(const struct app *a, int y, int x, int w, int h, const struct model_gpu *g)
{
	const struct hist_point *now = model_hist(g, 0);
	uint64_t total = now && now->mem_valid ? now->total_bytes : 0;
	struct chart c = {.y = y, .x = x, .w = w, .h = h, .unit = CHART_GIB, .top = (double)total / GIB,
			  .step_ms = gpus_step_ms(g, a->replay ? 0 : a->interval_ms), .ceiling_role = ROLE_AXIS};
	if (!total)
		return;
	/* the points shown follow from the labels' width, which follows from
	 * the range: a guess from the whole width, then the points drawn */
	double min, max, lo = -1, hi = -1;
	int n = w * (term_glyphs() == GLYPHS_BRAILLE ? 2 : 1);
	for (int pass = 0; pass < 2; pass++) {
		mem_span(g, n, &min, &max);
		mem_range(a, &c, min, max, (double)total / GIB);
		if (c.bottom == lo && c.top == hi)
			break;
		if (!chart_begin(&c) || c.npts > 1024)
			return;
		lo = c.bottom, hi = c.top, n = c.npts;
	}
	for (int i = 0; i < c.npts; i++) {
		const struct hist_point *p = model_hist(g, (unsigned)i);
		int ok = p && p->mem_valid;
		points_a[i] = ok ? (double)p->reserved_bytes / GIB : -1;
		points_b[i] = ok ? (double)(p->used_bytes + p->reserved_bytes) / GIB : -1;
	}
	chart_area(&c, points_a, points_b, ROLE_RSV, ROLE_PLOT);
	mark_findings(a, &c, (int)g->cur.s.index);
	chart_legend(&c, ROLE_PLOT, "used");
	chart_legend(&c, ROLE_RSV, "reserved");
	static char tot[40];
	if (c.open_top) { /* the total is above the range: say where */
		char b[24];
		fmt_snprintf(tot, sizeof tot, "total %s above", short_bytes(b, sizeof b, 1, total));
		chart_legend(&c, -1, tot);
	} else {
		chart_legend(&c, -1, term_glyphs() == GLYPHS_ASCII ? "- total" : "─ total");
	}
	chart_end(&c);
}

/* The value a side chart plots at point p (-1: unknown). */
static double side_value(enum side_chart k, const struct hist_point *p)
{
	if (!p)
		return -1;
	switch (k) {
	case SIDE_TEMP: return p->temp_valid ? p->temp_c : -1;
	case SIDE_POWER: return p->power_valid ? p->power_w : -1;
	case SIDE_CLOCK: return p->clock_valid ? p->clock_mhz : -1;
	default: return p->util_valid ? p->util_pct : -1;
	}
}

/* The chart beside memory: utilization (0-100 %), or with `s` the
 * temperature (to 100 C, or above the hottest), power (to the enforced
 * limit) or the SM clock (to a round value over the fastest) */
static void util_chart(const struct app *a, int y, int x, int w, int h, const struct model_gpu *g)
{
	static const struct {
		enum chart_unit unit;
		const char *name;
		int role;
	} side[SIDE_COUNT] = {
		[SIDE_UTIL] = {CHART_PCT, "util", ROLE_PLOT_UTIL},
		[SIDE_TEMP] = {CHART_C, "temp", ROLE_WARN},
		[SIDE_POWER] = {CHART_W, "power", ROLE_OK},
		[SIDE_CLOCK] = {CHART_MHZ, "SM clock", ROLE_TITLE},
	};
	enum side_chart k = a->v.side < SIDE_COUNT ? a->v.side : SIDE_UTIL;
	double max = 0;
	for (int i = 0; i < 2 * w; i++) { /* the points it may show */
		double v = side_value(k, model_hist(g, (unsigned)i));
		max = v > max ? v : max;
	}
	const vramz_gpu_sample *s = &g->cur.s;
	double top = k == SIDE_UTIL ? 100
		     : k == SIDE_TEMP ? (max > 90 ? chart_nice_top(max * 1.05, 100) : 100)
		     : k == SIDE_POWER && (s->valid & VRAMZ_F_POWER_LIMIT) && s->power_limit_mw / 1000.0 >= max
			 ? s->power_limit_mw / 1000.0
			 : chart_nice_top(max * 1.05, 1);
	struct chart c = {.y = y, .x = x, .w = w, .h = h, .unit = side[k].unit, .top = top,
			  .step_ms = gpus_step_ms(g, a->replay ? 0 : a->interval_ms), .ceiling_role = ROLE_AXIS};
	if (!chart_begin(&c) || c.npts > 1024)
		return;
	for (int i = 0; i < c.npts; i++)
		points_a[i] = side_value(k, model_hist(g, (unsigned)i));
	chart_line(&c, points_a, side[k].role, 0);
	chart_legend(&c, side[k].role, side[k].name);
	chart_end(&c);
}

/* Columns of a block's utilization chart (0: none). */
static int util_cols(const struct app *a, int w)
{
	int want = a->v.show_util < 0 ? w >= UTIL_AUTO_COLS : a->v.show_util;
	int uw = w / 3;
	return want && uw >= CHART_MIN_COLS && w - uw - 2 >= 40 ? uw : 0;
}

/* ---- blocks -------------------------------------------------------------- */

/* A block's name and bar rows. */
static void block_head(int y, int x0, int w, const struct model_gpu *g)
{
	const vramz_gpu_sample *s = &g->cur.s;
	char a[24], b[24], c[24], d[24], sens[128], link[64];
	if (gpu_lost(y, x0, w, g, 0))
		return;
	int mark = finding_role(g->finding, ROLE_TITLE);
	int x = putf(y, x0, w, mark, "GPU %u%s %s", s->index, g->finding >= VRAMZ_SEV_WARNING ? "!" : "",
		     gpu_short_name(g->cur.name));
	sensors(sens, sizeof sens, s, 1);
	pcie(link, sizeof link, &g->cur);
	/* then the fan, the clocks and the PCIe throughput, where the width
	 * allows (cut first); the sample has no encoder/decoder utilization,
	 * so the header shows none (docs/top.md) */
	char fan[24] = "", clk[48] = "", io[64] = "";
	if (s->valid & VRAMZ_F_FAN)
		fmt_snprintf(fan, sizeof fan, "  fan %u%%", s->fan_pct);
	if ((s->valid & VRAMZ_F_CLK_SM) && (s->valid & VRAMZ_F_CLK_MEM))
		fmt_snprintf(clk, sizeof clk, "  clocks %u/%u MHz", s->clock_sm_mhz, s->clock_mem_mhz);
	else if (s->valid & VRAMZ_F_CLK_SM)
		fmt_snprintf(clk, sizeof clk, "  SM %u MHz", s->clock_sm_mhz);
	if (s->valid & VRAMZ_F_PCIE_TPUT) {
		char rx[24], tx[24];
		fmt_snprintf(io, sizeof io, "  PCIe rx %s/s tx %s/s",
			     fmt_bytes(rx, sizeof rx, s->pcie_rx_bytes_per_s),
			     fmt_bytes(tx, sizeof tx, s->pcie_tx_bytes_per_s));
	}
	x = x < 22 ? 22 : x + 2;
	putf(y, x0 + x, w - x, ROLE_NORMAL, "%s  PCIe %s%s%s%s", sens, link, fan, clk, io);
	int has_mem = (s->valid & VRAMZ_F_MEM) != 0;
	int has_rsv = (s->valid & VRAMZ_F_MEM_RESERVED) != 0;
	char nums[160];
	fmt_snprintf(nums, sizeof nums, " used %9s  rsv %8s  free %9s / %-9s",
		     fmt_bytes_if(a, sizeof a, has_mem, s->mem_used_bytes),
		     fmt_bytes_if(b, sizeof b, has_rsv, s->mem_reserved_bytes),
		     fmt_bytes_if(c, sizeof c, has_mem, s->mem_free_bytes),
		     fmt_bytes_if(d, sizeof d, has_mem, s->mem_total_bytes));
	int nw = (int)strlen(nums);
	int bw = w - 2 - nw;
	if (bw < 12)
		bw = 12;
	mem_bar(y + 1, x0 + 1, bw, s);
	put(y + 1, x0 + 1 + bw, w - 1 - bw, ROLE_NORMAL, nums, 0);
}

/* What a block's head shows, for its tag. */
static uint64_t head_key(const struct model_gpu *g, int x0, int w, uint64_t seed)
{
	struct {
		int x0, w, finding, present, utf8;
		vramz_gpu_sample s;
		char name[MODEL_NAME_LEN];
		unsigned pg, pw;
	} k;
	memset(&k, 0, sizeof k);
	k.x0 = x0, k.w = w, k.finding = g->finding, k.present = g->present, k.utf8 = term_utf8();
	/* the fields shown; the rest (energy, the process slice) may move
	 * without changing a cell */
	const vramz_gpu_sample *s = &g->cur.s;
	k.s.index = s->index, k.s.valid = s->valid, k.s.lost = s->lost;
	k.s.mem_total_bytes = s->mem_total_bytes, k.s.mem_reserved_bytes = s->mem_reserved_bytes;
	k.s.mem_used_bytes = s->mem_used_bytes, k.s.mem_free_bytes = s->mem_free_bytes;
	k.s.util_gpu_pct = s->util_gpu_pct, k.s.temp_c = s->temp_c, k.s.temp_mem_c = s->temp_mem_c;
	k.s.power_mw = s->power_mw / 1000, k.s.power_limit_mw = s->power_limit_mw / 1000;
	k.s.pcie_gen = s->pcie_gen, k.s.pcie_width = s->pcie_width;
	k.s.fan_pct = s->fan_pct, k.s.clock_sm_mhz = s->clock_sm_mhz, k.s.clock_mem_mhz = s->clock_mem_mhz;
	k.s.pcie_tx_bytes_per_s = s->pcie_tx_bytes_per_s, k.s.pcie_rx_bytes_per_s = s->pcie_rx_bytes_per_s;
	memcpy(k.name, g->cur.name, sizeof k.name);
	k.pg = g->cur.pcie_max_gen, k.pw = g->cur.pcie_max_width;
	return fb_hash(&k, sizeof k, seed);
}

/* What a chart of g shows when every point it plots is one value (the
 * memory, or the utilization), w columns wide; 0 when it may differ from
 * the frame before. */
static uint64_t chart_key(const struct app *a, const struct model_gpu *g, int util, int x, int w,
			  int h, uint64_t seed)
{
	const struct hist_point *now = model_hist(g, 0);
	/* every point it plots, and the one that scrolled off; a finding's
	 * mark moves with time */
	if (!now || (util ? g->flat_util : g->flat_mem) <= (unsigned)(2 * w) || (!util && g->finding))
		return 0;
	if (util && a->v.side != SIDE_UTIL)
		return 0; /* no flat count of the other sensors: drawn each frame */
	struct {
		int util, x, w, h, glyphs, cols, zoom;
		int64_t step;
		struct hist_point v;
	} k;
	memset(&k, 0, sizeof k);
	k.util = util, k.x = x, k.w = w, k.h = h, k.glyphs = (int)term_glyphs(), k.cols = COLS;
	k.zoom = a->v.zoom_total;
	k.step = gpus_step_ms(g, a->replay ? 0 : a->interval_ms);
	k.v = *now;
	k.v.time_ms = 0;
	/* the side chart's other sensors are keyed by nothing (drawn each frame) */
	k.v.temp_valid = k.v.power_valid = k.v.clock_valid = 0;
	k.v.temp_c = 0, k.v.power_w = k.v.clock_mhz = 0;
	if (util)
		k.v.used_bytes = k.v.reserved_bytes = k.v.total_bytes = 0, k.v.mem_valid = 0;
	else
		k.v.util_pct = 0, k.v.util_valid = 0;
	return fb_hash(&k, sizeof k, seed);
}

/* Charts side by side over rows [y, y + h): the parts of those rows.  The
 * rows are kept from the frame before when each part with a key (its
 * values all one) has the same key and each part without one sits where
 * it sat; then only the parts without a key are drawn again, over their
 * region cleared.  Returns the parts to draw (bit i: part i); tag_out is
 * the rows' tag, for parts_done. */
struct part {
	int x, w;
	uint64_t key;                     /* 0: it may have changed */
};

static unsigned parts_keep(int y, int h, const struct part *p, int n, uint64_t *tag_out)
{
	uint64_t tag = 'p';
	unsigned dyn = 0;
	for (int i = 0; i < n; i++) {
		const int geo[2] = {p[i].x, p[i].w};
		tag = p[i].key ? fb_hash(&p[i].key, sizeof p[i].key, tag) : fb_hash(geo, sizeof geo, tag ^ 'd');
		dyn |= p[i].key ? 0u : 1u << i;
	}
	*tag_out = tag;
	if (!fb_keep_rows(y, h, tag))
		return (1u << n) - 1;
	for (int i = 0; i < n; i++)
		for (int r = 0; dyn >> i & 1 && r < h; r++)
			fb_fill(y + r, p[i].x, p[i].w, ROLE_NORMAL, L' ');
	return dyn;
}

static void parts_done(int y, int h, uint64_t tag)
{
	for (int r = 0; r < h; r++)
		fb_tag(y + r, tag + (uint64_t)r);
}

/* One band: up to p->cols blocks side by side, h rows. */
static void band(const struct app *a, int y, int h, int first, const struct gpus_plan *p)
{
	const struct model *m = &a->m;
	int bw = COLS / p->cols, n = 0;
	int x[2], w[2];
	const struct model_gpu *g[2];
	for (int c = 0; c < p->cols && first + c < (int)m->ngpus; c++, n++) {
		x[c] = c * bw;
		w[c] = bw - (c + 1 < p->cols ? 2 : 0);
		g[c] = &m->gpus[first + c];
	}
	uint64_t head = 'g';
	for (int c = 0; c < n; c++)
		head = head_key(g[c], x[c], w[c], head);
	if (!fb_keep_rows(y, BLOCK_HEAD, head)) {
		for (int c = 0; c < n; c++)
			block_head(y, x[c], w[c], g[c]);
		for (int r = 0; r < BLOCK_HEAD; r++)
			fb_tag(y + r, head + (uint64_t)r);
	}
	/* the charts: memory, and utilization beside it where wide */
	int ch = h - BLOCK_HEAD, cy = y + BLOCK_HEAD, np = 0;
	struct part parts[4];
	const struct model_gpu *of[4];
	for (int c = 0; c < n; c++) {
		int uw = util_cols(a, w[c]), mw = uw ? w[c] - uw - 2 : w[c];
		int live = g[c]->present && !g[c]->cur.s.lost;
		parts[np] = (struct part){x[c], mw, live ? chart_key(a, g[c], 0, x[c], mw, ch, 'm') : 0};
		of[np++] = g[c];
		if (uw) {
			parts[np] = (struct part){x[c] + w[c] - uw, uw,
						  live ? chart_key(a, g[c], 1, x[c] + w[c] - uw, uw, ch, 'u') : 0};
			of[np++] = g[c];
		}
	}
	uint64_t tag;
	unsigned draw = parts_keep(cy, ch, parts, np, &tag);
	for (int i = 0; i < np; i++) {
		if (!(draw >> i & 1) || !of[i]->present || of[i]->cur.s.lost)
			continue;
		if (i > 0 && of[i] == of[i - 1])
			util_chart(a, cy, parts[i].x, parts[i].w, ch, of[i]);
		else
			mem_chart(a, cy, parts[i].x, parts[i].w, ch, of[i]);
	}
	parts_done(cy, ch, tag);
}

/* ---- one line per GPU ------------------------------------------------------ */

/* Column positions of the one-line-per-GPU layout, shared by its legend. */
struct compact_cols {
	int bar, bar_w, used, sens, link, spark;
};

static void compact_cols(struct compact_cols *c)
{
	c->bar = 15;
	c->bar_w = COLS >= 120 ? 30 : COLS >= 90 ? 20 : 14;
	c->used = c->bar + c->bar_w + 1;
	c->sens = c->used + 11;
	c->link = c->sens + 20;
	c->spark = COLS - c->link >= 14 ? c->link + 6 : c->link;
	if (COLS - c->link < 14)
		c->link = -1;
}

static void compact_legend(int y, const struct compact_cols *c)
{
	put(y, 0, 14, ROLE_DIM, "GPU NAME", 0);
	if (c->bar_w >= 24)
		put(y, c->bar, c->bar_w, ROLE_DIM,
		    term_utf8() ? "MEMORY █used ▒rsv ·free" : "MEMORY #used %rsv .free", 0);
	else
		put(y, c->bar, c->bar_w, ROLE_DIM, "MEMORY", 0);
	put(y, c->used, 10, ROLE_DIM, " USED/TOT", 0);
	put(y, c->sens, 20, ROLE_DIM, "UTIL TEMP     POWER", 0);
	if (c->link >= 0)
		put(y, c->link, 6, ROLE_DIM, " PCIe", 0);
	if (COLS - c->spark >= 8)
		put(y, c->spark + 1, COLS - c->spark - 1, ROLE_DIM, "MEMORY HISTORY", 0);
}

static void gpu_compact(const struct app *a, int y, const struct compact_cols *c, const struct model_gpu *g)
{
	const vramz_gpu_sample *s = &g->cur.s;
	if (gpu_lost(y, 0, COLS, g, 1))
		return;
	char ua[16], ub[16], sens[96], link[64];
	int mark = finding_role(g->finding, ROLE_NORMAL);
	putf(y, 0, 3, mark, "%2u%s", s->index, g->finding >= VRAMZ_SEV_WARNING ? "!" : " ");
	put(y, 4, 10, ROLE_TITLE, gpu_short_name(g->cur.name), 1);
	mem_bar(y, c->bar, c->bar_w, s);
	int has_mem = (s->valid & VRAMZ_F_MEM) != 0;
	putf(y, c->used, 5, used_role(s->mem_used_bytes, s->mem_total_bytes), "%5s",
	     short_bytes(ua, sizeof ua, has_mem, s->mem_used_bytes));
	putf(y, c->used + 5, 6, ROLE_DIM, "/%-5s", short_bytes(ub, sizeof ub, has_mem, s->mem_total_bytes));
	sensors(sens, sizeof sens, s, 0);
	put(y, c->sens, 20, ROLE_NORMAL, sens, 0);
	if (c->link >= 0) {
		pcie(link, sizeof link, &g->cur);
		putf(y, c->link, 6, ROLE_DIM, " %-5s", link);
	}
	if (COLS - c->spark >= 8)
		sparkline(a, y, c->spark + 1, COLS - c->spark - 1, g);
}

/* The chart of all GPUs: memory (used + reserved) of each a line in GiB,
 * its index in its colour; utilization beside it where wide. */
static void all_charts(const struct app *a, int y, int h)
{
	const struct model *m = &a->m;
	int uw = util_cols(a, COLS);
	/* findings are marked on the memory chart of all, each where it began */
	struct part parts[2] = {{0, uw ? COLS - uw - 2 : COLS, a->f.n ? 0 : 'a'}, {COLS - uw, uw, 'b'}};
	double top = 0, min = 1e300, max = -1;
	int64_t step = 0;
	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct model_gpu *g = &m->gpus[i];
		const struct hist_point *now = model_hist(g, 0);
		if (now && now->mem_valid && (double)now->total_bytes / GIB > top)
			top = (double)now->total_bytes / GIB;
		double lo, hi;
		mem_span(g, parts[0].w * 2, &lo, &hi);
		min = lo < min ? lo : min;
		max = hi > max ? hi : max;
		if (!step)
			step = gpus_step_ms(g, a->replay ? 0 : a->interval_ms);
		for (int u = 0; u < 2; u++)
			if (parts[u].key)
				parts[u].key = chart_key(a, g, u, parts[u].x, parts[u].w, h, parts[u].key);
	}
	uint64_t tag;
	unsigned draw = parts_keep(y, h, parts, uw ? 2 : 1, &tag);
	static char names[MODEL_MAX_GPUS][4];
	for (int u = 0; u < (uw ? 2 : 1); u++) {
		struct chart c = {.y = y, .x = parts[u].x, .w = parts[u].w, .h = h,
				  .unit = u ? CHART_PCT : CHART_GIB, .top = u ? 100 : top, .step_ms = step,
				  .ceiling_role = ROLE_AXIS};
		if (!u) /* all GPUs' used range; the largest total its ceiling */
			mem_range(a, &c, min, max, top);
		if (!(draw >> u & 1) || !chart_begin(&c) || c.npts > 1024)
			continue;
		chart_legend(&c, -1, u ? "util by GPU" : c.open_top ? "used+rsv by GPU, zoomed" : "used+rsv by GPU");
		for (unsigned i = 0; i < m->ngpus; i++) {
			const struct model_gpu *g = &m->gpus[i];
			unsigned idx = g->cur.s.index;
			for (int k = 0; k < c.npts; k++) {
				const struct hist_point *p = model_hist(g, (unsigned)k);
				points_a[k] = !p ? -1
					      : u ? (p->util_valid ? p->util_pct : -1)
						  : (p->mem_valid ? (double)(p->used_bytes + p->reserved_bytes) / GIB : -1);
			}
			int role = ROLE_SERIES + (int)(idx % TERM_SERIES);
			chart_line(&c, points_a, role, (char)('0' + idx % 10));
			fmt_snprintf(names[i], sizeof names[i], "%u", idx);
			if (i < 9)
				chart_legend(&c, role, names[i]);
		}
		if (!u)
			mark_findings(a, &c, -1);
		chart_end(&c);
	}
	parts_done(y, h, tag);
}

void gpus_draw(const struct app *a, int y, const struct gpus_plan *p)
{
	const struct model *m = &a->m;
	int n = (int)m->ngpus;
	if (!p->compact) {
		for (int b = 0, yy = y; b < p->bands; b++) {
			int h = p->band_rows + (b < p->band_extra);
			band(a, yy, h, b * p->cols, p);
			yy += h;
		}
		return;
	}
	struct compact_cols cc;
	compact_cols(&cc);
	compact_legend(y, &cc);
	for (int i = 0; i < p->lines - 1; i++) {
		if (i == p->lines - 2 && p->lines - 1 < n) {
			putf(y + 1 + i, 0, COLS, ROLE_WARN,
			     "  +%d more GPUs: enlarge the terminal or choose with -g", n - i);
			break;
		}
		gpu_compact(a, y + 1 + i, &cc, &m->gpus[i]);
	}
	if (p->chart_rows)
		all_charts(a, y + p->lines, p->chart_rows);
}
