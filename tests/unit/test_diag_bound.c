/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_bound.c - the diagnosis engine's memory with very many
 * processes (issue 12 item 4): a log with 100,000 pids in one tick cost
 * analyze 2.4 GB, one series of 24 KiB each.  The engine keeps at most
 * VRAMZ_DIAG_SERIES_MAX series, drops the smallest (exited first) and
 * counts them, and keeps the large ones a finding would be about. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "diagnose/state.h"

#define NPROCS 20000u
#define MiB (1024ull * 1024)

static vramz_gpu_sample gpu = {.index = 0,
			       .valid = VRAMZ_F_MEM | VRAMZ_F_PROCS,
			       .mem_total_bytes = 1ull << 50,
			       .mem_used_bytes = 1ull << 40};

static int feed(vramz_diag *d, vramz_proc_sample *procs, unsigned n, int64_t t_ms)
{
	vramz_snapshot s = {.time_ms = t_ms, .gpu_count = 1, .gpus = &gpu,
			    .proc_count = n, .procs = procs};
	return vramz_diag_feed(d, &s);
}

static int tracked(const vramz_diag *d, uint32_t pid)
{
	for (unsigned i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return 1;
	return 0;
}

static void many_pids_bounded(void **state)
{
	(void)state;
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.keep_ended = 1; /* as analyze: exited processes' findings stay */
	vramz_diag *d = vramz_diag_new(&cfg);
	assert_non_null(d);
	vramz_proc_sample *p = calloc(NPROCS, sizeof *p);
	assert_non_null(p);
	for (unsigned i = 0; i < NPROCS; i++) /* pid i + 1 holds i + 1 MiB */
		p[i] = (vramz_proc_sample){.gpu_index = 0, .pid = i + 1, .valid = VRAMZ_P_USED,
					   .used_bytes = (i + 1) * MiB};
	assert_int_equal(feed(d, p, NPROCS, 0), 0);
	assert_true(d->nprocs <= VRAMZ_DIAG_SERIES_MAX);
	assert_true(vramz_diag_series_dropped(d) >= NPROCS - VRAMZ_DIAG_SERIES_MAX);
	assert_true(tracked(d, NPROCS));  /* the largest stays */
	assert_false(tracked(d, 1));      /* the smallest went */
	/* the same processes again: the kept ones continue their series */
	assert_int_equal(feed(d, p, NPROCS, 1000), 0);
	assert_true(d->nprocs <= VRAMZ_DIAG_SERIES_MAX);
	assert_true(tracked(d, NPROCS));
	/* all of them exit, and another 20,000 start: exited series go first */
	for (unsigned i = 0; i < NPROCS; i++)
		p[i].pid += NPROCS;
	assert_int_equal(feed(d, NULL, 0, 2000), 0);
	assert_int_equal(feed(d, p, NPROCS, 3000), 0);
	assert_true(d->nprocs <= VRAMZ_DIAG_SERIES_MAX);
	assert_true(tracked(d, 2 * NPROCS));
	const vramz_finding *f;
	vramz_diag_findings(d, &f); /* evaluates, evicting exited ones */
	assert_true(d->nprocs <= VRAMZ_DIAG_SERIES_MAX);
	free(p);
	vramz_diag_free(d);
}

/* Below the bound nothing is dropped. */
static void few_pids_kept(void **state)
{
	(void)state;
	vramz_diag *d = vramz_diag_new(NULL);
	assert_non_null(d);
	vramz_proc_sample p[100];
	for (unsigned i = 0; i < 100; i++)
		p[i] = (vramz_proc_sample){.gpu_index = 0, .pid = i + 1, .valid = VRAMZ_P_USED,
					   .used_bytes = MiB};
	for (int k = 0; k < 5; k++)
		assert_int_equal(feed(d, p, 100, 1000 * k), 0);
	assert_int_equal(d->nprocs, 100);
	assert_int_equal(vramz_diag_series_dropped(d), 0);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(many_pids_bounded),
		cmocka_unit_test(few_pids_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
