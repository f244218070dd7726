/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_slots.c - the kinds' state slots (lib/internal/kinds.h,
 * struct kind_state): the engine allocates each row's block with a GPU
 * and initialises it, a gap's too.  A GPU first seen after a higher index
 * (GPU 1 after GPU 3: the engine grew past it then) must start with its
 * orphan clock stopped, as a GPU seen in order does; a block left zeroed
 * would read "unattributed since engine time 0" and raise orphaned
 * memory at its first sight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "diag_sim.h"

static vramz_diag *engine(void)
{
	vramz_diag_config c;
	vramz_diag_config_init(&c, sizeof c);
	c.report_after_ms = 0;
	return vramz_diag_new(&c);
}

/* GPU 3 alone for 2 min, then GPU 1 too, with 2 GiB no process holds:
 * orphaned once GPU 1's own minute has passed, not before, and its
 * duration counts from GPU 1's first sight. */
static void gap_gpu_starts_clean(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, 80 * GiB);
	m.g[0].index = 3;
	m.g[1].index = 1;
	vramz_diag *d = engine();
	double extra[2] = {0, 2 * GiB};
	int64_t t = 0;
	m.ng = 1; /* GPU 3 only */
	for (; t < 120000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, extra), 0);
	m.ng = 2;
	const int64_t seen = t;
	for (; t < seen + 59000; t += 1000) {
		assert_int_equal(sim_feed(d, &m, t, extra), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_ORPHANED, NULL), 0);
	}
	for (; t <= seen + 62000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, extra), 0);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_ORPHANED, &f), 1);
	assert_int_equal(f->gpu, 1);
	assert_true(f->duration_ms >= 60000 && f->duration_ms <= 62000);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gap_gpu_starts_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
