/* SPDX-License-Identifier: Apache-2.0 */
/* top.c - `vramz top`, the live dashboard: options, then one loop.
 *
 * The loop sleeps in poll() on three descriptors - the keyboard, the
 * sampler thread's eventfd and the signal self-pipe - and draws a frame
 * only when one of them had something: a new tick, a key, a resize.  No
 * timer wakes it otherwise, so an idle dashboard costs one frame per
 * sampling interval and nothing in between.
 *
 * Everything that can fail with a message for a person (bad options, no
 * driver, an unreadable log) fails before curses takes the terminal, so
 * the message lands on a normal screen.
 */
#include "tui/app.h"
#include "tui/prefs.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "format/fmt.h"
#include "commands.h"
#include "analyze/diagconf.h"
#include "tui/fb.h"
#include "tui/term.h"
#include "ticker.h"

static int64_t interval_ms = 1000;
static int64_t idle_after_ms = -1; /* the engine's (or the config file's) */
static double speed = 1;
static int show_util, tree, no_mouse, ascii;
static const char sort_default[] = "vram";
static const char *sort_name = sort_default; /* another pointer: given */
static const char *theme_name, *hide_list;

const struct opt top_opts[] = {
	OPT_SAMPLE_INTERVAL(&interval_ms, "sampling interval (default 1s)"),
	OPT_GPUS,
	{0, "replay", OPT_STR, &g_opts.replay, "FILE", "play a recorded log (vramz log) back"},
	{0, "speed", OPT_FACTOR, &speed, "X", "replay speed, at most 64 (default 1: as recorded)"},
	{'s', "sort", OPT_STR, &sort_name, "COLUMN",
	 "pid, user, job, gpu, vram (default), sm, idle, cpu, rss, time, state or command",
	 "pid user job gpu vram sm idle cpu rss time state command"},
	{'t', "tree", OPT_FLAG, &tree, NULL, "start in tree view"},
	{'u', "util", OPT_FLAG, &show_util, NULL, "plot utilization beside memory"},
	{0, "idle-after", OPT_DURATION, &idle_after_ms, "DURATION",
	 "report processes idle this long that hold memory (default: as vramz watch, 30m)"},
	{0, "ascii", OPT_FLAG, &ascii, NULL, "ASCII glyphs only"},
	{0, "theme", OPT_STR, &theme_name, "THEME",
	 "dark (default) or light, for a light background (config key: theme)", "dark light"},
	{0, "hide", OPT_STR, &hide_list, "COLUMNS",
	 "process table columns to hide, comma-separated (user, job, gpu, vram, sm, idle, cpu, rss, time, state)"},
	{0, "no-mouse", OPT_FLAG, &no_mouse, NULL, "leave the mouse to the terminal"},
	OPT_NOCOLOR,
	OPT_END,
};

static int sort_col(const char *s, enum model_col *out)
{
	for (int i = 0; i < COL_COUNT; i++)
		if (!strcasecmp(s, model_col_key((enum model_col)i)) ||
		    !strcasecmp(s, model_col_name((enum model_col)i))) {
			*out = (enum model_col)i;
			return 0;
		}
	if (!strcasecmp(s, "cmd") || !strcasecmp(s, "mem")) {
		*out = !strcasecmp(s, "cmd") ? COL_CMD : COL_VRAM;
		return 0;
	}
	return -1;
}

/* --hide user,cpu: those columns hidden (pid and command stay) */
static int hide_columns(const char *list, enum col_mode *cols)
{
	char buf[256], *save = NULL;
	if (!list)
		return 0;
	fmt_snprintf(buf, sizeof buf, "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum model_col c;
		if (sort_col(t, &c) || c == COL_PID || c == COL_CMD) {
			cli_err("--hide: unknown column '%s' (user, job, gpu, vram, sm, idle, cpu, rss, "
				"time, state)", t);
			return -1;
		}
		cols[c] = COLM_OFF;
	}
	return 0;
}

/* cli_err's messages while the screen is ours (the daemon top read from
 * stopped, say): stderr would be drawn over the screen and stay there, so
 * whichever thread says one leaves it here for the status line */
static pthread_mutex_t note_mu = PTHREAD_MUTEX_INITIALIZER;
static char note[240];

static void note_sink(void *arg, const char *msg)
{
	(void)arg;
	pthread_mutex_lock(&note_mu);
	fmt_snprintf(note, sizeof note, "%s", msg);
	pthread_mutex_unlock(&note_mu);
}

static int note_take(char *out, size_t len)
{
	pthread_mutex_lock(&note_mu);
	int any = note[0] != 0;
	fmt_snprintf(out, len, "%s", note);
	note[0] = 0;
	pthread_mutex_unlock(&note_mu);
	return any;
}

static void take_snapshots(struct app *a)
{
	struct tui_snap *list = sampler_take(a->sp);
	if (!list)
		return;
	struct tui_snap *last = NULL;
	for (struct tui_snap *s = list; s; s = s->next) {
		model_feed(&a->m, s);
		findings_take(&a->f, s);
		if (!s->keep_last && s->err >= 0)
			last = s;
	}
	/* the newest good tick stays: the process page shows its details */
	if (last) {
		for (struct tui_snap **p = &list; *p; p = &(*p)->next)
			if (*p == last) {
				*p = last->next;
				break;
			}
		last->next = NULL;
		snap_free(a->snap);
		a->snap = last;
	}
	snap_free(list);
	findings_mark(&a->f, &a->m);
	input_rearrange(a);
	input_host(a);
	host_system(a->host); /* the header's host line, once a tick */
	char msg[240];
	if (kill_observe(&a->kw, &a->m, msg, sizeof msg))
		app_status(a, strstr(msg, "still") ? ROLE_WARN : ROLE_OK, "%s", msg);
	if (note_take(msg, sizeof msg))
		app_status(a, ROLE_WARN, "%s", msg);
}

static int loop(struct app *a)
{
	struct pollfd fds[3] = {
		{.fd = STDIN_FILENO, .events = POLLIN},
		{.fd = sampler_fd(a->sp), .events = POLLIN},
		{.fd = term_signal_fd(), .events = POLLIN},
	};
	int dirty = 1;
	while (!a->v.quit) {
		if (dirty) {
			render_screen(a);
			dirty = 0;
		}
		int64_t due = sampler_due_ms(a->sp);
		int timeout = -1;
		if (due >= 0) {
			int64_t left = due - clock_mono_ms();
			timeout = left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
		}
		if (poll(fds, 3, timeout) < 0) {
			if (errno == EINTR)
				continue; /* the signal's byte is in the pipe */
			return EXIT_FAIL;
		}
		if (sampler_run(a->sp)) {
			take_snapshots(a);
			dirty = 1;
		}
		if (fds[2].revents) {
			unsigned sig = term_signals();
			/* a hangup: restore the terminal if it is still there, then
			 * leave at once with the status the default action gives;
			 * the full exit path (threads, atexit) was seen to hang
			 * under LeakSanitizer after a hangup, spinning a core */
			if (sig & TERM_SIG_HANGUP) {
				term_close();
				_exit(128 + SIGHUP);
			}
			if (sig & TERM_SIG_QUIT)
				break;
			if (sig & TERM_SIG_RESIZE) {
				term_resize();
				fb_redraw();
				dirty = 1;
			}
		}
		if (fds[1].revents) {
			take_snapshots(a);
			dirty = 1;
		}
		if (fds[0].revents & (POLLHUP | POLLERR))
			break; /* the terminal went away */
		if (fds[0].revents) {
			wint_t ch;
			int rc;
			while ((rc = get_wch(&ch)) != ERR) {
				if (rc == KEY_CODE_YES && ch == KEY_RESIZE)
					continue;
				input_key(a, rc == KEY_CODE_YES, ch);
				dirty = 1;
				if (a->v.quit)
					break;
			}
		}
	}
	return EXIT_OK;
}

const char top_synopsis[] = "[OPTIONS]";
const char top_about[] =
	"The live dashboard: every GPU's memory (used / reserved / free), "
	"sensors and history, the processes holding memory, findings; "
	"sort, filter, kill.  Keys: ? on screen.";

/* the view's settings from the command line, checked: 0, or the exit code
 * of a bad option (or of no terminal) */
static int app_from_options(struct app *a)
{
	if (speed > 64) {
		cli_err("top: bad value %g for --speed: want a factor above 0 and at most 64", speed);
		return EXIT_USAGE;
	}
	a->v.ar.gpu = -1;
	a->v.show_util = -1;
	a->interval_ms = interval_ms;
	a->v.sel = -1;
	a->v.ar.sort = COL_VRAM;
	/* the choices kept from the last run (top.conf), then the command line's */
	prefs_load(&a->v);
	if (tree)
		a->v.ar.tree = 1;
	if (show_util)
		a->v.show_util = 1;
	if (sort_name != sort_default && sort_col(sort_name, &a->v.ar.sort)) {
		cli_err("--sort: unknown column '%s'", sort_name);
		return EXIT_USAGE;
	}
	if (hide_columns(hide_list, a->v.cols))
		return EXIT_USAGE;
	if (theme_name && strcmp(theme_name, "dark") && strcmp(theme_name, "light")) {
		cli_err("--theme: unknown theme '%s' (dark, light)", theme_name);
		return EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cli_err("top needs a terminal (try vramz status)");
		return EXIT_FAIL;
	}
	return 0;
}

int cmd_top(const struct cmd_args *args)
{
	(void)args;
	int ex, rc;
	struct app *a = calloc(1, sizeof *a);
	if (!a) {
		cli_err("out of memory");
		return EXIT_FAIL;
	}
	model_init(&a->m);
	if ((ex = app_from_options(a))) {
		free(a);
		return ex;
	}
	/* the findings: the thresholds of vramz watch (its config file too) */
	vramz_diag_config dc;
	vramz_diag_config_defaults(&dc);
	struct diag_cmd_conf cc = {.min_severity = "info"};
	if ((ex = diagconf_load(&dc, &cc))) {
		free(a);
		return ex;
	}
	/* the command line's theme over the config file's */
	const char *theme = theme_name ? theme_name : cc.theme ? cc.theme : "dark";
	/* no thresholds of its own (config file, --idle-after): a daemon's
	 * findings are shown as they are (sampler.c) */
	vramz_diag_config def;
	vramz_diag_config_defaults(&def);
	int own_thresholds = idle_after_ms >= 0 || memcmp(&dc, &def, sizeof dc) != 0;
	dc.keep_ended = 0; /* the panel shows what is wrong now */
	if (idle_after_ms >= 0)
		dc.idle_ms = idle_after_ms;
	if (!g_opts.replay) {
		diagconf_live_interval(&dc, interval_ms);
		/* live, as watch's: jobs told apart by their environments, and
		 * the PyTorch agents' tombstones read as their processes end */
		dc.proc_root = "/proc";
	}
	vramz_ctx *ctx = NULL;
	struct ticker *tk = NULL;
	if (!g_opts.replay) {
		struct ticker_opts to = {.cmd = "top", .interval_ms = interval_ms,
					 .flags = VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_LINK,
					 .daemon = 1, .nowait = 1, .health_ms = TICKER_HEALTH_MS,
					 .events = 1};
		ex = ticker_open(&tk, &to);
		if (ex) {
			free(a);
			return ex;
		}
		ctx = ticker_ctx(tk);
	}
	a->replay = g_opts.replay != NULL;
	if (a->replay)
		fmt_snprintf(a->source, sizeof a->source, "%s", g_opts.replay);
	else if (vramz_system(ctx))
		fmt_drivers(a->source, sizeof a->source, ctx, "  "); /* as status's header */
	struct sampler_opts so = {
		.ticker = tk, .replay_path = g_opts.replay, .speed = speed, .diag = &dc,
		.daemon_findings = !own_thresholds,
	};
	char err[300];
	struct term_opts to = {.no_color = g_opts.no_color, .no_mouse = no_mouse, .ascii = ascii,
			       .theme = !strcmp(theme, "light") ? THEME_LIGHT : THEME_DARK};
	a->host = host_new(!a->replay);
	/* the sampler thread must not take our signals: block them while it
	 * is created so it inherits the mask, then unblock them here */
	sigset_t all, old;
	sigemptyset(&all);
	sigaddset(&all, SIGWINCH);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = sampler_start(&a->sp, &so, err, sizeof err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc < 0) {
		cli_err("%s", err);
		ticker_close(tk);
		free(a);
		return EXIT_FAIL;
	}
	if (term_open(&to, err, sizeof err)) {
		sampler_stop(a->sp);
		ticker_close(tk);
		cli_err("%s", err);
		free(a);
		return EXIT_FAIL;
	}
	cli_err_sink(note_sink, NULL);
	ex = loop(a);
	cli_err_sink(NULL, NULL);
	term_close();
	if (a->v.quit) { /* q or F10, not a signal: the choices are kept */
		char perr[4300];
		if (prefs_save(&a->v, perr, sizeof perr))
			cli_err("top: the choices were not kept: %s", perr);
	}
	fb_free();
	/* a tick in progress (100,000 processes: most of a second) is not
	 * waited for: `q` exits at once, the detached thread with it, and
	 * without exit()'s handlers, which would unload what it still uses */
	if (sampler_stop_within(a->sp, 50) < 0) {
		fflush(NULL);
		_exit(ex);
	}
	ticker_close(tk);
	model_free(&a->m);
	findings_free(&a->f);
	snap_free(a->snap);
	host_free(a->host);
	free(a);
	return ex;
}
