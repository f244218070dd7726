/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-ps.c - `vramz ps`: the processes holding VRAM on the selected GPUs,
 * with user, container / pod / Slurm job, memory and SM utilization.  A
 * process on two GPUs is listed once per GPU, as NVML reports it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "format/jsondoc.h"
#include "proctab.h"
#include "format/script.h"
#include "source.h"
#include "status.h"

struct ps_view {
	struct proctab_opts po;
	int loop;
	struct script_opts so;
	struct script_cols cols;
};

static int ps_show(vramz_ctx *ctx, const vramz_snapshot *snap, unsigned tick, void *arg)
{
	const struct ps_view *v = arg;
	if (g_opts.json || v->so.csv) {
		unsigned *idx = malloc((snap->proc_count ? snap->proc_count : 1) * sizeof *idx);
		if (!idx)
			return -1;
		unsigned n = proctab_select(snap, &v->po, idx);
		if (v->so.csv) {
			if (v->cols.smi && !tick)
				smi_prepare(ctx, snap, &v->cols.q);
			if (!tick && !v->so.no_header)
				script_header(stdout, &v->cols);
			script_proc_rows(stdout, ctx, snap, idx, n, &v->cols);
			free(idx);
			return 0;
		}
		struct jsonw w;
		/* looping: one document a line (JSON Lines) */
		jw_init(&w, stdout, !v->loop);
		json_begin(&w, "ps", ctx, snap);
		jw_arr(&w, "processes");
		for (unsigned i = 0; i < n; i++)
			json_proc(&w, ctx, &snap->procs[idx[i]]);
		jw_end_arr(&w);
		json_ended(&w, ctx, snap);
		jw_end_obj(&w);
		jw_finish(&w);
		free(idx);
		return 0;
	}
	if (tick)
		fputc('\n', stdout);
	source_line(stdout, ctx);
	if (proctab_print(stdout, snap, &v->po) == 0)
		printf("    (no process holds GPU memory%s)\n",
		       v->po.user || v->po.min_bytes ? " that matches the filters" : "");
	return 0;
}

static struct ps_view v;
static const char *sort = "vram";
static uint64_t min_bytes;
static int reverse, wide;
static int64_t loop_ms = -1;
static unsigned loop_ms_only;
static const char *user;

const struct opt ps_opts[] = {
	OPT_GPUS,
	OPT_JSON,
	{'s', "sort", OPT_STR, &sort, "KEY", "vram (default), sm, pid, gpu, user, command",
	 "vram sm pid gpu user command"},
	{'r', "reverse", OPT_FLAG, &reverse, NULL, "reverse the order"},
	{'u', "user", OPT_STR, &user, "USER", "only this user's processes (name or uid)"},
	{'m', "min", OPT_SIZE, &min_bytes, "SIZE", "only processes holding at least SIZE (e.g. 1GiB)"},
	{'w', "wide", OPT_FLAG, &wide, NULL, "do not shorten commands or pod names"},
	OPT_SMI_ID,
	{'l', "loop", OPT_DURATION, &loop_ms, "INTERVAL",
	 "show again every INTERVAL until interrupted (a bare number is seconds, as nvidia-smi's -l)"},
	OPT_LOOP_MS(&loop_ms_only),
	{0, "csv", OPT_FLAG, &v.so.csv, NULL,
	 "script mode: a CSV row per process and GPU (as the process log's columns)"},
	{0, "fields", OPT_STR, &v.so.fields, "LIST",
	 "--csv columns, comma-separated (--fields help lists them)"},
	{0, "query-compute-apps", OPT_STR, &v.so.query, "LIST",
	 "nvidia-smi's --query-compute-apps: its names, its text, byte for byte (docs/smi.md)"},
	{0, "help-query-compute-apps", OPT_FLAG, &v.so.help_query, NULL,
	 "the --query-compute-apps names vramz answers"},
	{0, "no-header", OPT_FLAG, &v.so.no_header, NULL, "--csv without the header line"},
	{0, "units", OPT_FLAG, &v.so.units, NULL, "--csv values for people: MiB, % (and headers that say so)"},
	{0, "format", OPT_STR, &v.so.format, "FORMAT",
	 "nvidia-smi's csv[,noheader][,nounits] (with --csv: --units, noheader --no-header)",
	 "csv csv,noheader csv,nounits csv,noheader,nounits"},
	{0, "replay", OPT_STR, &g_opts.replay, "FILE", "read the first tick of a recorded log"},
	OPT_LIVE,
	OPT_NOCOLOR,
	OPT_END,
};
const char ps_synopsis[] =
	"[-g LIST] [-s KEY] [-u USER] [-m SIZE] [--json | --csv [--fields LIST] | "
	"--query-compute-apps LIST [--format=csv[,noheader][,nounits]]] [-l INTERVAL | -lms MS]";
const char ps_about[] =
	"Processes holding VRAM, one row per process and GPU.\n"
	"A pid this machine cannot see (another PID namespace) is marked, not guessed.";

int cmd_ps(const struct cmd_args *args)
{
	(void)args;
	int ex = script_setup("ps", SCRIPT_PROCS, &v.so, &v.cols);
	if (ex >= 0)
		return ex;
	if (loop_ms_only)
		loop_ms = loop_ms_only;
	if (loop_ms != -1 && loop_ms < 10) {
		cli_err("ps: --loop takes 10ms or more");
		return EXIT_USAGE;
	}
	v.loop = loop_ms > 0;
	v.po = (struct proctab_opts){.reverse = reverse, .user = user, .min_bytes = min_bytes, .wide = wide};
	if (proctab_sort_parse(sort, &v.po.sort)) {
		cli_err("ps: unknown sort key '%s' (vram, sm, pid, gpu, user, command)", sort);
		return EXIT_USAGE;
	}
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	unsigned flags = VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL | v.cols.q.sample_flags;
	if (v.loop)
		return script_loop("ps", flags, loop_ms, ps_show, &v);
	ex = source_open_sample(&ctx, flags, &snap);
	if (ex)
		return ex;
	if (ps_show(ctx, snap, 0, &v)) {
		cli_close(ctx);
		return EXIT_FAIL;
	}
	ex = status_exit_code(snap);
	cli_close(ctx);
	return ex;
}
