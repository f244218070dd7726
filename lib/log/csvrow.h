/* SPDX-License-Identifier: Apache-2.0 */
/* csvrow.h - the cells of one CSV line, for the log reader (logread.c):
 * splitting a line (RFC 4180 quoting), parsing a cell as a number, and the
 * one-pass parse of a plain row straight into a record (csvrow.c).
 */
#ifndef VRAMZ_CSVROW_H
#define VRAMZ_CSVROW_H

#include <stddef.h>
#include <stdint.h>

/* Bytes a line buffer needs past its end: row_fast reads whole blocks. */
#define CSVROW_PAD 16

struct cell {
	char *s;
	size_t n;
};

/* Splits a line into at most max cells (cells has max + 1), unquoting
 * quoted cells in place.  Returns the count (max + 1: more than max), or
 * -1 on broken quoting. */
int csv_split(char *s, size_t n, struct cell *cells, int max);

/* A cell as an unsigned number up to max: 0, or -1 (empty, not digits,
 * too large). */
int cell_u64(const struct cell *c, uint64_t max, uint64_t *v);
/* A cell as an int (INT_MIN + 1 .. INT_MAX, a leading '-'): 0 or -1. */
int cell_int(const struct cell *c, int64_t *v);
/* dst (size bytes, NUL-terminated) = the cell, cut to fit; 1 when dst
 * changed (0: it held that text already, nothing written) */
int cell_copy(char *dst, size_t size, const struct cell *c);
/* The cell quoted for a message: printable, shortened; buf. */
const char *cell_show(const struct cell *c, char *buf, size_t len);

/* ---- the fast path: a row with no quote and every number plain ----
 * A row program says per column what its cell fills in a record.  row_fast
 * parses a line by it in one pass, or says the line is not plain (a quote,
 * a number it would have to judge, a cell too many or too few): then the
 * careful path (csv_split and cell_*) parses it, and names what is wrong. */
enum row_op {
	RO_SKIP,    /* not read */
	RO_TIME,    /* the row's time */
	RO_CELL,    /* left in cells[] for the caller (GPU identity) */
	RO_U64,     /* number to a uint64_t */
	RO_U32,     /* number to a 32-bit unsigned */
	RO_INT,     /* non-negative number to an int (a '-' is not plain) */
	RO_STR,     /* text to a char[size] */
	RO_TYPES,   /* "compute+graphics" to type bits */
	RO_LOST,    /* "0" or "1" to an int */
};

struct row_col {
	unsigned char op;      /* enum row_op */
	unsigned char need;    /* 1: an empty cell is not plain (an error) */
	uint16_t offset, size; /* in the record */
	uint32_t valid_bit;    /* set in the record's valid when filled */
	uint32_t valid2_bit;   /* and in its second valid (torch_valid) */
	uint64_t max;          /* largest plain number */
};

struct row_time {
	char text[40];          /* the last time parsed ... */
	size_t n;
	int64_t ms;             /* ... and its value */
};

/* Parses line (len bytes; line[len] is its '\n' or '\r', and the buffer
 * holds CSVROW_PAD bytes more) by the ncols columns of prog into rec,
 * whose uint32_t valid bits are at valid_offset and valid2_offset.  rec
 * must be blank.  1: parsed, *t_ms is the time, cells[] holds the RO_CELL
 * cells; 0: not plain. */
int row_fast(const struct row_col *prog, int ncols, size_t valid_offset, size_t valid2_offset,
	     char *line, size_t len, char *rec, struct cell *cells, struct row_time *tc,
	     int64_t *t_ms);

/* The type bits of a "compute+graphics+mps" cell; kinds a newer vramz
 * knows are skipped. */
void cell_types(const struct cell *cl, unsigned *type);

#endif
