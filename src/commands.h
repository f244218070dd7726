/* SPDX-License-Identifier: Apache-2.0 */
/* commands.h - every vramz subcommand's entry point and the one table that
 * lists them (`commands[]` in src/main.c).  Dispatch, `vramz help CMD`,
 * the default command, `vramz -h`, the man pages and the shell completions
 * all walk that table, so a command is one row and reached one way.
 *
 * Adding a subcommand (as `daemon` or `report` will):
 *   1. write src/cmd-NAME.c with `int cmd_NAME(int argc, char **argv)` that
 *      parses with cli_parse() and an option table (src/cli.h): -h, the
 *      man page vramz-NAME(1) and the completions come from that table;
 *   2. declare cmd_NAME below;
 *   3. add ONE row to commands[] in src/main.c;
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

int cmd_status(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_pick(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_help(int argc, char **argv);

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line, lowercase, for vramz -h and man pages */
};
extern const struct command commands[];
extern const size_t command_count;

/* The row named name, or NULL. */
const struct command *command_find(const char *name);
/* Commands this build left out (their library was missing at build time),
 * each with what it needs; NULL-terminated pairs. */
extern const char *const commands_not_built[];

/* Top-level help (vramz -h), on f. */
void vramz_usage(FILE *f);

/* Hidden generators (src/gendoc.c), from the same tables as -h:
 * `vramz --gen-man DIR`, `vramz --gen-completion bash|zsh|fish`. */
int gendoc_main(int argc, char **argv);

#endif
