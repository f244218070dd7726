/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_oom.c - the oom finding: a process that vanished while its
 * GPU was nearly full, or while leaking close to out of memory, or right
 * after a steep rise, is reported at once as having probably ended out of
 * memory, with the figures a user needs ("880 MiB free at its last sample;
 * it held 78.6 GiB, +2.0 GiB in its last 10 s"); a process that simply
 * exits is not.  Live the finding stays oom_keep_ms; in a log, for good. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diag_sim.h"
#include "diagnose/state.h"

#define TOTAL (80 * GiB)

/* x (pid 200) fills the GPU from 30 s at 1 GiB/s beside a steady 10 GiB
 * (pid 100), and vanishes when fewer than 600 MiB are left.  Returns the
 * engine after `after_ms` more of feeding; *end_ms the data time it ended. */
static vramz_diag *fill_and_die(const vramz_diag_config *c, int64_t after_ms, int64_t *end_ms,
				int agent)
{
	struct sim m;
	sim_init(&m, 1, TOTAL);
	sim_proc(&m, 0, 100, 100)->used_bytes = (uint64_t)(10 * GiB);
	vramz_proc_sample *x = sim_proc(&m, 0, 200, 200);
	vramz_diag *d = vramz_diag_new(c);
	int64_t t = 0, end = -1;
	for (;; t += 500) {
		double ts = t / 1000.0;
		double v = 4 * GiB + (ts > 30 ? (ts - 30) * GiB : 0);
		if (end < 0 && TOTAL - 512 * MiB - 10 * GiB - v < 600 * MiB) {
			end = t;
			m.np = 1; /* it is gone from the list */
		}
		if (end < 0)
			x->used_bytes = (uint64_t)v;
		if (agent && end < 0 && ts > 40)
			for (unsigned i = 0; i < d->nprocs; i++)
				if (d->procs[i].pid == 200)
					d->procs[i].agent_ooms = 1;
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		if (end >= 0 && t == end) {
			/* reported at once, at the tick it is found gone */
			assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 1);
		}
		if (end >= 0 && t >= end + after_ms)
			break;
	}
	*end_ms = end;
	return d;
}

static void fills_the_gpu_and_vanishes(void **s)
{
	(void)s;
	int64_t end;
	vramz_diag *d = fill_and_die(NULL, 30000, &end, 0);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	assert_int_equal(f->pid, 200);
	assert_int_equal(f->gpu, 0);
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	assert_true(f->ended);
	assert_true(f->evidence & VRAMZ_OOM_LOW_FREE);
	assert_true(f->evidence & VRAMZ_OOM_STEEP_RISE);
	assert_true(f->evidence & VRAMZ_OOM_LEAKING); /* the fast rule had it */
	assert_false(f->evidence & VRAMZ_OOM_AGENT);
	assert_true(f->ref_bytes < 1100 * MiB);         /* free at its last sample */
	assert_true(f->bytes > 64 * GiB);               /* what it held */
	assert_true(fabs(f->value - 10 * GiB) < 1.5 * GiB); /* +~10 GiB in its last 10 s */
	char b[512];
	vramz_finding_summary(f, b, sizeof b);
	print_message("%s\n", b);
	assert_non_null(strstr(b, "pid 200 (python) probably ended out of memory on GPU 0: "));
	assert_non_null(strstr(b, " free at its last sample; it held "));
	assert_non_null(strstr(b, " in its last 10 s"));
	assert_string_equal(vramz_finding_kind_str(VRAMZ_FK_OOM), "oom");
	/* the leak finding went with the process (live) */
	assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, NULL), 0);
	vramz_diag_free(d);
}

/* live, it clears after oom_keep_ms; in a log it stays */
static void kept_while_it_matters(void **s)
{
	(void)s;
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.oom_keep_ms = 60000;
	int64_t end;
	vramz_diag *d = fill_and_die(&c, 90000, &end, 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 0);
	vramz_diag_free(d);
	c.keep_ended = 1;
	d = fill_and_die(&c, 90000, &end, 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 1);
	vramz_diag_free(d);
}

/* the PyTorch agent's OOM counter (issue 15's join sets agent_ooms) adds
 * to NVML's evidence but is no certainty: the job may have caught its
 * OOMs (issue 27); only the agent's end record makes a death certain
 * (test_diag_torch.c) */
static void agent_counter_is_evidence_not_death(void **s)
{
	(void)s;
	int64_t end;
	vramz_diag *d = fill_and_die(NULL, 1000, &end, 1);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	assert_true(f->evidence & VRAMZ_OOM_AGENT);
	assert_false(f->evidence & VRAMZ_OOM_ENDED);
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	char b[512];
	vramz_finding_summary(f, b, sizeof b);
	assert_non_null(strstr(b, "pid 200 (python) probably ended out of memory on GPU 0"));
	assert_non_null(strstr(b, "; its allocator had counted out-of-memory errors"));
	vramz_diag_free(d);
}

/* exits that are not out of memory: a steady job, a job that allocated
 * 2 GiB in its last seconds on a half-empty GPU, a slow leaker far from
 * full */
static void plain_exits_are_not_oom(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	vramz_proc_sample *a = sim_proc(&m, 0, 11, 11);
	vramz_proc_sample *b = sim_proc(&m, 0, 12, 12);
	vramz_proc_sample *l = sim_proc(&m, 1, 13, 13);
	vramz_diag *d = vramz_diag_new(NULL);
	for (int64_t t = 0; t <= 10 * 60 * 1000; t += 500) {
		double ts = t / 1000.0;
		a->used_bytes = (uint64_t)(20 * GiB + 16 * MiB * sim_gauss(&m));
		b->used_bytes = (uint64_t)(8 * GiB + (ts > 590 ? (ts - 590) * 0.2 * GiB : 0));
		l->used_bytes = (uint64_t)(4 * GiB + ts * 64 * MiB / 60);
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, NULL), 1); /* the slow leaker */
	m.np = 0; /* all three exit */
	for (int64_t t = 10 * 60 * 1000 + 500; t <= 11 * 60 * 1000; t += 500) {
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 0);
	}
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fills_the_gpu_and_vanishes),
		cmocka_unit_test(kept_while_it_matters),
		cmocka_unit_test(agent_counter_is_evidence_not_death),
		cmocka_unit_test(plain_exits_are_not_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
