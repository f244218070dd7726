/* SPDX-License-Identifier: Apache-2.0 */
/* gzip.h - Content-Encoding: gzip for the exporter's answers.
 *
 * A /metrics body of 8 GPUs with processes is about 25 KB, scraped every
 * second or so on every node; as text it compresses about tenfold.
 * Prometheus sends `Accept-Encoding: gzip` on every scrape, so the body
 * is compressed once per sample (serve/http.c), not once per scrape.
 */
#ifndef VRAMZ_SERVE_GZIP_H
#define VRAMZ_SERVE_GZIP_H

#include <stddef.h>

/* Bodies shorter than this go out as they are: gzip's 18-byte frame and
 * the CPU are not worth it for a /health "ok". */
#define SERVE_GZIP_MIN_BYTES 256

/* 1 when an Accept-Encoding header value (NULL: no header) accepts gzip:
 * "gzip" or "x-gzip" with a q-value above 0, or "*" with one when gzip is
 * not named with q=0 (RFC 9110, 12.5.3). */
int serve_accepts_gzip(const char *accept_encoding);

/* Compresses len bytes of in into a malloc()ed gzip member in *out.
 * 0, or -1 (out of memory, or zlib failed: send the body as it is). */
int serve_gzip(const char *in, size_t len, char **out, size_t *outlen);

#endif
