/* SPDX-License-Identifier: Apache-2.0 */
/* test_agentfile_cases.c - lib/agent.c's reading of a figures file against
 * tests/agentfile-cases.txt, the table the Python reader is tested on too
 * (tests/python/test_agentfile.py): the two readers agree on every
 * malformed file there (issue 25, item 7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent.h"

/* The escapes of the table (\n \r \v \t \\ \xHH) into out; its length. */
static size_t unescape(const char *s, char *out)
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

static void fig(char *buf, size_t len, const struct agent_figures *f, int stat)
{
	if (f->ndev && (f->dev[0].valid >> stat & 1))
		snprintf(buf, len, "%llu", (unsigned long long)f->dev[0].v[stat]);
	else
		snprintf(buf, len, "-");
}

static void test_table(void **state)
{
	(void)state;
	const char *src = getenv("TESTS_SRC");
	char path[512], line[4096], text[4096], got[256];
	snprintf(path, sizeof path, "%s/agentfile-cases.txt", src ? src : "tests");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	unsigned cases = 0, bad = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *name = line, *t1 = strchr(name, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		assert_non_null(t2);
		*t1 = *t2 = 0;
		size_t n = unescape(t1 + 1, text);
		struct agent_figures a;
		if (agent_parse(text, n, &a)) {
			snprintf(got, sizeof got, "refused");
		} else {
			char al[32], re[32];
			fig(al, sizeof al, &a, AS_ALLOCATED);
			fig(re, sizeof re, &a, AS_RESERVED);
			snprintf(got, sizeof got, "pid=%u start=%llu allocated=%s reserved=%s", a.pid,
				 (unsigned long long)a.start_time_ticks, al, re);
		}
		cases++;
		if (strcmp(got, t2 + 1)) {
			fprintf(stderr, "agentfile-cases.txt: %s: got '%s', want '%s'\n", name, got, t2 + 1);
			bad++;
		}
	}
	fclose(f);
	assert_true(cases >= 30);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
