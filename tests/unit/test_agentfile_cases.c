/* SPDX-License-Identifier: Apache-2.0 */
/* test_agentfile_cases.c - lib/agentparse.c's reading of a figures file against
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
#include "cases.h"

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
	char line[4096], text[4096], got[256], *fld[3];
	FILE *f = cases_open("agentfile-cases.txt");
	assert_non_null(f);
	unsigned cases = 0, bad = 0;
	int rc;
	while ((rc = cases_next(f, line, sizeof line, fld)) > 0) {
		const char *name = fld[0], *want = fld[2];
		size_t n = cases_unescape(fld[1], text);
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
		if (strcmp(got, want)) {
			fprintf(stderr, "agentfile-cases.txt: %s: got '%s', want '%s'\n", name, got, want);
			bad++;
		}
	}
	fclose(f);
	assert_int_equal(rc, 0); /* every row had its three fields */
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
