/* SPDX-License-Identifier: Apache-2.0 */
/* cases.h - the tables of cases the C and Python sides are both tested on
 * (tests/NAME-cases.txt): a row is NAME, then two fields, tab-separated, with
 * the escapes \n \r \v \t \\ and \xHH; blank lines and # comments are
 * skipped.  tests/python/_cases.py reads them the same way. */
#ifndef VRAMZ_TEST_CASES_H
#define VRAMZ_TEST_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The table tests/NAME ($TESTS_SRC, as ctest sets it), or NULL. */
static inline FILE *cases_open(const char *name)
{
	const char *src = getenv("TESTS_SRC");
	char path[512];
	snprintf(path, sizeof path, "%s/%s", src ? src : "tests", name);
	return fopen(path, "r");
}

/* The next row into line (len bytes): 1 with f[0..2] pointing at its
 * three fields, 0 at the end; -1 on a row without three fields. */
static inline int cases_next(FILE *t, char *line, size_t len, char *f[3])
{
	while (fgets(line, (int)len, t)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t2)
			return -1;
		*t1 = *t2 = 0;
		f[0] = line;
		f[1] = t1 + 1;
		f[2] = t2 + 1;
		return 1;
	}
	return 0;
}

/* A field's escapes undone into out (as long as the field at most, plus
 * the terminating 0); its length. */
static inline size_t cases_unescape(const char *s, char *out)
{
	size_t n = 0;
	while (*s) {
		if (*s != '\\') {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': out[n++] = '\n'; s++; break;
		case 'r': out[n++] = '\r'; s++; break;
		case 'v': out[n++] = '\v'; s++; break;
		case 't': out[n++] = '\t'; s++; break;
		case 'x': {
			char h[3] = {s[1], s[2], 0};
			out[n++] = (char)strtol(h, NULL, 16);
			s += 3;
			break;
		}
		default: out[n++] = *s++;
		}
	}
	out[n] = 0;
	return n;
}

#endif
