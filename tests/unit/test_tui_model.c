/* SPDX-License-Identifier: Apache-2.0 */
/* test_tui_model.c - `top`'s model (src/tui/model.c) at 100,000 processes
 * (issue 25, item 3): rows, idle clocks and per-process series found
 * through their indexes, right after processes come and go (the sweeps
 * move records, the indexes follow), and a queued tick whose process rows
 * the sampler dropped keeps the table of the tick before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"
#include "tui/model.h"

/* fmt.c's colour question, which this test never asks (cli.c is the tool's) */
int cli_color(FILE *f)
{
	(void)f;
	return 0;
}

#define NP 100000u
#define NG 8u

static struct tui_gpu gpus[NG];
static vramz_proc_sample *procs;

/* Tick t: processes [from, from + n) each on GPU pid % NG using
 * (pid % 1000 + t) MiB; pid 7 also on GPU 1 with 1 MiB. */
static struct tui_snap snap(unsigned t, unsigned from, unsigned n)
{
	for (unsigned g = 0; g < NG; g++) {
		memset(&gpus[g], 0, sizeof gpus[g]);
		gpus[g].s.index = g;
		gpus[g].s.valid = VRAMZ_F_MEM | VRAMZ_F_PROCS;
		gpus[g].s.mem_total_bytes = 80ull << 30;
	}
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t pid = from + i;
		vramz_proc_sample *p = &procs[k++];
		memset(p, 0, sizeof *p);
		p->pid = pid;
		p->gpu_index = pid % NG;
		p->valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE | VRAMZ_P_SM;
		p->start_time_ticks = 1000 + pid;
		p->used_bytes = (uint64_t)(pid % 1000 + t) << 20;
		p->sm_pct = pid == 9 ? 50 : 0;
		if (pid == 7) {
			vramz_proc_sample *q = &procs[k++];
			*q = *p;
			q->gpu_index = 1;
			q->used_bytes = 1 << 20;
		}
	}
	struct tui_snap s = {.time_ms = 1000 * (int64_t)t, .ngpus = NG, .nprocs = k,
			     .gpus = gpus, .procs = procs};
	return s;
}

static const struct model_row *row(const struct model *m, uint32_t pid)
{
	int i = model_find_pid(m, pid);
	return i < 0 ? NULL : &m->rows[i];
}

static void test_many_come_and_go(void **state)
{
	(void)state;
	struct model m;
	model_init(&m);
	procs = calloc(NP + 1, sizeof *procs);
	assert_non_null(procs);
	struct tui_snap s = snap(1, 0, NP);
	assert_int_equal(model_feed(&m, &s), 0);
	assert_int_equal(m.nrows, NP);
	const struct model_row *r = row(&m, 7);
	assert_non_null(r);
	assert_int_equal(r->vram_bytes, (8ull << 20) + (1ull << 20)); /* both GPUs */
	assert_string_equal(r->gpus, "1,7");
	assert_int_equal(row(&m, NP - 1)->vram_bytes, (uint64_t)((NP - 1) % 1000 + 1) << 20);
	/* half go, as many new come: the indexes follow the sweeps */
	for (unsigned t = 2; t < 2 + MODEL_PKEEP + 2; t++) {
		s = snap(t, NP / 2, NP);
		assert_int_equal(model_feed(&m, &s), 0);
	}
	assert_int_equal(m.nrows, NP);
	assert_null(row(&m, 7));
	assert_int_equal(m.nacts, NP);
	assert_int_equal(m.nseries, NP); /* the gone ones' outlived MODEL_PKEEP */
	uint32_t pid = NP / 2 + 9;
	r = row(&m, pid);
	assert_non_null(r);
	assert_int_equal(r->vram_bytes, (uint64_t)(pid % 1000 + MODEL_PKEEP + 3) << 20);
	assert_int_equal(r->idle_valid, 1);
	r = row(&m, NP + 123);
	assert_non_null(r);
	double h[4];
	unsigned last = 2 + MODEL_PKEEP + 1;
	assert_int_equal(model_proc_hist(&m, NP + 123, 1000 + NP + 123, (NP + 123) % NG, h, 4), 4);
	assert_true(h[0] * 1024 == (double)((NP + 123) % 1000 + last));
	assert_true(h[3] * 1024 == (double)((NP + 123) % 1000 + last - 3));

	/* a tick whose process rows the sampler dropped: the table stays */
	struct tui_snap d = snap(last + 1, 0, 0);
	d.procs_dropped = 1;
	unsigned ticks = m.ticks;
	assert_int_equal(model_feed(&m, &d), 0);
	assert_int_equal(m.ticks, ticks + 1);
	assert_int_equal(m.nrows, NP);
	assert_non_null(row(&m, NP + 123));
	model_free(&m);
	free(procs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_come_and_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
