/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_history.c - the ring behind the live page's charts
 * (src/serve/history.c): its size is fixed by --history / --interval and
 * capped, whatever runs; once full it keeps the newest ticks, oldest
 * first; a GPU that is lost or did not report a figure is null there,
 * never 0 (the chart would draw a false dip); GPUs are matched by index;
 * every sensor the page's detail view draws is kept. */
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
			       "\"util_pct\":[30,40,50],\"util_mem_pct\":[0,0,0]},"
			       "{\"index\":5,\"used_bytes\":[300,400,null],\"util_pct\":[100,null,null],"
			       "\"util_mem_pct\":[0,null,null]}]}\n");
	free(j);
	history_free(h);
}

/* Every sensor the detail view draws comes back as the sample had it,
 * under the snapshot's key; a negative temperature stays negative; a value
 * past what the ring keeps is clamped (a fan's 150 % is 100), not wrapped;
 * a sensor reported at one tick only is null at the others; one the GPU
 * never reported is left out. */
static void test_every_sensor(void **st)
{
	(void)st;
	struct serve_history *h = history_new(2000, 1000);
	for (int k = 1; k <= 2; k++) {
		vramz_gpu_sample g = {0};
		g.index = 0;
		g.valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_TEMP |
			  VRAMZ_F_POWER | VRAMZ_F_CLK_SM | VRAMZ_F_CLK_MEM | VRAMZ_F_FAN |
			  (k == 2 ? VRAMZ_F_PCIE_TPUT : 0);
		g.mem_used_bytes = 15ull << 30;
		g.mem_reserved_bytes = 616ull << 20;
		g.util_gpu_pct = 40, g.util_mem_pct = 12;
		g.temp_c = -5 * k;
		g.temp_mem_c = 99; /* not valid: never sent */
		g.power_mw = 318250;
		g.clock_sm_mhz = 1980, g.clock_mem_mhz = 70000; /* past 16 bits: 65535 */
		g.fan_pct = 150;
		g.pcie_tx_bytes_per_s = 1ull << 33, g.pcie_rx_bytes_per_s = 2048;
		vramz_snapshot s = {.time_ms = 1000 * k, .gpu_count = 1, .gpus = &g};
		history_add(h, &s);
	}
	char *j = json_of(h);
	assert_string_equal(j, "{\"t\":[1000,2000],\"gpus\":[{\"index\":0,"
			       "\"used_bytes\":[16106127360,16106127360],\"util_pct\":[40,40],"
			       "\"mem_reserved_bytes\":[645922816,645922816],\"util_mem_pct\":[12,12],"
			       "\"temp_c\":[-5,-10],\"power_mw\":[318250,318250],"
			       "\"clock_sm_mhz\":[1980,1980],\"clock_mem_mhz\":[65535,65535],"
			       "\"fan_pct\":[100,100],\"pcie_tx_bytes_per_s\":[null,8589934592],"
			       "\"pcie_rx_bytes_per_s\":[null,2048]}]}\n");
	free(j);
	history_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_sensor),
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
