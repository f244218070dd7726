/* SPDX-License-Identifier: Apache-2.0 */
/* prombuf.c - what both Prometheus renderers write with (prom.h): the
 * text buffer, label values, exact decimal values, and a GPU's identity
 * and driver read from the input.
 *
 * Below prom.c (vramz's own series) and prom_dcgm.c (dcgm-exporter's
 * names): both call down into this file, neither into the other's
 * helpers, so the two renderers do not call into each other
 * (lint.callgraph).
 */
#include "format/prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* ---- buffer ------------------------------------------------------------ */

void prom_buf_init(struct prom_buf *b)
{
	memset(b, 0, sizeof *b);
}

void prom_buf_reset(struct prom_buf *b)
{
	b->len = 0;
	b->oom = 0;
	if (b->p)
		b->p[0] = 0;
}

void prom_buf_free(struct prom_buf *b)
{
	free(b->p);
	prom_buf_init(b);
}

static int buf_reserve(struct prom_buf *b, size_t extra)
{
	if (b->oom)
		return -1;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap : 4096;
	while (ncap < b->len + extra + 1)
		ncap *= 2;
	char *np = realloc(b->p, ncap);
	if (!np) {
		b->oom = 1;
		return -1;
	}
	b->p = np;
	b->cap = ncap;
	return 0;
}

void prom_buf_put(struct prom_buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

void prom_buf_puts(struct prom_buf *b, const char *s)
{
	prom_buf_put(b, s, strlen(s));
}

void prom_buf_printf(struct prom_buf *b, const char *fmt, ...)
{
	va_list ap;
	if (buf_reserve(b, 64))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (buf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void prom_buf_label_value(struct prom_buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		const unsigned char *run = s;
		/* copy the longest run that needs no escaping in one go */
		while (*s && *s != '\\' && *s != '"' && *s != '\n' && *s < 0x80)
			s++;
		prom_buf_put(b, (const char *)run, (size_t)(s - run));
		if (!*s)
			break;
		if (*s == '\\' || *s == '"' || *s == '\n') {
			prom_buf_put(b, *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : "\\n", 2);
			s++;
			continue;
		}
		uint32_t cp;
		size_t n = text_utf8(s, &cp);
		if (n && !text_cp_unsafe(cp)) {
			prom_buf_put(b, (const char *)s, n);
			s += n;
		} else {
			prom_buf_put(b, "\xef\xbf\xbd", 3); /* U+FFFD */
			s += n ? n : 1;
		}
	}
}

/* ---- values ------------------------------------------------------------ */

/* Writes v * scale.  When scale is a power of ten the result is an exact
 * decimal; otherwise the shortest %g that round-trips well enough. */
void prom_buf_scaled(struct prom_buf *b, int64_t v, double scale)
{
	int e = (int)lround(log10(scale));
	if (fabs(scale - pow(10, e)) > 1e-12 * fabs(scale) || e > 12 || e < -12) {
		prom_buf_printf(b, "%.15g", (double)v * scale);
		return;
	}
	int neg = v < 0;
	uint64_t u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	if (e >= 0) {
		prom_buf_printf(b, "%s%llu", neg ? "-" : "", (unsigned long long)u);
		for (int i = 0; i < e && u; i++)
			prom_buf_put(b, "0", 1);
		return;
	}
	uint64_t div = 1;
	for (int i = 0; i < -e; i++)
		div *= 10;
	uint64_t ip = u / div, fp = u % div;
	prom_buf_printf(b, "%s%llu", neg && u ? "-" : "", (unsigned long long)ip);
	if (!fp)
		return;
	char frac[24];
	int digits = -e; /* at most 12, checked above */
	for (int i = digits - 1; i >= 0; i--, fp /= 10)
		frac[i] = (char)('0' + fp % 10);
	while (digits > 0 && frac[digits - 1] == '0')
		digits--;
	prom_buf_printf(b, ".%.*s", digits, frac);
}

/* ---- the input --------------------------------------------------------- */

const vramz_gpu_info *prom_info_of(const struct prom_input *in, unsigned idx)
{
	return in->info && idx < in->info_count ? &in->info[idx] : NULL;
}

/* The driver of GPU idx: its backend's; without backends, the system's. */
const char *prom_driver_of(const struct prom_input *in, unsigned idx)
{
	for (unsigned k = 0; k < in->backend_count; k++) {
		const vramz_backend_info *bk = &in->backends[k];
		if (idx >= bk->gpu_first && idx - bk->gpu_first < bk->gpu_count)
			return bk->driver_version;
	}
	return in->backend_count || !in->sys ? NULL : in->sys->driver_version;
}
