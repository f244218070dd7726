/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_values.c - the value parsers and the size printer of the tool.
 *
 * parse_size, parse_duration_ms and parse_percent decide what a user's
 * "--min 1.5GiB", "--interval 500ms" or "--max-util 10" means, and leave
 * the result untouched when they refuse; fmt_bytes prints sizes back and
 * must print exactly what printf would.  src/cli.c and src/format/fmt.c
 * are part of the tool, not the library, so they are compiled in directly.
 * The option parser around these: test_cli_options.c.
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
#include "format/fmt.c"

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
		cmocka_unit_test(test_fmt_bytes_is_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
