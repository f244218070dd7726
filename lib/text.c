/* SPDX-License-Identifier: Apache-2.0 */
/* text.c - the one sanitizer for text that may reach a terminal (text.h).
 *
 * Replacing, not dropping: a '?' shows the reader that something was there,
 * and keeps the text's length close to what a width was computed for.  The
 * common case (printable ASCII) costs one comparison a byte. */
#include "text.h"

#include <string.h>

size_t text_utf8(const unsigned char *s, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
	size_t n;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07u;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0; /* overlong below U+0800 */
	else if (s[0] == 0xed)
		hi = 0x9f; /* surrogates U+D800..DFFF */
	else if (s[0] == 0xf0)
		lo = 0x90; /* overlong below U+10000 */
	else if (s[0] == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	*cp = c;
	return n;
}

int text_cp_unsafe(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 1;
	if (cp < 0x61c)
		return 0;
	return cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

size_t text_sanitize(char *str)
{
	unsigned char *r = (unsigned char *)str, *w;
	size_t bad = 0, n;
	uint32_t cp = 0;

	/* the common case, printable ASCII to the end: read, never written */
	while (*r >= 0x20 && *r < 0x7f)
		r++;
	for (w = r; *r;) {
		if (*r >= 0x20 && *r < 0x7f) {
			*w++ = *r++;
		} else if ((n = text_utf8(r, &cp)) == 0 || text_cp_unsafe(cp)) {
			*w++ = '?';
			r += n ? n : 1;
			bad++;
		} else {
			memmove(w, r, n);
			w += n;
			r += n;
		}
	}
	*w = '\0';
	return bad;
}

void text_copy_n(char *dst, size_t cap, const char *s, size_t n)
{
	if (!cap)
		return;
	if (n > cap - 1) {
		n = cap - 1;
		/* cut at a character boundary, not inside a sequence */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
	text_sanitize(dst); /* a NUL inside s ends the text there */
}

const char *text_safe(char *buf, size_t len, const char *s)
{
	text_copy_n(buf, len, s, strlen(s));
	return buf;
}
