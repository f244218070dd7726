/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c - the tool's input side and the JSON writer's output side.
 *
 * Value parsers (sizes, durations, percentages) decide what a user's
 * "--min 1.5GiB" or "--interval 500ms" means; cli_parse decides which
 * option gets which value and what one line a typo earns (the nearest
 * option's name, by edit distance); jsonw decides
 * whether a command line full of odd bytes still yields JSON a strict
 * parser accepts.  src/cli.c is part of the tool, not the library, so it
 * is compiled into this test directly.
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
#include "analyze/diagconf.c"
#include "format/fmt.c"
#include "format/jsonw.h"

/* ---- capturing what cli_parse prints ------------------------------------ */

struct capture {
	int saved_out, saved_err;
	FILE *out, *err;
	char outbuf[8192], errbuf[2048];
};

static void capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->out = tmpfile();
	c->err = tmpfile();
	assert_non_null(c->out);
	assert_non_null(c->err);
	c->saved_out = dup(1);
	c->saved_err = dup(2);
	dup2(fileno(c->out), 1);
	dup2(fileno(c->err), 2);
}

static void slurp(FILE *f, char *buf, size_t len)
{
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void capture_end(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	dup2(c->saved_out, 1);
	dup2(c->saved_err, 2);
	close(c->saved_out);
	close(c->saved_err);
	slurp(c->out, c->outbuf, sizeof c->outbuf);
	slurp(c->err, c->errbuf, sizeof c->errbuf);
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- parse_size / parse_duration_ms / parse_percent --------------------- */

static void size_ok(const char *s, uint64_t want)
{
	uint64_t b = 12345;
	if (parse_size(s, &b))
		fail_msg("parse_size('%s') rejected", s);
	if (b != want)
		fail_msg("parse_size('%s') = %llu, want %llu", s, (unsigned long long)b,
			 (unsigned long long)want);
}

static void size_bad(const char *s)
{
	uint64_t b = 12345;
	if (!parse_size(s, &b))
		fail_msg("parse_size('%s') accepted as %llu", s ? s : "(null)",
			 (unsigned long long)b);
	assert_int_equal(b, 12345); /* untouched on failure */
}

static void test_parse_size(void **state)
{
	(void)state;
	size_ok("0", 0);
	size_ok("4096", 4096);
	size_ok("1b", 1);
	size_ok("1k", 1024);
	size_ok("1KiB", 1024);
	size_ok("2kb", 2048);
	size_ok("512MiB", 512ull << 20);
	size_ok("512m", 512ull << 20);
	size_ok("10G", 10ull << 30);
	size_ok("1.5GiB", 3ull << 29);
	size_ok("1.5 GiB", 3ull << 29);
	size_ok("2T", 2ull << 40);
	size_ok("2TIB", 2ull << 40);
	size_ok("0.5k", 512);
	size_ok("16777215T", 16777215ull << 40);
	size_bad(NULL);
	size_bad("");
	size_bad(" 1");
	size_bad("-1");
	size_bad("-1GiB");
	size_bad("1X");
	size_bad("1GiBs");
	size_bad("1 G iB");
	size_bad("GiB");
	size_bad("abc");
	size_bad("nan");
	size_bad("inf");
	size_bad("1e400");
	size_bad("16777216T");               /* 2^64: overflow */
	size_bad("18446744073709551616");
	size_bad("99999999999999999999999999G");
}

static void dur_ok(const char *s, int64_t want)
{
	int64_t ms = -7;
	if (parse_duration_ms(s, &ms))
		fail_msg("parse_duration_ms('%s') rejected", s);
	if (ms != want)
		fail_msg("parse_duration_ms('%s') = %lld, want %lld", s, (long long)ms,
			 (long long)want);
}

static void dur_bad(const char *s)
{
	int64_t ms = -7;
	if (!parse_duration_ms(s, &ms))
		fail_msg("parse_duration_ms('%s') accepted as %lld", s ? s : "(null)",
			 (long long)ms);
	assert_int_equal(ms, -7);
}

static void test_parse_duration(void **state)
{
	(void)state;
	dur_ok("10ms", 10);
	dur_ok("1s", 1000);
	dur_ok("2", 2000);                  /* bare number: seconds */
	dur_ok("0.5s", 500);
	dur_ok("0.25", 250);
	dur_ok("1.5m", 90000);
	dur_ok("1min", 60000);
	dur_ok("2h", 7200000);
	dur_ok("1d", 86400000);
	dur_ok("1D", 86400000);
	dur_ok("0", 0);
	dur_ok("100000d", 8640000000000ll);
	dur_bad(NULL);
	dur_bad("");
	dur_bad("-1s");
	dur_bad("1x");
	dur_bad("1ss");
	dur_bad("s");
	dur_bad("ms");
	dur_bad("1 hour");
	dur_bad("nan");
	dur_bad("1e20");                    /* does not fit int64 ms */
	dur_bad("1e12d");
}

static void pct_ok(const char *s, double want)
{
	double f = -1;
	if (parse_percent(s, &f))
		fail_msg("parse_percent('%s') rejected", s);
	if (f < want - 1e-12 || f > want + 1e-12)
		fail_msg("parse_percent('%s') = %g, want %g", s, f, want);
}

static void pct_bad(const char *s)
{
	double f = -1;
	if (!parse_percent(s, &f))
		fail_msg("parse_percent('%s') accepted as %g", s ? s : "(null)", f);
	assert_true(f == -1);
}

static void test_parse_percent(void **state)
{
	(void)state;
	pct_ok("50%", 0.5);
	pct_ok("50 %", 0.5);
	pct_ok("0.1", 0.1);
	pct_ok("100%", 1);
	pct_ok("1", 1);
	pct_ok("0", 0);
	pct_ok("0%", 0);
	pct_ok("12.5%", 0.125);
	/* a bare number above 1 is a percentage (pick --max-util 10);
	 * 1 or less stays a fraction */
	pct_ok("10", 0.10);
	pct_ok("1.5", 0.015);
	pct_ok("100", 1);
	pct_ok("99.5", 0.995);
	pct_ok("1e1", 0.10);
	pct_ok("0.9", 0.9);
	pct_bad(NULL);
	pct_bad("");
	pct_bad("%");
	pct_bad("150%");
	pct_bad("101");
	pct_bad("100.01");
	pct_bad("-5%");
	pct_bad("50%%");
	pct_bad("50 percent");
	pct_bad("x");
	pct_bad("nan");
	pct_bad("inf%");
}

/* ---- cli_parse ----------------------------------------------------------- */

static struct vals {
	int a, b, j;
	const char *g, *w;
	unsigned n;
	uint64_t m;
	int64_t i, iv;
	double p, d, f, pr, u, r;
	unsigned c;
} v;

static const struct opt opts[] = {
	{'a', "all", OPT_FLAG, &v.a, NULL, "flag a"},
	{'b', NULL, OPT_FLAG, &v.b, NULL, "flag b"},
	{0, "json", OPT_FLAG, &v.j, NULL, "json"},
	{'g', "gpus", OPT_STR, &v.g, "LIST", "gpus"},
	{'n', "count", OPT_UINT, &v.n, NULL, "count"},
	{'m', "min", OPT_SIZE, &v.m, NULL, "min size"},
	{'i', "interval", OPT_DURATION, &v.i, NULL, "interval"},
	{'p', "pct", OPT_PERCENT, &v.p, NULL, "percent"},
	{'d', "dbl", OPT_DOUBLE, &v.d, NULL, "double"},
	{0, "iv", OPT_INTERVAL, &v.iv, NULL, "a sampling interval"},
	{0, "speed", OPT_FACTOR, &v.f, NULL, "factor"},
	{0, "prob", OPT_PROB, &v.pr, NULL, "probability"},
	{0, "unit", OPT_UNIT, &v.u, NULL, "0..1"},
	{0, "ratio", OPT_RATIO, &v.r, NULL, ">= 1"},
	{0, "temp", OPT_CELSIUS, &v.c, NULL, "degrees"},
	{0, "when", OPT_CHOICE, &v.w, "WHEN", "a word", "auto always never"},
	OPT_END,
};

#define MAXARGS 16
struct run {
	int rc, nargs;
	char *argv[MAXARGS + 1];
	struct capture cap;
};

/* Runs cli_parse_flags on a NULL-terminated list of words after "cmd". */
static void vparse(struct run *r, unsigned flags, va_list ap)
{
	int argc = 0;
	memset(&v, 0, sizeof v);
	memset(r, 0, sizeof *r);
	r->argv[argc++] = "cmd";
	for (char *s; (s = va_arg(ap, char *)) != NULL && argc < MAXARGS;)
		r->argv[argc++] = s;
	r->nargs = -1;
	capture_start(&r->cap);
	r->rc = cli_parse_flags("cmd", "[OPTIONS]", "About cmd.", opts, flags, argc, r->argv, &r->nargs);
	capture_end(&r->cap);
}

static void parse(struct run *r, ...)
{
	va_list ap;
	va_start(ap, r);
	vparse(r, 0, ap);
	va_end(ap);
}

static void parse_flags(struct run *r, unsigned flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	vparse(r, flags, ap);
	va_end(ap);
}

/* A usage error: one line on stderr naming what, nothing on stdout. */
static void expect_usage(struct run *r, const char *names)
{
	if (r->rc != CLI_USAGE)
		fail_msg("rc %d, want CLI_USAGE; stderr '%s'", r->rc, r->cap.errbuf);
	if (!strstr(r->cap.errbuf, names))
		fail_msg("stderr '%s' does not name '%s'", r->cap.errbuf, names);
	assert_int_equal(lines(r->cap.errbuf), 1);
	assert_string_equal(r->cap.outbuf, "");
	assert_int_equal(cli_parse_exit(r->rc), EXIT_USAGE);
}

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

/* ---- did you mean -------------------------------------------------------- */

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

/* ---- the config file: the same values as the command line ---------------- */

struct conf_run {
	int rc;
	vramz_diag_config cfg;
	struct diag_cmd_conf cc;
	struct capture cap;
};

static void conf(struct conf_run *c, const char *text, size_t len)
{
	memset(c, 0, sizeof *c);
	vramz_diag_config_defaults(&c->cfg);
	capture_start(&c->cap);
	c->rc = diagconf_parse("/etc/cfg", text, len, &c->cfg, &c->cc);
	capture_end(&c->cap);
}

static void conf_bad(const char *text, const char *want)
{
	struct conf_run c;
	conf(&c, text, strlen(text));
	if (c.rc != EXIT_USAGE)
		fail_msg("'%s': rc %d, want EXIT_USAGE", text, c.rc);
	if (!strstr(c.cap.errbuf, want))
		fail_msg("'%s': stderr '%s' does not say '%s'", text, c.cap.errbuf, want);
	assert_int_equal(lines(c.cap.errbuf), 1);
}

static void test_config_values(void **state)
{
	(void)state;
	struct conf_run c;
	const char *ok = "# thresholds\n"
			 "leak-p = 0.01\n"
			 "  leak-min-tau=0.25   # weaker trends too\n"
			 "\n"
			 "leak-min-rise = 128MiB\r\n"
			 "min-severity = warning\n"
			 "mem-temp-max = 90";
	conf(&c, ok, strlen(ok));
	assert_int_equal(c.rc, 0);
	assert_true(c.cfg.leak_p == 0.01);
	assert_true(c.cfg.leak_min_tau == 0.25);
	assert_int_equal(c.cfg.leak_min_rise_bytes, 128u << 20);
	assert_int_equal(c.cfg.mem_temp_max_c, 90);
	assert_string_equal(c.cc.min_severity, "warning");

	/* what the command line refuses, the file refuses, naming FILE:LINE */
	conf_bad("leak-p = nan\n", "/etc/cfg:1: bad value 'nan' for leak-p: want a number above 0 and below 1");
	conf_bad("\nleak-p = inf\n", "/etc/cfg:2: bad value 'inf' for leak-p");
	conf_bad("leak-min-tau = -5\n", "/etc/cfg:1: bad value '-5' for leak-min-tau: want a number from 0 to 1");
	conf_bad("leak-min-rise = 0x1p4\n", "/etc/cfg:1: bad value '0x1p4' for leak-min-rise");
	conf_bad("imbalance-ratio = 0.5\n", "imbalance-ratio: want a number of 1 or more");
	conf_bad("leak-p = 0x1p-4\n", "'0x1p-4' for leak-p");
	conf_bad("mem-temp-max = 4294967295\n", "'4294967295' for mem-temp-max");
	conf_bad("window = soon\n", "/etc/cfg:1: bad value 'soon' for window");
	conf_bad("bogus = 1\n", "/etc/cfg:1: unknown key 'bogus'");
	conf_bad("just words\n", "/etc/cfg:1: expected 'key = value'");
	conf_bad("fail-on = loud\n", "/etc/cfg:1: bad fail-on 'loud'");
}

/* A line over 1023 bytes is an error naming file and line, never split
 * with its tail read as a line of its own (the tail here would be a valid
 * "leak-p = 0.5"). */
static void test_config_long_line(void **state)
{
	(void)state;
	char text[2200];
	size_t n = (size_t)snprintf(text, sizeof text, "leak-p = 0.01\n# ");
	memset(text + n, 'x', 1200 - n);
	n = 1200;
	n += (size_t)snprintf(text + n, sizeof text - n, "leak-p = 0.5\n");
	conf_bad(text, "/etc/cfg:2: line longer than 1023 bytes");

	/* exactly 1023 bytes (without the newline) is still a line */
	struct conf_run c;
	n = (size_t)snprintf(text, sizeof text, "leak-p = 0.02 #");
	memset(text + n, 'y', 1023 - n);
	text[1023] = '\n';
	conf(&c, text, 1024);
	assert_int_equal(c.rc, 0);
	assert_true(c.cfg.leak_p == 0.02);

	conf(&c, "leak-p = 0.5\0leak-p = 0.1\n", 26);
	assert_int_equal(c.rc, EXIT_USAGE);
	assert_non_null(strstr(c.cap.errbuf, "/etc/cfg:1: a NUL byte"));
}

/* ---- jsonw --------------------------------------------------------------- */

static char *escaped(const char *in)
{
	static char buf[1024];
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	assert_non_null(f);
	jw_escape(f, in);
	fclose(f);
	snprintf(buf, sizeof buf, "%s", mem);
	free(mem);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

static void test_jsonw_escaping(void **state)
{
	(void)state;
	assert_string_equal(escaped(""), "\"\"");
	assert_string_equal(escaped("python train.py"), "\"python train.py\"");
	assert_string_equal(escaped("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
	assert_string_equal(escaped("l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
	assert_string_equal(escaped("\x01\x08\x0c\x1f\x7f"),
			    "\"\\u0001\\u0008\\u000c\\u001f\\u007f\"");
	/* valid UTF-8 passes through unchanged */
	assert_string_equal(escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"),
			    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\"");
	assert_string_equal(escaped("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	/* invalid UTF-8: one U+FFFD per bad byte, the rest kept */
	assert_string_equal(escaped("a\xff" "b"), "\"a" FFFD "b\"");
	assert_string_equal(escaped("\xc3"), "\"" FFFD "\"");            /* cut short */
	assert_string_equal(escaped("\xc3x"), "\"" FFFD "x\"");
	assert_string_equal(escaped("\x80"), "\"" FFFD "\"");            /* lone continuation */
	assert_string_equal(escaped("\xc0\xaf"), "\"" FFFD FFFD "\"");   /* overlong '/' */
	assert_string_equal(escaped("\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xf0\x80\x80\xaf"), "\"" FFFD FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\""); /* surrogate */
	assert_string_equal(escaped("\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xf5\x80\x80"), "\"" FFFD FFFD FFFD "\"");
	assert_string_equal(escaped("\xfe\xff"), "\"" FFFD FFFD "\"");
	assert_string_equal(escaped("\xe2\x82"), "\"" FFFD FFFD "\"");
}

static char *doc(void (*body)(struct jsonw *), int pretty)
{
	static char buf[2048];
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	struct jsonw w;
	jw_init(&w, f, pretty);
	body(&w);
	fclose(f);
	snprintf(buf, sizeof buf, "%s", mem);
	free(mem);
	return buf;
}

static void body_nested(struct jsonw *w)
{
	jw_obj(w, NULL);
	jw_u64(w, "u", UINT64_MAX);
	jw_i64(w, "i", INT64_MIN);
	jw_str(w, "s", "x\"y");
	jw_str(w, "nil", NULL);
	jw_bool(w, "t", 1);
	jw_bool(w, "f", 0);
	jw_dbl(w, "d", 12.345, 1);
	jw_dbl(w, "nan", 0.0 / 0.0, 1);
	jw_u64_if(w, "known", 1, 5);
	jw_u64_if(w, "unknown", 0, 5);
	jw_i64_if(w, "neg", 1, -3);
	jw_dbl_if(w, "dn", 0, 1.0, 2);
	jw_arr(w, "empty");
	jw_end_arr(w);
	jw_obj(w, "eo");
	jw_end_obj(w);
	jw_arr(w, "a");
	jw_u64(w, NULL, 1);
	jw_obj(w, NULL);
	jw_arr(w, "in");
	jw_str(w, NULL, "p");
	jw_null(w, NULL);
	jw_end_arr(w);
	jw_end_obj(w);
	jw_u64(w, NULL, 2);
	jw_end_arr(w);
	jw_str(w, "k\ney", "v");
	jw_end_obj(w);
	jw_finish(w);
}

static void body_top_array(struct jsonw *w)
{
	jw_arr(w, NULL);
	jw_obj(w, NULL);
	jw_end_obj(w);
	jw_obj(w, NULL);
	jw_u64(w, "x", 0);
	jw_end_obj(w);
	jw_end_arr(w);
	jw_finish(w);
}

static void test_jsonw_structure(void **state)
{
	(void)state;
	assert_string_equal(doc(body_nested, 0),
			    "{\"u\":18446744073709551615,\"i\":-9223372036854775808,"
			    "\"s\":\"x\\\"y\",\"nil\":null,\"t\":true,\"f\":false,\"d\":12.3,"
			    "\"nan\":null,\"known\":5,\"unknown\":null,\"neg\":-3,\"dn\":null,"
			    "\"empty\":[],\"eo\":{},\"a\":[1,{\"in\":[\"p\",null]},2],"
			    "\"k\\ney\":\"v\"}\n");
	assert_string_equal(doc(body_top_array, 0), "[{},{\"x\":0}]\n");
	assert_string_equal(doc(body_top_array, 1),
			    "[\n  {},\n  {\n    \"x\": 0\n  }\n]\n");
	/* pretty output is the same document, spaced */
	char compact[2048];
	snprintf(compact, sizeof compact, "%s", doc(body_nested, 0));
	const char *pretty = doc(body_nested, 1);
	char squeezed[2048];
	size_t n = 0;
	int in_str = 0;
	for (const char *p = pretty; *p && n + 1 < sizeof squeezed; p++) {
		if (*p == '"' && (p == pretty || p[-1] != '\\'))
			in_str = !in_str;
		if (!in_str && (*p == ' ' || (*p == '\n' && p[1])))
			continue;
		squeezed[n++] = *p;
	}
	squeezed[n] = 0;
	assert_string_equal(squeezed, compact);
}

/* fmt_bytes makes its numbers with integers; they must be printf's own,
 * ties and unit edges included. */
static void ref_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double val = (double)b;
	int u = 0;
	while (val >= 1024 && u < 5) {
		val /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else if (u <= 2)
		snprintf(buf, len, "%.0f %s", val, units[u]);
	else
		snprintf(buf, len, val < 10 ? "%.2f %s" : "%.1f %s", val, units[u]);
}

static void check_bytes(uint64_t b)
{
	char got[32], want[32];
	fmt_bytes(got, sizeof got, b);
	ref_bytes(want, sizeof want, b);
	if (strcmp(got, want)) {
		fprintf(stderr, "fmt_bytes(%llu) = '%s', printf says '%s'\n", (unsigned long long)b, got, want);
		fail();
	}
}

static void test_fmt_bytes_is_printf(void **state)
{
	(void)state;
	for (uint64_t b = 0; b < 5000; b++)
		check_bytes(b);
	for (unsigned sh = 10; sh <= 60; sh++) {
		uint64_t p = 1ull << sh;
		for (int64_t d = -600; d <= 600; d++)
			check_bytes((uint64_t)((int64_t)p + d));
		/* exact ties of %.2f / %.1f / %.0f: b * 100 (or 10, 1) an odd
		 * multiple of half the unit */
		for (uint64_t k = 1; k < 4000; k += 7) {
			check_bytes(k * (p / 200) + p / 400);
			check_bytes(k * (p / 20) + p / 40);
			check_bytes(k * (p / 2));
		}
		for (uint64_t m = 9; m <= 11; m++)
			for (int64_t d = -3000; d <= 3000; d += 3)
				check_bytes((uint64_t)((int64_t)(m * p) + d));
	}
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		check_bytes(x >> (x % 64)); /* every magnitude */
	}
	char small[8];
	fmt_bytes(small, sizeof small, 1536ull << 20); /* a short buffer: cut, not overrun */
	assert_string_equal(small, "1.50 Gi");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_parse_percent),
		cmocka_unit_test(test_flags_and_values),
		cmocka_unit_test(test_positionals_and_dashdash),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_decimal_only),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_suggestions),
		cmocka_unit_test(test_color_when),
		cmocka_unit_test(test_config_values),
		cmocka_unit_test(test_config_long_line),
		cmocka_unit_test(test_jsonw_escaping),
		cmocka_unit_test(test_fmt_bytes_is_printf),
		cmocka_unit_test(test_jsonw_structure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
