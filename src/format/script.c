/* SPDX-License-Identifier: Apache-2.0 */
/* script.c - script mode, as nvidia-smi's --query-gpu --format=csv:
 * `vramz status --csv [--fields LIST] [--no-header] [--units]`, `vramz ps
 * --csv` the same per process, and the `-l/--loop INTERVAL` repeat of
 * status and ps.
 *
 * -l samples through the one ticker (src/ticker.c), as log and watch do.
 * The column names are the CSV log's (lib/log's identity columns, then the
 * field table lib/fields.c; for ps the process log's, lib/procfields.c), so
 * a script written against `status --csv` reads a log's columns too.
 * Unknown is an empty cell, as in the log.  --units writes values for
 * people instead: MiB, W, %, C, MHz, with the unit in the cell ("81920
 * MiB") and in the header ("mem_used [MiB]").  nvidia-smi's names and its
 * exact text (--query-gpu, --query-compute-apps) are smi.c's: script mode
 * hands those columns to it, and loops them the same.
 */
#include "format/script.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fields.h"
#include "procfields.h"
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
static const char *const default_fields[] = {
	[SCRIPT_GPUS] = "gpu,name,mem_used_bytes,mem_total_bytes,mem_reserved_bytes,util_gpu_pct,temp_c,power_mw",
	[SCRIPT_PROCS] = "gpu,pid,user,used_bytes,sm_pct,command",
};

/* Units, by the suffix of a field's name: what --units (and an nvidia-smi
 * name) shows instead of the logged value, and the label the header and
 * the cells carry.  One table for both CSVs. */
static const struct unit {
	const char *suffix;
	const char *label;
	unsigned shift;       /* > 0: the value >> shift, whole (bytes to MiB) */
	double div;           /* else the value / div ... */
	int decimals;         /* ... with this many decimals; -1: an integer */
} unit_table[] = {
	{"_bytes_per_s", "MiB/s", 0, 1048576.0, 1},
	{"_bytes", "MiB", 20, 0, 0},
	{"_mw", "W", 0, 1000.0, 2},
	{"_mj", "J", 0, 1000.0, 3},
	{"_pct", "%", 0, 1, -1},
	{"_c", "C", 0, 1, -1},
	{"_mhz", "MHz", 0, 1, -1},
};

static const struct unit *unit_of(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof unit_table / sizeof unit_table[0]; i++) {
		size_t m = strlen(unit_table[i].suffix);
		if (n > m && !strcmp(name + n - m, unit_table[i].suffix))
			return &unit_table[i];
	}
	return NULL;
}

#define COL_ID(i) (-1 - (int)(i))
#define NOCOL INT_MIN

static const char *field_name(enum script_rows rows, int col)
{
	if (rows == SCRIPT_PROCS)
		return proc_fields[col].name;
	return col < 0 ? id_names[-1 - col] : gpu_fields[col].name;
}

static int native_lookup(enum script_rows rows, const char *name, size_t len)
{
	if (rows == SCRIPT_PROCS) {
		for (size_t i = 0; i < proc_field_count; i++)
			if (strlen(proc_fields[i].name) == len && !strncmp(proc_fields[i].name, name, len))
				return (int)i;
		return NOCOL;
	}
	for (int i = 0; i < ID_COUNT; i++)
		if (strlen(id_names[i]) == len && !strncmp(id_names[i], name, len))
			return COL_ID(i);
	for (size_t i = 0; i < gpu_field_count; i++)
		if (strlen(gpu_fields[i].name) == len && !strncmp(gpu_fields[i].name, name, len))
			return (int)i;
	return NOCOL;
}

/* The name nearest to a typo, or NULL. */
static const char *col_nearest(enum script_rows rows, const char *name, size_t len)
{
	const char *best = NULL;
	unsigned bd = 3;
	size_t n = rows == SCRIPT_PROCS ? proc_field_count : ID_COUNT + gpu_field_count;
	for (size_t i = 0; i < n; i++) {
		const char *cand = rows == SCRIPT_PROCS ? proc_fields[i].name
			: i < ID_COUNT ? id_names[i] : gpu_fields[i - ID_COUNT].name;
		unsigned d = cand ? cli_distance(name, len, cand, 2) : 3;
		if (d < bd && cli_close_enough(d, len))
			bd = d, best = cand;
	}
	return best;
}

static void help_line(FILE *f, const char *name, const char *help)
{
	fprintf(f, "  %-22s %s\n", name, help);
}

void script_fields_help(FILE *f, enum script_rows rows)
{
	fprintf(f, "fields (the CSV %slog's columns; default %s; nvidia-smi's names: --query-*):\n",
		rows == SCRIPT_PROCS ? "process " : "", default_fields[rows]);
	if (rows == SCRIPT_PROCS) {
		for (size_t i = 0; i < proc_field_count; i++)
			help_line(f, proc_fields[i].name, proc_fields[i].help);
		return;
	}
	for (int i = 0; i < ID_COUNT; i++)
		help_line(f, id_names[i], id_help[i]);
	for (size_t i = 0; i < gpu_field_count; i++)
		help_line(f, gpu_fields[i].name, gpu_fields[i].help);
}

int script_parse_fields(const char *cmd, enum script_rows rows, const char *list,
			struct script_cols *c)
{
	const char *p = list && *list ? list : default_fields[rows];
	c->rows = rows;
	c->n = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int col = native_lookup(rows, p, len);
		if (col == NOCOL) {
			const char *near = col_nearest(rows, p, len);
			if (near)
				cli_err("%s: unknown field '%.*s'; did you mean '%s'?", cmd,
					(int)(len < 64 ? len : 64), p, near);
			else
				cli_err("%s: unknown field '%.*s' (vramz %s --fields help lists them)", cmd,
					(int)(len < 64 ? len : 64), p, cmd);
			return EXIT_USAGE;
		}
		if (c->n == SCRIPT_MAX_COLS) {
			cli_err("%s: more than %d fields", cmd, SCRIPT_MAX_COLS);
			return EXIT_USAGE;
		}
		c->col[c->n++] = (struct script_col){col};
		p += len;
		if (*p == ',' && *++p == 0) {
			cli_err("%s: empty field name in --fields", cmd);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* nvidia-smi's --format=csv[,noheader][,nounits]: 0 with the flags it
 * sets (nounits: no unit text, as without --units), or EXIT_USAGE after
 * one line. */
static int script_format(const char *cmd, const char *fmt, int *no_header, int *units)
{
	int nounits = 0;
	size_t len = strcspn(fmt, ",");
	const char *p = fmt + len;
	int ok = len == 3 && !strncmp(fmt, "csv", 3);
	while (ok && *p == ',') {
		len = strcspn(++p, ",");
		if (len == 8 && !strncmp(p, "noheader", 8))
			*no_header = 1;
		else if (len == 7 && !strncmp(p, "nounits", 7))
			nounits = 1;
		else
			ok = 0;
		p += len;
	}
	if (!ok) {
		cli_err("%s: bad --format '%s': csv, then noheader or nounits (--format=csv,noheader)",
			cmd, fmt);
		return EXIT_USAGE;
	}
	if (!nounits)
		*units = 1; /* nvidia-smi's csv has them */
	return 0;
}

int script_setup(const char *cmd, enum script_rows rows, struct script_opts *o,
		 struct script_cols *c)
{
	if (o->fields && !strcmp(o->fields, "help")) {
		script_fields_help(stdout, rows);
		return EXIT_OK;
	}
	enum smi_rows srows = rows == SCRIPT_PROCS ? SMI_APPS : SMI_GPUS;
	if (o->help_query) {
		smi_help(stdout, srows);
		return EXIT_OK;
	}
	if (o->query) {
		/* nvidia-smi's interface whole: its names, its --format (csv
		 * when left out, as nvidia-smi prints), its text */
		if (o->csv || o->fields || o->no_header || o->units || g_opts.json) {
			cli_err("%s: %s takes nvidia-smi's --format, not --csv, --fields, --no-header, --units or --json",
				cmd, rows == SCRIPT_PROCS ? "--query-compute-apps" : "--query-gpu");
			return EXIT_USAGE;
		}
		if (smi_parse(cmd, srows, o->query, o->format, &c->q))
			return EXIT_USAGE;
		c->rows = rows;
		c->smi = o->csv = 1;
		o->no_header = c->q.no_header;
		return -1;
	}
	if (o->format && script_format(cmd, o->format, &o->no_header, &o->units))
		return EXIT_USAGE;
	o->csv |= o->format != NULL;
	if ((o->fields || o->no_header || o->units) && !o->csv) {
		cli_err("%s: --fields, --no-header and --units go with --csv", cmd);
		return EXIT_USAGE;
	}
	if (o->csv && g_opts.json) {
		cli_err("%s: --csv or --json, not both", cmd);
		return EXIT_USAGE;
	}
	if (o->csv && script_parse_fields(cmd, rows, o->fields, c))
		return EXIT_USAGE;
	c->units = o->units;
	return -1;
}

static void col_header(FILE *f, const struct script_cols *c, const struct script_col *col)
{
	const char *name = field_name(c->rows, col->field);
	const struct unit *u = unit_of(name);
	if (c->units && u) /* the logged unit is the name's suffix: it goes */
		fprintf(f, "%.*s [%s]", (int)(strlen(name) - strlen(u->suffix)), name, u->label);
	else
		fputs(name, f);
}

void script_header(FILE *f, const struct script_cols *c)
{
	if (c->smi) {
		smi_header(f, &c->q);
		return;
	}
	for (unsigned i = 0; i < c->n; i++) {
		if (i)
			fputc(',', f);
		col_header(f, c, &c->col[i]);
	}
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

/* A number: as logged, or in people's units (text: with the label). */
static void cell_number(FILE *f, const struct script_cols *c, const struct script_col *col,
			int64_t v, int is_unsigned)
{
	const struct unit *u = unit_of(field_name(c->rows, col->field));
	(void)col;
	if (!u || !c->units) {
		if (is_unsigned)
			fprintf(f, "%llu", (unsigned long long)(uint64_t)v);
		else
			fprintf(f, "%lld", (long long)v);
		return;
	}
	if (u->shift)
		fprintf(f, "%llu", (unsigned long long)((uint64_t)v >> u->shift));
	else if (u->decimals >= 0)
		fprintf(f, "%.*f", u->decimals, (double)v / u->div);
	else
		fprintf(f, "%lld", (long long)v);
	if (c->units)
		fprintf(f, " %s", u->label);
}

void script_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const struct script_cols *c)
{
	if (c->smi) {
		smi_gpu_rows(f, ctx, snap, &c->q);
		return;
	}
	char t[40];
	fmt_iso_ms(t, sizeof t, snap->time_ms);
	for (unsigned g = 0; g < snap->gpu_count; g++) {
		const vramz_gpu_sample *s = &snap->gpus[g];
		const vramz_gpu_info *gi = vramz_gpu(ctx, s->index);
		for (unsigned i = 0; i < c->n; i++) {
			int col = c->col[i].field;
			if (i)
				fputc(',', f);
			if (col >= 0) {
				const struct field *fd = &gpu_fields[col];
				if (field_valid(fd, s))
					cell_number(f, c, &c->col[i], field_get(fd, s), fd->type == FT_U64);
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

static void proc_types(FILE *f, unsigned type)
{
	static const char *const names[] = {"compute", "graphics", "mps"};
	const char *sep = "";
	for (unsigned i = 0; i < 3; i++)
		if (type & (1u << i)) {
			fprintf(f, "%s%s", sep, names[i]);
			sep = "+";
		}
}

void script_proc_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const unsigned *idx,
		      unsigned n, const struct script_cols *c)
{
	if (c->smi) {
		smi_app_rows(f, ctx, snap, idx, n, &c->q);
		return;
	}
	char t[40];
	fmt_iso_ms(t, sizeof t, snap->time_ms);
	for (unsigned k = 0; k < n; k++) {
		const vramz_proc_sample *p = &snap->procs[idx[k]];
		const vramz_gpu_info *gi = vramz_gpu(ctx, p->gpu_index);
		for (unsigned i = 0; i < c->n; i++) {
			const struct proc_field *pf = &proc_fields[c->col[i].field];
			if (i)
				fputc(',', f);
			if (!proc_field_valid(pf, p))
				continue;
			switch (pf->kind) {
			case PC_TIME: fputs(t, f); break;
			case PC_GPU: fprintf(f, "%u", p->gpu_index); break;
			case PC_UUID: csv_str(f, gi ? gi->uuid : NULL); break;
			case PC_PID: fprintf(f, "%u", (unsigned)p->pid); break;
			case PC_TYPE: proc_types(f, p->type); break;
			case PC_STR: csv_str(f, (const char *)p + pf->offset); break;
			case PC_U32:
			case PC_UINT:
			case PC_U64:
				cell_number(f, c, &c->col[i], (int64_t)proc_field_u64(pf, p), 1);
				break;
			}
		}
		fputc('\n', f);
	}
}

/* ---- -l/--loop ---------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void loop_on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int script_loop(const char *cmd, unsigned flags, int64_t interval_ms,
		script_show_fn show, void *arg)
{
	struct sigaction sa = {.sa_handler = loop_on_signal}; /* no SA_RESTART: ends the sleep */
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
