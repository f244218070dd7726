/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - what every vramz subcommand shares: option tables (so -h, the
 * man pages and the shell completions cannot drift from the parser), value
 * parsers, errors, colour, and opening the library with the global options.
 * The command table and how to add a command: src/commands.h.
 *
 * Exit codes: 0 ok, 1 runtime failure, 2 bad usage, 3 "a finding at or
 * above --fail-on" (analyze) and budget failures (run), 4 a GPU's VRAM
 * unhealthy (status --fail-on-health).
 */
#ifndef VRAMZ_CLI_H
#define VRAMZ_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "vramz/vramz.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_FINDING = 3, EXIT_HEALTH = 4 };

/* ---- options ---- */
enum opt_type {
	OPT_FLAG,     /* int: set to 1 */
	OPT_STR,      /* const char * */
	OPT_UINT,     /* unsigned */
	OPT_DOUBLE,   /* double */
	OPT_SIZE,     /* uint64_t bytes: 512MiB, 10G, 1.5GiB, 4096 */
	OPT_DURATION, /* int64_t milliseconds: 10ms, 1s, 1.5m, 2h, 1d; bare = s */
	OPT_PERCENT,  /* double in [0,1]: 10%, 10 (a bare number above 1 is
		       * a percentage), 0.1 (1 or less: a fraction) */
	OPT_CHOICE,   /* const char *: one of .values's words */
	/* The same types with a range of values (src/cli.c's table says
	 * which, and the error says what fits): */
	OPT_INTERVAL, /* duration: CLI_MIN_INTERVAL_MS .. CLI_MAX_INTERVAL_MS */
	OPT_FACTOR,   /* double above 0 (speeds) */
	OPT_PROB,     /* double above 0 and below 1 (significance) */
	OPT_UNIT,     /* double from 0 to 1 (a strength, a share) */
	OPT_RATIO,    /* double of 1 or more */
	OPT_CELSIUS,  /* unsigned from 0 to 200 */
};

struct opt {
	char s;           /* short letter or 0 */
	const char *l;    /* long name without -- or NULL */
	enum opt_type t;
	void *dst;
	const char *arg;  /* argument name for help, e.g. "SIZE" */
	const char *help;
	const char *values; /* the values it takes, space-separated, for
			     * completions ("vram sm pid"), or NULL */
};
#define OPT_END {0, NULL, OPT_FLAG, NULL, NULL, NULL, NULL}

/* The sampling interval every command that samples takes with -i (watch,
 * log, top, serve, kill --idle, run, fit): at least 10 ms, so no command
 * busy-loops on the driver, and at most an hour.  Defined once here and
 * documented in docs/commands.md. */
#define CLI_MIN_INTERVAL_MS 10
#define CLI_MAX_INTERVAL_MS 3600000
#define OPT_SAMPLE_INTERVAL(dst, help) {'i', "interval", OPT_INTERVAL, dst, "DURATION", help}

/* Options every command that reads GPUs takes. */
struct gopts {
	const char *gpus;  /* -g/--gpus spec */
	int json;          /* --json */
	int no_color;      /* --no-color */
	const char *color; /* --color WHEN: auto, always, never; NULL: auto */
	const char *replay; /* --replay FILE where supported */
	int live;          /* --live: the driver, not a running daemon */
};
extern struct gopts g_opts;
#define OPT_GPUS {'g', "gpus", OPT_STR, &g_opts.gpus, "LIST", \
	"GPUs: indices, ranges (0-3), UUID prefixes, PCI bus ids"}
#define OPT_JSON {0, "json", OPT_FLAG, &g_opts.json, NULL, "print JSON (docs/json.md)"}
/* nvidia-smi's GPU selector (-i/--id), the same list as -g's, for status
 * and ps (whose -i is no interval) */
#define OPT_SMI_ID {'i', "id", OPT_STR, &g_opts.gpus, "LIST", \
	"the same as -g, by nvidia-smi's name for it"}
/* nvidia-smi's -lms / --loop-ms: the loop's interval in milliseconds */
#define OPT_LOOP_MS(dst) {0, "loop-ms", OPT_UINT, dst, "MS", \
	"--loop in milliseconds (also -lms MS, as nvidia-smi spells it)"}
#define OPT_LIVE {0, "live", OPT_FLAG, &g_opts.live, NULL, \
	"read the driver now, not a running vramz daemon (docs/daemon.md)"}
#define OPT_NOCOLOR {0, "no-color", OPT_FLAG, &g_opts.no_color, NULL, "no colour (also NO_COLOR=1)"}
/* Every command's, after its own (cmdtable.c's command_options adds it). */
#define OPT_COLOR {0, "color", OPT_CHOICE, &g_opts.color, "WHEN", \
	"colour: auto (a terminal, no NO_COLOR), always (into a pipe too), never", \
	"auto always never"}

enum { CLI_OK = 0, CLI_HELP = -1, CLI_USAGE = -2, CLI_UNKNOWN = -3 };

/* Parses argv[1..] against opts (main.c's preamble does, for every
 * command, with the table of its row in commands[]).  -h/--help prints usage to stdout and
 * returns CLI_HELP; a bad option prints one line and returns CLI_USAGE.
 * Positional arguments are moved to argv[0..*nargs-1] in order; "--" ends
 * options and everything after it is positional. */
int cli_parse(const char *cmd, const char *synopsis, const char *about,
	      const struct opt *opts, int argc, char **argv, int *nargs);
/* CLI_STOP_AT_ARG: options end at the first positional argument, which
 * starts a command line of its own (`vramz run python x.py --bs 8`).
 * CLI_TOPLEVEL: the words came without a command (`vramz --jsn`): an
 * unknown option is not said but left to cli_unknown() and the caller,
 * which knows the commands too. */
enum { CLI_STOP_AT_ARG = 1, CLI_TOPLEVEL = 2 };
int cli_parse_flags(const char *cmd, const char *synopsis, const char *about,
		    const struct opt *opts, unsigned flags, int argc, char **argv, int *nargs);

/* After CLI_UNKNOWN: the unknown option as given ("--jsn", "-x"), and
 * the table's long option nearest to it ("json"), or NULL. */
const char *cli_unknown(const char **nearest);
/* The Damerau-Levenshtein distance (adjacent swaps count one) of a[0..na)
 * and b, at most limit + 1: enough to say "within limit" cheaply. */
unsigned cli_distance(const char *a, size_t na, const char *b, unsigned limit);
/* Whether a typo of na characters at distance d is close enough to
 * suggest: one edit in a word of up to 4 characters, two in a longer one
 * (so "bs" is no typo of "dbl", nor "x" of every short name). */
int cli_close_enough(unsigned d, size_t na);
/* The argument name -h shows for o ("SIZE", "DURATION", ...). */
const char *cli_opt_arg(const struct opt *o);
/* Maps a cli_parse result to the command's return: -1 when parsing may go on. */
int cli_parse_exit(int rc);
void cli_usage(FILE *f, const char *cmd, const char *synopsis, const char *about,
	       const struct opt *opts);

/* "vramz: " + message + newline on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While a full-screen command (top) owns the terminal, stderr would be
 * drawn over its screen: cli_err hands each message (without "vramz: ")
 * to fn instead, on whichever thread called it.  NULL: stderr again. */
void cli_err_sink(void (*fn)(void *arg, const char *msg), void *arg);

/* Parses v as o's type, checks the type's range and stores the value in
 * o->dst; prints nothing.  0, or -1 with *why saying what fits (e.g. "want a
 * number above 0 and below 1").  The command line and the config file
 * both come through here, so they accept the same values. */
int opt_value(const struct opt *o, const char *v, const char **why);

/* Numbers are decimal only: no hex floats (0x1p4), no inf or nan. */
int parse_size(const char *s, uint64_t *bytes);
int parse_duration_ms(const char *s, int64_t *ms);
int parse_percent(const char *s, double *frac);

/* The colour decision of every command (top's screen included): --color
 * always or never, or --no-color, win; else NO_COLOR set (non-empty) is
 * never; else auto. */
enum cli_color_when { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };
enum cli_color_when cli_color_when(void);
/* Colour on f: always, or auto and f a terminal whose TERM is not dumb. */
int cli_color(FILE *f);

/* Opens libvramz (NVML, or g_opts.replay) and applies g_opts.gpus.  On
 * failure prints one line and returns the exit code (1, or 2 for a bad
 * -g); 0 on success. */
int cli_open(vramz_ctx **ctx);
/* Creates the diagnosis engine for command cmd; on failure prints one line
 * naming the refused threshold (or out of memory) and returns the exit
 * code (2, or 1 out of memory); 0 on success. */
struct vramz_diag;
struct vramz_diag_config;
int cli_diag_create(const char *cmd, struct vramz_diag **d, const struct vramz_diag_config *cfg);
/* The same with sample flags, then one sample. */
int cli_open_sample(vramz_ctx **ctx, unsigned flags, const vramz_snapshot **snap);
/* Closes a context.  With VRAMZ_PROFILE_NVML set in the environment (cli_open
 * then opened it with VRAMZ_OPEN_PROFILE), first prints on stderr the table of
 * the driver calls it made and the process's CPU time so far. */
void cli_close(vramz_ctx *ctx);

#endif
