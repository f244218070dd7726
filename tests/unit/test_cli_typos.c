/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_typos.c - what a mistyped option earns: the nearest option's
 * name, by edit distance (cli_distance, with a swap of two neighbours as
 * one edit), only when it is near enough (cli_close_enough), else where to
 * look; at the top level, nothing printed and the word handed back
 * (cli_unknown) for src/main.c to say, since a command may be the nearer
 * word there.  src/cli.c is the tool's, compiled in directly; the harness
 * is cli_harness.h's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.c"

#include "cli_harness.h"

static void test_distance(void **state)
{
	(void)state;
	struct {
		const char *a, *b;
		unsigned d; /* at limit 2: 3 means "more than 2" */
	} cases[] = {
		{"status", "status", 0},
		{"statsu", "status", 1},   /* two neighbours swapped: one edit */
		{"stauts", "status", 1},
		{"jsn", "json", 1},
		{"jsno", "json", 1},
		{"tpo", "top", 1},
		{"tpo", "topo", 1},
		{"colour", "color", 1},
		{"stat", "status", 2},
		{"sttaus", "status", 1},   /* "ta" for "at" */
		{"sattsu", "status", 2},   /* two swaps */
		{"", "ps", 2},
		{"abc", "xyz", 3},
		{"analyse", "analyze", 1},
		{"memory.usd", "memory.used", 1},
		{"reverse", "esrever", 3},
		{"a-very-long-option-name-indeed", "json", 3}, /* lengths alone say */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned d = cli_distance(cases[i].a, strlen(cases[i].a), cases[i].b, 2);
		if (d != cases[i].d)
			fail_msg("distance('%s', '%s') = %u, want %u", cases[i].a, cases[i].b, d,
				 cases[i].d);
	}
	/* the length given counts, not the NUL: "jsnX" cut to 3 is "jsn" */
	assert_int_equal(cli_distance("jsnX", 3, "json", 2), 1);
	/* a larger limit sees farther */
	assert_int_equal(cli_distance("abc", 3, "xyz", 5), 3);
	/* close enough: one edit up to 4 characters, two beyond */
	assert_true(cli_close_enough(1, 3));
	assert_true(cli_close_enough(1, 1));
	assert_false(cli_close_enough(2, 2));  /* "bs" is no typo of "dbl" */
	assert_false(cli_close_enough(2, 4));
	assert_true(cli_close_enough(2, 5));
	assert_false(cli_close_enough(3, 10));
}

static void test_suggestions(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "--jsn", NULL);
	expect_usage(&r, "cmd: unknown option '--jsn'; did you mean '--json'?");
	parse(&r, "--cuont=3", NULL);
	expect_usage(&r, "unknown option '--cuont'; did you mean '--count'?");
	parse(&r, "--intreval", "1s", NULL);
	expect_usage(&r, "did you mean '--interval'?");
	parse(&r, "--zzz", NULL);                   /* nothing near: where to look */
	expect_usage(&r, "unknown option '--zzz' (see vramz cmd -h)");
	assert_null(strstr(r.cap.errbuf, "did you mean"));
	parse(&r, "-x", NULL);                      /* a letter is near every letter */
	expect_usage(&r, "unknown option '-x' (see vramz cmd -h)");
	assert_null(strstr(r.cap.errbuf, "did you mean"));
	parse_flags(&r, CLI_STOP_AT_ARG, "--bs", "8", NULL);
	expect_usage(&r, "(see vramz cmd -h; options go before the command, or after --");

	/* without a command the caller says it: nothing printed, the word kept */
	parse_flags(&r, CLI_TOPLEVEL, "-a", "--jsn", NULL);
	assert_int_equal(r.rc, CLI_UNKNOWN);
	assert_int_equal(cli_parse_exit(r.rc), EXIT_USAGE);
	assert_string_equal(r.cap.errbuf, "");
	assert_string_equal(r.cap.outbuf, "");
	const char *near = NULL;
	assert_string_equal(cli_unknown(&near), "--jsn");
	assert_non_null(near);
	assert_string_equal(near, "json");
	parse_flags(&r, CLI_TOPLEVEL, "-q", NULL);
	assert_int_equal(r.rc, CLI_UNKNOWN);
	assert_string_equal(cli_unknown(&near), "-q");
	assert_null(near);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_suggestions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
