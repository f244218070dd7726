/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_options.c - cli_parse: which option gets which value, and what
 * one line a mistake earns.
 *
 * Flags grouped or not, values attached or next, positionals and --, -h,
 * every usage error (one line on stderr naming the word, nothing on
 * stdout, exit 2), numbers decimal only, the ranged types and OPT_CHOICE,
 * and how --color, --no-color and NO_COLOR combine.  The values' own
 * grammar: test_cli_values.c; the "did you mean" of an unknown option:
 * test_cli_typos.c.  src/cli.c is the tool's, compiled in directly; the
 * option table and the harness are cli_harness.h's.
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

static void test_flags_and_values(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "-a", "-b", "--json", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.a && v.b && v.j);
	assert_int_equal(r.nargs, 0);
	assert_int_equal(cli_parse_exit(r.rc), -1);

	parse(&r, "-ab", NULL);                     /* grouped */
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.a && v.b && !v.j);

	parse(&r, "-abg0,1", NULL);                 /* grouped, value attached */
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.a && v.b);
	assert_string_equal(v.g, "0,1");

	parse(&r, "-bg", "2-3", NULL);              /* grouped, value next */
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.b && !v.a);
	assert_string_equal(v.g, "2-3");

	parse(&r, "-g", "GPU-8f", "--count", "7", "--min=1GiB", "-i500ms", "--pct", "25%",
	      "--dbl=2.5", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_string_equal(v.g, "GPU-8f");
	assert_int_equal(v.n, 7);
	assert_int_equal(v.m, 1ull << 30);
	assert_int_equal(v.i, 500);
	assert_true(v.p == 0.25 && v.d == 2.5);

	parse(&r, "--gpus=", NULL);                 /* an empty value is a value */
	assert_int_equal(r.rc, CLI_OK);
	assert_string_equal(v.g, "");

	parse(&r, "--gpus=a=b", NULL);              /* only the first = splits */
	assert_string_equal(v.g, "a=b");

	parse(&r, "-g", "-a", NULL);                /* a value may look like a flag */
	assert_int_equal(r.rc, CLI_OK);
	assert_string_equal(v.g, "-a");
	assert_false(v.a);

	parse(&r, "-n", "4294967295", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(v.n, 4294967295u);
}

static void test_positionals_and_dashdash(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "x", "-a", "y", "-", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(r.nargs, 3);
	assert_string_equal(r.argv[0], "x");
	assert_string_equal(r.argv[1], "y");
	assert_string_equal(r.argv[2], "-");
	assert_true(v.a);

	parse(&r, "-a", "--", "-b", "--json", "-h", "z", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_false(v.b || v.j);
	assert_int_equal(r.nargs, 4);
	assert_string_equal(r.argv[0], "-b");
	assert_string_equal(r.argv[1], "--json");
	assert_string_equal(r.argv[2], "-h");
	assert_string_equal(r.argv[3], "z");
	assert_string_equal(r.cap.outbuf, "");      /* -h after -- is no help */

	parse(&r, "--", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(r.nargs, 0);
}

static void test_help(void **state)
{
	(void)state;
	const char *forms[] = {"-h", "--help"};
	for (int k = 0; k < 2; k++) {
		struct run r;
		parse(&r, "-a", forms[k], "--bogus", NULL); /* help wins, stops parsing */
		assert_int_equal(r.rc, CLI_HELP);
		assert_int_equal(cli_parse_exit(r.rc), EXIT_OK);
		assert_string_equal(r.cap.errbuf, "");
		assert_non_null(strstr(r.cap.outbuf, "usage: vramz cmd [OPTIONS]"));
		assert_non_null(strstr(r.cap.outbuf, "About cmd."));
		/* every option of the table is listed, with its argument */
		assert_non_null(strstr(r.cap.outbuf, "-a, --all"));
		assert_non_null(strstr(r.cap.outbuf, "-b "));
		assert_non_null(strstr(r.cap.outbuf, "--json"));
		assert_non_null(strstr(r.cap.outbuf, "-g, --gpus LIST"));
		assert_non_null(strstr(r.cap.outbuf, "--min SIZE"));
		assert_non_null(strstr(r.cap.outbuf, "--interval DURATION"));
		assert_non_null(strstr(r.cap.outbuf, "--pct PCT"));
		assert_non_null(strstr(r.cap.outbuf, "-h, --help"));
	}
}

static void test_usage_errors(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "--bogus", NULL);
	expect_usage(&r, "unknown option '--bogus'");
	parse(&r, "--gpu", "0", NULL);              /* no abbreviations */
	expect_usage(&r, "'--gpu'");
	parse(&r, "--bogus=1", NULL);
	expect_usage(&r, "'--bogus'");
	parse(&r, "-x", NULL);
	expect_usage(&r, "unknown option '-x'");
	parse(&r, "-abx", NULL);
	expect_usage(&r, "'-x'");
	parse(&r, "-g", NULL);
	expect_usage(&r, "-g needs a value");
	parse(&r, "--gpus", NULL);
	expect_usage(&r, "--gpus needs a value");
	parse(&r, "-ag", NULL);
	expect_usage(&r, "-g needs a value");
	parse(&r, "--json=1", NULL);
	expect_usage(&r, "--json takes no value");
	parse(&r, "--all=", NULL);
	expect_usage(&r, "--all takes no value");
	parse(&r, "-n", "x", NULL);
	expect_usage(&r, "'x'");
	parse(&r, "--count=-1", NULL);
	expect_usage(&r, "'-1'");
	parse(&r, "-n", "4294967296", NULL);
	expect_usage(&r, "'4294967296'");
	parse(&r, "-n", " 1", NULL);
	expect_usage(&r, "' 1'");
	parse(&r, "-m", "1XB", NULL);
	expect_usage(&r, "bad SIZE '1XB' for -m");
	parse(&r, "--interval=soon", NULL);
	expect_usage(&r, "bad DURATION 'soon' for --interval");
	parse(&r, "-p", "150%", NULL);
	expect_usage(&r, "'150%'");
	parse(&r, "-d", "1e400", NULL);
	expect_usage(&r, "'1e400'");
	parse(&r, "-d", "nan", NULL);
	expect_usage(&r, "'nan'");
	parse(&r, "-d", "", NULL);
	expect_usage(&r, "''");
}

/* Numbers are decimal: strtod's hex floats, inf and nan mean nothing a
 * user types on purpose, so every numeric type refuses them. */
static void test_decimal_only(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "--dbl", "0x1p4", NULL);
	expect_usage(&r, "bad VALUE '0x1p4' for --dbl");
	parse(&r, "--dbl", "0x10", NULL);
	expect_usage(&r, "'0x10'");
	parse(&r, "--dbl", "inf", NULL);
	expect_usage(&r, "'inf'");
	parse(&r, "--dbl", "-nan", NULL);
	expect_usage(&r, "'-nan'");
	parse(&r, "--dbl", " 1", NULL);
	expect_usage(&r, "' 1'");
	parse(&r, "-m", "0x1p4GiB", NULL);
	expect_usage(&r, "'0x1p4GiB'");
	parse(&r, "-i", "0x10s", NULL);
	expect_usage(&r, "'0x10s'");
	parse(&r, "-p", "0x1p-2", NULL);
	expect_usage(&r, "'0x1p-2'");
	parse(&r, "--dbl", "-2.5e1", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.d == -25);
	parse(&r, "--dbl", ".5", "-m", "1.5e3", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.d == 0.5);
	assert_int_equal(v.m, 1500);
}

/* Ranged types: the error names the option, the value and what fits. */
static void test_ranges(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "--iv", "0", NULL);
	expect_usage(&r, "bad value '0' for --iv: want a duration from 10ms to 1h");
	parse(&r, "--iv", "9ms", NULL);
	expect_usage(&r, "'9ms' for --iv");
	parse(&r, "--iv", "2h", NULL);
	expect_usage(&r, "'2h' for --iv");
	parse(&r, "--iv", "10ms", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(v.iv, CLI_MIN_INTERVAL_MS);
	parse(&r, "--iv", "1h", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(v.iv, 3600000);

	parse(&r, "--speed", "-1", NULL);
	expect_usage(&r, "bad value '-1' for --speed: want a factor above 0");
	parse(&r, "--speed", "0", NULL);
	expect_usage(&r, "'0' for --speed");
	parse(&r, "--speed", "0.25", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_true(v.f == 0.25);

	parse(&r, "--prob", "0", NULL);
	expect_usage(&r, "'0' for --prob: want a number above 0 and below 1");
	parse(&r, "--prob", "1", NULL);
	expect_usage(&r, "'1' for --prob");
	parse(&r, "--prob", "nan", NULL);
	expect_usage(&r, "'nan' for --prob");
	parse(&r, "--prob", "0.01", NULL);
	assert_int_equal(r.rc, CLI_OK);

	parse(&r, "--unit", "-5", NULL);
	expect_usage(&r, "bad value '-5' for --unit: want a number from 0 to 1");
	parse(&r, "--unit", "1.01", NULL);
	expect_usage(&r, "'1.01' for --unit");
	parse(&r, "--unit", "0x1p-1", NULL);
	expect_usage(&r, "'0x1p-1'");
	parse(&r, "--unit", "0", NULL);
	assert_int_equal(r.rc, CLI_OK);

	parse(&r, "--ratio", "0.9", NULL);
	expect_usage(&r, "'0.9' for --ratio: want a number of 1 or more");
	parse(&r, "--temp", "201", NULL);
	expect_usage(&r, "'201' for --temp: want a whole number from 0 to 200");
	parse(&r, "--temp", "95", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_int_equal(v.c, 95);
}

/* OPT_CHOICE: one of the table's words (what --color takes), the error
 * listing them. */
static void test_choice(void **state)
{
	(void)state;
	struct run r;
	parse(&r, "--when=always", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_string_equal(v.w, "always");
	parse(&r, "--when", "never", NULL);
	assert_int_equal(r.rc, CLI_OK);
	assert_string_equal(v.w, "never");
	parse(&r, "--when=purple", NULL);
	expect_usage(&r, "bad value 'purple' for --when: want one of auto always never");
	parse(&r, "--when=alway", NULL);            /* a prefix is no word */
	expect_usage(&r, "'alway'");
	parse(&r, "--when=", NULL);
	expect_usage(&r, "''");
	parse(&r, "--when=auto always", NULL);      /* two words are not one */
	expect_usage(&r, "'auto always'");
}

/* ---- colour: --color, --no-color, NO_COLOR -------------------------------- */

static void test_color_when(void **state)
{
	(void)state;
	struct gopts saved = g_opts;
	FILE *f = tmpfile(); /* not a terminal */
	assert_non_null(f);
	unsetenv("NO_COLOR");
	g_opts.color = NULL;
	g_opts.no_color = 0;
	assert_int_equal(cli_color_when(), CLI_COLOR_AUTO);
	assert_int_equal(cli_color(f), 0);          /* auto: a file gets none */
	g_opts.color = "always";
	assert_int_equal(cli_color_when(), CLI_COLOR_ALWAYS);
	assert_int_equal(cli_color(f), 1);          /* always: into a pipe too */
	setenv("NO_COLOR", "1", 1);
	assert_int_equal(cli_color(f), 1);          /* the command line beats NO_COLOR */
	setenv("TERM", "dumb", 1);
	assert_int_equal(cli_color(f), 1);
	g_opts.color = "auto";
	assert_int_equal(cli_color_when(), CLI_COLOR_NEVER); /* auto honours NO_COLOR */
	setenv("NO_COLOR", "", 1);                  /* empty is unset */
	assert_int_equal(cli_color_when(), CLI_COLOR_AUTO);
	g_opts.color = "never";
	assert_int_equal(cli_color_when(), CLI_COLOR_NEVER);
	g_opts.color = "always";
	g_opts.no_color = 1;                        /* --no-color: never */
	assert_int_equal(cli_color_when(), CLI_COLOR_NEVER);
	assert_int_equal(cli_color(f), 0);
	fclose(f);
	g_opts = saved;
	setenv("NO_COLOR", "1", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_and_values),
		cmocka_unit_test(test_positionals_and_dashdash),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_decimal_only),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_color_when),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
