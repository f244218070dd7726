/* SPDX-License-Identifier: Apache-2.0 */
/* jsonw.h - a small streaming JSON writer: correct escaping, commas and
 * nesting handled for the caller, integers kept exact (bytes are uint64).
 * Keys are NULL inside arrays. */
#ifndef VRAMZ_JSONW_H
#define VRAMZ_JSONW_H

#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 32

struct jsonw {
	FILE *f;
	int depth;
	int pretty;
	unsigned char first[JSONW_MAX_DEPTH]; /* no member written yet at depth */
};

void jw_init(struct jsonw *w, FILE *f, int pretty);
void jw_obj(struct jsonw *w, const char *key);  /* begin an object */
void jw_arr(struct jsonw *w, const char *key);  /* begin an array */
void jw_end_obj(struct jsonw *w);
void jw_end_arr(struct jsonw *w);
void jw_str(struct jsonw *w, const char *key, const char *v); /* NULL: null */
void jw_u64(struct jsonw *w, const char *key, uint64_t v);
void jw_i64(struct jsonw *w, const char *key, int64_t v);
void jw_dbl(struct jsonw *w, const char *key, double v, int decimals);
void jw_bool(struct jsonw *w, const char *key, int v);
void jw_null(struct jsonw *w, const char *key);
/* Optional values: the value when valid, else null. */
void jw_u64_if(struct jsonw *w, const char *key, int valid, uint64_t v);
void jw_i64_if(struct jsonw *w, const char *key, int valid, int64_t v);
void jw_dbl_if(struct jsonw *w, const char *key, int valid, double v, int decimals);
/* Ends the document with a newline. */
void jw_finish(struct jsonw *w);
/* Writes s as a JSON string literal (with quotes) to f. */
void jw_escape(FILE *f, const char *s);

#endif
