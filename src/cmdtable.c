/* SPDX-License-Identifier: Apache-2.0 */
/* cmdtable.c - the one table of vramz's subcommands (commands.h says how
 * to add one), and what a row means: its whole option table, and the
 * check that its flags agree with its options.
 *
 * Below everything that walks it: dispatch (main.c), the man pages and
 * completions (gendoc.c).  It names every command's function; no command
 * calls back into it (one runs another through cmd_args.run), so the
 * table, its readers and the commands call into each other nowhere
 * (lint.callgraph).
 */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diagconf.h"
#include "cli.h"

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
