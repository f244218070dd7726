/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-status.c - `vramz` / `vramz status`: one row per GPU with memory
 * used / total and %, reserved, utilization, temperature and power, then
 * the processes holding memory.  Reserved memory gets its own column
 * because it is the reason tools disagree about "used" (R510+ drivers
 * count it in neither used nor free). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsondoc.h"
#include "proctab.h"
#include "format/script.h"
#include "source.h"
#include "status.h"

static void print_header(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap)
{
	const vramz_system_info *s = vramz_system(ctx);
	const struct colors *c = colors_for(f);
	char t[40], drv[256], src[128];
	if (!strcmp(s->backend, "replay")) {
		/* a log of GPUs 0 and 5 holds two GPUs, not six: count those
		 * it recorded, not the indices up to the highest */
		unsigned recorded = 0;
		for (unsigned i = 0; i < vramz_gpu_count(ctx); i++) {
			const vramz_gpu_info *gi = vramz_gpu(ctx, i);
			recorded += gi && (gi->uuid[0] || gi->name[0]); /* an index it never saw is blank */
		}
		fprintf(f, "%svramz %s%s  replay of a log  %u of %u GPUs  recorded %s%s%s\n", c->bold,
			VRAMZ_VERSION_STRING, c->reset, snap->gpu_count, recorded, c->dim,
			fmt_iso_ms(t, sizeof t, snap->time_ms), c->reset);
	} else
		fprintf(f, "%svramz %s%s  %s  %u of %u GPUs  %s%s%s%s%s\n", c->bold,
			VRAMZ_VERSION_STRING, c->reset, fmt_drivers(drv, sizeof drv, ctx, "  "),
			snap->gpu_count, vramz_gpu_count(ctx), c->dim,
			fmt_iso_ms(t, sizeof t, snap->time_ms),
			source_is_daemon(ctx) ? "  from " : "", source_str(ctx, src, sizeof src), c->reset);
}

/* What is wrong with a GPU's VRAM, worst first, in words a glance takes
 * in (blank when healthy; nvidia-smi's default view has its "Volatile
 * Uncorr. ECC" column for the same reason).  Upper case is what needs a
 * person now: a failed remap (no spare row left: replace the GPU) and
 * uncorrected errors since the driver loaded; lower case waits for a
 * reset or reboot, and counts corrected errors.  Volatile counts: since
 * the driver loaded, so a reset clears what was dealt with.  Returns
 * whether anything was said. */
int status_health(char *buf, size_t len, const vramz_gpu_sample *g)
{
	size_t n = 0;
	buf[0] = 0;
#define SAY(...) do { \
		int k_ = snprintf(buf + n, len - n, "%s", n ? ", " : ""); \
		if (k_ > 0 && (size_t)k_ < len - n) n += (size_t)k_; \
		k_ = snprintf(buf + n, len - n, __VA_ARGS__); \
		if (k_ > 0) n = (size_t)k_ < len - n ? n + (size_t)k_ : len - 1; \
	} while (0)
	if (g->lost)
		return 0; /* the row says lost itself */
	if ((g->valid & VRAMZ_F_REMAP) && g->remap_failure)
		SAY("REMAP FAILED");
	if ((g->valid & VRAMZ_F_ECC_VOL) && g->ecc_uncorrected_volatile)
		SAY("UNCORR ECC %llu", (unsigned long long)g->ecc_uncorrected_volatile);
	if ((g->valid & VRAMZ_F_XID) && g->xid_events && g->xid_last)
		SAY("Xid %u", g->xid_last);
	if ((g->valid & VRAMZ_F_REMAP) && g->remap_pending)
		SAY("remap pending");
	if ((g->valid & VRAMZ_F_RETIRED_PENDING) && g->retired_pending)
		SAY("retire pending");
	if ((g->valid & VRAMZ_F_ECC_VOL) && g->ecc_corrected_volatile)
		SAY("ECC %llu", (unsigned long long)g->ecc_corrected_volatile);
#undef SAY
	return n > 0;
}

void status_print_gpus(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap)
{
	const struct colors *c = colors_for(f);
	fprintf(f, "%s%3s %-22s %21s %6s %9s %5s %5s %13s  %s%s\n", c->bold, "GPU", "NAME",
		"MEMORY USED / TOTAL", "USE%", "RESERVED", "UTIL", "TEMP", "POWER / LIMIT",
		"HEALTH", c->reset);
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		char name[32], used[16], total[16], mem[40], pct[12], res[16], util[8], temp[8],
			pw[24];
		/* every name starts with the vendor; the model is what differs */
		const char *nm = gi && *gi->name ? gi->name : "?";
		if (!strncmp(nm, "NVIDIA ", 7))
			nm += 7;
		fmt_trunc(name, sizeof name, nm, 22);
		if (g->lost) {
			fprintf(f, "%3u %-22s %s%s%s\n", g->index, name, c->red,
				"lost: fell off the bus (NVML GPU_IS_LOST)", c->reset);
			continue;
		}
		int mem_ok = g->valid & VRAMZ_F_MEM;
		snprintf(mem, sizeof mem, "%s / %s", fmt_bytes_if(used, sizeof used, mem_ok, g->mem_used_bytes),
			 fmt_bytes_if(total, sizeof total, mem_ok, g->mem_total_bytes));
		double frac = mem_ok && g->mem_total_bytes ? (double)g->mem_used_bytes / (double)g->mem_total_bytes : 0;
		if (mem_ok && g->mem_total_bytes)
			snprintf(pct, sizeof pct, "%.1f%%", 100 * frac);
		else
			snprintf(pct, sizeof pct, "-");
		const char *pc = frac >= 0.95 ? c->red : frac >= 0.80 ? c->yellow : "";
		fmt_bytes_if(res, sizeof res, g->valid & VRAMZ_F_MEM_RESERVED, g->mem_reserved_bytes);
		fmt_uint_if(util, sizeof util, g->valid & VRAMZ_F_UTIL, g->util_gpu_pct, "%");
		if (g->valid & VRAMZ_F_TEMP)
			snprintf(temp, sizeof temp, "%dC", g->temp_c);
		else
			snprintf(temp, sizeof temp, "-");
		if (g->valid & VRAMZ_F_POWER) {
			if (g->valid & VRAMZ_F_POWER_LIMIT)
				snprintf(pw, sizeof pw, "%u / %u W", (g->power_mw + 500) / 1000,
					 (g->power_limit_mw + 500) / 1000);
			else
				snprintf(pw, sizeof pw, "%u W", (g->power_mw + 500) / 1000);
		} else {
			snprintf(pw, sizeof pw, "-");
		}
		char health[96];
		int sick = status_health(health, sizeof health, g);
		/* no trailing blanks on a healthy row */
		fprintf(f, "%3u %-22s %21s %s%6s%s %9s %5s %5s %13s%s%s%s%s\n", g->index, name, mem, pc,
			pct, *pc ? c->reset : "", res, util, temp, pw, sick ? "  " : "",
			sick ? (isupper((unsigned char)health[0]) ? c->red : c->yellow) : "", health,
			sick ? c->reset : "");
		for (unsigned m = 0; m < snap->mig_count; m++) {
			const vramz_mig_sample *ms = &snap->migs[m];
			if (ms->parent_index != g->index)
				continue;
			char mu[16], mt[16], mn[32];
			snprintf(mn, sizeof mn, "  MIG %u (GI %u CI %u)", ms->mig_index, ms->gi_id, ms->ci_id);
			snprintf(mem, sizeof mem, "%s / %s",
				 fmt_bytes_if(mu, sizeof mu, ms->valid & VRAMZ_F_MEM, ms->mem_used_bytes),
				 fmt_bytes_if(mt, sizeof mt, ms->valid & VRAMZ_F_MEM, ms->mem_total_bytes));
			fprintf(f, "%3s %-22s %21s\n", "", mn, mem);
		}
	}
}

int status_lost_count(const vramz_snapshot *snap)
{
	int n = 0;
	for (unsigned i = 0; i < snap->gpu_count; i++)
		n += snap->gpus[i].lost;
	return n;
}

int status_exit_code(const vramz_snapshot *snap)
{
	int lost = status_lost_count(snap);
	if (!lost)
		return EXIT_OK;
	cli_err("%d GPU%s lost (fell off the bus)", lost, lost > 1 ? "s" : "");
	return EXIT_FAIL;
}

/* --fail-on-health: one line naming each unhealthy GPU, then EXIT_HEALTH;
 * EXIT_OK when every selected GPU is healthy. */
static int health_exit_code(const vramz_snapshot *snap)
{
	int sick = 0;
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		char h[96];
		if (status_health(h, sizeof h, &snap->gpus[i])) {
			cli_err("GPU %u: VRAM unhealthy: %s", snap->gpus[i].index, h);
			sick++;
		}
	}
	return sick ? EXIT_HEALTH : EXIT_OK;
}

void status_print(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, int procs)
{
	print_header(f, ctx, snap);
	status_print_gpus(f, ctx, snap);
	if (!procs)
		return;
	struct proctab_opts po = {.sort = SORT_GPU, .unattributed = 1};
	fputc('\n', f);
	if (proctab_print(f, snap, &po) == 0)
		fprintf(f, "    (no process holds GPU memory)\n");
}

struct status_view {
	int no_procs, loop, fail_on_health;
	struct script_opts so;
	struct script_cols cols;
};

static int status_show(vramz_ctx *ctx, const vramz_snapshot *snap, unsigned tick, void *arg)
{
	const struct status_view *v = arg;
	if (v->cols.smi && !tick)
		smi_prepare(ctx, snap, &v->cols.q);
	if (v->so.csv) {
		if (!tick && !v->so.no_header)
			script_header(stdout, &v->cols);
		script_rows(stdout, ctx, snap, &v->cols);
	} else if (g_opts.json) {
		/* looping: one document a line (JSON Lines) */
		json_snapshot(stdout, "status", ctx, snap, !v->no_procs, !v->loop);
	} else {
		if (tick)
			fputc('\n', stdout);
		status_print(stdout, ctx, snap, !v->no_procs);
	}
	return 0;
}

static struct status_view v;

static int64_t loop_ms = -1;
static unsigned loop_ms_only;

const struct opt status_opts[] = {
	OPT_GPUS,
	OPT_JSON,
	{'P', "no-procs", OPT_FLAG, &v.no_procs, NULL, "GPUs only, no process table"},
	{0, "csv", OPT_FLAG, &v.so.csv, NULL, "script mode: a CSV row per GPU (as the CSV log's columns)"},
	{0, "fields", OPT_STR, &v.so.fields, "LIST",
	 "--csv columns, comma-separated (--fields help lists them)"},
	{0, "query-gpu", OPT_STR, &v.so.query, "LIST",
	 "nvidia-smi's --query-gpu: its names, its text, byte for byte (docs/smi.md)"},
	{0, "help-query-gpu", OPT_FLAG, &v.so.help_query, NULL,
	 "the --query-gpu names vramz answers, and nvidia-smi's it does not"},
	{0, "no-header", OPT_FLAG, &v.so.no_header, NULL, "--csv without the header line"},
	{0, "units", OPT_FLAG, &v.so.units, NULL,
	 "--csv values for people: MiB, W, %, C, MHz (and headers that say so)"},
	{0, "format", OPT_STR, &v.so.format, "FORMAT",
	 "nvidia-smi's csv[,noheader][,nounits] (with --csv: --units, noheader --no-header)",
	 "csv csv,noheader csv,nounits csv,noheader,nounits"},
	OPT_SMI_ID,
	{'l', "loop", OPT_DURATION, &loop_ms, "INTERVAL",
	 "show again every INTERVAL until interrupted (a bare number is seconds, as nvidia-smi's -l)"},
	OPT_LOOP_MS(&loop_ms_only),
	{0, "fail-on-health", OPT_FLAG, &v.fail_on_health, NULL,
	 "exit 4 when a selected GPU's VRAM is unhealthy (the HEALTH column not blank)"},
	{0, "replay", OPT_STR, &g_opts.replay, "FILE", "show the first tick of a recorded log"},
	OPT_LIVE,
	OPT_NOCOLOR,
	OPT_END,
};
const char status_synopsis[] =
	"[-g LIST] [--json | --csv [--fields LIST] [--no-header] [--units] | "
	"--query-gpu LIST [--format=csv[,noheader][,nounits]]] [-l INTERVAL | -lms MS] "
	"[--no-procs] [--fail-on-health]";
const char status_about[] =
	"Memory (used / total, reserved), utilization, temperature and power\n"
	"of each GPU, then the processes holding VRAM.";

int cmd_status(const struct cmd_args *args)
{
	(void)args;
	int ex = script_setup("status", SCRIPT_GPUS, &v.so, &v.cols);
	if (ex >= 0)
		return ex;
	if (loop_ms_only)
		loop_ms = loop_ms_only;
	if (loop_ms != -1 && loop_ms < 10) {
		cli_err("status: --loop takes 10ms or more");
		return EXIT_USAGE;
	}
	v.loop = loop_ms > 0;
	if (v.loop && v.fail_on_health) {
		cli_err("status: --fail-on-health judges one sample, not a --loop");
		return EXIT_USAGE;
	}
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	unsigned flags = v.so.csv ? VRAMZ_SAMPLE_PROCS
		       : v.no_procs ? 0 : VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL;
	flags |= VRAMZ_SAMPLE_MIG | VRAMZ_SAMPLE_HEALTH | v.cols.q.sample_flags;
	if (v.loop)
		return script_loop("status", flags, loop_ms, status_show, &v);
	ex = source_open_sample(&ctx, flags, &snap);
	if (ex)
		return ex;
	status_show(ctx, snap, 0, &v);
	ex = status_exit_code(snap);
	if (!ex && v.fail_on_health)
		ex = health_exit_code(snap);
	cli_close(ctx);
	return ex;
}
