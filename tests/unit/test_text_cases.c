/* SPDX-License-Identifier: Apache-2.0 */
/* test_text_cases.c - lib/text.c's sanitizer against tests/text-cases.txt,
 * the table python/vramz/_text.py is tested on too (issue 25, item 2),
 * and text_safe's cut at a character boundary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cases.h"
#include "text.h"

static void test_table(void **state)
{
	(void)state;
	char line[1024], in[512], want[512], *fld[3];
	FILE *f = cases_open("text-cases.txt");
	assert_non_null(f);
	unsigned cases = 0, bad = 0;
	int rc;
	while ((rc = cases_next(f, line, sizeof line, fld)) > 0) {
		cases_unescape(fld[1], in);
		cases_unescape(fld[2], want);
		text_sanitize(in);
		cases++;
		if (strcmp(in, want)) {
			fprintf(stderr, "text-cases.txt: %s: got '%s'\n", line, in);
			bad++;
		}
	}
	fclose(f);
	assert_int_equal(rc, 0); /* every row had its three fields */
	assert_true(cases >= 18);
	assert_int_equal(bad, 0);
}

static void test_safe_cuts_whole_characters(void **state)
{
	(void)state;
	char b[6];
	/* "ab" then U+65E5 (3 bytes) then U+672C: 5 bytes fit, the second
	 * character would be cut, so it is left out, never shown as '?' */
	assert_string_equal(text_safe(b, sizeof b, "ab\xe6\x97\xa5\xe6\x9c\xac"), "ab\xe6\x97\xa5");
	assert_string_equal(text_safe(b, 4, "ab\xe6\x97\xa5"), "ab");
	assert_string_equal(text_safe(b, sizeof b, "\x1b[2J"), "?[2J");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_safe_cuts_whole_characters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
