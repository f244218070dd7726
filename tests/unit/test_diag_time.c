/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_time.c - the engine's one time rule (engine.c: engine_time):
 * a wall clock stepped an hour back (or forward) mid-leak changes nothing
 * a user sees - the leak is still found with its true rate and duration,
 * feeding never fails, the step is counted - both live (snapshots carry a
 * monotonic clock, which does not step) and offline (a log: only the
 * recorded clock, which goes back). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "diag_sim.h"

#define TOTAL (80 * GiB)
#define HOUR_MS (3600 * 1000LL)
#define T0 1700000000000LL

enum mono { MONO_LIVE, MONO_NONE, MONO_LOG };

/* A 1 GiB/min leak for 6 minutes; at 3 min the wall clock steps by
 * step_ms.  mono: live (a steady monotonic clock), none (0), or a log's
 * (the recorded clock, as lib/log/logread.c gives it). */
static vramz_diag *run(enum mono mono, int64_t step_ms, unsigned *steps, int64_t *last_step,
		       int64_t *last_wall)
{
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *x = sim_proc(&m, 0, 200, 200);
	vramz_diag *d = vramz_diag_new(NULL);
	for (int64_t t = 0; t <= 6 * 60 * 1000; t += 500) {
		int64_t wall = T0 + t + (t >= 3 * 60 * 1000 ? step_ms : 0);
		x->used_bytes = (uint64_t)(2 * GiB + t / 60000.0 * GiB + 8 * MiB * sim_gauss(&m));
		m.s.mono_ns = mono == MONO_LIVE ? (5000 + t) * 1000000LL
			    : mono == MONO_LOG ? wall * 1000000LL : 0;
		assert_int_equal(sim_feed(d, &m, wall, NULL), 0);
		*last_wall = wall;
		/* findings at every tick: none may vanish at the step */
		if (t >= 2 * 60 * 1000)
			assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, NULL), 1);
	}
	*steps = vramz_diag_clock_steps(d, last_step);
	return d;
}

static void check_leak(vramz_diag *d, int64_t last_wall)
{
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, &f), 1);
	assert_true(fabs(f->rate_bytes_per_s * 60 - GiB) <= 0.1 * GiB);
	/* the rise lasted the whole 6 minutes after the warm-up, not 1 h more or less */
	assert_true(f->duration_ms >= 4 * 60 * 1000 && f->duration_ms <= 6 * 60 * 1000);
	/* handed out on the wall clock of the latest snapshot */
	assert_true(f->last_update_ms == last_wall);
	assert_true(f->first_seen_ms <= f->last_update_ms &&
		    f->last_update_ms - f->first_seen_ms <= 6 * 60 * 1000);
}

static void live_step_back_an_hour(void **s)
{
	(void)s;
	unsigned steps;
	int64_t last, wall;
	vramz_diag *d = run(MONO_LIVE, -HOUR_MS, &steps, &last, &wall);
	assert_int_equal(steps, 1);
	assert_true(llabs(last + HOUR_MS) < 1000);
	check_leak(d, wall);
	vramz_diag_free(d);
}

static void live_step_forward_an_hour(void **s)
{
	(void)s;
	unsigned steps;
	int64_t last, wall;
	vramz_diag *d = run(MONO_LIVE, HOUR_MS, &steps, &last, &wall);
	assert_int_equal(steps, 1);
	assert_true(llabs(last - HOUR_MS) < 1000);
	check_leak(d, wall);
	vramz_diag_free(d);
}

/* offline, only the wall clock: the step back is absorbed at the cadence */
static void offline_step_back_an_hour(void **s)
{
	(void)s;
	unsigned steps;
	int64_t last, wall;
	vramz_diag *d = run(MONO_NONE, -HOUR_MS, &steps, &last, &wall);
	assert_int_equal(steps, 1);
	assert_true(llabs(last + HOUR_MS) < 1000);
	check_leak(d, wall);
	vramz_diag_free(d);
	/* a log's "monotonic" clock is its recorded one: the same */
	d = run(MONO_LOG, -HOUR_MS, &steps, &last, &wall);
	assert_int_equal(steps, 1);
	check_leak(d, wall);
	vramz_diag_free(d);
}

/* no steps: none counted; small jitter of the wall clock is no step */
static void no_step_no_count(void **s)
{
	(void)s;
	unsigned steps;
	int64_t last, wall;
	vramz_diag *d = run(MONO_LIVE, 300, &steps, &last, &wall);
	assert_int_equal(steps, 0);
	check_leak(d, wall);
	vramz_diag_free(d);
}

/* an idle holder's duration spans the step (engine time, not the wall's) */
static void idle_duration_across_a_step(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *nb = sim_proc(&m, 0, 42, 42);
	nb->used_bytes = (uint64_t)(6 * GiB);
	nb->sm_pct = 0;
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.idle_ms = 10 * 60 * 1000;
	vramz_diag *d = vramz_diag_new(&c);
	for (int64_t t = 0; t <= 12 * 60 * 1000; t += 1000) {
		int64_t wall = T0 + t - (t >= 5 * 60 * 1000 ? HOUR_MS : 0);
		m.s.mono_ns = 0;
		assert_int_equal(sim_feed(d, &m, wall, NULL), 0);
	}
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, &f), 1);
	assert_true(f->duration_ms >= 12 * 60 * 1000 - 2000 && f->duration_ms <= 12 * 60 * 1000);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(live_step_back_an_hour),
		cmocka_unit_test(live_step_forward_an_hour),
		cmocka_unit_test(offline_step_back_an_hour),
		cmocka_unit_test(no_step_no_count),
		cmocka_unit_test(idle_duration_across_a_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
