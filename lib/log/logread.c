/* logread.c - reading a CSV log back as the snapshots the live sampler
 * produces (include/vramz/log.h), so replay, analyze and the dashboard
 * share one path with the live views.
 *
 * Logs run to gigabytes, so the reader streams: one large buffer per file
 * filled by read(2), lines found with memchr, cells split in place and
 * numbers parsed by hand; rows land in arrays reused tick after tick, so
 * memory follows the widest tick, never the file.  Columns are matched by
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
#include "log/logfile.h"

#define BUF_BYTES (1u << 20)      /* per file; also the longest line */
#define MAX_GPU_INDEX 1023u
#define MAX_TICK_PROCS (1u << 20) /* a bound a fuzzed file cannot pass */

struct cell {
	char *s;
	size_t n;
};

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
	char last_time[40];        /* the previous row's time text ... */
	size_t last_time_n;
	int64_t last_time_ms;      /* ... and its value */
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

/* A cell quoted for a message: printable, shortened. */
static const char *show(const struct cell *c, char *buf, size_t len)
{
	size_t n = c->n < len - 4 ? c->n : len - 4, i;
	for (i = 0; i < n; i++)
		buf[i] = c->s[i] >= 0x20 && c->s[i] < 0x7f ? c->s[i] : '?';
	if (n < c->n)
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = 0;
	return buf;
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

/* Splits a line into at most max cells, unquoting RFC 4180 cells in place.
 * Returns the count (max + 1: more than max), or -1 on broken quoting. */
static int split_quoted(char *s, size_t n, struct cell *cells, int max)
{
	char *p = s, *end = s + n;
	int k = 0;
	for (;;) {
		struct cell *c = &cells[k < max ? k : max];
		if (p < end && *p == '"') {
			char *o = ++p;
			c->s = o;
			for (;;) {
				if (p == end)
					return -1;
				if (*p == '"') {
					if (p + 1 < end && p[1] == '"') {
						*o++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*o++ = *p++;
			}
			c->n = (size_t)(o - c->s);
			if (p < end && *p != ',')
				return -1;
		} else {
			c->s = p;
			while (p < end && *p != ',')
				p++;
			c->n = (size_t)(p - c->s);
		}
		if (k < max + 1)
			k++;
		if (p == end)
			return k;
		p++;
	}
}

/* Bit i set where byte i of the 16 (or 8) at p is a comma; *quote set
 * when one of them is a quote.  The only per-byte work of a row, so it
 * looks at a block at a time: SSE2 on x86-64, else eight bytes in a word. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define BLOCK 16
static inline unsigned block_commas(const char *p, unsigned *quote)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	*quote |= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')));
}
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BLOCK 8
/* 0x80 in each byte of w that is zero, exactly (no borrow between bytes) */
static inline uint64_t zero_bytes(uint64_t w)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
	return ~(((w & low7) + low7) | w | low7);
}
static inline unsigned block_commas(const char *p, unsigned *quote)
{
	uint64_t w, z;
	memcpy(&w, p, 8);
	*quote |= zero_bytes(w ^ 0x2222222222222222ull) != 0;
	z = zero_bytes(w ^ 0x2c2c2c2c2c2c2c2cull) >> 7;
	/* one bit a byte, at bits 0, 8, ..., 56: gather them into bits 0-7 */
	return (unsigned)((z * 0x0102040810204080ull) >> 56);
}
#else
#define BLOCK 1
static inline unsigned block_commas(const char *p, unsigned *quote)
{
	*quote |= *p == '"';
	return *p == ',';
}
#endif

/* More cells than max: that is the answer unless a quote further on makes
 * the line's quoting broken, which split_quoted says first. */
static int more_cells(char *s, size_t n, struct cell *cells, int max, unsigned quote)
{
	return quote || memchr(s, '"', n) ? split_quoted(s, n, cells, max) : max + 1;
}

/* split, for a line with no quote anywhere (every line vramz writes but
 * those with a comma or quote in a command): cells end at commas, found a
 * block at a time; a line with a quote goes to split_quoted. */
static int split(char *s, size_t n, struct cell *cells, int max)
{
	char *start = s, *p = s, *end = s + n;
	unsigned quote = 0;
	int k = 0;
	for (; (size_t)(end - p) >= BLOCK; p += BLOCK) {
		unsigned m = block_commas(p, &quote);
		while (m) {
			char *c = p + __builtin_ctz(m);
			m &= m - 1;
			if (k == max)
				return more_cells(s, n, cells, max, quote);
			cells[k].s = start;
			cells[k].n = (size_t)(c - start);
			k++;
			start = c + 1;
		}
	}
	for (; p < end; p++) {
		quote |= *p == '"';
		if (*p == ',') {
			if (k == max)
				return more_cells(s, n, cells, max, quote);
			cells[k].s = start;
			cells[k].n = (size_t)(p - start);
			k++;
			start = p + 1;
		}
	}
	if (quote)
		return split_quoted(s, n, cells, max);
	cells[k].s = start;
	cells[k].n = (size_t)(end - start);
	return k + 1;
}

static int parse_u64(const struct cell *c, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	if (c->n == 0 || c->n > 20)
		return -1;
	/* 19 digits cannot overflow; only a 20th needs the careful check */
	size_t fast = c->n < 19 ? c->n : 19;
	for (size_t i = 0; i < fast; i++) {
		unsigned d = (unsigned)(unsigned char)c->s[i] - '0';
		if (d > 9)
			return -1;
		x = x * 10 + d;
	}
	if (c->n == 20) {
		unsigned d = (unsigned)(unsigned char)c->s[19] - '0';
		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (x > max)
		return -1;
	*v = x;
	return 0;
}

static int parse_int(const struct cell *c, int64_t *v)
{
	struct cell t = *c;
	uint64_t x;
	int neg = t.n && t.s[0] == '-';
	if (neg) {
		t.s++;
		t.n--;
	}
	if (parse_u64(&t, neg ? (uint64_t)INT_MAX + 1 : INT_MAX, &x))
		return -1;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

static int cell_time(vramz_log_reader *r, struct csv_in *c, const struct cell *cl, int64_t *ms)
{
	char b[48];
	if (cl->n == c->last_time_n && !memcmp(cl->s, c->last_time, cl->n)) {
		*ms = c->last_time_ms;
		return 0;
	}
	if (log_parse_time(cl->s, cl->n, ms))
		return rfail(r, c, "bad time '%s' (want 2026-11-30T01:32:33.123Z)",
			     show(cl, b, 40));
	if (cl->n < sizeof c->last_time) {
		memcpy(c->last_time, cl->s, cl->n);
		c->last_time_n = cl->n;
		c->last_time_ms = *ms;
	}
	return 0;
}

/* dst is NUL-terminated within size, so comparing its first n + 1 bytes
 * stays inside it; the same text (a GPU's name every row) is not rewritten */
static void copy_str(char *dst, size_t size, const struct cell *c)
{
	size_t n = c->n < size - 1 ? c->n : size - 1;
	if (dst[n] || memcmp(dst, c->s, n)) {
		memcpy(dst, c->s, n);
		dst[n] = 0;
	}
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
	c->buf = malloc(BUF_BYTES);
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
	int n = split(line, len, c->cells, c->ncols);
	if (n < 0)
		return rfail(r, c, "broken quoting in the header");
	c->ncols = n;
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
				return rfail(r, c, "column '%s' appears twice", show(cl, b, 40));
		c->act[i] = (unsigned char)a;
		const char *name = procs ? (a ? log_proc_columns[a - 1].name : "")
					 : (a && a < GA_FIELD0 ? ids[a] : "");
		have_time |= !strcmp(name, "time");
		have_gpu |= !strcmp(name, "gpu");
	}
	if (!have_time || !have_gpu || (procs && !have_pid))
		return rfail(r, c, "not a vramz %s log: no '%s' column", procs ? "process" : "GPU",
			     !have_time ? "time" : !have_gpu ? "gpu" : "pid");
	return 0;
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

static int split_row(vramz_log_reader *r, struct csv_in *c, int *eof)
{
	char *line;
	size_t len;
	int rc = csv_line(r, c, &line, &len, 0);
	*eof = rc == 0;
	if (rc <= 0)
		return rc;
	int n = split(line, len, c->cells, c->ncols);
	if (n < 0)
		return rfail(r, c, "unterminated or misplaced quote");
	if (n != c->ncols)
		return rfail(r, c, "%s%d columns, the header has %d",
			     n > c->ncols ? "more than " : "", n > c->ncols ? c->ncols : n,
			     c->ncols);
	return 0;
}

/* Reads the next GPU row into g; 1, 0 at the end, or an error. */
static int read_gpu_row(vramz_log_reader *r, vramz_gpu_sample *g, int64_t *t)
{
	struct csv_in *c = &r->g;
	int eof;
	int rc = split_row(r, c, &eof);
	if (rc < 0 || eof)
		return rc;
	const struct cell *id[3] = {NULL, NULL, NULL};
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
			int bad = f->type == FT_U64   ? parse_u64(cl, UINT64_MAX, &u)
				  : f->type == FT_UINT ? parse_u64(cl, UINT_MAX, &u)
						       : parse_int(cl, &v);
			if (bad)
				return rfail(r, c, "bad %s '%s'", f->name, show(cl, b, 40));
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
			if (parse_u64(cl, MAX_GPU_INDEX, &u))
				return rfail(r, c, "bad gpu index '%s'", show(cl, b, 40));
			g->index = (unsigned)u;
			have_gpu = 1;
			break;
		case GA_UUID:
		case GA_NAME:
		case GA_BUS:
			id[a - GA_UUID] = cl;
			break;
		case GA_LOST:
			if (cl->n > 1 || (cl->n && cl->s[0] != '0' && cl->s[0] != '1'))
				return rfail(r, c, "bad lost '%s' (0 or 1)", show(cl, b, 40));
			g->lost = cl->n && cl->s[0] == '1';
			break;
		case GA_PROC_COUNT:
			if (!cl->n)
				break;
			if (parse_u64(cl, UINT_MAX, &u))
				return rfail(r, c, "bad proc_count '%s'", show(cl, b, 40));
			g->valid |= VRAMZ_F_PROCS;
			g->proc_count = (unsigned)u; /* checked against the sibling */
			break;
		}
	}
	if (!have_time || !have_gpu)
		return rfail(r, c, "empty gpu index");
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
		copy_str(gi->uuid, sizeof gi->uuid, id[0]);
	if (id[1])
		copy_str(gi->name, sizeof gi->name, id[1]);
	if (id[2])
		copy_str(gi->pci_bus_id, sizeof gi->pci_bus_id, id[2]);
	if (!(gi->valid & VRAMZ_I_MEM_TOTAL) && (g->valid & VRAMZ_F_MEM)) {
		gi->mem_total_bytes = g->mem_total_bytes;
		gi->valid |= VRAMZ_I_MEM_TOTAL;
	}
	return 1;
}

static void parse_types(const struct cell *cl, unsigned *type)
{
	static const char *const names[] = {"compute", "graphics", "mps"};
	const char *p = cl->s, *end = cl->s + cl->n;
	while (p < end) {
		const char *q = memchr(p, '+', (size_t)(end - p));
		size_t n = (size_t)((q ? q : end) - p);
		for (unsigned i = 0; i < 3; i++)
			if (strlen(names[i]) == n && !memcmp(names[i], p, n))
				*type |= 1u << i;
		p = q ? q + 1 : end; /* kinds a newer vramz knows are skipped */
	}
}

static int read_proc_row(vramz_log_reader *r, vramz_proc_sample *p, int64_t *t)
{
	struct csv_in *c = &r->p;
	int eof;
	int rc = split_row(r, c, &eof);
	if (rc < 0 || eof)
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
			parse_types(cl, &p->type);
			break;
		case PC_STR:
			copy_str(dst, col->size, cl);
			p->valid |= col->valid_bit;
			break;
		case PC_GPU:
		case PC_PID:
		case PC_U32:
		case PC_UINT:
		case PC_U64:
			if (parse_u64(cl, max, &u))
				return rfail(r, c, "bad %s '%s'", col->name, show(cl, b, 40));
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
