/* SPDX-License-Identifier: Apache-2.0 */
/* commands.h - every vramz subcommand's entry point and the one table that
 * lists them (`commands[]` in src/cmdtable.c).  Dispatch, `vramz help CMD`,
 * the default command, `vramz -h`, the man pages and the shell completions
 * all walk that table, so a command is one row and reached one way.
 *
 * A row carries what every command used to repeat (git's builtin table is
 * the model): its option table, its -h text, its rule for positional
 * arguments, and what it reads.  main.c's preamble does the
 * rest once: the config file's thresholds, parsing, -h, the exit code of a
 * usage error, "unexpected argument", then calls the command with what is
 * left.  The options are already in the command's own variables, which its
 * table points at (file-scope in its cmd-*.c, their defaults there).
 *
 * Who calls whom: main.c walks the table (cmdtable.c), the table names
 * the commands, and a command never calls back up: to run another
 * command it uses the cmd_args.run it was handed.
 *
 * Adding a subcommand (as `daemon` or `report` did):
 *   1. write src/cmd/cmd-NAME.c with `int cmd_NAME(const struct cmd_args *a)`,
 *      `const struct opt NAME_opts[]` (src/cli.h: -h, the man page
 *      vramz-NAME(1) and the completions come from it) and the strings
 *      NAME_synopsis and NAME_about;
 *   2. declare them below with VRAMZ_COMMAND(NAME);
 *   3. add ONE row to commands[] in src/cmdtable.c: its summary, its argument
 *      rule and flags;
 *   4. add the file to VRAMZ_TOOL_SOURCES in src/CMakeLists.txt;
 *   5. document it in docs/commands.md (and docs/json.md when it takes
 *      --json: json_begin() writes the envelope) and add
 *      tests/e2e/tNNNN-NAME.sh.
 * Only commands needing an optional library are conditional: `top`
 * (ncurses, VRAMZ_HAVE_TUI) and `serve` (libmicrohttpd, VRAMZ_HAVE_SERVE).
 */
#ifndef VRAMZ_COMMANDS_H
#define VRAMZ_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

/* What the preamble hands a command: the positional arguments its rule
 * let through, in order (run: the command line; watch: what follows
 * --exec; kill: the pids), and what the dispatcher (main.c) lends. */
struct cmd_args {
	int n;
	char **v;
	/* Runs argv[0] as `vramz ARGV...` would: its row's preamble, then its
	 * function; an unknown name is the same usage error.  Returns the
	 * exit code.  (demo runs report and analyze; log --replay, replay.) */
	int (*run)(int argc, char **argv);
	/* vramz -h's text, on f (help) */
	void (*usage)(FILE *f);
};

#define VRAMZ_COMMAND(name)                                  \
	int cmd_##name(const struct cmd_args *a);            \
	extern const struct opt name##_opts[];               \
	extern const char name##_synopsis[], name##_about[]

VRAMZ_COMMAND(status);
VRAMZ_COMMAND(ps);
VRAMZ_COMMAND(info);
VRAMZ_COMMAND(topo);
VRAMZ_COMMAND(log);
VRAMZ_COMMAND(replay);
VRAMZ_COMMAND(analyze);
VRAMZ_COMMAND(watch);
VRAMZ_COMMAND(demo);
VRAMZ_COMMAND(run);
VRAMZ_COMMAND(fit);
VRAMZ_COMMAND(pick);
VRAMZ_COMMAND(kill);
VRAMZ_COMMAND(report);
VRAMZ_COMMAND(daemon);
VRAMZ_COMMAND(serve);
VRAMZ_COMMAND(top);
/* help parses its own words (no preamble): `vramz help CMD` */
int cmd_help(const struct cmd_args *a);
/* The rows' extras (struct command below) */
extern struct cmd_thresholds analyze_thresholds, watch_thresholds, report_thresholds;
int log_replay_alias(const struct cmd_args *a);

/* The positional arguments a command takes. */
enum cmd_args_rule {
	ARGS_NONE,    /* none: "unexpected argument 'X'" (+ .args_extra, a hint) */
	ARGS_ONE,     /* exactly one: .args_missing when none, .args_extra
		       * (", got 'Y' and more") when more */
	ARGS_MANY,    /* one or more: .args_missing when none */
	ARGS_ANY,     /* any number; the command judges them (kill PID...) */
	ARGS_COMMAND, /* a command line of its own: options end at its first
		       * word or at -- (run, fit); the command judges it */
	ARGS_AFTER,   /* none, but the words after the option .args_mark are
		       * the command's (watch --exec CMD ARGS...) */
};

/* What a command reads and takes; checked against its option table
 * (command_check: the build fails when they disagree). */
enum cmd_flags {
	CMD_SAMPLES = 1 << 0, /* it reads GPUs: the driver, a daemon or a log */
	CMD_DAEMON = 1 << 1,  /* it reads a running vramz daemon unless --live */
	CMD_GPUS = 1 << 2,    /* it takes -g/--gpus */
};

struct cmd_thresholds;  /* src/analyze/diagconf.h */

struct command {
	const char *name;
	int (*fn)(const struct cmd_args *a);
	const char *summary;  /* one line, lowercase, for vramz -h and man pages */
	const char *synopsis, *about; /* its -h */
	const struct opt *opts; /* its option table; NULL: no preamble (help) */
	enum cmd_args_rule args;
	unsigned flags;         /* CMD_* */
	const char *args_missing; /* ARGS_ONE, ARGS_MANY: what to say when none */
	const char *args_extra;   /* ARGS_NONE: a hint after the error;
				   * ARGS_ONE: what to say when more come */
	const char *args_mark;    /* ARGS_AFTER: the option before them */
	/* The diagnosis thresholds (analyze, watch, report): the config file
	 * is read into them before parsing, and their options follow the
	 * command's own in its table.  NULL: none. */
	struct cmd_thresholds *thresholds;
	/* Runs before anything else, with every word (a->n, a->v: argc,
	 * argv): -1 to go on, or the exit code (log: `log --replay FILE ...`
	 * is `replay FILE ...`). */
	int (*before)(const struct cmd_args *a);
};
extern const struct command commands[];
extern const size_t command_count;

/* cmdtable.c: the row named name, or NULL. */
const struct command *command_find(const char *name);
/* The whole option table the preamble parses c's words with: its own,
 * then the thresholds' (calloc'd, OPT_END-terminated; free() it), or
 * NULL out of memory. */
struct opt *command_options(const struct command *c);
/* Whether c's flags agree with its option table: 0, or -1 with why. */
int command_check(const struct command *c, char *why, size_t len);
/* Commands this build left out (their library was missing at build time),
 * each with what it needs; NULL-terminated pairs. */
extern const char *const commands_not_built[];

/* Hidden generators (src/gendoc.c), from the same tables as -h:
 * `vramz --gen-man DIR`, `vramz --gen-completion bash|zsh|fish`. */
int gendoc_main(int argc, char **argv);

#endif
