/* SPDX-License-Identifier: Apache-2.0 */
/* csvrow.c - the cells of one CSV line, for the log reader (logread.c).
 *
 * A day of 8 GPUs at 10 Hz is 20 million rows, so how a row becomes
 * numbers decides how fast `analyze` and `report` are.  Two paths give the
 * same answer.  The fast one (row_fast) walks a plain row once - no quote,
 * every number digits that fit - and writes each cell straight into the
 * record by a per-column program built from the header: digits are
 * accumulated where they are found, text is copied once, commas are found
 * 16 bytes at a time.  Anything it would have to judge (a quote, a '-', a
 * number too long or out of range, a cell too many or too few) sends the
 * row to the careful path: csv_split with RFC 4180 unquoting, then
 * cell_u64 and friends per cell, which name what is wrong.  So an error
 * message, and what an odd but valid row reads as, are the careful path's.
 */
#include "log/csvrow.h"

#include <limits.h>
#include <string.h>

#include "logfile.h"
#include "text.h"

_Static_assert(sizeof(unsigned) == 4, "RO_U32 stores unsigned fields as 32 bits");

/* ---- splitting ---- */

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
 * when one of them is a quote.  SSE2 on x86-64, else eight bytes in a
 * word. */
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
	/* one bit a byte, at bits 0, 8, ..., 56: gathered into bits 0-7 */
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

/* A line with no quote anywhere (every line vramz writes but those with a
 * comma or quote in a command) is cells between commas, found a block at
 * a time; a line with a quote goes to split_quoted. */
int csv_split(char *s, size_t n, struct cell *cells, int max)
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

/* ---- cells ---- */

int cell_u64(const struct cell *c, uint64_t max, uint64_t *v)
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

int cell_int(const struct cell *c, int64_t *v)
{
	struct cell t = *c;
	uint64_t x;
	int neg = t.n && t.s[0] == '-';
	if (neg) {
		t.s++;
		t.n--;
	}
	if (cell_u64(&t, neg ? (uint64_t)INT_MAX + 1 : INT_MAX, &x))
		return -1;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

/* dst is NUL-terminated within size, so comparing its first n + 1 bytes
 * stays inside it; the same text (a GPU's name every row) is not rewritten */
int cell_copy(char *dst, size_t size, const struct cell *c)
{
	size_t n = c->n < size - 1 ? c->n : size - 1;
	if (dst[n] || memcmp(dst, c->s, n)) {
		memcpy(dst, c->s, n);
		dst[n] = 0;
		return 1;
	}
	return 0;
}

const char *cell_show(const struct cell *c, char *buf, size_t len)
{
	size_t n = c->n < len - 4 ? c->n : len - 4;
	text_copy_n(buf, n + 1, c->s, n);
	if (n < c->n)
		strcat(buf, "...");
	return buf;
}

void cell_types(const struct cell *cl, unsigned *type)
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

/* ---- the fast path ---- */

/* The first comma at or after p, or end.  Reads whole blocks: up to
 * BLOCK - 1 bytes past end, which the buffer's CSVROW_PAD covers. */
static inline char *find_comma(char *p, char *end)
{
#if BLOCK > 1
	unsigned quote = 0;
	for (;; p += BLOCK) {
		unsigned m = block_commas(p, &quote);
		if (m) {
			p += __builtin_ctz(m);
			return p < end ? p : end;
		}
		if (p + BLOCK >= end)
			return end;
	}
#else
	while (p < end && *p != ',')
		p++;
	return p;
#endif
}

/* The number at p: its digit count, up to 20 (20: too long to be plain).
 * (Eight digits a word with no branch per digit measured no faster: the
 * chain from one cell's length to the next cell's start is what waits.) */
static inline size_t csv_digits(const char *p, uint64_t *x)
{
	size_t n = 0;
	unsigned d;
	*x = 0;
	while (n < 20 && (d = (unsigned)(unsigned char)p[n] - '0') <= 9) {
		*x = *x * 10 + d;
		n++;
	}
	return n;
}

/* the time cell is the same as the last row's (24 bytes, at 10 Hz most) */
static inline int same_time(const char *p, size_t n, const struct row_time *tc)
{
	if (n != tc->n)
		return 0;
	if (n == 24) {
		uint64_t a[3], b[3];
		memcpy(a, p, 24);
		memcpy(b, tc->text, 24);
		return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]));
	}
	return !memcmp(p, tc->text, n);
}

int row_fast(const struct row_col *prog, int ncols, size_t valid_offset, size_t valid2_offset,
	     char *line, size_t len, char *rec, struct cell *cells, struct row_time *tc,
	     int64_t *t_ms)
{
	char *p = line, *end = line + len;
	uint32_t valid = 0, valid2 = 0;
	for (int i = 0; i < ncols; i++) {
		const struct row_col *col = &prog[i];
		if (col->op >= RO_U64 && col->op <= RO_INT) {
			/* digits up to the first non-digit: line[len] is a line
			 * break, so this stops at the end of the line */
			uint64_t x;
			size_t nd = csv_digits(p, &x);
			char *q = p + nd;
			if (nd == 0) {
				if (col->need)
					return 0;
			} else {
				if (nd > 19 || x > col->max)
					return 0;
				if (col->op == RO_U64) {
					memcpy(rec + col->offset, &x, sizeof x);
				} else if (col->op == RO_U32) {
					uint32_t v = (uint32_t)x;
					memcpy(rec + col->offset, &v, sizeof v);
				} else {
					int v = (int)x;
					memcpy(rec + col->offset, &v, sizeof v);
				}
				valid |= col->valid_bit;
				valid2 |= col->valid2_bit;
			}
			p = q;
		} else {
			if (*p == '"')
				return 0;
			char *q = col->op == RO_LOST ? p + (p < end && *p != ',') : find_comma(p, end);
			size_t n = (size_t)(q - p);
			switch (col->op) {
			case RO_TIME:
				if (same_time(p, n, tc)) {
					*t_ms = tc->ms;
				} else {
					if (log_parse_time(p, n, t_ms))
						return 0;
					if (n < sizeof tc->text) {
						memcpy(tc->text, p, n);
						tc->n = n;
						tc->ms = *t_ms;
					}
				}
				break;
			case RO_CELL:
				cells[i].s = p;
				cells[i].n = n;
				break;
			case RO_STR:
				if (n) {
					size_t k = n < col->size - 1u ? n : col->size - 1u;
					memcpy(rec + col->offset, p, k);
					rec[col->offset + k] = 0;
					valid |= col->valid_bit;
				}
				break;
			case RO_TYPES:
				if (n) {
					struct cell cl = {p, n};
					unsigned type;
					memcpy(&type, rec + col->offset, sizeof type);
					if (n == 7 && !memcmp(p, "compute", 7))
						type |= VRAMZ_PT_COMPUTE;
					else
						cell_types(&cl, &type);
					memcpy(rec + col->offset, &type, sizeof type);
				}
				break;
			case RO_LOST:
				if (n) {
					if (*p != '0' && *p != '1')
						return 0;
					int lost = *p == '1';
					memcpy(rec + col->offset, &lost, sizeof lost);
				}
				break;
			default:
				break;
			}
			p = q;
		}
		/* the cell ends at its comma, the last one at the line's end */
		if (i + 1 < ncols) {
			if (p == end || *p != ',')
				return 0;
			p++;
		} else if (p != end) {
			return 0;
		}
	}
	uint32_t v;
	memcpy(&v, rec + valid_offset, sizeof v);
	v |= valid;
	memcpy(rec + valid_offset, &v, sizeof v);
	memcpy(&v, rec + valid2_offset, sizeof v);
	v |= valid2;
	memcpy(rec + valid2_offset, &v, sizeof v);
	return 1;
}
