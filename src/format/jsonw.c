/* SPDX-License-Identifier: Apache-2.0 */
/* jsonw.c - streaming JSON writer (see jsonw.h).  Output is valid UTF-8
 * JSON even for hostile input: control bytes are escaped and invalid
 * UTF-8 in a process's command line becomes U+FFFD, because command
 * lines come from /proc and may hold any bytes. */
#include "format/jsonw.h"

#include <math.h>
#include <string.h>

#include "text.h"

void jw_init(struct jsonw *w, FILE *f, int pretty)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->pretty = pretty;
	w->first[0] = 1;
}

static void newline(struct jsonw *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

void jw_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		/* printable ASCII needs no escape: written as one run (a
		 * byte-at-a-time fwrite was most of a document's cost) */
		const unsigned char *run = s;
		while (*s >= 0x20 && *s < 0x7f && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			fwrite(run, 1, (size_t)(s - run), f);
		if (!*s)
			break;
		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20 || *s == 0x7f) {
			/* sized for every control byte: 0x0e..0x1f must read NULL */
			static const char *const esc[0x20] = {['\n'] = "\\n", ['\t'] = "\\t",
							      ['\r'] = "\\r"};
			if (*s < 0x20 && esc[*s])
				fputs(esc[*s], f);
			else
				fprintf(f, "\\u%04x", *s);
			s++;
		} else {
			uint32_t cp;
			size_t n = text_utf8(s, &cp);
			if (!n) {
				fputs("\xef\xbf\xbd", f);
				s++;
			} else if (text_cp_unsafe(cp)) {
				/* C1 controls (U+009B is a CSI) and bidi controls
				 * (lib/internal/text.h): escaped, so a document printed raw
				 * cannot drive a terminal or reorder its text */
				fprintf(f, "\\u%04x", (unsigned)cp);
				s += n;
			} else {
				fwrite(s, 1, n, f);
				s += n;
			}
		}
	}
	fputc('"', f);
}

static void member(struct jsonw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = 0;
	if (w->depth > 0)
		newline(w);
	if (key) {
		jw_escape(w->f, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void open_(struct jsonw *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->f);
	if (w->depth + 1 < JSONW_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = 1;
}

static void close_(struct jsonw *w, char c)
{
	int empty = w->first[w->depth];
	if (w->depth > 0)
		w->depth--;
	if (!empty)
		newline(w);
	fputc(c, w->f);
}

void jw_obj(struct jsonw *w, const char *key) { open_(w, key, '{'); }
void jw_arr(struct jsonw *w, const char *key) { open_(w, key, '['); }
void jw_end_obj(struct jsonw *w) { close_(w, '}'); }
void jw_end_arr(struct jsonw *w) { close_(w, ']'); }

void jw_str(struct jsonw *w, const char *key, const char *v)
{
	member(w, key);
	if (v)
		jw_escape(w->f, v);
	else
		fputs("null", w->f);
}

/* v in decimal: the document's most common value, kept off printf's
 * format parser */
static void json_put_u64(FILE *f, uint64_t v)
{
	char b[20];
	size_t n = sizeof b;
	do
		b[--n] = (char)('0' + v % 10);
	while (v /= 10);
	fwrite(b + n, 1, sizeof b - n, f);
}

void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
	member(w, key);
	json_put_u64(w->f, v);
}

void jw_i64(struct jsonw *w, const char *key, int64_t v)
{
	member(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void jw_dbl(struct jsonw *w, const char *key, double v, int decimals)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", decimals, v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jsonw *w, const char *key, int v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jsonw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jw_u64_if(struct jsonw *w, const char *key, int valid, uint64_t v)
{
	if (valid)
		jw_u64(w, key, v);
	else
		jw_null(w, key);
}

void jw_i64_if(struct jsonw *w, const char *key, int valid, int64_t v)
{
	if (valid)
		jw_i64(w, key, v);
	else
		jw_null(w, key);
}

void jw_dbl_if(struct jsonw *w, const char *key, int valid, double v, int decimals)
{
	if (valid)
		jw_dbl(w, key, v, decimals);
	else
		jw_null(w, key);
}

void jw_finish(struct jsonw *w)
{
	fputc('\n', w->f);
}
