/* SPDX-License-Identifier: Apache-2.0 */
/* test_fmt.c - fmt_snprintf (src/format/fmt.c), the printf of `vramz top`'s
 * frames, writes the same bytes and returns the same count as glibc's
 * snprintf for every format it takes itself, at every buffer size (cut
 * output included), and hands every other format to glibc: checked on
 * hundreds of thousands of random formats and values, and on the cases
 * where a hand-made printf goes wrong (ties in %.Nf, -0.0, INT_MIN,
 * LLONG_MIN, negative '*' widths and precisions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/types.h>
#include <wchar.h>

#include "cli.c" /* the tool's, not in a library: fmt.c uses cli.c */
#include "format/fmt.c"

/* random formats, and flags printf ignores, on purpose */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat"
#pragma GCC diagnostic ignored "-Wformat-security"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned failures;

/* Both printfs at every buffer length up to the output's + 2, and len 0. */
#define SAME(...)                                                                                 \
	do {                                                                                      \
		char want[512], got[512];                                                         \
		int w = snprintf(want, sizeof want, __VA_ARGS__);                                 \
		for (size_t len = 0; len <= (size_t)(w < 0 ? 0 : w) + 2 && len <= sizeof want;   \
		     len = len < 24 ? len + 1 : len + 7) {                                        \
			char a[512], b[512];                                                      \
			memset(a, '#', sizeof a);                                                 \
			memset(b, '#', sizeof b);                                                 \
			int ra = snprintf(a, len, __VA_ARGS__);                                   \
			int rb = fmt_snprintf(b, len, __VA_ARGS__);                               \
			if (ra != rb || memcmp(a, b, sizeof a)) {                                 \
				if (failures++ < 20)                                              \
					fprintf(stderr, "%s:%d len %zu: glibc %d '%.*s', ours %d '%.*s'\n", \
						__FILE__, __LINE__, len, ra, (int)len, a, rb,     \
						(int)len, b);                                     \
				break;                                                            \
			}                                                                         \
		}                                                                                 \
		(void)got;                                                                        \
	} while (0)

static void edge_cases(void **state)
{
	(void)state;
	SAME("plain text, no conversion");
	SAME("%%");
	SAME("%s|%5s|%-5s|%.2s|%5.1s|%-10.10s|%*s|%-*s|%.*s", "abc", "ab", "ab", "abc", "xyz",
	     "a long string, longer than ten", 6, "q", -6, "q", 2, "abcdef");
	SAME("%*s|%.*s", -4, "w", -1, "negative precision: as if none");
	SAME("%d %i %u %ld %lu %lld %llu %zu %zd", INT_MIN, INT_MAX, UINT_MAX, LONG_MIN, ULONG_MAX,
	     LLONG_MIN, ULLONG_MAX, (size_t)SIZE_MAX, (ssize_t)-5);
	SAME("%05d|%-5d|%5d|%05d|%-05d|%02lld|%03d|%0*d|%*u", -42, -42, -42, 42, 7, 5LL, 7, 6, -3, 4, 9u);
	SAME("%c%c|%3c|%-3c", 'a', 'b', 'x', 'y');
	SAME("%.0f %.0f %.0f %.0f %.0f", 0.5, 1.5, 2.5, -0.5, 3.5);
	SAME("%.1f %.1f %.1f %.1f %.2f %.2f", 0.25, 0.35, 0.05, 1.45, 1.005, 2.675);
	SAME("%f %.3f %.9f %.1f %.0f", 0.0, -0.0, 1e-10, -1e-10, 9.2e18 - 4096);
	SAME("%.1f %.1f %.1f", 5e-324, DBL_MIN, 1e18);
	SAME("%08.2f|%-8.2f|%8.1f|%08.1f", -3.14159, 2.5, -0.04, -7.25);
	SAME("%f %f %f %.1f", INFINITY, -INFINITY, NAN, 1e300); /* glibc's */
	SAME("%g %x %+d % d %#o %e %hd %lc %5%", 1.5, 255u, 3, 4, 8u, 2.0, (short)3, (wint_t)'z');
	SAME("%.10f %.20f", 1.0 / 3, 2.0 / 3); /* precisions above 9: glibc's */
	SAME("%s and %d then %g", "mixed", 3, 0.1); /* one glibc conversion: all glibc's */
	assert_int_equal(failures, 0);
}

static void random_string(char *s, size_t cap)
{
	size_t n = next() % (cap - 1);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(' ' + next() % 95);
	s[n] = 0;
}

static double random_double(void)
{
	switch (next() % 6) {
	case 0: /* a tie at some precision: k / 2^j */
		return (double)(int64_t)(next() % 2000000 - 1000000) / (double)(1u << (next() % 12));
	case 1: /* a few hundred, as sizes in their unit are */
		return (double)(next() % 100000) / 100.0;
	case 2: /* any bits, finite */
	{
		uint64_t b = next();
		double d;
		memcpy(&d, &b, sizeof d);
		return isfinite(d) ? d : 1.0;
	}
	case 3:
		return ldexp((double)(next() % (1ull << 53)), (int)(next() % 80) - 70);
	case 4:
		return -(double)(next() % 1000) / 8.0;
	default:
		return (double)(next() % 10000) + 0.5;
	}
}

static void random_formats(void **state)
{
	(void)state;
	for (int i = 0; i < 200000; i++) {
		char f[64];
		const char *flag = (const char *[]){"", "-", "0", "-0", "00"}[next() % 5];
		int width = (int)(next() % 3 == 0 ? next() % 24 : 0);
		int prec = (int)(next() % 3 == 0 ? (int)(next() % 12) : -1);
		char ws[16] = "", ps[16] = "";
		if (width)
			snprintf(ws, sizeof ws, "%d", width);
		if (prec >= 0)
			snprintf(ps, sizeof ps, ".%d", prec);
		/* SAME evaluates its arguments once a buffer size: draw them first */
		char str[40];
		random_string(str, sizeof str);
		int i1 = (int)next(), sw = (int)(next() % 30) - 15, sp = (int)(next() % 8) - 2;
		int uw = (int)(next() % 20), ch = (int)(' ' + next() % 95);
		unsigned u1 = (unsigned)next();
		unsigned long long ull = next();
		long long ll = (long long)next();
		double d = random_double();
		switch (next() % 6) {
		case 0:
			snprintf(f, sizeof f, "<%s%s%ss>", flag, ws, ps);
			SAME(f, str);
			break;
		case 1:
			snprintf(f, sizeof f, "<%s%sd>", flag, ws);
			SAME(f, i1);
			break;
		case 2:
			snprintf(f, sizeof f, "<%s%sllu|%s%slld>", flag, ws, flag, ws);
			SAME(f, ull, ll);
			break;
		case 3:
			snprintf(f, sizeof f, "<%s%s%sf>", flag, ws, ps);
			SAME(f, d);
			break;
		case 4:
			snprintf(f, sizeof f, "%%*.*s %%-*u %%%s%s%sf", flag, ws, ps);
			SAME(f, sw, sp, "star args", uw, u1, d);
			break;
		default:
			snprintf(f, sizeof f, "%s%%%s%sc", "text before ", flag[0] == '-' ? "-" : "", ws);
			SAME(f, ch);
			break;
		}
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(edge_cases),
		cmocka_unit_test(random_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
