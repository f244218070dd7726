/* SPDX-License-Identifier: Apache-2.0 */
/* term.h - the terminal under `vramz top`: curses set up and torn down,
 * colour roles that degrade to attributes on a monochrome terminal or with
 * NO_COLOR, and signals turned into events the main loop polls for, so the
 * terminal is restored on every way out (quit, SIGINT/TERM/HUP, a crash). */
#ifndef VRAMZ_TUI_TERM_H
#define VRAMZ_TUI_TERM_H

#include <curses.h>

enum role {
	ROLE_NORMAL, ROLE_TITLE, ROLE_DIM, ROLE_OK, ROLE_WARN, ROLE_CRIT, ROLE_RSV, ROLE_FREE,
	ROLE_PLOT, ROLE_PLOT_UTIL, ROLE_SEL, ROLE_KEY, ROLE_KEYTEXT, ROLE_HEAD,
	ROLE_AXIS,        /* a chart's axes, labels and ceiling line */
	ROLE_SERIES,      /* ROLE_SERIES + i: the line of GPU i % TERM_SERIES */
	ROLE_COUNT = ROLE_SERIES + 8
};
#define TERM_SERIES 8

/* What a chart is drawn with: braille dots (2x4 a cell) on a UTF-8
 * terminal, block elements (eighths of a cell) on one without braille
 * glyphs (the Linux console), ASCII otherwise or with --ascii. */
enum term_glyphs { GLYPHS_BRAILLE, GLYPHS_BLOCKS, GLYPHS_ASCII };

enum term_theme { THEME_DARK, THEME_LIGHT };

/* TERM_SIG_HANGUP: the terminal is gone (SIGHUP); nothing is left to restore */
enum { TERM_SIG_RESIZE = 1, TERM_SIG_QUIT = 2, TERM_SIG_HANGUP = 4 };

struct term_opts {
	int no_color;   /* --no-color (NO_COLOR is read here too) */
	int no_mouse;
	int ascii;      /* force ASCII glyphs even on a UTF-8 locale */
	enum term_theme theme; /* the colours of the roles */
};

/* Whether `top` draws in colour: the one decision of the command line
 * (--no-color, NO_COLOR, TERM=dumb: src/cli.c) for a terminal on stdout.
 * Declared here so the dashboard asks one question whatever the CLI's
 * options become (a --color=auto|always|never joins here). */
int term_color_wanted(int no_color);

/* Sets up curses on the controlling terminal.  0, or -1 with err set. */
int term_open(const struct term_opts *o, char *err, size_t errlen);
/* Restores the terminal; safe to call twice. */
void term_close(void);
/* Readable when a signal arrived; term_signals drains it. */
int term_signal_fd(void);
unsigned term_signals(void);
/* Re-reads the window size after SIGWINCH. */
void term_resize(void);
attr_t term_attr(enum role r);
/* 1: the frame buffer writes its changes to the terminal itself (the
 * terminal has cup and sgr0, and VRAMZ_TUI_CURSES is not set); curses
 * then only reads keys, sets the terminal up and clears the screen. */
int term_direct(void);
/* The bytes that set role r's attributes from any state. */
const char *term_role_seq(enum role r);
/* Writes the bytes moving the cursor to (y, x) into buf (at least 32
 * bytes); returns how many. */
int term_cup(char *buf, size_t len, int y, int x);
int term_color(void);
int term_utf8(void);
enum term_glyphs term_glyphs(void);
enum term_theme term_theme(void);
/* The colour (a curses COLOR_*) role r has in the theme, -1 the
 * terminal's default: for the tests of the themes' tables. */
short term_role_fg(enum term_theme t, enum role r);
int term_mouse(void);

#endif
