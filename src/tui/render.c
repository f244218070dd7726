/* SPDX-License-Identifier: Apache-2.0 */
/* render.c - draws one frame of `vramz top` from the model through the
 * view: a header line, the GPUs, the findings, the process table, a
 * status line and the keys.
 *
 * The GPU area picks its layout from the terminal: a block per GPU (name
 * and sensors, a memory bar split used / reserved / free with the numbers,
 * and a history plot) when every GPU fits with room for the table, else
 * one line per GPU with a short bar and a sparkline, so 8 GPUs stay usable
 * at 80x24.  Glyphs fall back to ASCII outside a UTF-8 locale, and every
 * colour role has a monochrome attribute (term.c), so no meaning rides on
 * colour alone: used, reserved and free are also different characters.
 *
 * The whole screen is drawn into a frame buffer (fb.c) that sends the
 * terminal only the cells that changed since the last frame; frames are
 * drawn on new data, a key or a resize only.
 */
#include "tui/app.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "format/fmt.h"
#include "tui/fb.h"
#include "tui/term.h"

#define TABLE_MIN_ROWS 4
#define FINDINGS_MAX_LINES 3

/* ---- text helpers ---------------------------------------------------------- */

/* Writes s at (y, x) in at most w columns, padded with blanks to w when pad. */
static int put(int y, int x, int w, int role, const char *s, int pad)
{
	return fb_put(y, x, w, role, s, pad);
}

static int putf(int y, int x, int w, int role, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int putf(int y, int x, int w, int role, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	fmt_vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return put(y, x, w, role, buf, 0);
}

/* "12.3G", "812M", "140G": sizes in five columns */
static const char *short_bytes(char *buf, size_t len, int valid, uint64_t b)
{
	static const char units[] = "BKMGTP";
	double v = (double)b;
	int u = 0;
	if (!valid)
		return fmt_snprintf(buf, len, "-"), buf;
	while (v >= 1000 && u < 5) {
		v /= 1024;
		u++;
	}
	fmt_snprintf(buf, len, v < 10 && u ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static const char *gpu_short_name(const char *name)
{
	if (!strncmp(name, "NVIDIA ", 7))
		return name + 7;
	return *name ? name : "?";
}

static int used_role(uint64_t used, uint64_t total)
{
	if (!total)
		return ROLE_OK;
	double f = (double)used / (double)total;
	return f >= 0.95 ? ROLE_CRIT : f >= 0.80 ? ROLE_WARN : ROLE_OK;
}

/* The colour of what a finding of severity sev names; base when none. */
static int finding_role(int sev, int base)
{
	return sev >= VRAMZ_SEV_CRITICAL ? ROLE_CRIT : sev >= VRAMZ_SEV_WARNING ? ROLE_WARN : base;
}

/* ---- GPU area -------------------------------------------------------------- */

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

/* The value of one plot column in [0, 1], or -1 when unknown. */
static double plot_value(const struct hist_point *h, int util)
{
	if (!h)
		return -1;
	if (util)
		return h->util_valid ? h->util_pct / 100.0 : -1;
	if (!h->mem_valid || !h->total_bytes)
		return -1;
	return (double)(h->used_bytes + h->reserved_bytes) / (double)h->total_bytes;
}

static void plot(int y, int x, int w, int h, const struct model_gpu *g, int util)
{
	static const wchar_t blocks[] = L" ▁▂▃▄▅▆▇█";
	static const wchar_t ascii[] = L" .._ooOO#";
	const wchar_t *glyph = term_utf8() ? blocks : ascii;
	int role = util ? ROLE_PLOT_UTIL : ROLE_PLOT;
	wchar_t col[16];
	if (h > 16)
		h = 16;
	for (int c = 0; c < w; c++) {
		double v = plot_value(model_hist(g, (unsigned)(w - 1 - c)), util);
		if (v < 0)
			continue; /* unknown: the blank the frame starts with */
		int level = (int)(v * h * 8 + 0.5);
		for (int r = 0; r < h; r++) {
			int fill = level - (h - 1 - r) * 8;
			col[r] = glyph[fill < 0 ? 0 : fill > 8 ? 8 : fill];
		}
		fb_column(y, x + c, h, role, col);
	}
}

static void sparkline(int y, int x, int w, const struct model_gpu *g)
{
	if (w > 0)
		plot(y, x, w, 1, g, 0);
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
	     gpu_short_name(g->cur.name),
	     s->lost ? "LOST: fell off the bus" : "not read this tick");
	return 1;
}

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
		put(y, c->bar, c->bar_w, ROLE_DIM, term_utf8() ? "MEMORY █used ▒rsv ·free"
								: "MEMORY #used %rsv .free", 0);
	else
		put(y, c->bar, c->bar_w, ROLE_DIM, "MEMORY", 0);
	put(y, c->used, 10, ROLE_DIM, " USED/TOT", 0);
	put(y, c->sens, 20, ROLE_DIM, "UTIL TEMP     POWER", 0);
	if (c->link >= 0)
		put(y, c->link, 6, ROLE_DIM, " PCIe", 0);
	if (COLS - c->spark >= 8)
		put(y, c->spark + 1, COLS - c->spark - 1, ROLE_DIM, "MEMORY HISTORY", 0);
}

static void gpu_compact(int y, const struct compact_cols *c, const struct model_gpu *g)
{
	const vramz_gpu_sample *s = &g->cur.s;
	if (gpu_lost(y, 0, COLS, g, 1))
		return;
	char a[16], b[16], sens[96], link[64];
	int mark = finding_role(g->finding, ROLE_NORMAL);
	putf(y, 0, 3, mark, "%2u%s", s->index, g->finding >= VRAMZ_SEV_WARNING ? "!" : " ");
	put(y, 4, 10, ROLE_TITLE, gpu_short_name(g->cur.name), 1);
	mem_bar(y, c->bar, c->bar_w, s);
	int has_mem = (s->valid & VRAMZ_F_MEM) != 0;
	putf(y, c->used, 5, used_role(s->mem_used_bytes, s->mem_total_bytes), "%5s",
	     short_bytes(a, sizeof a, has_mem, s->mem_used_bytes));
	putf(y, c->used + 5, 6, ROLE_DIM, "/%-5s",
	     short_bytes(b, sizeof b, has_mem, s->mem_total_bytes));
	sensors(sens, sizeof sens, s, 0);
	put(y, c->sens, 20, ROLE_NORMAL, sens, 0);
	if (c->link >= 0) {
		pcie(link, sizeof link, &g->cur);
		putf(y, c->link, 6, ROLE_DIM, " %-5s", link);
	}
	if (COLS - c->spark >= 8)
		sparkline(y, c->spark + 1, COLS - c->spark - 1, g);
}

/* One GPU as a block of plot_h + 2 lines, w columns wide from x0. */
static void gpu_full(int y, int x0, int w, int plot_h, int show_util,
		     const struct model_gpu *g)
{
	const vramz_gpu_sample *s = &g->cur.s;
	char a[24], b[24], c[24], d[24], sens[128], link[64];
	if (gpu_lost(y, x0, w, g, 0))
		return;
	int mark = finding_role(g->finding, ROLE_TITLE);
	int x = putf(y, x0, w, mark, "GPU %u%s %s", s->index,
		     g->finding >= VRAMZ_SEV_WARNING ? "!" : "",
		     gpu_short_name(g->cur.name));
	sensors(sens, sizeof sens, s, 1);
	pcie(link, sizeof link, &g->cur);
	x = x < 22 ? 22 : x + 2;
	putf(y, x0 + x, w - x, ROLE_NORMAL, "%s  PCIe %s", sens, link);
	/* bar + numbers */
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
	/* history: memory, and utilization beside it when asked */
	int pw = w - 8, uw = 0;
	if (show_util && pw > 40) {
		uw = pw / 3;
		pw -= uw + 6;
	}
	const struct hist_point *now = model_hist(g, 0);
	const struct hist_point *old = model_hist(g, (unsigned)(pw - 1));
	if (!old && g->hist_n)
		old = model_hist(g, g->hist_n - 1);
	char span[24] = "";
	if (old && now && now->time_ms > old->time_ms)
		fmt_duration(span, sizeof span, now->time_ms - old->time_ms);
	/* Plots of one value all along (the point that scrolled off too) look
	 * as they did the frame before: their rows are kept, with their
	 * labels, when the place, the size and the value are the same. */
	uint64_t tag = 0;
	if (now && g->flat_mem > (unsigned)pw && (!uw || g->flat_util > (unsigned)uw)) {
		struct {
			int x0, w, plot_h, pw, uw, utf8, cols, row;
			char span[24];
			struct hist_point v;
		} k;
		memset(&k, 0, sizeof k);
		k.x0 = x0, k.w = w, k.plot_h = plot_h, k.pw = pw, k.uw = uw, k.utf8 = term_utf8();
		k.cols = COLS;
		memcpy(k.span, span, sizeof k.span);
		k.v = *now;
		k.v.time_ms = 0;
		tag = fb_hash(&k, sizeof k, 'p');
		if (fb_keep_rows(y + 2, plot_h, tag))
			return;
	}
	put(y + 2, x0 + 1, 6, ROLE_DIM, "mem", 0);
	if (span[0])
		putf(y + 1 + plot_h, x0 + 1, 6, ROLE_DIM, "-%s", span);
	plot(y + 2, x0 + 7, pw, plot_h, g, 0);
	if (uw) {
		put(y + 2, x0 + 7 + pw + 1, 5, ROLE_DIM, "util", 0);
		plot(y + 2, x0 + 7 + pw + 6, uw, plot_h, g, 1);
	}
	for (int r = 0; tag && r < plot_h; r++)
		fb_tag(y + 2 + r, tag + (uint64_t)r);
}

/* Rows the GPU area takes. */
static int gpu_area(const struct app *a, int y, int avail)
{
	const struct model *m = &a->m;
	int n = (int)m->ngpus;
	if (n == 0 || avail <= 0)
		return 0;
	/* the process table keeps a third of the screen */
	int keep = avail / 3 > TABLE_MIN_ROWS ? avail / 3 : TABLE_MIN_ROWS;
	int room = avail - 1 - keep;
	int cols = COLS >= 160 && n > 1 ? 2 : 1;
	int blocks = (n + cols - 1) / cols;
	int full = a->v.layout == LAYOUT_FULL ||
		   (a->v.layout == LAYOUT_AUTO && COLS >= 70 && blocks * 4 <= room);
	if (full && blocks * 3 <= avail) {
		int per = (blocks * 4 <= room ? room : avail) / blocks;
		int plot_h = per - 2;
		plot_h = plot_h > 8 ? 8 : plot_h < 1 ? 1 : plot_h;
		int bw = COLS / cols;
		int shown = 0;
		for (int i = 0; i < n; i += cols) {
			if (shown + plot_h + 2 > avail)
				break;
			for (int c = 0; c < cols && i + c < n; c++)
				gpu_full(y + shown, c * bw, bw - (c + 1 < cols ? 2 : 0), plot_h,
					 a->v.show_util, &m->gpus[i + c]);
			shown += plot_h + 2;
		}
		return shown;
	}
	/* compact: a legend line, then one line per GPU */
	struct compact_cols cc;
	compact_cols(&cc);
	int lines = n + 1 <= avail ? n + 1 : avail;
	compact_legend(y, &cc);
	for (int i = 0; i < lines - 1; i++) {
		if (i == lines - 2 && lines - 1 < n) {
			putf(y + 1 + i, 0, COLS, ROLE_WARN, "  +%d more GPUs: enlarge the terminal "
			     "or choose with -g", n - i);
			break;
		}
		gpu_compact(y + 1 + i, &cc, &m->gpus[i]);
	}
	return lines;
}

/* ---- process table ------------------------------------------------------- */

struct colw {
	int w[COL_COUNT];
};

static void table_widths(struct colw *c)
{
	static const int base[COL_COUNT] = {7, 8, 10, 5, 9, 4, 6, 0};
	memcpy(c->w, base, sizeof base);
	if (COLS >= 110)
		c->w[COL_JOB] = 16, c->w[COL_USER] = 12;
	int used = 1;
	for (int i = 0; i < COL_CMD; i++)
		used += c->w[i] + 1;
	c->w[COL_CMD] = COLS - used > 8 ? COLS - used : 8;
}

static void table_header(const struct app *a, int y, const struct colw *c)
{
	const int key[] = {'h', (int)a->v.ar.sort, a->v.ar.reverse, term_utf8(), COLS};
	uint64_t tag = fb_hash(c, sizeof *c, fb_hash(key, sizeof key, 0));
	if (fb_keep(y, tag))
		return; /* the same header as the frame before */
	int x = 1;
	fb_fill(y, 0, COLS, ROLE_HEAD, L' ');
	for (int i = 0; i < COL_COUNT; i++) {
		int sorted = a->v.ar.sort == (enum model_col)i;
		int up = (i == COL_VRAM || i == COL_SM || i == COL_IDLE) == a->v.ar.reverse;
		const char *arrow = term_utf8() ? (up ? "▲" : "▼") : (up ? "^" : "v");
		const char *name = model_col_name((enum model_col)i); /* ASCII */
		int right = i == COL_PID || i == COL_VRAM || i == COL_SM || i == COL_IDLE;
		int role = sorted ? ROLE_KEYTEXT : ROLE_HEAD;
		/* the name and the arrow (one column), padded in the column's role */
		int pad = c->w[i] - (int)strlen(name) - sorted;
		pad = right && pad > 0 ? pad : 0;
		fb_fill(y, x, c->w[i], role, L' ');
		int n = put(y, x + pad, c->w[i] - pad, role, name, 0);
		if (sorted)
			put(y, x + pad + n, c->w[i] - pad - n, role, arrow, 0);
		x += c->w[i] + 1;
	}
	fb_tag(y, tag);
}

static void table_row(const struct app *a, int y, const struct model_row *r, int sel,
		      const struct colw *c)
{
	char cells[COL_COUNT][300];
	char idle[24];
	fmt_snprintf(cells[COL_PID], sizeof cells[0], "%*u", c->w[COL_PID], r->pid);
	fmt_snprintf(cells[COL_USER], sizeof cells[0], "%s", r->user);
	fmt_snprintf(cells[COL_JOB], sizeof cells[0], "%s", r->job[0] ? r->job : "-");
	fmt_snprintf(cells[COL_GPU], sizeof cells[0], "%s", r->gpus);
	char b[24];
	fmt_snprintf(cells[COL_VRAM], sizeof cells[0], "%*s", c->w[COL_VRAM],
		 fmt_bytes_if(b, sizeof b, r->vram_valid, r->vram_bytes));
	if (r->sm_valid)
		fmt_snprintf(cells[COL_SM], sizeof cells[0], "%*u", c->w[COL_SM], r->sm_pct);
	else
		fmt_snprintf(cells[COL_SM], sizeof cells[0], "%*s", c->w[COL_SM], "-");
	if (r->idle_valid && r->sm_pct == 0)
		fmt_snprintf(idle, sizeof idle, "%s%s", r->idle_lower ? ">" : "",
			 fmt_duration(b, sizeof b, r->idle_ms));
	else
		fmt_snprintf(idle, sizeof idle, r->idle_valid ? "busy" : "-");
	fmt_snprintf(cells[COL_IDLE], sizeof cells[0], "%*s", c->w[COL_IDLE], idle);
	const char *branch = term_utf8() ? "└ " : "`-";
	char tag[64] = "";
	if (r->torch) { /* what its PyTorch agent says, ahead of the command */
		char rb[16], ob[16];
		fmt_snprintf(tag, sizeof tag, "[torch %s rsv, %s outside] ",
			 fmt_bytes(rb, sizeof rb, r->torch_reserved_bytes),
			 fmt_bytes(ob, sizeof ob, r->outside_bytes));
	}
	/* a long command is cut at the cell: that is the point of the cell */
	if (fmt_snprintf(cells[COL_CMD], sizeof cells[0], "%*s%s%s%s", r->depth > 1 ? (r->depth - 1) * 2 : 0,
		     "", r->depth ? branch : "", tag, r->cmd) >= (int)sizeof cells[0])
		cells[COL_CMD][sizeof cells[0] - 1] = '\0';
	int base = sel ? ROLE_SEL : r->group ? ROLE_DIM : ROLE_NORMAL;
	if (sel)
		fb_fill(y, 0, COLS, ROLE_SEL, L' ');
	if (r->finding >= VRAMZ_SEV_WARNING)
		put(y, 0, 1, sel ? ROLE_SEL : finding_role(r->finding, ROLE_NORMAL), "!", 0);
	int x = 1;
	for (int i = 0; i < COL_COUNT; i++) {
		int role = base;
		if (!sel && i == COL_CMD && !r->visible)
			role = ROLE_DIM;
		if (!sel && i == COL_VRAM && r->finding >= VRAMZ_SEV_WARNING)
			role = finding_role(r->finding, base);
		put(y, x, c->w[i], role, cells[i], sel);
		x += c->w[i] + 1;
	}
}

/* A table row is kept from the frame before (fb_keep) when the tag of
 * what it shows is the same: the row as the model has it (its idle time
 * as the words shown, not the milliseconds, which move every tick),
 * selected or not, in which columns.  Most rows, most frames, on a
 * machine whose jobs hold their memory, are not formatted again. */
static uint64_t row_tag_of(const struct model_row *r, int sel, const struct colw *c)
{
	struct {
		int sel, utf8, cols;
		struct colw c;
		char idle[24];
		struct model_row r;
	} k;
	memset(&k, 0, sizeof k);
	k.sel = sel;
	k.utf8 = term_utf8();
	k.cols = COLS;
	k.c = *c;
	k.r = *r;
	k.r.idle_ms = 0;
	if (r->idle_valid && r->sm_pct == 0)
		fmt_duration(k.idle, sizeof k.idle, r->idle_ms);
	return fb_hash(&k, sizeof k, 't');
}

static void table(struct app *a, int y, int rows)
{
	struct view *v = &a->v;
	const struct model *m = &a->m;
	struct colw c;
	table_widths(&c);
	table_header(a, y, &c);
	y++;
	rows--;
	v->table_y = y;
	v->table_rows = rows;
	if (rows <= 0)
		return;
	if (v->sel >= 0 && v->sel < v->scroll)
		v->scroll = v->sel;
	if (v->sel >= v->scroll + rows)
		v->scroll = v->sel - rows + 1;
	if (v->scroll > (int)m->norder - rows)
		v->scroll = (int)m->norder - rows;
	if (v->scroll < 0)
		v->scroll = 0;
	if (m->norder == 0) {
		const struct arrange *ar = &v->ar;
		int filtered = ar->text[0] || ar->user[0] || ar->gpu >= 0;
		put(y, 2, COLS - 2, ROLE_DIM, m->nrows ? "no process matches the filter (Esc clears it)"
					   : filtered ? "no process matches the filter"
						      : "no process holds GPU memory", 0);
		return;
	}
	for (int i = 0; i < rows && v->scroll + i < (int)m->norder; i++) {
		int idx = v->scroll + i;
		const struct model_row *r = &m->rows[m->order[idx]];
		uint64_t tag = row_tag_of(r, idx == v->sel, &c);
		if (fb_keep(y + i, tag))
			continue;
		table_row(a, y + i, r, idx == v->sel, &c);
		fb_tag(y + i, tag);
	}
}

/* ---- header, findings, status, keys, dialogs ----------------------------- */

/* "vramz top  driver 580.159.04  CUDA 13.0  2 GPUs  3 processes ...  12:00:01"; a
 * replay names its file instead of the driver (a log does not record it)
 * and shows the recorded date and time, and how far into the log. */
/* The local time of ms since the epoch.  localtime_r looks the zone up
 * each call, a good part of a frame of a `top` reading a daemon; the
 * broken-down start of the minute is kept instead, since zones change
 * their offset on whole minutes. */
static int local_tm(int64_t ms, struct tm *out)
{
	static time_t minute = -1;
	static struct tm at_minute;
	time_t t = (time_t)(ms / 1000), m = t - t % 60;
	if (ms < 0)
		return 0;
	if (m != minute) {
		if (!localtime_r(&m, &at_minute))
			return minute = -1, 0;
		minute = m;
	}
	if (at_minute.tm_sec) /* an offset with seconds (a zone's old LMT) */
		return localtime_r(&t, out) != NULL;
	*out = at_minute;
	out->tm_sec = (int)(t - m);
	return 1;
}

static void header(const struct app *a)
{
	const struct model *m = &a->m;
	const struct arrange *ar = &a->v.ar;
	char when[48] = "", filt[160] = "";
	struct tm tm;
	if (m->now_ms && local_tm(m->now_ms, &tm)) {
		/* strftime's "%Y-%m-%d %H:%M:%S" / "%H:%M:%S", by hand: strftime
		 * was the only caller of its code and locale tables in a frame */
		if (a->replay)
			fmt_snprintf(when, sizeof when, "%d-%02d-%02d %02d:%02d:%02d", tm.tm_year + 1900,
				     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
		else
			fmt_snprintf(when, sizeof when, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	size_t o = 0;
	if (ar->user[0])
		o += (size_t)fmt_snprintf(filt + o, sizeof filt - o, " user=%s", ar->user);
	if (ar->gpu >= 0 && o < sizeof filt)
		o += (size_t)fmt_snprintf(filt + o, sizeof filt - o, " gpu=%d", ar->gpu);
	if (ar->text[0] && o < sizeof filt)
		fmt_snprintf(filt + o, sizeof filt - o, " /%s", ar->text);
	char counts[256];
	fmt_snprintf(counts, sizeof counts, "  %u GPU%s  %u process%s%s%s%s", m->ngpus,
		 m->ngpus == 1 ? "" : "s", m->nrows, m->nrows == 1 ? "" : "es",
		 ar->tree ? "  [tree]" : "", filt[0] ? "  filter:" : "", filt);
	static const char title[] = "vramz top", replay_of[] = "  replay of ";
	if (!a->replay) {
		int x = put(0, 0, COLS, ROLE_TITLE, title, 0);
		x += putf(0, x, COLS - x, ROLE_NORMAL, "  %s", a->source[0] ? a->source : "driver -");
		put(0, x, COLS - x, ROLE_NORMAL, counts, 0);
		int w = (int)strlen(when);
		put(0, COLS - w, w, ROLE_NORMAL, when, 0);
		return;
	}
	/* A replay's state on the right ("1x [end]  recorded 2026-11-30
	 * 10:00:00  +2m") matters more than the file's directory: where the
	 * two do not fit, the file is named by its base name, then the state
	 * drops "recorded ", then the date, and only then is the left clipped. */
	struct sampler_state st;
	sampler_get_state(a->sp, &st);
	char off[24] = "", r[128];
	if (m->now_ms && st.first_ms && m->now_ms >= st.first_ms)
		fmt_duration(off, sizeof off, m->now_ms - st.first_ms);
	const char *base = strrchr(a->source, '/'), *src = a->source;
	int w = 0;
	for (int level = 0; level < 4; level++) {
		if (level == 1 && base && base[1])
			src = base + 1;
		w = fmt_snprintf(r, sizeof r, "%gx%s%s%s%s%s", st.speed,
			     st.ended ? " [end]" : st.paused ? " [paused]" : "",
			     level < 3 && when[0] ? (level < 2 ? "  recorded " : "  ") : "",
			     level < 3 ? when : "", off[0] ? "  +" : "", off);
		w = w < 0 ? 0 : w >= (int)sizeof r ? (int)sizeof r - 1 : w;
		if ((int)(sizeof title - 1 + sizeof replay_of - 1 + strlen(src) + strlen(counts)) + 1 + w <=
		    COLS)
			break;
	}
	int lw = COLS - w - 1 > (int)sizeof title - 1 ? COLS - w - 1 : COLS;
	int x = put(0, 0, lw, ROLE_TITLE, title, 0);
	x += putf(0, x, lw - x, ROLE_WARN, "%s%s", replay_of, src);
	put(0, x, lw - x, ROLE_NORMAL, counts, 0);
	if (lw < COLS)
		put(0, COLS - w, w, ROLE_WARN, r, 0);
}

static int findings_panel(const struct app *a, int y, int max)
{
	static const char *const label[] = {"", "INFO ", "WARN ", "CRIT "};
	const struct findings *f = &a->f;
	int n = (int)f->n < max ? (int)f->n : max;
	for (int i = 0; i < n; i++) {
		const vramz_finding *x = &f->v[i];
		int role = finding_role((int)x->severity, ROLE_NORMAL);
		int x0 = put(y + i, 0, COLS, role, (unsigned)x->severity < 4 ? label[x->severity] : "", 0);
		if (i == n - 1 && (int)f->n > n) {
			char more[32];
			int mw = fmt_snprintf(more, sizeof more, "  (+%u more)", f->n - (unsigned)n);
			x0 += put(y + i, x0, COLS - x0 - mw, role, findings_text(f, (unsigned)i), 0);
			put(y + i, x0, mw, ROLE_DIM, more, 0);
		} else {
			put(y + i, x0, COLS - x0, role, findings_text(f, (unsigned)i), 0);
		}
	}
	return n;
}

static void keys_line(const struct app *a)
{
	static const char *const live[][2] = {
		{"?", "Help"}, {"/", "Filter"}, {"u", "User"}, {"g", "GPU"}, {"Esc", "Clear"},
		{"<>", "Sort"}, {"r", "Rev"}, {"t", "Tree"}, {"k", "Kill"}, {"m", "Util"},
		{"l", "Layout"}, {"q", "Quit"}};
	static const char *const replay[][2] = {
		{"?", "Help"}, {"Spc", "Pause"}, {"<-->", "Seek"}, {"+-", "Speed"},
		{"/", "Filter"}, {"u", "User"}, {"g", "GPU"}, {"<>", "Sort"}, {"t", "Tree"},
		{"m", "Util"}, {"q", "Quit"}};
	const char *const (*k)[2] = a->replay ? replay : live;
	size_t n = a->replay ? sizeof replay / sizeof replay[0] : sizeof live / sizeof live[0];
	int y = LINES - 1, x = 0;
	const int key[] = {'k', COLS, a->replay, term_utf8()};
	uint64_t tag = fb_hash(key, sizeof key, 0);
	if (fb_keep(y, tag))
		return; /* the same line as the frame before */
	for (size_t i = 0; i < n && x < COLS; i++) {
		int kw = (int)strlen(k[i][0]), lw = (int)strlen(k[i][1]);
		if (x + kw + lw > COLS)
			break;
		x += put(y, x, kw, ROLE_KEY, k[i][0], 0);
		x += put(y, x, lw + 1, ROLE_KEYTEXT, k[i][1], 0);
		x += put(y, x, 1, ROLE_NORMAL, " ", 0);
	}
	fb_tag(y, tag);
}

static void status_line(const struct app *a)
{
	const struct view *v = &a->v;
	int y = LINES - 2;
	if (v->mode == MODE_PROMPT) {
		static const char *const label[] = {"Filter (pid/user/job/command): ",
						    "User: ", "GPU index: "};
		int x = put(y, 0, COLS, ROLE_TITLE, label[v->prompt], 0);
		x += put(y, x, COLS - x - 1, ROLE_NORMAL, v->input, 0);
		put(y, x, 1, ROLE_SEL, " ", 0);
		putf(y, x + 2, COLS - x - 2, ROLE_DIM, "Enter applies, empty clears, Esc cancels");
		return;
	}
	if (v->mode == MODE_CONFIRM) {
		int i = model_find_pid(&a->m, v->confirm_pid);
		putf(y, 0, COLS, ROLE_CRIT, "Send SIG%s to pid %u (%s) of %s? y/N",
		     kill_signame(app_signals[v->sig_choice]), v->confirm_pid,
		     i >= 0 ? a->m.rows[i].cmd : "?", i >= 0 ? a->m.rows[i].user : "?");
		return;
	}
	if (v->status[0])
		put(y, 0, COLS, v->status_role, v->status, 0);
	else if (a->m.errmsg[0])
		put(y, 0, COLS, ROLE_CRIT, a->m.errmsg, 0);
	else if (a->m.ticks == 0)
		put(y, 0, COLS, ROLE_DIM, "reading the GPUs...", 0);
}

/* A framed box, drawn into the frame like everything else (so closing it
 * needs nothing but the next frame). */
static void draw_box(int y, int x, int h, int w, const char *title)
{
	int u = term_utf8();
	for (int r = 1; r < h - 1; r++) {
		fb_fill(y + r, x, w, ROLE_NORMAL, L' ');
		fb_putc(y + r, x, ROLE_NORMAL, u ? L'│' : L'|');
		fb_putc(y + r, x + w - 1, ROLE_NORMAL, u ? L'│' : L'|');
	}
	fb_fill(y, x, w, ROLE_NORMAL, u ? L'─' : L'-');
	fb_fill(y + h - 1, x, w, ROLE_NORMAL, u ? L'─' : L'-');
	fb_putc(y, x, ROLE_NORMAL, u ? L'┌' : L'+');
	fb_putc(y, x + w - 1, ROLE_NORMAL, u ? L'┐' : L'+');
	fb_putc(y + h - 1, x, ROLE_NORMAL, u ? L'└' : L'+');
	fb_putc(y + h - 1, x + w - 1, ROLE_NORMAL, u ? L'┘' : L'+');
	putf(y, x + 2, w - 4, ROLE_TITLE, " %s ", title);
}

static void signal_menu(const struct app *a)
{
	int h = (int)app_signal_count + 2, w = 30;
	int y = (LINES - h) / 2, x = (COLS - w) / 2;
	if (y < 0 || x < 0)
		y = x = 0;
	char t[64];
	fmt_snprintf(t, sizeof t, "signal for pid %u", a->v.confirm_pid);
	draw_box(y, x, h, w, t);
	for (unsigned i = 0; i < app_signal_count; i++)
		putf(y + 1 + (int)i, x + 2, w - 4, (int)i == a->v.sig_choice ? ROLE_SEL : ROLE_NORMAL,
		     " %2d SIG%-18s", app_signals[i], kill_signame(app_signals[i]));
}

static void help(const struct app *a)
{
	static const char *const lines[] = {
		"Up/Down PgUp/PgDn Home/End  select a process (mouse click too)",
		"k        kill: choose a signal (Enter), confirm (y)",
		"/        filter by text (pid, user, job, command)",
		"u  g     filter by user / by GPU index;  Esc or \\ clears",
		"< >  r   sort by the previous / next column; reverse",
		"P U J G M S I C   sort by PID USER JOB GPU VRAM SM% IDLE CMD",
		"t        tree: processes under their parents",
		"m        utilization plot beside memory;  l  layout",
		"Space <- -> + -   replay: pause, seek 30s, speed",
		"q F10    quit          ?  this help",
		"",
		"bar: # or █ used   % or ▒ reserved by the driver   . free",
		"IDLE: time since the process last used the SMs; >: at least",
		"(other ns): a pid this /proc cannot see; no name is guessed",
		"!: named by a finding (panel above the process table)",
	};
	int n = (int)(sizeof lines / sizeof lines[0]);
	int w = COLS < 74 ? COLS : 74, h = n + 3 < LINES ? n + 3 : LINES;
	int y = (LINES - h) / 2, x = (COLS - w) / 2;
	draw_box(y, x, h, w, "vramz top keys (any key closes)");
	for (int i = 0; i < n && i < h - 2; i++) {
		const char *s = lines[i];
		if (!term_utf8() && strstr(s, "█"))
			s = "bar: # used   % reserved by the driver   . free";
		put(y + 1 + i, x + 2, w - 4, ROLE_NORMAL, s, 0);
	}
	(void)a;
}

void render_screen(struct app *a)
{
	if (fb_begin() < 0) {
		erase(); /* out of memory: say so the plain way */
		mvaddstr(0, 0, "vramz top: out of memory");
		refresh();
		return;
	}
	if (LINES < 8 || COLS < 40) {
		put(0, 0, COLS, ROLE_WARN, "vramz top: terminal too small (need 40x8)", 0);
		fb_flush();
		return;
	}
	/* a plot kept as one value all along assumes one point came since the
	 * frame before: after several (a replay at speed, a slow frame), draw */
	if (a->m.fed > 1)
		fb_forget();
	a->m.fed = 0;
	header(a);
	int y = 1;
	int bottom = LINES - 2; /* status and keys lines */
	int nf = (int)a->f.n > FINDINGS_MAX_LINES ? FINDINGS_MAX_LINES : (int)a->f.n;
	if (LINES < 20 && nf > 1)
		nf = 1;
	int avail = bottom - y - nf;
	y += gpu_area(a, y, avail);
	y += findings_panel(a, y, nf);
	if (bottom - y >= 2)
		table(a, y, bottom - y);
	status_line(a);
	keys_line(a);
	if (a->v.mode == MODE_HELP)
		help(a);
	else if (a->v.mode == MODE_SIGNAL)
		signal_menu(a);
	fb_flush();
}
