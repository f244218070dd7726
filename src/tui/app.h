/* SPDX-License-Identifier: Apache-2.0 */
/* app.h - the state of one `vramz top` session: the model (data), the
 * view (what the person chose to see: sort, filters, selection, dialogs)
 * and the parts that act (sampler thread, kill watch).  top.c runs the
 * loop; input.c turns keys into changes of the view; render.c draws the
 * model through the view and changes nothing but the scroll position. */
#ifndef VRAMZ_TUI_APP_H
#define VRAMZ_TUI_APP_H

#include <stdint.h>
#include <wchar.h>

#include "tui/findpanel.h"
#include "tui/host.h"
#include "tui/kill.h"
#include "tui/model.h"
#include "tui/sampler.h"

enum view_mode { MODE_NORMAL, MODE_HELP, MODE_PROMPT, MODE_SIGNAL, MODE_CONFIRM, MODE_COLUMNS };
enum prompt_kind { PROMPT_TEXT, PROMPT_USER, PROMPT_GPU };
enum layout { LAYOUT_AUTO, LAYOUT_FULL, LAYOUT_COMPACT };

/* What the person asked of a column: shown where it fits (auto), always,
 * never. */
enum col_mode { COLM_AUTO, COLM_ON, COLM_OFF };

#define APP_MAX_TAGS 64

struct view {
	struct arrange ar;
	uint32_t sel_pid;                 /* selection follows the process */
	int sel;                          /* index into model.order, -1 none */
	int scroll;                       /* first table row shown */
	int show_util;                    /* util chart beside memory: -1 where
					     the width allows, 0 never, 1 always */
	enum side_chart side;             /* `s`: what that chart shows */
	enum layout layout;
	int zoom_total;                   /* `z`: memory charts 0 .. the total,
					     not over the used range */
	enum col_mode cols[COL_COUNT];    /* the process table's columns */
	int col_choice;                   /* the columns dialog's line */
	/* the process page (Enter on a row; Esc back): its process */
	int page;
	uint32_t page_pid;
	uint64_t page_start;
	uint64_t page_mask;               /* the GPUs it was seen on */
	char page_cmd[4096];              /* its whole command line, read once */
	enum view_mode mode;
	enum prompt_kind prompt;
	char input[64];
	int sig_choice;                   /* index into the signal menu */
	uint32_t confirm_pid;
	/* processes tagged with Space (live): k signals them all; by pid and
	 * start time, so a pid reused is not the one tagged */
	uint32_t tag_pid[APP_MAX_TAGS];
	uint64_t tag_start[APP_MAX_TAGS];
	unsigned ntags;
	int confirm_tags;                 /* the confirmation is for the tags */
	char status[240];                 /* the status line's message */
	int status_role;                  /* enum role */
	int quit;
	/* geometry of the last frame, for the mouse, paging and the rows
	 * whose host side is read */
	int table_y, table_rows;
};

struct app {
	struct model m;
	struct findings f;
	struct killwatch kw;
	struct sampler *sp;
	struct host *host;                /* the host columns' /proc reads */
	struct tui_snap *snap;            /* the latest tick shown: the process
					     page's per-GPU figures */
	int64_t interval_ms;              /* live: the sampling interval */
	int replay;
	char source[160];                 /* live: driver version; replay: the file */
	struct view v;
};

/* The signal menu of `k`. */
extern const int app_signals[];
extern const unsigned app_signal_count;

void render_screen(struct app *a);

/* One key (is_key: a KEY_* code) or character. */
void input_key(struct app *a, int is_key, wint_t ch);
/* Re-arranges the rows and keeps the selection on the same process. */
void input_rearrange(struct app *a);
/* The host side of the rows on screen (and the page's process), read
 * after each tick (host.c); re-sorts when the table is sorted by it. */
void input_host(struct app *a);
/* Opens the process page of row r (Enter). */
void input_open_page(struct app *a, const struct model_row *r);
void app_status(struct app *a, int role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
