/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the vramz tool: dispatch over the one table of subcommands
 * (cmdtable.c), and the preamble every command shares (the row's
 * thresholds, its option table parsed, -h, usage errors, its argument
 * rule).
 *
 * Nothing calls back up into this file: a command that runs another
 * (demo, log --replay, help) does it through the cmd_args.run it was
 * given, as `vramz ARGV...` would, and the table and the commands stay
 * below main.c (lint.callgraph).
 *
 * `vramz CMD ...` runs CMD's row; `vramz help CMD` is CMD's -h through the
 * same lookup; `vramz` with only options runs the default command: the
 * dashboard (`top`) on a terminal when top takes every option given, else
 * `status` (so `vramz --json` on a terminal is status's JSON).  The man
 * pages and shell completions are generated from this table and the
 * commands' option tables (src/gendoc.c), so they cannot drift. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/diagconf.h"
#include "cli.h"
#include "commands.h"

/* The positional arguments against the row's rule: 0, or the exit code
 * after one line saying what is wrong. */
static int check_args(const struct command *c, int nargs, char **args)
{
	switch (c->args) {
	case ARGS_NONE:
	case ARGS_AFTER:
		if (!nargs)
			return 0;
		cli_err("%s: unexpected argument '%s'%s", c->name, args[0],
			c->args_extra ? c->args_extra : "");
		return EXIT_USAGE;
	case ARGS_ONE:
		if (nargs > 1) {
			cli_err("%s: %s, got '%s' and more", c->name, c->args_extra, args[1]);
			return EXIT_USAGE;
		}
		/* fall through */
	case ARGS_MANY:
		if (nargs)
			return 0;
		cli_err("%s: %s", c->name, c->args_missing);
		return EXIT_USAGE;
	case ARGS_ANY:
	case ARGS_COMMAND:
		break;
	}
	return 0;
}

/* The commands nearest to name[0..len) (a typo of them), quoted and
 * joined by "or" into out ("'topo' or 'top'"); 0 when none is near. */
static int nearest_commands(const char *name, size_t len, char *out, size_t outlen)
{
	unsigned d[64], best = 3;
	const char *cand[64];
	size_t n = 0;
	for (size_t i = 0; i < command_count && n < 64; i++)
		cand[n++] = commands[i].name;
	for (const char *const *nb = commands_not_built; *nb && n < 64; nb += 2)
		cand[n++] = *nb;
	for (size_t i = 0; i < n; i++) {
		d[i] = cli_distance(name, len, cand[i], 2);
		if (d[i] < best && cli_close_enough(d[i], len))
			best = d[i];
	}
	int found = 0;
	size_t used = 0;
	out[0] = 0;
	for (size_t i = 0; i < n && best <= 2; i++)
		if (d[i] == best && used < outlen)
			used += (size_t)snprintf(out + used, outlen - used, "%s'%s'",
						 found++ ? " or " : "", cand[i]);
	return found;
}

static int unknown_command(const char *name)
{
	for (const char *const *n = commands_not_built; *n; n += 2)
		if (!strcmp(*n, name)) {
			cli_err("'%s' is not built in: it needs %s at build time", name, n[1]);
			return EXIT_FAIL;
		}
	char near[128];
	if (nearest_commands(name, strlen(name), near, sizeof near))
		cli_err("'%s' is not a command; did you mean %s?", name, near);
	else
		cli_err("'%s' is not a command (see vramz -h)", name);
	return EXIT_USAGE;
}

/* Words given without a command (`vramz --jsn`, `vramz -g0 statsu`) went
 * to the default command; a typo there is the user's, not the default
 * command's, and said as such.  rc: the parse's; args: what it left. */
static int toplevel_error(int rc, int nargs, char **args)
{
	if (rc == CLI_UNKNOWN) {
		const char *near, *name = cli_unknown(&near);
		char cmds[128];
		if (near)
			cli_err("unknown option '%s'; did you mean '--%s'?", name, near);
		else if (name[1] == '-' && nearest_commands(name + 2, strlen(name + 2), cmds, sizeof cmds))
			cli_err("unknown option '%s'; did you mean the command %s?", name, cmds);
		else
			cli_err("unknown option '%s' (see vramz -h)", name);
		return EXIT_USAGE;
	}
	if (rc != CLI_OK || !nargs)
		return -1;
	if (command_find(args[0]))
		cli_err("'%s' is a command: it goes first (vramz %s [OPTIONS])", args[0], args[0]);
	else
		return unknown_command(args[0]);
	return EXIT_USAGE;
}

static int run_command(int argc, char **argv);
static void vramz_usage(FILE *f);

/* The preamble: the row's thresholds, its table parsed, its argument
 * rule; then the command.  toplevel: no command was named (the default
 * command's). */
static int preamble(const struct command *c, int argc, char **argv, int toplevel)
{
	struct cmd_args a = {argc, argv, run_command, vramz_usage};
	if (!c->opts)
		return c->fn(&a);
	int ex;
	if (c->before && (ex = c->before(&a)) >= 0)
		return ex;
	if (c->thresholds && (ex = diagconf_thresholds_load(c->thresholds)))
		return ex;
	int mark = argc;
	for (int i = 1; c->args == ARGS_AFTER && i < argc; i++)
		if (!strcmp(argv[i], c->args_mark)) {
			if (i + 1 >= argc) {
				cli_err("%s: %s needs a command", c->name, c->args_mark);
				return EXIT_USAGE;
			}
			mark = i;
			break;
		}
	struct opt *opts = command_options(c);
	if (!opts)
		return EXIT_FAIL;
	int nargs = 0;
	unsigned flags = (c->args == ARGS_COMMAND ? CLI_STOP_AT_ARG : 0) | (toplevel ? CLI_TOPLEVEL : 0);
	int rc = cli_parse_flags(c->name, c->synopsis, c->about, opts, flags, mark, argv, &nargs);
	free(opts);
	if (toplevel && (ex = toplevel_error(rc, nargs, argv)) >= 0)
		return ex;
	if ((ex = cli_parse_exit(rc)) >= 0 || (ex = check_args(c, nargs, argv)))
		return ex;
	a.n = c->args == ARGS_AFTER ? (mark < argc ? argc - mark - 1 : 0) : nargs;
	a.v = c->args == ARGS_AFTER ? argv + mark + 1 : argv;
	return c->fn(&a);
}

/* `vramz ARGV...`: argv[0]'s row, its preamble and its function; what
 * the commands get as cmd_args.run, to run another command as the user
 * would have (demo's report and analyze, log --replay, help CMD). */
static int run_command(int argc, char **argv)
{
	const struct command *c = command_find(argv[0]);
	if (!c)
		return unknown_command(argv[0]);
	return preamble(c, argc, argv, 0);
}

static void vramz_usage(FILE *f)
{
	fprintf(f, "usage: vramz [COMMAND] [OPTIONS]\n\n"
		   "A VRAM monitor and diagnostician for machines with many GPUs.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < command_count; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nWith no command: top on a terminal, else status; options alone go to\n"
		   "status unless top takes them all.  vramz CMD -h lists CMD's options;\n"
		   "most take:\n"
		   "  -g, --gpus LIST   indices, ranges (0-3), UUID prefixes, PCI bus ids\n"
		   "  --json            machine-readable output (docs/json.md)\n"
		   "every command takes:\n"
		   "  --color WHEN      auto (on a terminal, unless NO_COLOR=1), always, never\n"
		   "  -h, --help        help for vramz or a command\n"
		   "and vramz alone:\n"
		   "  --version         print the version\n"
		   "\nExit codes: 0 ok, 1 failure, 2 bad usage, 3 a finding or a budget exceeded.\n");
}

#ifdef VRAMZ_HAVE_TUI
static const struct opt *find_opt(const struct opt *opts, const char *l, size_t len, char s)
{
	for (const struct opt *o = opts; o->s || o->l; o++)
		if (l ? o->l && strlen(o->l) == len && !strncmp(o->l, l, len) : o->s == s)
			return o;
	return NULL;
}

/* Whether every option in argv[1..] is one of opts' (top takes no arguments). */
static int takes_all(const struct opt *opts, int argc, char **argv)
{
	int all = 1;
	for (int i = 1; i < argc && all; i++) {
		const char *a = argv[i];
		const struct opt *o = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			continue;
		if (a[0] != '-' || !a[1]) {
			all = 0;
		} else if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			o = find_opt(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0);
			all = o != NULL;
			if (o && o->t != OPT_FLAG && !eq)
				i++;
		} else {
			for (const char *c = a + 1; *c && all; c++) {
				o = find_opt(opts, NULL, 0, *c);
				all = o != NULL;
				if (o && o->t != OPT_FLAG) {
					if (!c[1])
						i++;
					break;
				}
			}
		}
	}
	return all;
}
#endif

/* `vramz [OPTIONS]`: top on a terminal if it takes every option, else status. */
static int default_command(int argc, char **argv)
{
	const struct command *c = command_find("status");
#ifdef VRAMZ_HAVE_TUI
	if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)) {
		const struct command *top = command_find("top");
		struct opt *opts = command_options(top);
		if (opts && takes_all(opts, argc, argv))
			c = top;
		free(opts);
	}
#endif
	return preamble(c, argc, argv, 1);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		struct cmd_args a = {1, argv, run_command, vramz_usage};
		return cmd_help(&a);
	}
	if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("vramz %s (library %s)\n", VRAMZ_VERSION_STRING, vramz_version());
		return EXIT_OK;
	}
	if (argc > 1 && !strncmp(argv[1], "--gen-", 6))
		return gendoc_main(argc - 1, argv + 1);
	if (argc < 2 || argv[1][0] == '-')
		return default_command(argc, argv); /* options only */
	return run_command(argc - 1, argv + 1);
}
