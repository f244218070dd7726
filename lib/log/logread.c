/* logread.c - reading a CSV log back as the snapshots the live sampler
 * produces (include/vramz/log.h), so replay, analyze and the dashboard
 * share one path with the live views.
 *
 * Logs run to gigabytes, so the reader streams: one large buffer per file
 * filled by read(2), lines found with memchr, each row parsed in one pass
 * by a program built from the header (csvrow.c), straight into arrays
 * reused tick after tick, so memory follows the widest tick, never the
 * file.  Columns are matched by
 * header name: a newer log's extra columns are skipped and a missing
 * optional column is simply unknown.  A number out of its field's
 * plausible range (fields.c: a used above the total, 4294967295 %, -1 degC)
 * is unknown too, as in a live sample.  Anything else that does not parse is
 * an error naming FILE:LINE and the reason, except a last line without its
 * newline, which is what a crash mid-write leaves and so ends the log.
 *
 * Rows with the same time form one tick.  The process sibling is read in
 * step: its rows at a tick's time become that snapshot's processes, rows
 * for times the GPU file lacks (a kill between the two writes) are skipped,
 * and a tick whose GPU rows list more or fewer processes than the sibling
 * holds is an error: the files are not one pair (check_pairing).
 */
#include "vramz/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "fields.h"
#include "grow.h"
#include "log/csvrow.h"
#include "log/logfile.h"

#define BUF_BYTES (1u << 20)      /* per file; also the longest line */
#define MAX_GPU_INDEX 1023u
#define MAX_TICK_PROCS (1u << 20) /* a bound a fuzzed file cannot pass */

struct csv_in {
	int fd;
	char *path;
	char *buf;
	size_t pos, end;
	int eof, torn;
	unsigned long line;
	int ncols;
	struct cell *cells;        /* [ncols + 1] */
	unsigned char *act;        /* per column: what it fills */
	struct row_col *prog;      /* the same for row_fast (csvrow.h) */
	int id_col[3];             /* the uuid, name and pci_bus_id columns, or -1 */
	struct row_time tc;        /* the previous row's time */
};

enum { GA_IGNORE, GA_TIME, GA_GPU, GA_UUID, GA_NAME, GA_BUS, GA_LOST,
       GA_PROC_COUNT, GA_FIELD0 };

struct vramz_log_reader {
	struct csv_in g, p;
	int have_procs;
	vramz_gpu_sample *gpus;    /* tick rows; one past the tick may hold
				      the first row of the next (carry) */
	unsigned gcap;
	int carry;
	int64_t carry_time;
	unsigned long carry_line, tick_line; /* GPU-file line of the carried row, of the tick's first row */
	int64_t prev_time;         /* the previous tick's time (have_prev) */
	int have_prev;
	vramz_proc_sample *praw;   /* the tick's rows as read, then one read ahead */
	vramz_proc_sample *procs;  /* the rows by GPU, where praw is not in that order */
	const vramz_proc_sample *tick_procs; /* praw or procs */
	unsigned pcap, procs_cap;
	unsigned *want;            /* per tick row: processes the GPU file lists */
	unsigned wcap;
	int prev_listed;           /* the previous tick listed its processes */
	unsigned pahead;           /* where in praw the row read ahead is */
	int64_t pnext_time;
	int have_pnext, procs_done;
	vramz_gpu_info *info;      /* [ninfo], by the log's GPU index */
	unsigned char *known;
	unsigned *stamp, *slot;    /* which tick a GPU was last in, and where */
	unsigned ninfo, icap, tick;
	int done, failed;          /* failed: the error, repeated once hit */
	int deferred;              /* an error found reading ahead, for the next call */
	vramz_snapshot snap;
	struct abi_state abi;      /* the caller's record sizes (lib/abi.h) */
	char err[512];
};

static int rfail(vramz_log_reader *r, const struct csv_in *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rfail(vramz_log_reader *r, const struct csv_in *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof r->err, "%s:%lu: ", c->path, c->line);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof r->err)
		vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
	return VRAMZ_EPARSE;
}

/* ---- lines and cells ---- */

/* 1 with the next line (no newline, no \r), 0 at the end (a line without
 * its newline counts only when partial_ok), or a negative error. */
static int csv_line(vramz_log_reader *r, struct csv_in *c, char **line, size_t *len,
		    int partial_ok)
{
	size_t scanned = c->pos;
	for (;;) {
		char *nl = memchr(c->buf + scanned, '\n', c->end - scanned);
		if (nl || (c->eof && partial_ok && c->end > c->pos)) {
			char *e = nl ? nl : c->buf + c->end;
			*line = c->buf + c->pos;
			*len = (size_t)(e - *line);
			if (*len && e[-1] == '\r')
				(*len)--;
			c->pos = nl ? (size_t)(nl + 1 - c->buf) : c->end;
			c->line++;
			return 1;
		}
		if (c->eof) {
			c->torn = c->end > c->pos;
			c->pos = c->end;
			return 0;
		}
		if (c->pos) {
			memmove(c->buf, c->buf + c->pos, c->end - c->pos);
			c->end -= c->pos;
			c->pos = 0;
		}
		scanned = c->end;
		if (c->end == BUF_BYTES) {
			c->line++;
			return rfail(r, c, "line longer than %u bytes", BUF_BYTES);
		}
		ssize_t n = read(c->fd, c->buf + c->end, BUF_BYTES - c->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(r->err, sizeof r->err, "%s: %s", c->path, strerror(errno));
			return VRAMZ_EIO;
		}
		if (n == 0)
			c->eof = 1;
		c->end += (size_t)n;
	}
}

static int cell_time(vramz_log_reader *r, struct csv_in *c, const struct cell *cl, int64_t *ms)
{
	char b[48];
	if (cl->n == c->tc.n && !memcmp(cl->s, c->tc.text, cl->n)) {
		*ms = c->tc.ms;
		return 0;
	}
	if (log_parse_time(cl->s, cl->n, ms))
		return rfail(r, c, "bad time '%s' (want 2026-11-30T01:32:33.123Z)",
			     cell_show(cl, b, 40));
	if (cl->n < sizeof c->tc.text) {
		memcpy(c->tc.text, cl->s, cl->n);
		c->tc.n = cl->n;
		c->tc.ms = *ms;
	}
	return 0;
}

/* A process row starts unknown: numbers 0, strings empty.  Only the
 * strings' first bytes are cleared: a row's 440 bytes of text buffers
 * cost more to zero than the rest of its parse, and nothing reads past a
 * string's end (what lies there is an earlier row's text). */
static void proc_blank(vramz_proc_sample *p)
{
	_Static_assert(offsetof(vramz_proc_sample, user) < offsetof(vramz_proc_sample, slurm_job) &&
			       offsetof(vramz_proc_sample, slurm_job) + sizeof p->slurm_job <=
				       offsetof(vramz_proc_sample, torch_valid),
		       "the text fields lie together, between the numbers");
	memset(p, 0, offsetof(vramz_proc_sample, user));
	p->user[0] = p->comm[0] = p->cmdline[0] = 0;
	p->container[0] = p->pod_uid[0] = p->slurm_job[0] = 0;
	memset(&p->torch_valid, 0, sizeof *p - offsetof(vramz_proc_sample, torch_valid));
}

/* ---- header ---- */

static int open_csv(vramz_log_reader *r, struct csv_in *c, const char *path, int fd)
{
	c->fd = fd;
	c->path = strdup(path);
	c->buf = calloc(1, BUF_BYTES + CSVROW_PAD); /* row_fast reads a block past a line */
	if (!c->path || !c->buf)
		return VRAMZ_ENOMEM;
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	char *line;
	size_t len;
	int rc = csv_line(r, c, &line, &len, 1);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		c->line = 1;
		return rfail(r, c, "empty file, not a vramz log");
	}
	if (len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) { /* a spreadsheet's BOM */
		line += 3;
		len -= 3;
	}
	c->ncols = 1;
	for (size_t i = 0; i < len; i++)
		c->ncols += line[i] == ',';
	c->cells = calloc((size_t)c->ncols + 1, sizeof *c->cells);
	c->act = calloc((size_t)c->ncols, 1);
	if (!c->cells || !c->act)
		return VRAMZ_ENOMEM;
	int n = csv_split(line, len, c->cells, c->ncols);
	if (n < 0)
		return rfail(r, c, "broken quoting in the header");
	c->ncols = n;
	return 0;
}

/* ---- row programs: what row_fast does with each column ---- */

static int gpu_program(struct csv_in *c)
{
	if (!(c->prog = calloc((size_t)c->ncols, sizeof *c->prog)))
		return VRAMZ_ENOMEM;
	c->id_col[0] = c->id_col[1] = c->id_col[2] = -1;
	for (int i = 0; i < c->ncols; i++) {
		struct row_col *o = &c->prog[i];
		unsigned a = c->act[i];
		if (a >= GA_FIELD0) {
			const struct field *f = &gpu_fields[a - GA_FIELD0];
			o->op = f->type == FT_U64 ? RO_U64 : f->type == FT_UINT ? RO_U32 : RO_INT;
			o->offset = (uint16_t)f->offset;
			o->valid_bit = f->valid_bit;
			o->max = f->type == FT_U64 ? UINT64_MAX : f->type == FT_UINT ? UINT_MAX : INT_MAX;
			continue;
		}
		switch (a) {
		case GA_TIME:
			o->op = RO_TIME;
			break;
		case GA_GPU:
			*o = (struct row_col){.op = RO_U32, .need = 1,
					      .offset = offsetof(vramz_gpu_sample, index),
					      .max = MAX_GPU_INDEX};
			break;
		case GA_UUID:
		case GA_NAME:
		case GA_BUS:
			o->op = RO_CELL;
			c->id_col[a - GA_UUID] = i;
			break;
		case GA_LOST:
			o->op = RO_LOST;
			o->offset = offsetof(vramz_gpu_sample, lost);
			break;
		case GA_PROC_COUNT:
			*o = (struct row_col){.op = RO_U32,
					      .offset = offsetof(vramz_gpu_sample, proc_count),
					      .valid_bit = VRAMZ_F_PROCS, .max = UINT_MAX};
			break;
		}
	}
	return 0;
}

static int proc_program(struct csv_in *c)
{
	if (!(c->prog = calloc((size_t)c->ncols, sizeof *c->prog)))
		return VRAMZ_ENOMEM;
	for (int i = 0; i < c->ncols; i++) {
		struct row_col *o = &c->prog[i];
		if (!c->act[i])
			continue;
		const struct log_pcol *col = &log_proc_columns[c->act[i] - 1];
		o->offset = (uint16_t)col->offset;
		o->size = (uint16_t)col->size;
		o->valid_bit = col->valid_bit;
		o->valid2_bit = col->torch_bit; /* an agent figure */
		o->max = UINT32_MAX;
		switch (col->kind) {
		case PC_TIME:
			o->op = RO_TIME;
			break;
		case PC_UUID:
			o->op = RO_SKIP;
			break;
		case PC_TYPE:
			o->op = RO_TYPES;
			o->offset = offsetof(vramz_proc_sample, type);
			break;
		case PC_STR:
			o->op = RO_STR;
			break;
		case PC_GPU:
			o->op = RO_U32;
			o->need = 1;
			o->offset = offsetof(vramz_proc_sample, gpu_index);
			o->max = MAX_GPU_INDEX;
			break;
		case PC_PID:
			o->op = RO_U32;
			o->need = 1;
			o->offset = offsetof(vramz_proc_sample, pid);
			break;
		case PC_U32:
		case PC_UINT:
			o->op = RO_U32;
			break;
		case PC_U64:
			o->op = RO_U64;
			o->max = UINT64_MAX;
			break;
		}
	}
	return 0;
}

static int map_columns(vramz_log_reader *r, struct csv_in *c, int procs)
{
	static const char *const ids[] = {NULL, "time", "gpu", "uuid", "name",
					  "pci_bus_id", "lost", "proc_count"};
	int have_time = 0, have_gpu = 0, have_pid = 0;
	char b[64];
	for (int i = 0; i < c->ncols; i++) {
		const struct cell *cl = &c->cells[i];
		unsigned a = GA_IGNORE;
		if (procs) {
			for (size_t k = 0; k < log_proc_column_count; k++)
				if (strlen(log_proc_columns[k].name) == cl->n &&
				    !memcmp(log_proc_columns[k].name, cl->s, cl->n))
					a = (unsigned)k + 1;
			have_pid |= a && log_proc_columns[a - 1].kind == PC_PID;
		} else {
			for (unsigned k = 1; k < sizeof ids / sizeof ids[0]; k++)
				if (strlen(ids[k]) == cl->n && !memcmp(ids[k], cl->s, cl->n))
					a = k;
			for (size_t k = 0; k < gpu_field_count && !a; k++)
				if (strlen(gpu_fields[k].name) == cl->n &&
				    !memcmp(gpu_fields[k].name, cl->s, cl->n))
					a = GA_FIELD0 + (unsigned)k;
		}
		for (int j = 0; j < i && a; j++)
			if (c->act[j] == a)
				return rfail(r, c, "column '%s' appears twice", cell_show(cl, b, 40));
		c->act[i] = (unsigned char)a;
		const char *name = procs ? (a ? log_proc_columns[a - 1].name : "")
					 : (a && a < GA_FIELD0 ? ids[a] : "");
		have_time |= !strcmp(name, "time");
		have_gpu |= !strcmp(name, "gpu");
	}
	if (!have_time || !have_gpu || (procs && !have_pid))
		return rfail(r, c, "not a vramz %s log: no '%s' column", procs ? "process" : "GPU",
			     !have_time ? "time" : !have_gpu ? "gpu" : "pid");
	return procs ? proc_program(c) : gpu_program(c);
}

int vramz_log_open_abi(vramz_log_reader **out, const char *path, const vramz_abi *abi)
{
	vramz_log_reader *r = calloc(1, sizeof *r);
	*out = r;
	if (!r)
		return VRAMZ_ENOMEM;
	r->g.fd = r->p.fd = -1;
	int arc = abi_init(&r->abi, abi, r->err, sizeof r->err);
	if (arc)
		return arc;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0) {
		snprintf(r->err, sizeof r->err, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? VRAMZ_ENOTFOUND : VRAMZ_EIO;
	}
	int rc = open_csv(r, &r->g, path, fd);
	if (rc == 0)
		rc = map_columns(r, &r->g, 0);
	if (rc || !strcmp(path, "-"))
		return rc;
	size_t slen = strlen(path) + 16;
	char *sib = malloc(slen);
	if (!sib)
		return VRAMZ_ENOMEM;
	log_sibling_path(path, sib, slen);
	fd = open(sib, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? 0 : VRAMZ_EIO;
		if (rc)
			snprintf(r->err, sizeof r->err, "%s: %s", sib, strerror(errno));
	} else {
		r->have_procs = 1;
		rc = open_csv(r, &r->p, sib, fd);
		if (rc == 0)
			rc = map_columns(r, &r->p, 1);
	}
	free(sib);
	return rc;
}

/* ---- rows ---- */

static int grow_info(vramz_log_reader *r, unsigned idx)
{
	if (idx < r->icap)
		return 0;
	unsigned ncap = r->icap ? r->icap : 8;
	while (ncap <= idx)
		ncap *= 2;
	vramz_gpu_info *ni = realloc(r->info, ncap * sizeof *ni);
	if (ni)
		r->info = ni;
	unsigned char *nk = realloc(r->known, ncap);
	if (nk)
		r->known = nk;
	unsigned *ns = realloc(r->stamp, ncap * sizeof *ns);
	if (ns)
		r->stamp = ns;
	unsigned *nl = realloc(r->slot, ncap * sizeof *nl);
	if (nl)
		r->slot = nl;
	if (!ni || !nk || !ns || !nl)
		return VRAMZ_ENOMEM;
	memset(ni + r->icap, 0, (ncap - r->icap) * sizeof *ni);
	memset(nk + r->icap, 0, ncap - r->icap);
	memset(ns + r->icap, 0, (ncap - r->icap) * sizeof *ns);
	r->icap = ncap;
	return 0;
}

/* The careful path: a row that row_fast found not plain, split and read
 * cell by cell, failing with what is wrong. */
static int split_row(vramz_log_reader *r, struct csv_in *c, char *line, size_t len)
{
	int n = csv_split(line, len, c->cells, c->ncols);
	if (n < 0)
		return rfail(r, c, "unterminated or misplaced quote");
	if (n != c->ncols)
		return rfail(r, c, "%s%d columns, the header has %d",
			     n > c->ncols ? "more than " : "", n > c->ncols ? c->ncols : n,
			     c->ncols);
	return 0;
}

static int gpu_row_careful(vramz_log_reader *r, struct csv_in *c, char *line, size_t len,
			   vramz_gpu_sample *g, int64_t *t)
{
	int rc = split_row(r, c, line, len);
	if (rc < 0)
		return rc;
	int64_t v;
	uint64_t u;
	int have_gpu = 0, have_time = 0; /* present in every row, by the header check */
	char b[48];
	memset(g, 0, sizeof *g);
	for (int i = 0; i < c->ncols; i++) {
		const struct cell *cl = &c->cells[i];
		unsigned a = c->act[i];
		if (a >= GA_FIELD0) {
			if (!cl->n)
				continue;
			const struct field *f = &gpu_fields[a - GA_FIELD0];
			int bad = f->type == FT_U64   ? cell_u64(cl, UINT64_MAX, &u)
				  : f->type == FT_UINT ? cell_u64(cl, UINT_MAX, &u)
						       : cell_int(cl, &v);
			if (bad)
				return rfail(r, c, "bad %s '%s'", f->name, cell_show(cl, b, 40));
			char *dst = (char *)g + f->offset; /* field_set, inlined: hot */
			if (f->type == FT_U64)
				*(uint64_t *)dst = u;
			else if (f->type == FT_UINT)
				*(unsigned *)dst = (unsigned)u;
			else
				*(int *)dst = (int)v;
			g->valid |= f->valid_bit;
			continue;
		}
		switch (a) {
		case GA_TIME:
			if ((rc = cell_time(r, c, cl, t)))
				return rc;
			have_time = 1;
			break;
		case GA_GPU:
			if (cell_u64(cl, MAX_GPU_INDEX, &u))
				return rfail(r, c, "bad gpu index '%s'", cell_show(cl, b, 40));
			g->index = (unsigned)u;
			have_gpu = 1;
			break;
		case GA_LOST:
			if (cl->n > 1 || (cl->n && cl->s[0] != '0' && cl->s[0] != '1'))
				return rfail(r, c, "bad lost '%s' (0 or 1)", cell_show(cl, b, 40));
			g->lost = cl->n && cl->s[0] == '1';
			break;
		case GA_PROC_COUNT:
			if (!cl->n)
				break;
			if (cell_u64(cl, UINT_MAX, &u))
				return rfail(r, c, "bad proc_count '%s'", cell_show(cl, b, 40));
			g->valid |= VRAMZ_F_PROCS;
			g->proc_count = (unsigned)u; /* checked against the sibling */
			break;
		}
	}
	if (!have_time || !have_gpu)
		return rfail(r, c, "empty gpu index");
	return 0;
}

/* Reads the next GPU row into g; 1, 0 at the end, or an error. */
static int read_gpu_row(vramz_log_reader *r, vramz_gpu_sample *g, int64_t *t)
{
	struct csv_in *c = &r->g;
	char *line;
	size_t len;
	int rc = csv_line(r, c, &line, &len, 0);
	if (rc <= 0)
		return rc;
	memset(g, 0, sizeof *g);
	if (!row_fast(c->prog, c->ncols, offsetof(vramz_gpu_sample, valid),
		      offsetof(vramz_gpu_sample, valid), line, len, (char *)g, c->cells, &c->tc, t) &&
	    (rc = gpu_row_careful(r, c, line, len, g, t)) < 0)
		return rc;
	const struct cell *id[3];
	for (int k = 0; k < 3; k++)
		id[k] = c->id_col[k] >= 0 ? &c->cells[c->id_col[k]] : NULL;
	if (g->lost) {
		unsigned idx = g->index;
		memset(g, 0, sizeof *g);
		g->index = idx;
		g->lost = 1;
	}
	/* a number out of its field's range (used above total, 4294967295 %,
	 * -1 degC) is unknown, as the live backend makes it (fields.c) */
	field_sanitize(g);
	if (!r->have_procs)
		g->valid &= ~(uint32_t)VRAMZ_F_PROCS;
	if ((rc = grow_info(r, g->index)))
		return rc;
	vramz_gpu_info *gi = &r->info[g->index];
	if (!r->known[g->index]) {
		r->known[g->index] = 1;
		gi->index = g->index;
		if (g->index >= r->ninfo)
			r->ninfo = g->index + 1;
	}
	if (id[0])
		cell_copy(gi->uuid, sizeof gi->uuid, id[0]);
	if (id[1])
		cell_copy(gi->name, sizeof gi->name, id[1]);
	if (id[2])
		cell_copy(gi->pci_bus_id, sizeof gi->pci_bus_id, id[2]);
	if (!(gi->valid & VRAMZ_I_MEM_TOTAL) && (g->valid & VRAMZ_F_MEM)) {
		gi->mem_total_bytes = g->mem_total_bytes;
		gi->valid |= VRAMZ_I_MEM_TOTAL;
	}
	return 1;
}

static int proc_row_careful(vramz_log_reader *r, struct csv_in *c, char *line, size_t len,
			    vramz_proc_sample *p, int64_t *t)
{
	int rc = split_row(r, c, line, len);
	if (rc < 0)
		return rc;
	uint64_t u;
	char b[48];
	proc_blank(p);
	for (int i = 0; i < c->ncols; i++) {
		const struct cell *cl = &c->cells[i];
		if (!c->act[i])
			continue;
		const struct log_pcol *col = &log_proc_columns[c->act[i] - 1];
		char *dst = (char *)p + col->offset;
		if (col->kind == PC_TIME) {
			if ((rc = cell_time(r, c, cl, t)))
				return rc;
			continue;
		}
		if (!cl->n) {
			if (col->kind == PC_GPU || col->kind == PC_PID)
				return rfail(r, c, "empty %s", col->name);
			continue;
		}
		uint64_t max = col->kind == PC_U64 ? UINT64_MAX
			     : col->kind == PC_GPU ? MAX_GPU_INDEX : UINT32_MAX;
		switch (col->kind) {
		case PC_TIME:
		case PC_UUID:
			break;
		case PC_TYPE:
			cell_types(cl, &p->type);
			break;
		case PC_STR:
			cell_copy(dst, col->size, cl);
			p->valid |= col->valid_bit;
			break;
		case PC_GPU:
		case PC_PID:
		case PC_U32:
		case PC_UINT:
		case PC_U64:
			if (cell_u64(cl, max, &u))
				return rfail(r, c, "bad %s '%s'", col->name, cell_show(cl, b, 40));
			if (col->kind == PC_GPU)
				p->gpu_index = (unsigned)u;
			else if (col->kind == PC_PID)
				p->pid = (uint32_t)u;
			else if (col->kind == PC_U64)
				*(uint64_t *)dst = u;
			else if (col->kind == PC_U32)
				*(uint32_t *)dst = (uint32_t)u;
			else
				*(unsigned *)dst = (unsigned)u;
			p->valid |= col->valid_bit;
			p->torch_valid |= col->torch_bit; /* an agent figure */
			break;
		}
	}
	return 0;
}

static int read_proc_row(vramz_log_reader *r, vramz_proc_sample *p, int64_t *t)
{
	struct csv_in *c = &r->p;
	char *line;
	size_t len;
	int rc = csv_line(r, c, &line, &len, 0);
	if (rc <= 0)
		return rc;
	proc_blank(p);
	if (!row_fast(c->prog, c->ncols, offsetof(vramz_proc_sample, valid),
		      offsetof(vramz_proc_sample, torch_valid), line, len, (char *)p, c->cells,
		      &c->tc, t) &&
	    (rc = proc_row_careful(r, c, line, len, p, t)) < 0)
		return rc;
	field_sanitize_proc(p); /* a share above 100 % is unknown */
	return 1;
}

/* The GPU file says how many processes each GPU had (proc_count); the
 * sibling must hold exactly those rows at that time.  When it does not,
 * the two files are not one log's pair (a rotation an older vramz was
 * killed in, or files copied from different places): saying so beats
 * replaying a tick without its processes as if it had none.  Only a
 * sibling whose last line was cut short (a power loss) may end early. */
static int check_pairing(vramz_log_reader *r, unsigned ngpus, int64_t t)
{
	if (!r->have_procs)
		return 0;
	for (unsigned i = 0; i < ngpus; i++) {
		const vramz_gpu_sample *g = &r->gpus[i];
		if (!(g->valid & VRAMZ_F_PROCS) || g->proc_count == r->want[i])
			continue;
		if (r->procs_done && r->p.torn && g->proc_count < r->want[i])
			continue;
		char tb[LOG_TIME_LEN + 1];
		log_fmt_time(tb, t);
		return rfail(r, &r->g,
			     "gpu %u lists %u processes at %s but %s has %u there: the "
			     "process file is not this log's pair (from an interrupted "
			     "rotation, or copied from elsewhere); move it away to read "
			     "the GPU rows alone",
			     g->index, r->want[i], tb, r->p.path, g->proc_count);
	}
	return 0;
}

/* Gathers the process rows at time t into r->procs, grouped in the order of
 * the tick's GPUs, and sets each GPU's slice. */
static int attach_procs(vramz_log_reader *r, unsigned ngpus, int64_t t)
{
	unsigned n = 0;
	while (ngpus > r->wcap) {
		unsigned *w = grow_array(r->want, &r->wcap, 16, sizeof *w);
		if (!w)
			return VRAMZ_ENOMEM;
		r->want = w;
	}
	for (unsigned i = 0; i < ngpus; i++) {
		r->want[i] = r->gpus[i].proc_count;
		r->gpus[i].proc_first = r->gpus[i].proc_count = 0;
	}
	/* rows are parsed in place in praw; the one read ahead for this tick
	 * waits where the last tick ended */
	if (r->have_pnext && r->pahead) {
		r->praw[0] = r->praw[r->pahead];
		r->pahead = 0;
	}
	while (r->have_procs && !r->procs_done) {
		if (!r->have_pnext) {
			if (n == r->pcap) {
				/* one past MAX_TICK_PROCS, for the row that fails */
				unsigned ncap = r->pcap ? r->pcap * 2 : 64;
				if (ncap > MAX_TICK_PROCS + 1)
					ncap = MAX_TICK_PROCS + 1;
				vramz_proc_sample *a = realloc(r->praw, ncap * sizeof *a);
				if (!a)
					return VRAMZ_ENOMEM;
				r->praw = a;
				r->pcap = ncap;
			}
			int rc = read_proc_row(r, &r->praw[n], &r->pnext_time);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				r->procs_done = 1;
				break;
			}
			r->have_pnext = 1;
			r->pahead = n;
		}
		/* rows of a later tick wait for it: after it in time, or - the
		 * recorded clock stepped back - the next tick's time, or before
		 * the previous tick's (time only goes back across a step) */
		if (r->pnext_time > t ||
		    (r->pnext_time < t && ((r->carry && r->pnext_time == r->carry_time) ||
					   (r->have_prev && r->pnext_time < r->prev_time))))
			break;
		r->have_pnext = 0;
		if (r->pnext_time < t) {
			/* a tick the GPU file lacks (a kill between the two
			 * writes), unless it is the last tick's time: then
			 * that tick had more rows than its GPU rows list */
			if (r->have_prev && r->pnext_time == r->prev_time && r->prev_listed)
				return rfail(r, &r->p, "more process rows than %s lists at this "
					     "time: the process file is not this log's pair",
					     r->g.path);
			continue;
		}
		unsigned gi = r->praw[n].gpu_index;
		if (gi >= r->icap || r->stamp[gi] != r->tick) {
			if (r->g.torn) /* a torn tick at the end lost that GPU's row */
				continue;
			char tb[LOG_TIME_LEN + 1];
			log_fmt_time(tb, t);
			return rfail(r, &r->p, "process of gpu %u, which has no row at %s in %s",
				     gi, tb, r->g.path);
		}
		const vramz_gpu_sample *gs = &r->gpus[r->slot[gi]];
		if ((gs->valid & VRAMZ_F_PROCS) && gs->proc_count >= r->want[r->slot[gi]]) {
			/* that GPU has all it lists: a next tick at the same
			 * time (a repeated timestamp) begins here */
			r->have_pnext = 1;
			break;
		}
		if (n >= MAX_TICK_PROCS)
			return rfail(r, &r->p, "more than %u processes in one tick", MAX_TICK_PROCS);
		n++;
		r->gpus[r->slot[gi]].proc_count++;
	}
	unsigned first = 0;
	for (unsigned i = 0; i < ngpus; i++) {
		r->gpus[i].proc_first = first;
		first += r->gpus[i].proc_count;
		r->gpus[i].proc_count = 0;
	}
	/* the writer lists a tick's processes GPU by GPU in the order of its
	 * GPU rows: then praw is the answer as it stands */
	unsigned in_order = 1;
	for (unsigned k = 1; k < n && in_order; k++)
		in_order = r->slot[r->praw[k - 1].gpu_index] <= r->slot[r->praw[k].gpu_index];
	if (!in_order && r->procs_cap < r->pcap) {
		vramz_proc_sample *b = realloc(r->procs, r->pcap * sizeof *b);
		if (!b)
			return VRAMZ_ENOMEM;
		r->procs = b;
		r->procs_cap = r->pcap;
	}
	for (unsigned k = 0; k < n; k++) {
		vramz_gpu_sample *g = &r->gpus[r->slot[r->praw[k].gpu_index]];
		if (!in_order)
			r->procs[g->proc_first + g->proc_count] = r->praw[k];
		g->proc_count++;
	}
	r->tick_procs = in_order ? r->praw : r->procs;
	r->snap.proc_count = n;
	r->prev_listed = 0;
	for (unsigned i = 0; i < ngpus; i++)
		r->prev_listed |= (r->gpus[i].valid & VRAMZ_F_PROCS) != 0;
	return check_pairing(r, ngpus, t);
}

static int ensure_gpus(vramz_log_reader *r, unsigned n)
{
	if (n < r->gcap)
		return 0;
	vramz_gpu_sample *ng = grow_array(r->gpus, &r->gcap, 16, sizeof *ng);
	if (!ng)
		return VRAMZ_ENOMEM;
	r->gpus = ng;
	return 0;
}

static int next_tick(vramz_log_reader *r, const vramz_snapshot **snap);

int vramz_log_next(vramz_log_reader *r, const vramz_snapshot **snap)
{
	if (r->failed)
		return r->failed;
	int rc = next_tick(r, snap);
	/* at the record sizes the caller was built with (abi.c) */
	if (rc == 1 && !(*snap = abi_snapshot_out(&r->abi, &r->snap)))
		rc = VRAMZ_ENOMEM;
	if (rc < 0)
		r->failed = rc;
	return rc;
}

static int next_tick(vramz_log_reader *r, const vramz_snapshot **snap)
{
	unsigned n = 0;
	int64_t t = 0, rt;
	int rc;
	if (r->deferred)
		return r->deferred;
	if (r->done)
		return 0;
	r->tick++;
	if ((rc = ensure_gpus(r, 1)))
		return rc;
	if (r->carry) {
		r->gpus[0] = r->gpus[r->carry - 1];
		t = r->carry_time;
		r->carry = 0;
		r->tick_line = r->carry_line;
	} else {
		rc = read_gpu_row(r, &r->gpus[0], &t);
		if (rc <= 0) {
			r->done = 1;
			return rc;
		}
		r->tick_line = r->g.line;
	}
	r->stamp[r->gpus[0].index] = r->tick;
	r->slot[r->gpus[0].index] = 0;
	for (n = 1;; n++) {
		if ((rc = ensure_gpus(r, n)))
			return rc;
		rc = read_gpu_row(r, &r->gpus[n], &rt);
		if (rc < 0) {
			/* a bad row after this tick's rows: the tick read so
			 * far goes out, the error comes with the next call
			 * (top --replay keeps showing the last good tick) */
			r->deferred = rc;
			break;
		}
		if (rc == 0)
			break;
		unsigned idx = r->gpus[n].index;
		if (rt != t || r->stamp[idx] == r->tick) {
			/* the first row of the next tick */
			r->carry = (int)n + 1;
			r->carry_time = rt;
			r->carry_line = r->g.line;
			break;
		}
		r->stamp[idx] = r->tick;
		r->slot[idx] = n;
	}
	if ((rc = attach_procs(r, n, t)))
		return rc;
	r->prev_time = t;
	r->have_prev = 1;
	r->snap.time_ms = t;
	/* the log's own clock; saturated where ns overflow (past 2262) */
	r->snap.mono_ns = t > INT64_MAX / 1000000 ? INT64_MAX
			: t < INT64_MIN / 1000000 ? INT64_MIN : t * 1000000;
	r->snap.gpu_count = n;
	r->snap.gpus = r->gpus;
	r->snap.procs = r->tick_procs;
	r->snap.mig_count = 0;
	r->snap.migs = NULL;
	*snap = &r->snap;
	return 1;
}

const char *vramz_log_error(const vramz_log_reader *r)
{
	return r ? r->err : "out of memory";
}

unsigned long vramz_log_tick_line(const vramz_log_reader *r)
{
	return r ? r->tick_line : 0;
}

unsigned vramz_log_gpu_count(const vramz_log_reader *r)
{
	return r->ninfo;
}

const vramz_gpu_info *vramz_log_gpu(const vramz_log_reader *r, unsigned index)
{
	return index < r->ninfo && r->known[index] ? &r->info[index] : NULL;
}

static void close_csv(struct csv_in *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c->buf);
	free(c->cells);
	free(c->act);
	free(c->prog);
}

void vramz_log_close(vramz_log_reader *r)
{
	if (!r)
		return;
	close_csv(&r->g);
	close_csv(&r->p);
	free(r->gpus);
	free(r->praw);
	free(r->procs);
	free(r->want);
	free(r->info);
	free(r->known);
	free(r->stamp);
	free(r->slot);
	abi_free(&r->abi);
	free(r);
}
