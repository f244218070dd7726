/* SPDX-License-Identifier: Apache-2.0 */
/* jsonr.c - a recursive-descent JSON parser for vramz's own documents.
 * The tool writes JSON with src/format/jsonw.c; this reads it back where a
 * command compares two saved reports.  Strict (RFC 8259 syntax), depth
 * limited, and \u escapes decoded to UTF-8 so names survive a round trip.
 */
#include "format/jsonr.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JR_MAX_DEPTH 64

struct jr_parser {
	const char *s, *p;
	char *err;
	size_t errlen;
	int failed;
};

static void jr_fail(struct jr_parser *ps, const char *why)
{
	if (!ps->failed)
		snprintf(ps->err, ps->errlen, "offset %zu: %s", (size_t)(ps->p - ps->s), why);
	ps->failed = 1;
}

static void jr_ws(struct jr_parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int jr_value(struct jr_parser *ps, struct jr_val *v, int depth);

static void jr_utf8(char **o, unsigned cp)
{
	char *q = *o;
	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xc0 | cp >> 6);
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xe0 | cp >> 12);
		*q++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (char)(0xf0 | cp >> 18);
		*q++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*q++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (char)(0x80 | (cp & 0x3f));
	}
	*o = q;
}

static int jr_hex4(const char *p, unsigned *cp)
{
	*cp = 0;
	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)p[i]))
			return -1;
		*cp = *cp * 16 + (unsigned)(isdigit((unsigned char)p[i]) ? p[i] - '0'
					    : (tolower((unsigned char)p[i]) - 'a' + 10));
	}
	return 0;
}

static char *jr_string(struct jr_parser *ps)
{
	const char *p = ++ps->p; /* past the quote */
	size_t cap = 0;
	while (p[cap] && p[cap] != '"') /* an upper bound of the decoded size */
		cap += p[cap] == '\\' && p[cap + 1] ? 2 : 1;
	char *out = malloc(cap + 1), *o = out;
	if (!out) {
		jr_fail(ps, "out of memory");
		return NULL;
	}
	for (;;) {
		char c = *p++;
		if (!c || (unsigned char)c < 0x20) {
			ps->p = p - 1;
			jr_fail(ps, "unterminated string");
			free(out);
			return NULL;
		}
		if (c == '"')
			break;
		if (c != '\\') {
			*o++ = c;
			continue;
		}
		c = *p++;
		unsigned cp;
		switch (c) {
		case '"': case '\\': case '/': *o++ = c; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (jr_hex4(p, &cp)) {
				ps->p = p;
				jr_fail(ps, "bad \\u escape");
				free(out);
				return NULL;
			}
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && p[0] == '\\' && p[1] == 'u') {
				unsigned lo;
				if (!jr_hex4(p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			jr_utf8(&o, cp); /* \uXXXX is 6 input bytes, at most 4 out */
			break;
		default:
			ps->p = p - 1;
			jr_fail(ps, "bad escape");
			free(out);
			return NULL;
		}
	}
	*o = 0;
	ps->p = p;
	return out;
}

static int jr_number(struct jr_parser *ps, struct jr_val *v)
{
	const char *p = ps->p;
	char *end;
	v->type = JR_NUM;
	if (*p != '-' && !isdigit((unsigned char)*p)) {
		jr_fail(ps, "unexpected character");
		return -1;
	}
	errno = 0;
	v->num = strtod(p, &end);
	if (end == p) {
		jr_fail(ps, "bad number");
		return -1;
	}
	/* an integer without sign, fraction or exponent: keep all 64 bits */
	size_t len = (size_t)(end - p), digits = strspn(p, "0123456789");
	if (digits == len) {
		errno = 0;
		unsigned long long u = strtoull(p, NULL, 10);
		if (!errno) {
			v->u64 = u;
			v->is_uint = 1;
		}
	}
	ps->p = end;
	return 0;
}

static int jr_push(struct jr_parser *ps, struct jr_val *v, size_t *cap, char *key)
{
	if (v->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct jr_val *ni = realloc(v->items, nc * sizeof *ni);
		if (!ni) {
			free(key);
			jr_fail(ps, "out of memory");
			return -1;
		}
		v->items = ni;
		if (v->type == JR_OBJ) {
			char **nk = realloc(v->keys, nc * sizeof *nk);
			if (!nk) {
				free(key);
				jr_fail(ps, "out of memory");
				return -1;
			}
			v->keys = nk;
		}
		*cap = nc;
	}
	memset(&v->items[v->n], 0, sizeof v->items[0]);
	if (v->type == JR_OBJ)
		v->keys[v->n] = key;
	v->n++;
	return 0;
}

static int jr_container(struct jr_parser *ps, struct jr_val *v, int depth, int obj)
{
	size_t cap = 0;
	char close = obj ? '}' : ']';
	v->type = obj ? JR_OBJ : JR_ARR;
	ps->p++;
	jr_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		jr_ws(ps);
		if (obj) {
			if (*ps->p != '"') {
				jr_fail(ps, "expected a key");
				return -1;
			}
			if (!(key = jr_string(ps)))
				return -1;
			jr_ws(ps);
			if (*ps->p != ':') {
				free(key);
				jr_fail(ps, "expected ':'");
				return -1;
			}
			ps->p++;
		}
		if (jr_push(ps, v, &cap, key) || jr_value(ps, &v->items[v->n - 1], depth + 1))
			return -1;
		jr_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		jr_fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		return -1;
	}
}

static int jr_value(struct jr_parser *ps, struct jr_val *v, int depth)
{
	if (depth > JR_MAX_DEPTH) {
		jr_fail(ps, "nested too deeply");
		return -1;
	}
	jr_ws(ps);
	switch (*ps->p) {
	case '{': return jr_container(ps, v, depth, 1);
	case '[': return jr_container(ps, v, depth, 0);
	case '"':
		v->type = JR_STR;
		return (v->str = jr_string(ps)) ? 0 : -1;
	case 't':
	case 'f':
	case 'n': {
		static const struct { const char *w; enum jr_type t; int b; } lit[] = {
			{"true", JR_BOOL, 1}, {"false", JR_BOOL, 0}, {"null", JR_NULL, 0}};
		for (size_t i = 0; i < 3; i++)
			if (!strncmp(ps->p, lit[i].w, strlen(lit[i].w))) {
				v->type = lit[i].t;
				v->boolean = lit[i].b;
				ps->p += strlen(lit[i].w);
				return 0;
			}
		jr_fail(ps, "unexpected word");
		return -1;
	}
	default:
		return jr_number(ps, v);
	}
}

static void jr_free_inner(struct jr_val *v)
{
	free(v->str);
	for (size_t i = 0; i < v->n; i++) {
		jr_free_inner(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void jr_free(struct jr_val *v)
{
	if (!v)
		return;
	jr_free_inner(v);
	free(v);
}

struct jr_val *jr_parse(const char *text, char *err, size_t errlen)
{
	struct jr_parser ps = {.s = text, .p = text, .err = err, .errlen = errlen};
	struct jr_val *v = calloc(1, sizeof *v);
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (jr_value(&ps, v, 0) == 0) {
		jr_ws(&ps);
		if (*ps.p)
			jr_fail(&ps, "trailing characters");
	}
	if (ps.failed) {
		jr_free(v);
		return NULL;
	}
	return v;
}

const struct jr_val *jr_get(const struct jr_val *obj, const char *key)
{
	if (!obj || obj->type != JR_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

int jr_u64(const struct jr_val *obj, const char *key, uint64_t *out)
{
	const struct jr_val *v = jr_get(obj, key);
	if (!v || v->type != JR_NUM || !v->is_uint)
		return -1;
	*out = v->u64;
	return 0;
}

int jr_num(const struct jr_val *obj, const char *key, double *out)
{
	const struct jr_val *v = jr_get(obj, key);
	if (!v || v->type != JR_NUM)
		return -1;
	*out = v->num;
	return 0;
}

const char *jr_str(const struct jr_val *obj, const char *key)
{
	const struct jr_val *v = jr_get(obj, key);
	return v && v->type == JR_STR ? v->str : NULL;
}
