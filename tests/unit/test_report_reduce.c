/* SPDX-License-Identifier: Apache-2.0 */
/* test_report_reduce.c - the report's reduction (src/report/reduce.c)
 * with many processes (issue 25, item 3): a process costs a few hundred
 * bytes (it was 12 KB of per-column arrays each: 1.3 GB for 100,000), the
 * bands are the highest peaks, each with its columns from the moment it
 * was among its GPU's REP_CANDS highest peaks. */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#define NP 3000u
#define TICKS 1000u
#define LATE 2999u /* 1 MiB until tick 500, then 10 GiB */
#define MIB (1ull << 20)

static uint64_t used_of(unsigned pid, unsigned t)
{
	if (pid == LATE)
		return t < 500 ? MIB : 10240 * MIB;
	return (pid % 100 + 1) * MIB;
}

static void test_many_processes(void **state)
{
	(void)state;
	struct rep r;
	vramz_proc_sample *procs = calloc(NP, sizeof *procs);
	assert_non_null(procs);
	assert_int_equal(rep_init(&r, 0, (int64_t)TICKS * 1000, NULL), 0);
	struct mallinfo2 before = mallinfo2();
	for (unsigned t = 0; t < TICKS; t++) {
		vramz_gpu_sample g = {.index = 0, .valid = VRAMZ_F_MEM | VRAMZ_F_PROCS,
				      .mem_total_bytes = 80ull << 30, .proc_count = NP};
		for (unsigned i = 0; i < NP; i++) {
			procs[i] = (vramz_proc_sample){.gpu_index = 0, .pid = 100000 + i,
						       .valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE,
						       .start_time_ticks = 7, .used_bytes = used_of(i, t)};
			g.mem_used_bytes += procs[i].used_bytes;
		}
		g.mem_free_bytes = g.mem_total_bytes - g.mem_used_bytes;
		vramz_snapshot s = {.time_ms = (int64_t)t * 1000, .gpu_count = 1, .gpus = &g,
				    .proc_count = NP, .procs = procs};
		assert_int_equal(rep_feed(&r, &s, NULL, NULL), 0);
	}
	struct mallinfo2 after = mallinfo2();
	char bad[32];
	assert_int_equal(rep_finish(&r, bad, sizeof bad), 0);
	struct rep_gpu *g = r.gpus[0];
	assert_int_equal(g->ntop, REP_TOP);
	/* the late grower: the first band, its columns from when it grew */
	const struct rep_proc *p = &r.procs[g->top[0]];
	assert_int_equal(p->pid, 100000 + LATE);
	assert_int_equal(rep_proc_at(&r, p, &g->cols[700], 700), 10240 * MIB);
	assert_int_equal(rep_proc_at(&r, p, &g->cols[100], 100), 0); /* then in "other" */
	/* the others: 100 MiB each, their columns all there */
	for (unsigned k = 1; k < REP_TOP; k++) {
		p = &r.procs[g->top[k]];
		assert_int_equal(p->peak_bytes, 100 * MIB);
		assert_int_equal(rep_proc_at(&r, p, &g->cols[10], 10), 100 * MIB);
		assert_int_equal(rep_proc_at(&r, p, &g->cols[900], 900), 100 * MIB);
	}
	/* memory: a few hundred bytes a process, not 12 KB (malloc's own
	 * count; an allocator that keeps none, as ASan's, says 0) */
	if (after.uordblks && before.uordblks) {
		size_t grew = after.uordblks + after.hblkhd - before.uordblks - before.hblkhd;
		fprintf(stderr, "%zu bytes for %u processes\n", grew, NP);
		assert_true(grew < (size_t)NP * 1024 + (2u << 20));
	}
	rep_free(&r);
	free(procs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
