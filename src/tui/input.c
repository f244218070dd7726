/* SPDX-License-Identifier: Apache-2.0 */
/* input.c - keys (and mouse clicks) of `vramz top`, turned into changes of
 * the view, replay controls, or a kill.  Nothing here draws: the loop
 * redraws after every key.
 *
 * Lower-case letters act or filter, upper-case letters sort (as in htop:
 * M sorts by memory), so the two never collide; a prompt or dialog takes
 * every key until Enter or Esc.
 */
#include "tui/app.h"
#include "format/fmt.h"

#include <curses.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/fb.h"
#include "tui/render.h"
#include "tui/term.h"

const int app_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGKILL,
			   SIGUSR1, SIGUSR2, SIGSTOP, SIGCONT};
const unsigned app_signal_count = sizeof app_signals / sizeof app_signals[0];

#define SEEK_STEP_MS 30000

void app_status(struct app *a, int role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fmt_vsnprintf(a->v.status, sizeof a->v.status, fmt, ap);
	va_end(ap);
	a->v.status_role = role;
}

void input_rearrange(struct app *a)
{
	struct view *v = &a->v;
	struct model *m = &a->m;
	model_arrange(m, &v->ar);
	/* the tags follow their processes; one that left the list is dropped */
	unsigned kept = 0;
	for (unsigned t = 0; t < v->ntags; t++) {
		int i = model_find_pid(m, v->tag_pid[t]);
		if (i < 0 || (v->tag_start[t] && m->rows[i].start_ticks != v->tag_start[t]))
			continue;
		m->rows[i].tagged = 1;
		v->tag_pid[kept] = v->tag_pid[t];
		v->tag_start[kept++] = v->tag_start[t];
	}
	v->ntags = kept;
	int found = -1;
	for (unsigned i = 0; i < m->norder && v->sel >= 0; i++)
		if (m->rows[m->order[i]].pid == v->sel_pid)
			found = (int)i;
	if (found < 0) /* it left: stay at the same height in the table */
		found = v->sel < 0 ? 0 : v->sel;
	if (found >= (int)m->norder)
		found = (int)m->norder - 1;
	v->sel = found;
	v->sel_pid = found >= 0 ? m->rows[m->order[found]].pid : 0;
}

static const struct model_row *selected(const struct app *a)
{
	if (a->v.sel < 0 || a->v.sel >= (int)a->m.norder)
		return NULL;
	return &a->m.rows[a->m.order[a->v.sel]];
}

/* The process the keys act on: the page's, or the table's selection. */
static const struct model_row *target(const struct app *a)
{
	if (!a->v.page)
		return selected(a);
	int i = model_find_pid(&a->m, a->v.page_pid);
	return i >= 0 && a->m.rows[i].start_ticks == a->v.page_start ? &a->m.rows[i] : NULL;
}

static int host_sorted(const struct app *a)
{
	enum model_col c = a->v.ar.sort;
	return c == COL_CPU || c == COL_RSS || c == COL_TIME || c == COL_STATE;
}

void input_host(struct app *a)
{
	struct view *v = &a->v;
	struct model *m = &a->m;
	/* sorted by the host side: every row, else the order says nothing */
	int all = host_sorted(a);
	unsigned lo = all ? 0 : (unsigned)(v->scroll > 0 ? v->scroll : 0);
	unsigned hi = all ? m->norder : lo + (unsigned)(v->table_rows > 0 ? v->table_rows : 0);
	host_refresh(a->host, m, lo, hi, v->page ? v->page_pid : 0, a->interval_ms);
	if (all)
		input_rearrange(a);
}

void input_open_page(struct app *a, const struct model_row *r)
{
	struct view *v = &a->v;
	if (!r || r->group) {
		app_status(a, ROLE_WARN, r ? "a group row: select one of its processes" : "no process selected");
		return;
	}
	v->page = 1;
	v->page_pid = r->pid;
	v->page_start = r->start_ticks;
	v->page_mask = r->gpu_mask;
	/* the whole command line: the sample's is cut at 255 bytes */
	if (!r->visible || host_cmdline(a->host, r->pid, r->start_ticks, v->page_cmd, sizeof v->page_cmd))
		fmt_snprintf(v->page_cmd, sizeof v->page_cmd, "%s", r->cmd);
	v->status[0] = 0;
	input_host(a); /* its host side now, not at the next tick */
}

static void move_sel(struct app *a, int delta)
{
	struct view *v = &a->v;
	int n = (int)a->m.norder;
	if (n == 0)
		return;
	long s = (long)(v->sel < 0 ? 0 : v->sel) + delta;
	if (s < 0)
		s = 0;
	if (s >= n)
		s = n - 1;
	v->sel = (int)s;
	v->sel_pid = a->m.rows[a->m.order[v->sel]].pid;
}

static void set_sort(struct app *a, enum model_col c)
{
	if (a->v.ar.sort == c)
		a->v.ar.reverse = !a->v.ar.reverse;
	else
		a->v.ar.reverse = 0;
	a->v.ar.sort = c;
	input_rearrange(a);
}

static void open_prompt(struct app *a, enum prompt_kind k)
{
	struct view *v = &a->v;
	const struct model_row *r = selected(a);
	v->mode = MODE_PROMPT;
	v->prompt = k;
	v->input[0] = 0;
	if (k == PROMPT_TEXT)
		fmt_snprintf(v->input, sizeof v->input, "%s", v->ar.text);
	else if (k == PROMPT_USER)
		fmt_snprintf(v->input, sizeof v->input, "%s",
			 v->ar.user[0] ? v->ar.user : r && r->visible ? r->user : "");
	else if (v->ar.gpu >= 0)
		fmt_snprintf(v->input, sizeof v->input, "%d", v->ar.gpu);
	else if (r)
		fmt_snprintf(v->input, sizeof v->input, "%u", r->first_gpu);
}

static void apply_prompt(struct app *a)
{
	struct view *v = &a->v;
	if (v->prompt == PROMPT_TEXT) {
		fmt_snprintf(v->ar.text, sizeof v->ar.text, "%s", v->input);
	} else if (v->prompt == PROMPT_USER) {
		fmt_snprintf(v->ar.user, sizeof v->ar.user, "%.*s", (int)sizeof v->ar.user - 1, v->input);
	} else {
		char *end;
		long g = strtol(v->input, &end, 10);
		if (!v->input[0]) {
			v->ar.gpu = -1;
		} else if (*end || g < 0 || g >= MODEL_MAX_GPUS) {
			app_status(a, ROLE_WARN, "GPU filter: '%s' is not a GPU index", v->input);
			return;
		} else {
			v->ar.gpu = (int)g;
		}
	}
	v->status[0] = 0;
	input_rearrange(a);
}

static void prompt_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	size_t n = strlen(v->input);
	if (!is_key && (ch == '\r' || ch == '\n')) {
		v->mode = MODE_NORMAL;
		apply_prompt(a);
	} else if (!is_key && ch == 27) {
		v->mode = MODE_NORMAL;
	} else if ((is_key && ch == KEY_BACKSPACE) || (!is_key && (ch == 127 || ch == 8))) {
		while (n > 0 && ((unsigned char)v->input[n - 1] & 0xc0) == 0x80)
			n--; /* a whole UTF-8 character */
		if (n > 0)
			v->input[n - 1] = 0;
	} else if (!is_key && ch >= ' ') {
		char mb[MB_LEN_MAX];
		mbstate_t st;
		memset(&st, 0, sizeof st);
		size_t k = wcrtomb(mb, (wchar_t)ch, &st);
		if (k != (size_t)-1 && n + k < sizeof v->input) {
			memcpy(v->input + n, mb, k);
			v->input[n + k] = 0;
		}
	}
}

/* Space (live): tags or untags the selected process and moves down. */
static void toggle_tag(struct app *a)
{
	struct view *v = &a->v;
	const struct model_row *r = selected(a);
	if (!r || r->group) {
		app_status(a, ROLE_WARN, "no process to tag here");
		return;
	}
	unsigned t = 0;
	while (t < v->ntags && v->tag_pid[t] != r->pid)
		t++;
	if (t < v->ntags) { /* untag */
		v->ntags--;
		v->tag_pid[t] = v->tag_pid[v->ntags];
		v->tag_start[t] = v->tag_start[v->ntags];
	} else if (v->ntags < APP_MAX_TAGS) {
		v->tag_pid[v->ntags] = r->pid;
		v->tag_start[v->ntags++] = r->start_ticks;
	} else {
		app_status(a, ROLE_WARN, "at most %d processes tagged", APP_MAX_TAGS);
		return;
	}
	input_rearrange(a);
	move_sel(a, 1);
	app_status(a, ROLE_NORMAL, "%u tagged: k signals them all, Esc untags", v->ntags);
}

/* k with processes tagged: each is checked now (and again when
 * signalled); the signal menu opens if one may be signalled. */
static void start_kill_tags(struct app *a)
{
	struct view *v = &a->v;
	unsigned ok = 0;
	char why[200] = "";
	for (unsigned t = 0; t < v->ntags; t++) {
		int i = model_find_pid(&a->m, v->tag_pid[t]);
		char w[200];
		if (i >= 0 && !kill_allowed(&a->m.rows[i], w, sizeof w))
			ok++;
		else if (!why[0])
			fmt_snprintf(why, sizeof why, "%s", i < 0 ? "a tagged process left" : w);
	}
	if (!ok) {
		app_status(a, ROLE_CRIT, "none of the %u tagged may be signalled: %s", v->ntags, why);
		return;
	}
	v->confirm_tags = 1;
	v->confirm_pid = 0;
	v->sig_choice = 0;
	v->mode = MODE_SIGNAL;
}

static void start_kill(struct app *a)
{
	const struct model_row *r = target(a);
	char why[200];
	if (a->replay) {
		app_status(a, ROLE_WARN, "kill is off while replaying a log");
		return;
	}
	if (a->v.ntags) {
		start_kill_tags(a);
		return;
	}
	a->v.confirm_tags = 0;
	if (!r) {
		app_status(a, ROLE_WARN, "no process selected");
		return;
	}
	if (kill_allowed(r, why, sizeof why)) {
		app_status(a, ROLE_CRIT, "%s", why);
		return;
	}
	a->v.confirm_pid = r->pid;
	a->v.sig_choice = 0;
	a->v.mode = MODE_SIGNAL;
}

static void signal_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	if (is_key && ch == KEY_UP && v->sig_choice > 0)
		v->sig_choice--;
	else if (is_key && ch == KEY_DOWN && v->sig_choice + 1 < (int)app_signal_count)
		v->sig_choice++;
	else if (!is_key && (ch == '\r' || ch == '\n'))
		v->mode = MODE_CONFIRM;
	else if ((!is_key && (ch == 27 || ch == 'q')))
		v->mode = MODE_NORMAL;
}

/* The columns dialog: up, down, space toggles (where the width decides
 * -> the other way -> back to the width), Esc / Enter / c closes. */
static void columns_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	if (is_key && ch == KEY_UP && v->col_choice > 0) {
		v->col_choice--;
	} else if (is_key && ch == KEY_DOWN && v->col_choice + 1 < COL_COUNT) {
		v->col_choice++;
	} else if (!is_key && ch == ' ') {
		enum model_col c = (enum model_col)v->col_choice;
		if (c == COL_PID || c == COL_CMD)
			return; /* a row needs its pid and command */
		if (v->cols[c] == COLM_AUTO)
			v->cols[c] = table_shown(a, c) ? COLM_OFF : COLM_ON;
		else
			v->cols[c] = COLM_AUTO;
	} else if (!is_key && (ch == 27 || ch == '\r' || ch == '\n' || ch == 'c' || ch == 'q')) {
		v->mode = MODE_NORMAL;
	}
}

/* Keys of the process page; 1 when the key was one of them. */
static int page_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	if (is_key && (ch == KEY_LEFT || ch == KEY_BACKSPACE)) {
		v->page = 0;
		return 1;
	}
	if (is_key)
		return ch != KEY_F(1) && ch != KEY_F(10) && ch != KEY_MOUSE; /* as in the table */
	switch (ch) {
	case 27: case 127: case 8:
		v->page = 0;
		return 1;
	case 'k': case 'q': case '?': case 'h': case 12:
		return 0;
	default:
		return 1; /* the table's keys do nothing here */
	}
}

static void confirm_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	v->mode = MODE_NORMAL;
	if (is_key || (ch != 'y' && ch != 'Y')) {
		app_status(a, ROLE_NORMAL, "kill cancelled");
		return;
	}
	if (v->confirm_tags) { /* each tagged process, checked and signalled */
		unsigned sent = 0, refused = 0;
		char msg[240], first[240] = "";
		for (unsigned t = 0; t < v->ntags; t++) {
			int i = model_find_pid(&a->m, v->tag_pid[t]);
			if (i < 0 || (v->tag_start[t] && a->m.rows[i].start_ticks != v->tag_start[t])) {
				refused++;
				continue;
			}
			if (kill_send(&a->kw, &a->m, &a->m.rows[i], app_signals[v->sig_choice], msg,
				      sizeof msg) == 0)
				sent++;
			else if (refused++ == 0)
				fmt_snprintf(first, sizeof first, "%s", msg);
		}
		v->ntags = 0;
		input_rearrange(a);
		if (refused)
			app_status(a, ROLE_WARN, "SIG%s sent to %u tagged process%s; %u not%s%s",
				   kill_signame(app_signals[v->sig_choice]), sent, sent == 1 ? "" : "es",
				   refused, first[0] ? ": " : " (gone)", first);
		else
			app_status(a, ROLE_OK, "SIG%s sent to %u tagged process%s",
				   kill_signame(app_signals[v->sig_choice]), sent, sent == 1 ? "" : "es");
		if (sent)
			sampler_poke(a->sp);
		return;
	}
	int i = model_find_pid(&a->m, v->confirm_pid);
	if (i < 0) {
		app_status(a, ROLE_WARN, "pid %u has left the GPU list: not signalled",
			   v->confirm_pid);
		return;
	}
	char msg[240];
	int rc = kill_send(&a->kw, &a->m, &a->m.rows[i], app_signals[v->sig_choice], msg,
			   sizeof msg);
	app_status(a, rc ? ROLE_CRIT : ROLE_OK, "%s", msg);
	if (rc == 0)
		sampler_poke(a->sp);
}

static void mouse_key(struct app *a)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & BUTTON4_PRESSED) {
		move_sel(a, -3);
	} else if (ev.bstate & BUTTON5_PRESSED) {
		move_sel(a, 3);
	} else if (ev.y >= a->v.table_y && ev.y < a->v.table_y + a->v.table_rows) {
		int row = a->v.scroll + ev.y - a->v.table_y;
		if (row < (int)a->m.norder)
			move_sel(a, row - a->v.sel);
	}
}

static void replay_key(struct app *a, wint_t ch, int is_key)
{
	struct sampler_state st;
	sampler_get_state(a->sp, &st);
	if (!is_key && ch == ' ')
		sampler_pause(a->sp, !st.paused);
	else if (is_key && ch == KEY_LEFT)
		sampler_seek(a->sp, -SEEK_STEP_MS);
	else if (is_key && ch == KEY_RIGHT)
		sampler_seek(a->sp, SEEK_STEP_MS);
	else if (!is_key && (ch == '+' || ch == '='))
		sampler_speed(a->sp, 2);
	else if (!is_key && ch == '-')
		sampler_speed(a->sp, 0.5);
}

void input_key(struct app *a, int is_key, wint_t ch)
{
	struct view *v = &a->v;
	switch (v->mode) {
	case MODE_HELP:
		v->mode = MODE_NORMAL;
		return;
	case MODE_PROMPT:
		prompt_key(a, is_key, ch);
		return;
	case MODE_SIGNAL:
		signal_key(a, is_key, ch);
		return;
	case MODE_CONFIRM:
		confirm_key(a, is_key, ch);
		return;
	case MODE_COLUMNS:
		columns_key(a, is_key, ch);
		return;
	case MODE_NORMAL:
		break;
	}
	if (v->page && page_key(a, is_key, ch))
		return;
	if (is_key) {
		int page = v->table_rows > 1 ? v->table_rows - 1 : 1;
		switch (ch) {
		case KEY_UP: move_sel(a, -1); break;
		case KEY_DOWN: move_sel(a, 1); break;
		case KEY_PPAGE: move_sel(a, -page); break;
		case KEY_NPAGE: move_sel(a, page); break;
		case KEY_HOME: move_sel(a, -(int)a->m.norder); break;
		case KEY_END: move_sel(a, (int)a->m.norder); break;
		case KEY_F(1): v->mode = MODE_HELP; break;
		case KEY_F(10): v->quit = 1; break;
		case KEY_MOUSE: mouse_key(a); break;
		case KEY_LEFT:
		case KEY_RIGHT:
			if (a->replay)
				replay_key(a, ch, 1);
			break;
		default: break;
		}
		return;
	}
	switch (ch) {
	case 'q': v->quit = 1; break;
	case '?': case 'h': v->mode = MODE_HELP; break;
	case '/': open_prompt(a, PROMPT_TEXT); break;
	case 'u': open_prompt(a, PROMPT_USER); break;
	case 'g': open_prompt(a, PROMPT_GPU); break;
	case 27: case '\\': /* the filters and the tags */
		v->ar.text[0] = v->ar.user[0] = 0;
		v->ar.gpu = -1;
		v->ntags = 0;
		input_rearrange(a);
		break;
	case 't': v->ar.tree = !v->ar.tree; input_rearrange(a); break;
	case 'm': /* from "where the width allows": the other way from what shows */
		v->show_util = v->show_util < 0 ? COLS < 120 : !v->show_util;
		break;
	case 'c': v->mode = MODE_COLUMNS; break;
	case '\r': case '\n': input_open_page(a, selected(a)); break;
	case 'l': v->layout = (enum layout)((v->layout + 1) % 3); break;
	case 'z': v->zoom_total = !v->zoom_total; break;
	case 's': /* the side chart's sensor: util, temp, power, clock; shown */
		v->side = (enum side_chart)((v->side + 1) % SIDE_COUNT);
		if (v->show_util == 0)
			v->show_util = 1;
		break;
	case 'k': start_kill(a); break;
	case '<': case ',':
		set_sort(a, (enum model_col)((v->ar.sort + COL_COUNT - 1) % COL_COUNT));
		input_host(a);
		break;
	case '>': case '.':
		set_sort(a, (enum model_col)((v->ar.sort + 1) % COL_COUNT));
		input_host(a);
		break;
	case 'r': v->ar.reverse = !v->ar.reverse; input_rearrange(a); break;
	case 'P': set_sort(a, COL_PID); break;
	case 'U': set_sort(a, COL_USER); break;
	case 'J': set_sort(a, COL_JOB); break;
	case 'G': set_sort(a, COL_GPU); break;
	case 'M': set_sort(a, COL_VRAM); break;
	case 'S': set_sort(a, COL_SM); break;
	case 'I': set_sort(a, COL_IDLE); break;
	case 'C': set_sort(a, COL_CMD); break;
	case 'H': set_sort(a, COL_CPU); input_host(a); break;
	case 'R': set_sort(a, COL_RSS); input_host(a); break;
	case 'T': set_sort(a, COL_TIME); input_host(a); break;
	case 'D': set_sort(a, COL_STATE); input_host(a); break;
	case ' ': case '+': case '=': case '-':
		if (a->replay)
			replay_key(a, ch, 0);
		else if (ch == ' ')
			toggle_tag(a);
		break;
	case 12: fb_redraw(); break; /* ^L */
	default: break;
	}
}
