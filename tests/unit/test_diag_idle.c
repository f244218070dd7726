/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_idle.c - the idle rule (lib/diagnose/idle.c), shared by the
 * idle_holder finding and kill --idle: 0 % SM is not enough, memory must
 * stay put too.  An allocating data loader at 0 % SM is never an idle
 * holder; a notebook that allocated and then sat still is, from then on;
 * and a verdict over a window says why a process was not idle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diag_sim.h"

#define TOTAL (80 * GiB)

static vramz_diag_config fast_idle(void)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.idle_ms = 10 * 60 * 1000;
	return c;
}

/* a loader at 0 % SM growing 8 MiB/s for an hour: never idle; beside it a
 * holder at a constant 6 GiB is */
static void growing_at_zero_sm_is_not_idle(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *ld = sim_proc(&m, 0, 50, 50);
	vramz_proc_sample *nb = sim_proc(&m, 0, 51, 51);
	ld->sm_pct = nb->sm_pct = 0;
	nb->used_bytes = (uint64_t)(6 * GiB);
	vramz_diag_config c = fast_idle();
	vramz_diag *d = vramz_diag_new(&c);
	for (int64_t t = 0; t <= 3600 * 1000; t += 1000) {
		ld->used_bytes = (uint64_t)(2 * GiB + t / 1000.0 * 8 * MiB);
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		const vramz_finding *f;
		unsigned n = vramz_diag_findings(d, &f);
		for (unsigned i = 0; i < n; i++)
			if (f[i].kind == VRAMZ_FK_IDLE_HOLDER)
				assert_int_equal(f[i].pid, 51);
	}
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, &f), 1);
	assert_int_equal(f->pid, 51);
	vramz_diag_free(d);
}

/* allocates at 0 % SM for 5 minutes, then sits still: idle from the
 * moment it stopped, so reported 10 minutes after that, not before */
static void idle_counts_from_when_memory_stopped(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *p = sim_proc(&m, 0, 60, 60);
	p->sm_pct = 0;
	vramz_diag_config c = fast_idle();
	vramz_diag *d = vramz_diag_new(&c);
	int64_t first = -1;
	for (int64_t t = 0; t <= 30 * 60 * 1000; t += 1000) {
		double ts = t / 1000.0;
		p->used_bytes = (uint64_t)(2 * GiB + (ts < 300 ? ts : 300) * 16 * MiB);
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		if (first < 0 && count_kind(d, VRAMZ_FK_IDLE_HOLDER, NULL))
			first = t;
	}
	assert_true(first >= 15 * 60 * 1000 && first <= 15 * 60 * 1000 + 10000);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, &f), 1);
	assert_true(f->duration_ms >= 24 * 60 * 1000 && f->duration_ms <= 26 * 60 * 1000);
	vramz_diag_free(d);
}

/* noise within max(64 MiB, 1 %) does not break the stretch */
static void noise_is_not_a_change(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *p = sim_proc(&m, 0, 70, 70);
	p->sm_pct = 0;
	vramz_diag_config c = fast_idle();
	vramz_diag *d = vramz_diag_new(&c);
	for (int64_t t = 0; t <= 15 * 60 * 1000; t += 1000) {
		p->used_bytes = (uint64_t)(20 * GiB + 100 * MiB * sim_uniform(&m));
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, NULL), 1);
	vramz_diag_free(d);
}

static void feed(vramz_idle_track *t, int64_t ms, double bytes, int sm)
{
	vramz_proc_sample p;
	memset(&p, 0, sizeof p);
	p.valid = VRAMZ_P_USED | (sm >= 0 ? VRAMZ_P_SM : 0);
	p.used_bytes = (uint64_t)bytes;
	p.sm_pct = sm >= 0 ? (unsigned)sm : 0;
	vramz_idle_feed(t, ms, &p);
}

/* the verdict kill --idle gives, and its reasons */
static void verdict_and_reasons(void **s)
{
	(void)s;
	vramz_idle_track t;
	char why[128];
	vramz_idle_reset(&t);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 0); /* nothing seen */
	for (int i = 0; i < 10; i++)
		feed(&t, i * 100, 4 * GiB, 0);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 1);
	assert_int_equal(t.since_ms, 0);

	vramz_idle_reset(&t);
	for (int i = 0; i < 10; i++)
		feed(&t, i * 100, 4 * GiB + i * 136 * MiB, 0);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 0);
	assert_string_equal(why, "its memory grew 1.2 GiB in the window");

	vramz_idle_reset(&t);
	for (int i = 0; i < 10; i++)
		feed(&t, i * 100, 8 * GiB - i * 100 * MiB, 0);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 0);
	assert_string_equal(why, "its memory fell 900 MiB in the window");

	vramz_idle_reset(&t);
	feed(&t, 0, 4 * GiB, 0);
	feed(&t, 100, 4 * GiB, 12);
	feed(&t, 200, 4 * GiB, 0);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 0);
	assert_string_equal(why, "it used the GPU (SM up to 12 %)");

	vramz_idle_reset(&t);
	feed(&t, 0, 4 * GiB, 0);
	feed(&t, 100, 4 * GiB, -1);
	assert_int_equal(vramz_idle_verdict(&t, why, sizeof why), 0);
	assert_string_equal(why, "its SM share was not reported at every sample");
	/* unknown neither started nor broke the stretch */
	assert_int_equal(t.since_ms, 0);

	assert_int_equal(vramz_idle_noise_bytes(1ull << 30), 64ull << 20);
	assert_int_equal(vramz_idle_noise_bytes(100ull << 30), (100ull << 30) / 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(growing_at_zero_sm_is_not_idle),
		cmocka_unit_test(idle_counts_from_when_memory_stopped),
		cmocka_unit_test(noise_is_not_a_change),
		cmocka_unit_test(verdict_and_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
