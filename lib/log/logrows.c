/* SPDX-License-Identifier: Apache-2.0 */
/* logrows.c - the log reader's files row by row (logread.h): lines found
 * with memchr in one large buffer per file, the header mapped to what each
 * column fills, and each row parsed in one pass by a program built from
 * that mapping (csvrow.c), or split and read cell by cell, failing with
 * FILE:LINE and the reason, when that pass cannot judge it (the careful
 * path).  logread.c assembles the rows into ticks. */
#include "log/logread.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fields.h"
#include "grow.h"
#include "logfile.h"
#include "procfields.h"

int lr_fail(vramz_log_reader *r, const struct csv_in *c, const char *fmt, ...)
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
			return lr_fail(r, c, "line longer than %u bytes", BUF_BYTES);
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
		return lr_fail(r, c, "bad time '%s' (want 2026-11-30T01:32:33.123Z)",
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

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

int log_open_file(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO nobody writes must not hang the open (nor a
	 * read), it is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return e == ENOENT ? VRAMZ_ENOTFOUND : VRAMZ_EIO;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return VRAMZ_EIO;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s, not a regular file: a log is read from a file",
			 path, file_kind(st.st_mode));
		close(fd);
		return VRAMZ_EUNSUPPORTED;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int lr_open_csv(vramz_log_reader *r, struct csv_in *c, const char *path, int fd)
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
		return lr_fail(r, c, "empty file, not a vramz log");
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
		return lr_fail(r, c, "broken quoting in the header");
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

int lr_map_columns(vramz_log_reader *r, struct csv_in *c, int procs)
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
				return lr_fail(r, c, "column '%s' appears twice", cell_show(cl, b, 40));
		c->act[i] = (unsigned char)a;
		const char *name = procs ? (a ? log_proc_columns[a - 1].name : "")
					 : (a && a < GA_FIELD0 ? ids[a] : "");
		have_time |= !strcmp(name, "time");
		have_gpu |= !strcmp(name, "gpu");
	}
	if (!have_time || !have_gpu || (procs && !have_pid))
		return lr_fail(r, c, "not a vramz %s log: no '%s' column", procs ? "process" : "GPU",
			     !have_time ? "time" : !have_gpu ? "gpu" : "pid");
	return procs ? proc_program(c) : gpu_program(c);
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
		return lr_fail(r, c, "unterminated or misplaced quote");
	if (n != c->ncols)
		return lr_fail(r, c, "%s%d columns, the header has %d",
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
				return lr_fail(r, c, "bad %s '%s'", f->name, cell_show(cl, b, 40));
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
				return lr_fail(r, c, "bad gpu index '%s'", cell_show(cl, b, 40));
			g->index = (unsigned)u;
			have_gpu = 1;
			break;
		case GA_LOST:
			if (cl->n > 1 || (cl->n && cl->s[0] != '0' && cl->s[0] != '1'))
				return lr_fail(r, c, "bad lost '%s' (0 or 1)", cell_show(cl, b, 40));
			g->lost = cl->n && cl->s[0] == '1';
			break;
		case GA_PROC_COUNT:
			if (!cl->n)
				break;
			if (cell_u64(cl, UINT_MAX, &u))
				return lr_fail(r, c, "bad proc_count '%s'", cell_show(cl, b, 40));
			g->valid |= VRAMZ_F_PROCS;
			g->proc_count = (unsigned)u; /* checked against the sibling */
			break;
		}
	}
	if (!have_time || !have_gpu)
		return lr_fail(r, c, "empty gpu index");
	return 0;
}

/* Reads the next GPU row into g; 1, 0 at the end, or an error. */
int lr_read_gpu_row(vramz_log_reader *r, vramz_gpu_sample *g, int64_t *t)
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
	int changed = 0;
	if (id[0])
		changed |= cell_copy(gi->uuid, sizeof gi->uuid, id[0]);
	if (id[1])
		changed |= cell_copy(gi->name, sizeof gi->name, id[1]);
	if (id[2])
		changed |= cell_copy(gi->pci_bus_id, sizeof gi->pci_bus_id, id[2]);
	if (changed) /* a log's text (lib/internal/text.h), once, not every row */
		field_sanitize_info(gi);
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
				return lr_fail(r, c, "empty %s", col->name);
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
				return lr_fail(r, c, "bad %s '%s'", col->name, cell_show(cl, b, 40));
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

int lr_read_proc_row(vramz_log_reader *r, vramz_proc_sample *p, int64_t *t)
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
	proc_field_sanitize_text(p); /* a log's text: lib/internal/text.h */
	return 1;
}

void lr_close_csv(struct csv_in *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c->buf);
	free(c->cells);
	free(c->act);
	free(c->prog);
}

