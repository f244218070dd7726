/* cmd-ps.c - `vramz ps`: the processes holding VRAM on the selected GPUs,
 * with user, container / pod / Slurm job, memory and SM utilization.  A
 * process on two GPUs is listed once per GPU, as NVML reports it. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "json.h"
#include "proctab.h"
#include "status.h"

int cmd_ps(int argc, char **argv)
{
	const char *sort = "vram";
	uint64_t min_bytes = 0;
	int reverse = 0, wide = 0, nargs;
	const char *user = NULL;
	const struct opt opts[] = {
		OPT_GPUS,
		OPT_JSON,
		{'s', "sort", OPT_STR, &sort, "KEY", "vram (default), sm, pid, gpu, user, command",
		 "vram sm pid gpu user command"},
		{'r', "reverse", OPT_FLAG, &reverse, NULL, "reverse the order"},
		{'u', "user", OPT_STR, &user, "USER", "only this user's processes (name or uid)"},
		{'m', "min", OPT_SIZE, &min_bytes, "SIZE", "only processes holding at least SIZE (e.g. 1GiB)"},
		{'w', "wide", OPT_FLAG, &wide, NULL, "do not shorten commands"},
		{0, "replay", OPT_STR, &g_opts.replay, "FILE", "read the first tick of a recorded log"},
		OPT_NOCOLOR,
		OPT_END,
	};
	int rc = cli_parse("ps", "[-g LIST] [-s KEY] [-u USER] [-m SIZE] [--json]",
			   "Processes holding VRAM, one row per process and GPU.\n"
			   "A pid this machine cannot see (another PID namespace) is marked, not guessed.",
			   opts, argc, argv, &nargs);
	if (cli_parse_exit(rc) >= 0)
		return cli_parse_exit(rc);
	if (nargs) {
		cli_err("ps: unexpected argument '%s'", argv[0]);
		return EXIT_USAGE;
	}
	struct proctab_opts po = {.reverse = reverse, .user = user, .min_bytes = min_bytes, .wide = wide};
	if (proctab_sort_parse(sort, &po.sort)) {
		cli_err("ps: unknown sort key '%s' (vram, sm, pid, gpu, user, command)", sort);
		return EXIT_USAGE;
	}
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	int ex = cli_open_sample(&ctx, VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL, &snap);
	if (ex)
		return ex;
	if (g_opts.json) {
		unsigned *idx = malloc((snap->proc_count ? snap->proc_count : 1) * sizeof *idx);
		if (!idx) {
			cli_close(ctx);
			return EXIT_FAIL;
		}
		unsigned n = proctab_select(snap, &po, idx);
		struct jsonw w;
		jw_init(&w, stdout, 1);
		json_begin(&w, ctx, snap);
		jw_arr(&w, "processes");
		for (unsigned i = 0; i < n; i++)
			json_proc(&w, ctx, &snap->procs[idx[i]]);
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_finish(&w);
		free(idx);
	} else if (proctab_print(stdout, snap, &po) == 0) {
		printf("    (no process holds GPU memory%s)\n",
		       user || min_bytes ? " that matches the filters" : "");
	}
	ex = status_exit_code(snap);
	cli_close(ctx);
	return ex;
}
