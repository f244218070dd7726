/* SPDX-License-Identifier: Apache-2.0 */
/* render.c - draws one frame of `vramz top` from the model through the
 * view: a header line; the GPUs (gpus.c) over the rows the process table
 * (table.c) and the findings leave them, or the process page (procpage.c);
 * a status line and the keys; the dialogs over them.
 *
 * The table gets the rows it needs (a third of the screen at least when
 * it needs more), the GPUs' charts the rest, so a tall terminal is filled
 * with history rather than blank rows.  Glyphs fall back to ASCII outside
 * a UTF-8 locale, and every colour role has a monochrome attribute
 * (term.c), so no meaning rides on colour alone: used, reserved and free
 * are also different characters, a chart's lines carry their GPU's index.
 *
 * The whole screen is drawn into a frame buffer (fb.c) that sends the
 * terminal only the cells that changed since the last frame; frames are
 * drawn on new data, a key or a resize only.
 */
#include "tui/render.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "format/fmt.h"
#include "tui/fb.h"
#include "tui/term.h"

#define FINDINGS_MAX_LINES 3

/* ---- header, findings, status, keys, dialogs ----------------------------- */

/* "vramz top  driver 580.159.04  CUDA 13.0  2 GPUs  3 processes ...  12:00:01"; a
 * replay names its file instead of the driver (a log does not record it)
 * and shows the recorded date and time, and how far into the log. */
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
	char tags[24] = "";
	if (a->v.ntags)
		fmt_snprintf(tags, sizeof tags, "  [%u tagged]", a->v.ntags);
	fmt_snprintf(counts, sizeof counts, "  %u GPU%s  %u process%s%s%s%s%s", m->ngpus,
		 m->ngpus == 1 ? "" : "s", m->nrows, m->nrows == 1 ? "" : "es",
		 ar->tree ? "  [tree]" : "", tags, filt[0] ? "  filter:" : "", filt);
	static const char title[] = "vramz top", replay_of[] = "  replay of ";
	if (!a->replay) {
		int x = put(0, 0, COLS, ROLE_TITLE, title, 0);
		x += putf(0, x, COLS - x, ROLE_NORMAL, "  %s", a->source[0] ? a->source : "driver -");
		x += put(0, x, COLS - x, ROLE_NORMAL, counts, 0);
		int w = (int)strlen(when);
		put(0, COLS - w, w, ROLE_NORMAL, when, 0);
		/* the host line (CPU, memory, load) before the time, where it fits */
		const char *hl = host_summary(a->host);
		int hw = (int)strlen(hl);
		if (hw && COLS - w - 2 - hw >= x + 2)
			put(0, COLS - w - 2 - hw, hw, ROLE_DIM, hl, 0);
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
		{"l", "Layout"}, {"q", "Quit"}, {"z", "Zoom"}, {"Enter", "Process"}, {"c", "Columns"}};
	static const char *const replay[][2] = {
		{"?", "Help"}, {"Spc", "Pause"}, {"<-->", "Seek"}, {"+-", "Speed"},
		{"/", "Filter"}, {"u", "User"}, {"g", "GPU"}, {"<>", "Sort"}, {"t", "Tree"},
		{"m", "Util"}, {"q", "Quit"}, {"z", "Zoom"}, {"Enter", "Process"}};
	static const char *const page[][2] = {
		{"Esc", "Back"}, {"k", "Kill"}, {"?", "Help"}, {"q", "Quit"}};
	const char *const (*k)[2] = a->v.page ? page : a->replay ? replay : live;
	size_t n = a->v.page ? sizeof page / sizeof page[0]
		   : a->replay ? sizeof replay / sizeof replay[0] : sizeof live / sizeof live[0];
	int y = LINES - 1, x = 0;
	const int key[] = {'k', COLS, a->replay, term_utf8(), a->v.page};
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
	if (v->mode == MODE_CONFIRM && v->confirm_tags) {
		char pids[160] = "";
		size_t o = 0;
		for (unsigned t = 0; t < v->ntags && o + 12 < sizeof pids; t++)
			o += (size_t)fmt_snprintf(pids + o, sizeof pids - o, " %u", v->tag_pid[t]);
		putf(y, 0, COLS, ROLE_CRIT, "Send SIG%s to the %u tagged processes (pids%s)? y/N",
		     kill_signame(app_signals[v->sig_choice]), v->ntags, pids);
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
void draw_box(int y, int x, int h, int w, const char *title)
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
	if (a->v.confirm_tags)
		fmt_snprintf(t, sizeof t, "signal for %u tagged", a->v.ntags);
	else
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
		"Space    tag / untag a process: k then signals every tagged one",
		"/        filter by text (pid, user, job, command)",
		"u  g     filter by user / by GPU index;  Esc or \\ clears",
		"< >  r   sort by the previous / next column; reverse",
		"P U J G M S I C   sort by PID USER JOB GPU VRAM SM% IDLE CMD",
		"H R T D  sort by CPU% RSS TIME (elapsed) and state (D first)",
		"c        columns: show or hide;  t  tree: processes under parents",
		"Enter    the process page (its details, agent, findings); Esc back",
		"m        utilization chart beside memory;  l  layout",
		"z        memory charts: the used range (zoomed) / 0 to the total",
		"s        the chart beside memory: util, temperature, power, SM clock",
		"Space <- -> + -   replay: pause, seek 30s, speed",
		"q F10    quit          ?  this help",
		"",
		"bar: # or █ used   % or ▒ reserved by the driver   . free",
		"chart: GiB over the used range (foot labelled); ─ the total, ┈ below it",
		"       ▲ a finding began",
		"IDLE: time since the process last used the SMs; >: at least",
		"S: state R running, S sleeping, D uninterruptible (stuck on I/O?)",
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
		if (!term_utf8() && strstr(s, "▲"))
			s = "       ^ a finding began";
		if (!term_utf8() && strstr(s, "┈"))
			s = "chart: GiB over the used range (foot labelled); - the total, . below it";
		put(y + 1 + i, x + 2, w - 4, ROLE_NORMAL, s, 0);
	}
	(void)a;
}

/* `c`: each column shown or hidden; where the width decides, as it is now */
static void columns_dialog(const struct app *a)
{
	int h = COL_COUNT + 4, w = 46;
	int y = (LINES - h) / 2, x = (COLS - w) / 2;
	if (y < 0 || x < 0)
		y = x = 0;
	draw_box(y, x, h, w, "columns (Space toggles, Esc closes)");
	for (int i = 0; i < COL_COUNT; i++) {
		enum col_mode cm = a->v.cols[i];
		int fixed = i == COL_PID || i == COL_CMD;
		putf(y + 1 + i, x + 2, w - 4, i == a->v.col_choice ? ROLE_SEL : ROLE_NORMAL, " [%c] %-8s %s",
		     table_shown(a, (enum model_col)i) ? 'x' : ' ', model_col_name((enum model_col)i),
		     fixed ? "always" : cm == COLM_AUTO ? "where it fits" : cm == COLM_ON ? "shown" : "hidden");
	}
	put(y + h - 2, x + 2, w - 4, ROLE_DIM, "the host side: CPU% RSS TIME S (/proc)", 0);
}

/* The rows of the normal screen: the GPUs and their charts take what the
 * process table and the findings leave them. */
static void main_screen(struct app *a, int y, int bottom)
{
	int nf = (int)a->f.n > FINDINGS_MAX_LINES ? FINDINGS_MAX_LINES : (int)a->f.n;
	if (LINES < 20 && nf > 1)
		nf = 1;
	int avail = bottom - y - nf;
	struct gpus_plan p;
	gpus_plan(a, avail, table_need(a), &p);
	gpus_draw(a, y, &p);
	y += p.rows;
	y += findings_panel(a, y, nf);
	if (bottom - y >= 2)
		table_draw(a, y, bottom - y);
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
	int bottom = LINES - 2; /* status and keys lines */
	if (a->v.page)
		page_draw(a, 1, bottom);
	else
		main_screen(a, 1, bottom);
	status_line(a);
	keys_line(a);
	if (a->v.mode == MODE_HELP)
		help(a);
	else if (a->v.mode == MODE_SIGNAL)
		signal_menu(a);
	else if (a->v.mode == MODE_COLUMNS)
		columns_dialog(a);
	fb_flush();
}
