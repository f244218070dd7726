/* SPDX-License-Identifier: Apache-2.0 */
/* table.c - the process table of `vramz top`: a row per process holding
 * GPU memory, its GPUs, memory and SM use, how long it has been idle,
 * its host side (CPU %, resident memory, elapsed time, state: host.c)
 * and its command.
 *
 * Columns: PID USER JOB GPU VRAM SM% IDLE CPU% RSS TIME S COMMAND.  USER
 * is as wide as the longest name shown (at most 16), and the host
 * columns are shown where the width leaves COMMAND its room (CPU% and
 * the state first: they tell a stuck process from a busy one), unless
 * the person chose (`c`, `--hide`) or sorts by one.  A replay has no
 * host side (its pids are not this machine's now), so it hides them.
 *
 * A row is kept from the frame before (fb_keep) when the tag of what it
 * shows is the same: the row as the model has it, with its times and CPU
 * % as the words shown, selected or not, in which columns.
 */
#include "tui/render.h"

#include <string.h>

#include "format/fmt.h"
#include "tui/term.h"

#define USER_MAX 16
#define CMD_MIN 30

struct colw {
	int w[COL_COUNT];                 /* 0: not shown */
};

static int is_host(int c)
{
	return c == COL_CPU || c == COL_RSS || c == COL_TIME || c == COL_STATE;
}

static int right_aligned(int c)
{
	return c == COL_PID || c == COL_VRAM || c == COL_SM || c == COL_IDLE || c == COL_CPU ||
	       c == COL_RSS || c == COL_TIME;
}

/* display columns of a UTF-8 name */
static int name_cols(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void table_widths(const struct app *a, struct colw *c)
{
	static const int base[COL_COUNT] = {7, 8, 10, 5, 9, 4, 6, 5, 5, 6, 2, 0};
	static const enum model_col host_order[] = {COL_CPU, COL_STATE, COL_RSS, COL_TIME};
	const struct view *v = &a->v;
	memcpy(c->w, base, sizeof base);
	if (COLS >= 110)
		c->w[COL_JOB] = 16;
	int user = 4;
	for (unsigned i = 0; i < a->m.nrows; i++) {
		int n = name_cols(a->m.rows[i].user);
		user = n > user ? n : user;
	}
	c->w[COL_USER] = user > USER_MAX ? USER_MAX : user;
	int used = 1;
	for (int i = 0; i < COL_CMD; i++) {
		if (is_host(i) || (v->cols[i] == COLM_OFF && i != COL_PID))
			c->w[i] = is_host(i) ? c->w[i] : 0;
		else
			used += c->w[i] + 1;
	}
	/* the host columns: asked for, sorted by, or where COMMAND keeps its room */
	for (unsigned k = 0; k < sizeof host_order / sizeof host_order[0]; k++) {
		enum model_col h = host_order[k];
		int want = v->cols[h] == COLM_ON || v->ar.sort == h ||
			   (v->cols[h] == COLM_AUTO && !a->replay && used + c->w[h] + 1 + CMD_MIN <= COLS);
		if (v->cols[h] == COLM_OFF && v->ar.sort != h)
			want = 0;
		if (want)
			used += c->w[h] + 1;
		else
			c->w[h] = 0;
	}
	/* a long user name gives way before the command does */
	if (COLS - used < CMD_MIN && c->w[COL_USER] > 8) {
		int give = c->w[COL_USER] - 8 < CMD_MIN - (COLS - used) ? c->w[COL_USER] - 8
									  : CMD_MIN - (COLS - used);
		c->w[COL_USER] -= give;
		used -= give;
	}
	c->w[COL_CMD] = COLS - used > 8 ? COLS - used : 8;
}

int table_shown(const struct app *a, enum model_col col)
{
	struct colw c;
	table_widths(a, &c);
	return c.w[col] > 0;
}

int table_need(const struct app *a)
{
	return 1 + (a->m.norder ? (int)a->m.norder : 1);
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
		if (!c->w[i])
			continue;
		int sorted = a->v.ar.sort == (enum model_col)i;
		int up = model_col_desc((enum model_col)i) == a->v.ar.reverse;
		const char *arrow = term_utf8() ? (up ? "▲" : "▼") : (up ? "^" : "v");
		const char *name = model_col_name((enum model_col)i); /* ASCII */
		int role = sorted ? ROLE_KEYTEXT : ROLE_HEAD;
		/* the name and the arrow (one column), padded in the column's role */
		int pad = c->w[i] - (int)strlen(name) - sorted;
		pad = right_aligned(i) && pad > 0 ? pad : 0;
		fb_fill(y, x, c->w[i], role, L' ');
		int n = put(y, x + pad, c->w[i] - pad, role, name, 0);
		if (sorted)
			put(y, x + pad + n, c->w[i] - pad - n, role, arrow, 0);
		x += c->w[i] + 1;
	}
	fb_tag(y, tag);
}

/* "0.4", "12", "340": CPU % as shown (a tenth below 10 %) */
static unsigned cpu_shown(unsigned tenths)
{
	return tenths < 100 ? tenths : tenths / 10 * 10;
}

static void host_cells(char (*cells)[300], const struct model_row *r, const struct colw *c)
{
	char b[24];
	size_t n = sizeof cells[0];
	if (!r->cpu_valid)
		fmt_snprintf(cells[COL_CPU], n, "%*s", c->w[COL_CPU], "-");
	else if (r->cpu_tenths < 100)
		fmt_snprintf(cells[COL_CPU], n, "%*u.%u", c->w[COL_CPU] - 2, r->cpu_tenths / 10,
			     r->cpu_tenths % 10);
	else
		fmt_snprintf(cells[COL_CPU], n, "%*u", c->w[COL_CPU], r->cpu_tenths / 10);
	fmt_snprintf(cells[COL_RSS], n, "%*s", c->w[COL_RSS],
		     short_bytes(b, sizeof b, r->rss_valid, r->rss_bytes));
	fmt_snprintf(cells[COL_TIME], n, "%*s", c->w[COL_TIME],
		     r->age_valid ? fmt_duration(b, sizeof b, r->age_ms) : "-");
	fmt_snprintf(cells[COL_STATE], n, "%c", r->state ? r->state : '-');
}

static void table_row(const struct model_row *r, int y, int sel, const struct colw *c)
{
	char cells[COL_COUNT][300];
	char idle[24], b[24];
	size_t n = sizeof cells[0];
	fmt_snprintf(cells[COL_PID], n, "%*u", c->w[COL_PID], r->pid);
	fmt_snprintf(cells[COL_USER], n, "%s", r->user);
	fmt_snprintf(cells[COL_JOB], n, "%s", r->job[0] ? r->job : "-");
	fmt_snprintf(cells[COL_GPU], n, "%s", r->gpus);
	fmt_snprintf(cells[COL_VRAM], n, "%*s", c->w[COL_VRAM],
		     fmt_bytes_if(b, sizeof b, r->vram_valid, r->vram_bytes));
	if (r->sm_valid)
		fmt_snprintf(cells[COL_SM], n, "%*u", c->w[COL_SM], r->sm_pct);
	else
		fmt_snprintf(cells[COL_SM], n, "%*s", c->w[COL_SM], "-");
	if (r->idle_valid && r->sm_pct == 0)
		fmt_snprintf(idle, sizeof idle, "%s%s", r->idle_lower ? ">" : "",
			     fmt_duration(b, sizeof b, r->idle_ms));
	else
		fmt_snprintf(idle, sizeof idle, r->idle_valid ? "busy" : "-");
	fmt_snprintf(cells[COL_IDLE], n, "%*s", c->w[COL_IDLE], idle);
	host_cells(cells, r, c);
	const char *branch = term_utf8() ? "└ " : "`-";
	char tag[64] = "";
	if (r->torch) { /* what its PyTorch agent says, ahead of the command */
		char rb[16], ob[16];
		fmt_snprintf(tag, sizeof tag, "[torch %s rsv, %s outside] ",
			     fmt_bytes(rb, sizeof rb, r->torch_reserved_bytes),
			     fmt_bytes(ob, sizeof ob, r->outside_bytes));
	}
	/* a long command is cut at the cell: that is the point of the cell */
	if (fmt_snprintf(cells[COL_CMD], n, "%*s%s%s%s", r->depth > 1 ? (r->depth - 1) * 2 : 0, "",
			 r->depth ? branch : "", tag, r->cmd) >= (int)n)
		cells[COL_CMD][n - 1] = '\0';
	int base = sel ? ROLE_SEL : r->group ? ROLE_DIM : ROLE_NORMAL;
	if (sel)
		fb_fill(y, 0, COLS, ROLE_SEL, L' ');
	if (r->tagged) /* Space: k signals it with the others (over a '!') */
		put(y, 0, 1, sel ? ROLE_SEL : ROLE_KEY, "*", 0);
	else if (r->finding >= VRAMZ_SEV_WARNING)
		put(y, 0, 1, sel ? ROLE_SEL : finding_role(r->finding, ROLE_NORMAL), "!", 0);
	int x = 1;
	for (int i = 0; i < COL_COUNT; i++) {
		if (!c->w[i])
			continue;
		int role = base;
		if (!sel && i == COL_CMD && !r->visible)
			role = ROLE_DIM;
		if (!sel && i == COL_VRAM && r->finding >= VRAMZ_SEV_WARNING)
			role = finding_role(r->finding, base);
		if (!sel && i == COL_STATE && r->state == 'D')
			role = ROLE_WARN; /* uninterruptible: stuck on I/O, or about to be */
		put(y, x, c->w[i], role, cells[i], sel);
		x += c->w[i] + 1;
	}
}

static uint64_t row_tag_of(const struct model_row *r, int sel, const struct colw *c)
{
	struct {
		int sel, utf8, cols;
		struct colw c;
		char idle[24], age[24];
		struct model_row r;
	} k;
	memset(&k, 0, sizeof k);
	k.sel = sel;
	k.utf8 = term_utf8();
	k.cols = COLS;
	k.c = *c;
	k.r = *r;
	k.r.idle_ms = k.r.age_ms = 0;
	k.r.cpu_tenths = cpu_shown(r->cpu_tenths);
	if (r->idle_valid && r->sm_pct == 0)
		fmt_duration(k.idle, sizeof k.idle, r->idle_ms);
	if (r->age_valid && c->w[COL_TIME])
		fmt_duration(k.age, sizeof k.age, r->age_ms);
	return fb_hash(&k, sizeof k, 't');
}

void table_draw(struct app *a, int y, int rows)
{
	struct view *v = &a->v;
	const struct model *m = &a->m;
	struct colw c;
	table_widths(a, &c);
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
		put(y, 2, COLS - 2, ROLE_DIM,
		    m->nrows ? "no process matches the filter (Esc clears it)"
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
		table_row(r, y + i, idx == v->sel, &c);
		fb_tag(y + i, tag);
	}
}
