/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the vramz tool: the one table of subcommands, and dispatch.
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

#include "cli.h"
#include "commands.h"

const struct command commands[] = {
	{"status", cmd_status, "memory, utilization and processes of each GPU (default)"},
	{"ps", cmd_ps, "processes holding VRAM, per GPU, with user and container"},
	{"info", cmd_info, "hardware facts: memory type, bus width, bandwidth, PCIe, NVLink, modes"},
	{"topo", cmd_topo, "GPU-to-GPU interconnect matrix (NVLink / PCIe)"},
#ifdef VRAMZ_HAVE_TUI
	{"top", cmd_top, "live dashboard of every GPU and process"},
#endif
	{"log", cmd_log, "record every GPU (and process) to a CSV log"},
	{"replay", cmd_replay, "play a recorded log back as the live views"},
	{"analyze", cmd_analyze, "diagnose a recorded log: leaks, idle holders, ..."},
	{"watch", cmd_watch, "diagnose live: a line per new or changed finding"},
	{"demo", cmd_demo, "replay a real 2 x H200 recording: vramz without a GPU"},
	{"report", cmd_report, "a log as one HTML page with plots (docs/report.md)"},
	{"daemon", cmd_daemon, "sample once, publish to every reader (shared memory)"},
#ifdef VRAMZ_HAVE_SERVE
	{"serve", cmd_serve, "Prometheus exporter (/metrics)"},
#endif
	{"run", cmd_run, "run a command and report its peak VRAM per GPU"},
	{"fit", cmd_fit, "find the largest batch size that fits"},
	{"pick", cmd_pick, "choose the freest GPUs (CUDA_VISIBLE_DEVICES)"},
	{"kill", cmd_kill, "terminate processes holding VRAM, safely"},
	{"help", cmd_help, "help for vramz or a command (vramz help CMD = vramz CMD -h)"},
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
		   "  -h, --help        help for vramz or a command\n"
		   "  --version         print the version\n"
		   "\nNO_COLOR=1 turns colour off.\n"
		   "Exit codes: 0 ok, 1 failure, 2 bad usage, 3 a finding or a budget exceeded.\n");
}

static int unknown_command(const char *name)
{
	for (const char *const *n = commands_not_built; *n; n += 2)
		if (!strcmp(*n, name)) {
			cli_err("'%s' is not built in: it needs %s at build time", name, n[1]);
			return EXIT_FAIL;
		}
	cli_err("unknown command '%s' (see vramz -h)", name);
	return EXIT_USAGE;
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		vramz_usage(stdout);
		return EXIT_OK;
	}
	const struct command *c = command_find(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	char *hargv[] = {argv[1], "-h", NULL};
	return c->fn(2, hargv);
}

#ifdef VRAMZ_HAVE_TUI
struct takes {
	int argc;
	char **argv;
	int all; /* every option given is one of the table's */
};

static const struct opt *find_opt(const struct opt *opts, const char *l, size_t len, char s)
{
	for (const struct opt *o = opts; o->s || o->l; o++)
		if (l ? o->l && strlen(o->l) == len && !strncmp(o->l, l, len) : o->s == s)
			return o;
	return NULL;
}

static void check_takes(const char *cmd, const char *syn, const char *about,
			const struct opt *opts, unsigned flags, void *arg)
{
	struct takes *t = arg;
	t->all = 1;
	for (int i = 1; i < t->argc && t->all; i++) {
		const char *a = t->argv[i];
		const struct opt *o = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			continue;
		if (a[0] != '-' || !a[1]) {
			t->all = 0; /* top takes no arguments */
		} else if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			o = find_opt(opts, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2), 0);
			t->all = o != NULL;
			if (o && o->t != OPT_FLAG && !eq)
				i++;
		} else {
			for (const char *c = a + 1; *c && t->all; c++) {
				o = find_opt(opts, NULL, 0, *c);
				t->all = o != NULL;
				if (o && o->t != OPT_FLAG) {
					if (!c[1])
						i++;
					break;
				}
			}
		}
	}
}
#endif

/* `vramz [OPTIONS]`: top on a terminal if it takes every option, else status. */
static int default_command(int argc, char **argv)
{
	const char *name = "status";
#ifdef VRAMZ_HAVE_TUI
	if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)) {
		struct takes t = {argc, argv, 0};
		char *pargv[] = {"top", NULL};
		cli_set_probe(check_takes, &t);
		cmd_top(1, pargv);
		cli_set_probe(NULL, NULL);
		if (t.all)
			name = "top";
	}
#endif
	return command_find(name)->fn(argc, argv);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return cmd_help(1, argv);
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
	return c->fn(argc - 1, argv + 1);
}
