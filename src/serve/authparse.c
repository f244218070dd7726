/* SPDX-License-Identifier: Apache-2.0 */
/* authparse.c - basic authentication's header (authparse.h): the scheme,
 * base64 (RFC 4648, padding optional only as a whole), one colon.
 * Everything is bounded by SERVE_AUTH_CRED_MAX before it is decoded. */
#include "serve/authparse.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#define CRED_MAX SERVE_AUTH_CRED_MAX

static int decode64(const char *in, unsigned char *out, size_t cap, size_t *outlen)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0, i = 0;
	for (; in[i] && in[i] != '='; i++) {
		const char *p = strchr(alpha, in[i]);
		if (!p)
			return -1;
		acc = acc << 6 | (uint32_t)(p - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			out[n++] = (unsigned char)(acc >> bits);
		}
	}
	size_t pad = 0;
	while (in[i] == '=')
		i++, pad++;
	if (in[i] || pad > 2 || (i % 4) != 0)
		return -1;
	*outlen = n;
	return 0;
}

int serve_auth_parse(const char *header, char *buf, size_t buflen, const char **user,
		     const char **pass)
{
	if (!header || strncasecmp(header, "Basic ", 6))
		return -1;
	const char *p = header + 6;
	while (*p == ' ')
		p++;
	size_t tl = strlen(p);
	while (tl && (p[tl - 1] == ' ' || p[tl - 1] == '\t'))
		tl--;
	char tok[(CRED_MAX + 2) / 3 * 4 + 8];
	if (!tl || tl >= sizeof tok || buflen < 2)
		return -1;
	memcpy(tok, p, tl);
	tok[tl] = 0;
	size_t n;
	if (decode64(tok, (unsigned char *)buf, buflen - 1, &n))
		return -1;
	buf[n] = 0;
	char *colon = memchr(buf, ':', n);
	if (!colon || memchr(buf, 0, n))
		return -1;
	*colon = 0;
	*user = buf;
	*pass = colon + 1;
	return 0;
}
