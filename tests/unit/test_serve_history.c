/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_history.c - the ring behind the live page's charts
 * (src/serve/history.c): its size is fixed by --history / --interval and
 * capped, whatever runs; once full it keeps the newest ticks, oldest
 * first; a GPU that is lost or did not report a figure is null there,
 * never 0 (the chart would draw a false dip); GPUs are matched by index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if __has_include(<microhttpd.h>) && __has_include(<zlib.h>) && __has_include(<crypt.h>)
#include "serve/history.c"

static char *json_of(const struct serve_history *h)
{
	char *p = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&p, &n);
	struct jsonw w;
	jw_init(&w, m, 0);
	jw_obj(&w, NULL);
	history_json(h, &w);
	jw_end_obj(&w);
	jw_finish(&w);
	fclose(m);
	return p;
}

static void test_capacity(void **st)
{
	(void)st;
	struct serve_history *h = history_new(5 * 60 * 1000, 1000);
	assert_int_equal(history_capacity(h), 300);
	history_free(h);
	h = history_new(SERVE_HISTORY_MAX_MS, 100); /* 36,000 asked: capped */
	assert_int_equal(history_capacity(h), SERVE_HISTORY_MAX_TICKS);
	history_free(h);
	h = history_new(1500, 1000); /* a part tick rounds up */
	assert_int_equal(history_capacity(h), 2);
	history_free(h);
}

static void test_empty(void **st)
{
	(void)st;
	struct serve_history *h = history_new(3000, 1000);
	history_add(h, NULL); /* a tick that read nothing adds nothing */
	char *j = json_of(h);
	assert_string_equal(j, "{\"t\":[],\"gpus\":[]}\n");
	free(j);
	history_free(h);
}

/* Five ticks into a ring of three, two GPUs (indices 3 and 5): GPU 5
 * reports no utilization at tick 4 and is lost at tick 5. */
static void test_wraps_keeps_newest_nulls_unknown(void **st)
{
	(void)st;
	struct serve_history *h = history_new(3000, 1000);
	for (int k = 1; k <= 5; k++) {
		vramz_gpu_sample g[2] = {{0}};
		g[0].index = 3;
		g[0].valid = VRAMZ_F_MEM | VRAMZ_F_UTIL;
		g[0].mem_used_bytes = (uint64_t)k << 30;
		g[0].util_gpu_pct = (unsigned)(10 * k);
		g[1].index = 5;
		g[1].valid = k == 4 ? VRAMZ_F_MEM : VRAMZ_F_MEM | VRAMZ_F_UTIL;
		g[1].mem_used_bytes = 100u * (unsigned)k;
		g[1].util_gpu_pct = k == 4 ? 0 : 150; /* out of range: 100 */
		g[1].lost = k == 5;
		/* the selection's order need not be the ring's: swap at tick 2 */
		if (k == 2) {
			vramz_gpu_sample t = g[0];
			g[0] = g[1];
			g[1] = t;
		}
		vramz_snapshot s = {.time_ms = 1000 * k, .gpu_count = 2, .gpus = g};
		history_add(h, &s);
	}
	char *j = json_of(h);
	assert_string_equal(j, "{\"t\":[3000,4000,5000],\"gpus\":["
			       "{\"index\":3,\"used_bytes\":[3221225472,4294967296,5368709120],"
			       "\"util_pct\":[30,40,50]},"
			       "{\"index\":5,\"used_bytes\":[300,400,null],\"util_pct\":[100,null,null]}]}\n");
	free(j);
	history_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_wraps_keeps_newest_nulls_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
	puts("libmicrohttpd, zlib or libcrypt headers missing: serve is not built, nothing to test");
	return 0;
}
#endif
