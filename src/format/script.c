/* SPDX-License-Identifier: Apache-2.0 */
/* script.c - script mode, as nvidia-smi's --query-gpu --format=csv:
 * `vramz status --csv [--fields LIST] [--no-header] [--units]` and the
 * `-l/--loop INTERVAL` repeat of status and ps.
 *
 * -l samples through the one ticker (src/ticker.c), as log and watch do.
 * The column names are the CSV log's (lib/log's identity columns, then the
 * field table lib/fields.c), so a script written against `status --csv`
 * reads a log's columns too.  Unknown is an empty cell, as in the log.
 * --units writes values for people instead: MiB, W, %, C, MHz, with the
 * unit in the cell ("81920 MiB"), as nvidia-smi's csv without nounits.
 */
#include "format/script.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fields.h"
#include "format/fmt.h"
#include "ticker.h"

/* The log's identity columns (LOG_GPU_ID_COLUMNS), then gpu_fields. */
enum { ID_TIME, ID_GPU, ID_UUID, ID_NAME, ID_BUS, ID_LOST, ID_PROCS, ID_COUNT };
static const char *const id_names[ID_COUNT] = {
	"time", "gpu", "uuid", "name", "pci_bus_id", "lost", "proc_count",
};
static const char *const id_help[ID_COUNT] = {
	"time of the sample, ISO 8601 UTC",
	"GPU index (as -g takes it)",
	"GPU UUID",
	"product name",
	"PCI bus id",
	"1 when the GPU fell off the bus",
	"processes holding a context on the GPU",
};
static const char default_fields[] =
	"gpu,name,mem_used_bytes,mem_total_bytes,mem_reserved_bytes,util_gpu_pct,temp_c,power_mw";

#define COL_ID(i) (-1 - (int)(i))
#define NOCOL INT_MIN

static int col_lookup(const char *name, size_t len)
{
	for (int i = 0; i < ID_COUNT; i++)
		if (strlen(id_names[i]) == len && !strncmp(id_names[i], name, len))
			return COL_ID(i);
	for (size_t i = 0; i < gpu_field_count; i++)
		if (strlen(gpu_fields[i].name) == len && !strncmp(gpu_fields[i].name, name, len))
			return (int)i;
	return NOCOL;
}

void script_fields_help(FILE *f)
{
	fprintf(f, "fields (the CSV log's columns; default %s):\n", default_fields);
	for (int i = 0; i < ID_COUNT; i++)
		fprintf(f, "  %-22s %s\n", id_names[i], id_help[i]);
	for (size_t i = 0; i < gpu_field_count; i++)
		fprintf(f, "  %-22s %s\n", gpu_fields[i].name, gpu_fields[i].help);
}

int script_parse_fields(const char *list, struct script_cols *c)
{
	const char *p = list && *list ? list : default_fields;
	c->n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int col = col_lookup(p, len);
		if (col == NOCOL) {
			cli_err("status: unknown field '%.*s' (vramz status --fields help lists them)",
				(int)(len < 64 ? len : 64), p);
			return EXIT_USAGE;
		}
		if (c->n == SCRIPT_MAX_COLS) {
			cli_err("status: more than %d fields", SCRIPT_MAX_COLS);
			return EXIT_USAGE;
		}
		c->col[c->n++] = col;
		p += len;
		if (*p == ',' && *++p == 0) {
			cli_err("status: empty field name in --fields");
			return EXIT_USAGE;
		}
	}
	return 0;
}

static const char *col_name(int col)
{
	return col < 0 ? id_names[-1 - col] : gpu_fields[col].name;
}

void script_header(FILE *f, const struct script_cols *c)
{
	for (unsigned i = 0; i < c->n; i++)
		fprintf(f, "%s%s", i ? "," : "", col_name(c->col[i]));
	fputc('\n', f);
}

/* a driver string: quoted when it holds a comma, a quote or a line break */
static void csv_str(FILE *f, const char *s)
{
	if (!s || !*s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputc('"', f);
}

static int ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static void value_units(FILE *f, const struct field *fd, int64_t v)
{
	if (ends(fd->name, "_bytes"))
		fprintf(f, "%llu MiB", (unsigned long long)((uint64_t)v >> 20));
	else if (ends(fd->name, "_bytes_per_s"))
		fprintf(f, "%.1f MiB/s", (double)v / 1048576.0);
	else if (ends(fd->name, "_mw"))
		fprintf(f, "%.2f W", (double)v / 1000.0);
	else if (ends(fd->name, "_mj"))
		fprintf(f, "%.3f J", (double)v / 1000.0);
	else if (ends(fd->name, "_pct"))
		fprintf(f, "%lld %%", (long long)v);
	else if (ends(fd->name, "_c"))
		fprintf(f, "%lld C", (long long)v);
	else if (ends(fd->name, "_mhz"))
		fprintf(f, "%lld MHz", (long long)v);
	else
		fprintf(f, "%lld", (long long)v);
}

void script_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap,
		 const struct script_cols *c, int units)
{
	char t[40];
	fmt_iso_ms(t, sizeof t, snap->time_ms);
	for (unsigned g = 0; g < snap->gpu_count; g++) {
		const vramz_gpu_sample *s = &snap->gpus[g];
		const vramz_gpu_info *gi = vramz_gpu(ctx, s->index);
		for (unsigned i = 0; i < c->n; i++) {
			int col = c->col[i];
			if (i)
				fputc(',', f);
			if (col >= 0) {
				const struct field *fd = &gpu_fields[col];
				if (!field_valid(fd, s))
					continue;
				int64_t v = field_get(fd, s);
				if (units)
					value_units(f, fd, v);
				else if (fd->type == FT_U64)
					fprintf(f, "%llu", (unsigned long long)(uint64_t)v);
				else
					fprintf(f, "%lld", (long long)v);
				continue;
			}
			switch (-1 - col) {
			case ID_TIME: fputs(t, f); break;
			case ID_GPU: fprintf(f, "%u", s->index); break;
			case ID_UUID: csv_str(f, gi ? gi->uuid : NULL); break;
			case ID_NAME: csv_str(f, gi ? gi->name : NULL); break;
			case ID_BUS: csv_str(f, gi ? gi->pci_bus_id : NULL); break;
			case ID_LOST: fputc(s->lost ? '1' : '0', f); break;
			case ID_PROCS:
				if (!s->lost && (s->valid & VRAMZ_F_PROCS))
					fprintf(f, "%u", s->proc_count);
				break;
			}
		}
		fputc('\n', f);
	}
}

/* ---- -l/--loop ---------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int script_loop(const char *cmd, unsigned flags, int64_t interval_ms,
		script_show_fn show, void *arg)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: ends the sleep */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* the one ticker of every loop (src/ticker.c): its lateness policy,
	 * and a live daemon's samples when one runs */
	struct ticker *t;
	struct ticker_opts to = {.cmd = cmd, .interval_ms = interval_ms, .flags = flags, .daemon = 1};
	int ex = ticker_open(&t, &to);
	if (ex)
		return ex;
	for (unsigned n = 0; !stop; n++) {
		const vramz_snapshot *snap;
		vramz_ctx *sctx = NULL;
		int rc = ticker_sample(t, &snap, &sctx);
		if (rc < 0 && rc != VRAMZ_ELOST) {
			cli_err("%s: sampling failed: %s", cmd, vramz_strerror(rc));
			ex = EXIT_FAIL;
			break;
		}
		if (show(ticker_ctx(t), snap, n, arg) || fflush(stdout)) {
			if (errno != EPIPE) { /* the reader went away (| head): done */
				cli_err("%s: stdout: %s", cmd, strerror(errno));
				ex = EXIT_FAIL;
			}
			break;
		}
		ticker_sleep(t, &stop, 0);
	}
	ticker_close(t);
	return ex;
}
