/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the vramz tool: the one table of subcommands, dispatch, and
 * the preamble every command shares (command_main: the row's thresholds,
 * its option table parsed, -h, usage errors, its argument rule).
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

#define OPTS(n) n##_synopsis, n##_about, n##_opts
#define LIVE (CMD_SAMPLES | CMD_DAEMON | CMD_GPUS)

const struct command commands[] = {
	{"status", cmd_status, "memory, utilization and processes of each GPU (default)",
	 OPTS(status), ARGS_NONE, LIVE},
	{"ps", cmd_ps, "processes holding VRAM, per GPU, with user and container",
	 OPTS(ps), ARGS_NONE, LIVE},
	{"info", cmd_info, "hardware facts: memory type, bus width, bandwidth, PCIe, NVLink, modes",
	 OPTS(info), ARGS_NONE, LIVE},
	{"topo", cmd_topo, "GPU-to-GPU interconnect matrix (NVLink / PCIe)",
	 OPTS(topo), ARGS_NONE, LIVE},
#ifdef VRAMZ_HAVE_TUI
	{"top", cmd_top, "live dashboard of every GPU and process",
	 OPTS(top), ARGS_NONE, LIVE},
#endif
	{"log", cmd_log, "record every GPU (and process) to a CSV log",
	 OPTS(log), ARGS_NONE, LIVE,
	 .args_extra = " (the file goes after -o)", .before = log_replay_alias},
	{"replay", cmd_replay, "play a recorded log back as the live views",
	 OPTS(replay), ARGS_ONE, CMD_SAMPLES | CMD_GPUS,
	 .args_missing = "which log? (vramz replay FILE)", .args_extra = "one log at a time"},
	{"analyze", cmd_analyze, "diagnose a recorded log: leaks, idle holders, ...",
	 OPTS(analyze), ARGS_MANY, 0,
	 .args_missing = "which log? (vramz analyze FILE)", .thresholds = &analyze_thresholds},
	{"watch", cmd_watch, "diagnose live: a line per new or changed finding",
	 OPTS(watch), ARGS_AFTER, LIVE,
	 .args_mark = "--exec", .thresholds = &watch_thresholds},
	{"demo", cmd_demo, "replay a real 2 x H200 recording: vramz without a GPU",
	 OPTS(demo), ARGS_NONE, CMD_SAMPLES},
	{"report", cmd_report, "a log as one HTML page with plots (docs/report.md)",
	 OPTS(report), ARGS_MANY, CMD_GPUS,
	 .args_missing = "which log? (vramz report LOG... [-o FILE.html])",
	 .thresholds = &report_thresholds},
	{"daemon", cmd_daemon, "sample once, publish to every reader (shared memory)",
	 OPTS(daemon), ARGS_NONE, CMD_SAMPLES | CMD_GPUS},
#ifdef VRAMZ_HAVE_SERVE
	{"serve", cmd_serve, "Prometheus exporter (/metrics), live page (/)",
	 OPTS(serve), ARGS_NONE, LIVE},
#endif
	{"run", cmd_run, "run a command and report its peak VRAM per GPU",
	 OPTS(run), ARGS_COMMAND, CMD_SAMPLES | CMD_GPUS},
	{"fit", cmd_fit, "find the largest batch size that fits",
	 OPTS(fit), ARGS_COMMAND, CMD_SAMPLES | CMD_GPUS},
	{"pick", cmd_pick, "choose the freest GPUs (CUDA_VISIBLE_DEVICES)",
	 OPTS(pick), ARGS_NONE, LIVE},
	{"kill", cmd_kill, "terminate processes holding VRAM, safely",
	 OPTS(kill), ARGS_ANY, CMD_SAMPLES | CMD_GPUS},
	{"help", cmd_help, "help for vramz or a command (vramz help CMD = vramz CMD -h)",
	 NULL, NULL, NULL, ARGS_ANY, 0},
};
const size_t command_count = sizeof commands / sizeof commands[0];

const char *const commands_not_built[] = {
#ifndef VRAMZ_HAVE_TUI
	"top", "ncurses (libncurses-dev)",
#endif
#ifndef VRAMZ_HAVE_SERVE
	"serve", "libmicrohttpd (libmicrohttpd-dev)",
#endif
	NULL,
};

const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < command_count; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static size_t table_len(const struct opt *opts)
{
	size_t n = 0;
	while (opts[n].s || opts[n].l)
		n++;
	return n;
}

/* What every command takes besides its own options. */
static const struct opt global_opts[] = {
	OPT_COLOR,
	OPT_END,
};

struct opt *command_options(const struct command *c)
{
	size_t own = table_len(c->opts), ng = table_len(global_opts);
	size_t nk = c->thresholds ? diagconf_opt_count() : 0;
	struct opt *t = calloc(own + nk + ng + 1, sizeof *t);
	if (!t)
		return NULL;
	memcpy(t, c->opts, own * sizeof *t);
	if (c->thresholds)
		diagconf_opts(&c->thresholds->cfg, t + own);
	memcpy(t + own + nk, global_opts, ng * sizeof *t);
	return t; /* calloc's zeros are OPT_END */
}

static const struct opt *long_opt(const struct opt *opts, const char *l)
{
	for (const struct opt *o = opts; o->s || o->l; o++)
		if (o->l && !strcmp(o->l, l))
			return o;
	return NULL;
}

int command_check(const struct command *c, char *why, size_t len)
{
	if (!c->opts)
		return 0;
	int gpus = long_opt(c->opts, "gpus") != NULL;
	if (gpus && !(c->flags & CMD_GPUS))
		snprintf(why, len, "%s: -g/--gpus in its table but no CMD_GPUS", c->name);
	else if (!gpus && (c->flags & CMD_GPUS))
		snprintf(why, len, "%s: CMD_GPUS but no -g/--gpus in its table", c->name);
	else if (long_opt(c->opts, "live") && !(c->flags & CMD_DAEMON))
		snprintf(why, len, "%s: --live in its table but no CMD_DAEMON", c->name);
	else if ((c->flags & CMD_DAEMON) && !(c->flags & CMD_SAMPLES))
		snprintf(why, len, "%s: CMD_DAEMON without CMD_SAMPLES", c->name);
	else if ((c->args == ARGS_ONE || c->args == ARGS_MANY) && !c->args_missing)
		snprintf(why, len, "%s: no .args_missing", c->name);
	else if ((c->args == ARGS_ONE && !c->args_extra) || (c->args == ARGS_AFTER && !c->args_mark))
		snprintf(why, len, "%s: its argument rule lacks its words", c->name);
	else
		return 0;
	return -1;
}

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

/* The preamble: the row's thresholds, its table parsed, its argument
 * rule; then the command.  toplevel: no command was named (the default
 * command's). */
static int preamble(const struct command *c, int argc, char **argv, int toplevel)
{
	struct cmd_args a = {0};
	if (!c->opts) {
		a = (struct cmd_args){argc, argv};
		return c->fn(&a);
	}
	int ex;
	if (c->before && (ex = c->before(argc, argv)) >= 0)
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
	a = c->args == ARGS_AFTER ? (struct cmd_args){mark < argc ? argc - mark - 1 : 0, argv + mark + 1}
				  : (struct cmd_args){nargs, argv};
	return c->fn(&a);
}

int command_main(const struct command *c, int argc, char **argv)
{
	return preamble(c, argc, argv, 0);
}

void vramz_usage(FILE *f)
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

int cmd_help(const struct cmd_args *a)
{
	if (a->n < 2 || !strcmp(a->v[1], "-h") || !strcmp(a->v[1], "--help")) {
		vramz_usage(stdout);
		return EXIT_OK;
	}
	const struct command *c = command_find(a->v[1]);
	if (!c)
		return unknown_command(a->v[1]);
	char *hargv[] = {a->v[1], "-h", NULL};
	return command_main(c, 2, hargv);
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
		struct cmd_args a = {1, argv};
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
	const struct command *c = command_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return command_main(c, argc - 1, argv + 1);
}
