/* SPDX-License-Identifier: Apache-2.0 */
/* term.c - owns the terminal while `vramz top` runs.
 *
 * Signals go through a self-pipe: SIGWINCH, SIGINT, SIGTERM and SIGHUP
 * only write a byte, and the main loop's poll() wakes on it, resizes or
 * leaves through the one normal exit path that calls endwin().  A crash
 * signal cannot wait for the loop: its handler restores the terminal
 * there and then, and re-raises the signal with the default action so the
 * exit status and core dump are what they would have been.
 *
 * Colour is a set of roles.  With colour (a colour terminal, no NO_COLOR,
 * no --no-color) each role is a colour pair; without it each role maps to
 * an attribute (bold, reverse, dim) so the screen stays readable.  Two
 * themes give the roles their colours: dark (the default) and light
 * (`--theme light`, or `theme = light` in the config file), which keeps
 * yellow, cyan and white text off a light background.
 */
#include "tui/term.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include "cli.h"
#include "format/fmt.h"

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t term_is_open;
static int has_color, is_utf8, mouse_on;
static attr_t attrs[ROLE_COUNT];
/* direct output (fb.c writes the frame's changes itself): each role's
 * whole attribute sequence, and how to move the cursor */
static int direct;
static char role_seq[ROLE_COUNT][64];
static const char *cup_cap;
static int cup_ansi; /* cup is ESC [ row+1 ; col+1 H: formatted here */

static void term_on_signal(int sig)
{
	int saved = errno;
	char c = sig == SIGWINCH ? 'W' : sig == SIGHUP ? 'H' : 'Q';
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the loop has enough to wake on */
	}
	errno = saved;
}

static void on_crash(int sig)
{
	/* endwin is not async-signal-safe, but the process is dying anyway
	 * and a terminal left in raw mode is the worse outcome */
	if (term_is_open) {
		term_is_open = 0;
		endwin();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = term_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	static const int crash[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
		sigaction(crash[i], &sa, NULL);
}

struct role_spec {
	short fg, bg;
	attr_t extra, mono;
};

/* The dark theme (the default: most terminals are dark).  A role's mono
 * attributes are what it has without colour, in either theme. */
static const struct role_spec dark[ROLE_COUNT] = {
	[ROLE_NORMAL] = {-1, -1, 0, 0},
	[ROLE_TITLE] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
	[ROLE_DIM] = {-1, -1, A_DIM, A_DIM},
	[ROLE_OK] = {COLOR_GREEN, -1, 0, A_BOLD},
	[ROLE_WARN] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
	[ROLE_CRIT] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
	[ROLE_RSV] = {COLOR_MAGENTA, -1, 0, A_DIM},
	[ROLE_FREE] = {-1, -1, A_DIM, A_DIM},
	[ROLE_PLOT] = {COLOR_CYAN, -1, 0, 0},
	[ROLE_PLOT_UTIL] = {COLOR_YELLOW, -1, 0, A_DIM},
	[ROLE_SEL] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
	[ROLE_KEY] = {-1, -1, A_BOLD, A_BOLD},
	[ROLE_KEYTEXT] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
	[ROLE_HEAD] = {COLOR_BLACK, COLOR_GREEN, 0, A_REVERSE},
	[ROLE_AXIS] = {-1, -1, A_DIM, A_DIM},
	[ROLE_SERIES + 0] = {COLOR_CYAN, -1, 0, 0},
	[ROLE_SERIES + 1] = {COLOR_YELLOW, -1, 0, 0},
	[ROLE_SERIES + 2] = {COLOR_MAGENTA, -1, 0, 0},
	[ROLE_SERIES + 3] = {COLOR_GREEN, -1, 0, 0},
	[ROLE_SERIES + 4] = {COLOR_BLUE, -1, A_BOLD, 0},
	[ROLE_SERIES + 5] = {COLOR_RED, -1, 0, 0},
	[ROLE_SERIES + 6] = {COLOR_WHITE, -1, 0, 0},
	[ROLE_SERIES + 7] = {-1, -1, A_BOLD, 0},
};

/* The light theme, for a light background: no yellow, cyan or white
 * text (a few shades from the background there), blue for what is cyan
 * on a dark screen, magenta for warnings; the bars' backgrounds keep
 * black text. */
static const struct role_spec light[ROLE_COUNT] = {
	[ROLE_NORMAL] = {-1, -1, 0, 0},
	[ROLE_TITLE] = {COLOR_BLUE, -1, A_BOLD, A_BOLD},
	[ROLE_DIM] = {-1, -1, A_DIM, A_DIM},
	[ROLE_OK] = {COLOR_GREEN, -1, A_BOLD, A_BOLD},
	[ROLE_WARN] = {COLOR_MAGENTA, -1, A_BOLD, A_BOLD},
	[ROLE_CRIT] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
	[ROLE_RSV] = {COLOR_MAGENTA, -1, 0, A_DIM},
	[ROLE_FREE] = {-1, -1, A_DIM, A_DIM},
	[ROLE_PLOT] = {COLOR_BLUE, -1, 0, 0},
	[ROLE_PLOT_UTIL] = {COLOR_GREEN, -1, 0, A_DIM},
	[ROLE_SEL] = {COLOR_WHITE, COLOR_BLUE, A_BOLD, A_REVERSE},
	[ROLE_KEY] = {-1, -1, A_BOLD, A_BOLD},
	[ROLE_KEYTEXT] = {COLOR_WHITE, COLOR_BLUE, 0, A_REVERSE},
	[ROLE_HEAD] = {COLOR_BLACK, COLOR_GREEN, 0, A_REVERSE},
	[ROLE_AXIS] = {-1, -1, A_DIM, A_DIM},
	[ROLE_SERIES + 0] = {COLOR_BLUE, -1, 0, 0},
	[ROLE_SERIES + 1] = {COLOR_RED, -1, 0, 0},
	[ROLE_SERIES + 2] = {COLOR_GREEN, -1, 0, 0},
	[ROLE_SERIES + 3] = {COLOR_MAGENTA, -1, 0, 0},
	[ROLE_SERIES + 4] = {COLOR_BLACK, -1, 0, 0},
	[ROLE_SERIES + 5] = {COLOR_BLUE, -1, A_BOLD, 0},
	[ROLE_SERIES + 6] = {COLOR_RED, -1, A_BOLD, 0},
	[ROLE_SERIES + 7] = {COLOR_GREEN, -1, A_BOLD, 0},
};

static const struct role_spec *spec = dark;
static enum term_theme theme;
static enum term_glyphs glyphs;

short term_role_fg(enum term_theme t, enum role r)
{
	return (unsigned)r < ROLE_COUNT ? (t == THEME_LIGHT ? light : dark)[r].fg : -1;
}

static void setup_roles(void)
{
	for (int r = 0; r < ROLE_COUNT; r++) {
		if (!has_color) {
			attrs[r] = spec[r].mono;
			continue;
		}
		init_pair((short)(r + 1), spec[r].fg, spec[r].bg);
		attrs[r] = COLOR_PAIR(r + 1) | spec[r].extra;
	}
}

/* A terminfo string capability, or NULL when the terminal lacks it. */
static const char *cap(const char *name)
{
	char *v = tigetstr(name);
	return v == (char *)-1 ? NULL : v;
}

static void seq_add(char *dst, size_t len, const char *s)
{
	if (s && strlen(dst) + strlen(s) < len)
		strcat(dst, s);
}

/* Direct output needs absolute cursor moves and a way back to plain
 * attributes; each role becomes "plain, then its attributes and colours",
 * the same attributes curses would set for it. */
static void setup_direct(void)
{
	const char *sgr0 = cap("sgr0");
	cup_cap = cap("cup");
	direct = cup_cap && sgr0 && !getenv("VRAMZ_TUI_CURSES");
	if (!direct)
		return;
	const char *tp = tiparm(cup_cap, 9, 19);
	cup_ansi = tp && !strcmp(tp, "\033[10;20H");
	const char *setaf = cap("setaf"), *setab = cap("setab");
	for (int r = 0; r < ROLE_COUNT; r++) {
		char *d = role_seq[r];
		d[0] = 0;
		seq_add(d, sizeof role_seq[r], sgr0);
		attr_t a = has_color ? spec[r].extra : spec[r].mono;
		if (a & A_BOLD)
			seq_add(d, sizeof role_seq[r], cap("bold"));
		if (a & A_DIM)
			seq_add(d, sizeof role_seq[r], cap("dim"));
		if (a & A_REVERSE)
			seq_add(d, sizeof role_seq[r], cap("rev"));
		if (a & A_UNDERLINE)
			seq_add(d, sizeof role_seq[r], cap("smul"));
		if (has_color && spec[r].fg >= 0 && setaf)
			seq_add(d, sizeof role_seq[r], tiparm(setaf, spec[r].fg));
		if (has_color && spec[r].bg >= 0 && setab)
			seq_add(d, sizeof role_seq[r], tiparm(setab, spec[r].bg));
	}
}

int term_open(const struct term_opts *o, char *err, size_t errlen)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		snprintf(err, errlen, "top needs a terminal (try vramz status)");
		return -1;
	}
	setlocale(LC_ALL, "");
	is_utf8 = !o->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	/* the Linux console's fonts have block elements but no braille */
	const char *tn = getenv("TERM");
	glyphs = !is_utf8 ? GLYPHS_ASCII : tn && !strncmp(tn, "linux", 5) ? GLYPHS_BLOCKS
								  : GLYPHS_BRAILLE;
	theme = o->theme;
	spec = theme == THEME_LIGHT ? light : dark;
	if (pipe2(sig_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	set_escdelay(25); /* Esc answers at once; arrow keys still parse */
	if (!newterm(NULL, stdout, stdin)) {
		snprintf(err, errlen, "cannot set up terminal '%s'",
			 getenv("TERM") ? getenv("TERM") : "(TERM unset)");
		return -1;
	}
	term_is_open = 1;
	install_signals();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	has_color = term_color_wanted(o->no_color) && has_colors();
	if (has_color) {
		start_color();
		use_default_colors();
	}
	setup_roles();
	mouse_on = 0;
	if (!o->no_mouse)
		mouse_on = mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED |
					      BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
	mouseinterval(0);
	setup_direct();
	/* curses' first refresh clears the screen: done now, before any frame,
	 * so that a later getch has nothing of stdscr left to draw */
	refresh();
	return 0;
}

void term_close(void)
{
	if (term_is_open) {
		term_is_open = 0;
		if (mouse_on)
			mousemask(0, NULL);
		curs_set(1);
		endwin();
		fflush(stdout);
	}
}

int term_signal_fd(void)
{
	return sig_pipe[0];
}

unsigned term_signals(void)
{
	char buf[64];
	unsigned bits = 0;
	ssize_t n;
	while ((n = read(sig_pipe[0], buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			bits |= buf[i] == 'W' ? TERM_SIG_RESIZE : buf[i] == 'H' ? TERM_SIG_HANGUP : TERM_SIG_QUIT;
	return bits;
}

void term_resize(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(stdscr, TRUE);
}

attr_t term_attr(enum role r)
{
	return (unsigned)r < ROLE_COUNT ? attrs[r] : 0;
}

int term_color(void)
{
	return has_color;
}

int term_utf8(void)
{
	return is_utf8;
}

enum term_glyphs term_glyphs(void)
{
	return glyphs;
}

enum term_theme term_theme(void)
{
	return theme;
}

int term_color_wanted(int no_color)
{
	/* cli_color reads --no-color (g_opts), NO_COLOR and TERM=dumb */
	return !no_color && cli_color(stdout);
}

int term_mouse(void)
{
	return mouse_on;
}

int term_direct(void)
{
	return direct;
}

const char *term_role_seq(enum role r)
{
	return (unsigned)r < ROLE_COUNT ? role_seq[r] : role_seq[0];
}

int term_cup(char *buf, size_t len, int y, int x)
{
	if (cup_ansi) { /* the common case, without terminfo's interpreter */
		char *p = buf;
		*p++ = '\033';
		*p++ = '[';
		p = fmt_put_u64(p, (uint64_t)y + 1);
		*p++ = ';';
		p = fmt_put_u64(p, (uint64_t)x + 1);
		*p++ = 'H';
		return (int)(p - buf);
	}
	const char *s = tiparm(cup_cap, y, x);
	size_t n = s ? strlen(s) : 0;
	if (n >= len)
		return 0;
	memcpy(buf, s, n);
	return (int)n;
}
