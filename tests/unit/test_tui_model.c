/* SPDX-License-Identifier: Apache-2.0 */
/* test_tui_model.c - `top`'s model (src/tui/model.c) at 100,000 processes
 * (issue 25, item 3): rows, idle clocks and per-process series found
 * through their indexes, right after processes come and go (the sweeps
 * move records, the indexes follow), and a queued tick whose process rows
 * the sampler dropped keeps the table of the tick before.  The tree view
 * (issue 35, item 9): its order and depths on a small case, and 100,000
 * processes each with its own non-GPU parent, which the old O(n^3)
 * builder never finished. */
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
#include "format/zoom.h"

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

/* A process's memory history as runs (issue 35): steady, changing, a
 * gap while it was not listed (unknown), two MIG instances summed, and a
 * process that changes every tick for longer than the window (its oldest
 * runs dropped, the window's points all there). */
static void test_proc_hist_runs(void **state)
{
	(void)state;
	struct model m;
	model_init(&m);
	vramz_proc_sample pr[2];
	struct tui_gpu g1[1];
	memset(g1, 0, sizeof g1);
	g1[0].s.valid = VRAMZ_F_MEM | VRAMZ_F_PROCS;
	g1[0].s.mem_total_bytes = 80ull << 30;
	/* mib per tick 1..12: 100 x4, 200 x2, gone x2 (ticks 7, 8), 300 x2, then
	 * two instances of 300 + 50 at ticks 11 and 12 */
	static const unsigned mib[] = {100, 100, 100, 100, 200, 200, 0, 0, 300, 300, 300, 300};
	for (unsigned t = 1; t <= 12; t++) {
		unsigned n = 0;
		if (mib[t - 1]) {
			memset(&pr[0], 0, sizeof pr[0]);
			pr[0].pid = 42;
			pr[0].valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE;
			pr[0].start_time_ticks = 4242;
			pr[0].used_bytes = (uint64_t)mib[t - 1] << 20;
			n = 1;
			if (t >= 11) {
				pr[1] = pr[0];
				pr[1].used_bytes = 50ull << 20;
				n = 2;
			}
		}
		struct tui_snap s = {.time_ms = 1000 * (int64_t)t, .ngpus = 1, .nprocs = n,
				     .gpus = g1, .procs = pr};
		assert_int_equal(model_feed(&m, &s), 0);
	}
	double h[16];
	/* newest first: 350 350 300 300 - - 200 200 100 100 100 100, then none */
	static const double want[] = {350, 350, 300, 300, -1, -1, 200, 200, 100, 100, 100, 100, -1, -1};
	assert_int_equal(model_proc_hist(&m, 42, 4242, 0, h, 14), 12);
	for (unsigned k = 0; k < 14; k++)
		assert_true(want[k] < 0 ? h[k] < 0 : h[k] * 1024 == want[k]);
	assert_int_equal(model_proc_hist(&m, 42, 4243, 0, h, 4), 0); /* another start: none */

	/* a new value every tick for 3 windows: every point of the window kept */
	for (unsigned t = 13; t < 13 + 3 * MODEL_PHIST; t++) {
		memset(&pr[0], 0, sizeof pr[0]);
		pr[0].pid = 42;
		pr[0].valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE;
		pr[0].start_time_ticks = 4242;
		pr[0].used_bytes = (uint64_t)t << 20;
		struct tui_snap s = {.time_ms = 1000 * (int64_t)t, .ngpus = 1, .nprocs = 1,
				     .gpus = g1, .procs = pr};
		assert_int_equal(model_feed(&m, &s), 0);
	}
	static double w[MODEL_PHIST + 4];
	unsigned last = 12 + 3 * MODEL_PHIST;
	assert_int_equal(model_proc_hist(&m, 42, 4242, 0, w, MODEL_PHIST + 4), MODEL_PHIST);
	for (unsigned k = 0; k < MODEL_PHIST; k++)
		assert_true(w[k] * 1024 == (double)(last - k));
	assert_true(w[MODEL_PHIST] < 0);
	model_free(&m);
}

/* one visible process of pid, parent ppid, on GPU 0 with mib MiB */
static void put_proc(vramz_proc_sample *p, uint32_t pid, uint32_t ppid, unsigned mib)
{
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->ppid = ppid;
	p->valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE;
	p->start_time_ticks = 1000 + pid;
	p->used_bytes = (uint64_t)mib << 20;
	snprintf(p->comm, sizeof p->comm, "p%u", pid);
}

static struct tui_snap procs_snap(unsigned n)
{
	memset(&gpus[0], 0, sizeof gpus[0]);
	gpus[0].s.valid = VRAMZ_F_MEM | VRAMZ_F_PROCS;
	gpus[0].s.mem_total_bytes = 80ull << 30;
	return (struct tui_snap){.time_ms = 1000, .ngpus = 1, .nprocs = n, .gpus = gpus, .procs = procs};
}

/* 100 (launched 101, 102; 101 launched 103), two children of a non-GPU
 * parent 50 (a group row), one lone child of a non-GPU parent 60 (a root):
 * by pid, each child under its parent, in the sort's order */
static void test_tree_small(void **state)
{
	(void)state;
	struct model m;
	model_init(&m);
	procs = calloc(8, sizeof *procs);
	assert_non_null(procs);
	put_proc(&procs[0], 103, 101, 1);
	put_proc(&procs[1], 300, 60, 2);
	put_proc(&procs[2], 102, 100, 3);
	put_proc(&procs[3], 201, 50, 4);
	put_proc(&procs[4], 100, 1, 5);
	put_proc(&procs[5], 200, 50, 6);
	put_proc(&procs[6], 101, 100, 7);
	struct tui_snap s = procs_snap(7);
	assert_int_equal(model_feed(&m, &s), 0);
	struct arrange a = {.sort = COL_PID, .tree = 1, .gpu = -1};
	assert_int_equal(model_arrange(&m, &a), 0);
	static const uint32_t want_pid[] = {50, 200, 201, 100, 101, 103, 102, 300};
	static const int want_depth[] = {0, 1, 1, 0, 1, 2, 1, 0};
	int desc = model_col_desc(COL_PID);
	assert_int_equal(m.norder, 8);
	assert_int_equal(m.ngroups, 1);
	for (unsigned i = 0; i < 8; i++) {
		/* a descending sort lists the roots and siblings the other way */
		const struct model_row *r = &m.rows[m.order[i]];
		if (!desc) {
			assert_int_equal(r->pid, want_pid[i]);
			assert_int_equal(r->depth, want_depth[i]);
		}
	}
	const struct model_row *g = &m.rows[m.order[desc ? 4 : 0]];
	assert_int_equal(g->group, 1);
	assert_int_equal(g->pid, 50);
	assert_int_equal(g->vram_bytes, 10ull << 20);
	assert_string_equal(g->cmd, "(parent of 2 GPU processes)");
	/* the reverse order: the same tree, siblings and roots reversed */
	a.reverse = 1;
	assert_int_equal(model_arrange(&m, &a), 0);
	static const uint32_t rev_pid[] = {300, 100, 102, 101, 103, 50, 201, 200};
	for (unsigned i = 0; i < 8; i++) {
		const struct model_row *r = &m.rows[m.order[i]];
		assert_int_equal(r->pid, desc ? want_pid[i] : rev_pid[i]);
	}
	model_free(&m);
	free(procs);
}

/* 100,000 GPU processes, each with its own non-GPU parent (no group: one
 * child each), and 100,000 more in chains of 4 under a GPU parent: every
 * row listed once, each child right after its parent.  The old builder
 * scanned every row for every row's parent (O(n^3)): it did not end. */
static void test_tree_100k(void **state)
{
	(void)state;
	struct model m;
	model_init(&m);
	procs = calloc(2 * NP, sizeof *procs);
	assert_non_null(procs);
	for (unsigned i = 0; i < NP; i++)
		put_proc(&procs[i], 10 + 2 * i, 10 + 2 * i + 1, i % 977);
	for (unsigned i = 0; i < NP; i++) /* chains: 1000000 + 4k is the head */
		put_proc(&procs[NP + i], 1000000 + i, i % 4 ? 1000000 + i - 1 : 1, i % 13);
	struct tui_snap s = procs_snap(2 * NP);
	assert_int_equal(model_feed(&m, &s), 0);
	struct arrange a = {.sort = COL_VRAM, .tree = 1, .gpu = -1};
	assert_int_equal(model_arrange(&m, &a), 0);
	assert_int_equal(m.norder, 2 * NP);
	assert_int_equal(m.ngroups, 0);
	unsigned deep = 0;
	for (unsigned i = 0; i < m.norder; i++) {
		const struct model_row *r = &m.rows[m.order[i]];
		if (r->pid < 1000000) {
			assert_int_equal(r->depth, 0);
			continue;
		}
		assert_int_equal(r->depth, (int)((r->pid - 1000000) % 4));
		if (r->depth) /* right after its parent's subtree start: the parent precedes */
			assert_true(i > 0 && m.rows[m.order[i - 1]].pid == r->pid - 1);
		deep += r->depth == 3;
	}
	assert_int_equal(deep, NP / 4);
	model_free(&m);
	free(procs);
}

/* COMMAND names the script, not the interpreter's path (issue 40) */
static void test_cmd_short(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"/root/.pyenv/versions/3.11.7/bin/python3 train.py --bs 64", "python3 train.py --bs 64"},
		{"/usr/bin/python3.11 -u /home/ada/proj/train.py --bs 64", "python3.11 -u train.py --bs 64"},
		{"python -m torch.distributed.run --nproc 8 train.py", "python -m torch.distributed.run --nproc 8 train.py"},
		{"/opt/conda/bin/python -X dev -W ignore /w/a.py x", "python -X dev -W ignore a.py x"},
		{"python3 -c import torch", "python3 -c import torch"},
		{"/usr/local/bin/vllm serve /models/llama", "vllm serve /models/llama"},
		{"/usr/bin/pypy3 bench.py", "pypy3 bench.py"},
		{"sleep 120", "sleep 120"},
		{"/weird/", "weird/"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[256];
		model_cmd_short(cases[i][0], out, sizeof out);
		assert_string_equal(out, cases[i][1]);
	}
	char small[8];
	model_cmd_short("/usr/bin/python3 train.py", small, sizeof small);
	assert_string_equal(small, "python3");
}

/* The memory charts' range (format/zoom.h; page.js's zoomRange() is
 * checked on the same cases by t4040): the used range with a margin,
 * round ends, the total the top once near it */
static void test_zoom(void **state)
{
	(void)state;
	static const struct {
		double min, max, total, lo, hi;
		int at_total;
	} z[] = {
		{14, 24, 140.4, 10, 25, 0},      /* the 1 GiB/min leak of 10 minutes */
		{14, 14, 140.4, 13, 15, 0},      /* flat: at least 1 % of the total wide */
		{0.5, 0.6, 80, 0, 1, 0},         /* never below 0 */
		{120, 135, 140.4, 115, 140.4, 1}, /* near the total: it is the top */
		{10, 5, 80, 0, 80, 1},           /* nothing known: the total */
	};
	for (size_t i = 0; i < sizeof z / sizeof z[0]; i++) {
		double lo, hi;
		int t = zoom_range(z[i].min, z[i].max, z[i].total, 0.25, &lo, &hi);
		assert_int_equal(t, z[i].at_total);
		assert_float_equal(lo, z[i].lo, 1e-9);
		assert_float_equal(hi, z[i].hi, 1e-9);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_come_and_go),
		cmocka_unit_test(test_proc_hist_runs),
		cmocka_unit_test(test_tree_small),
		cmocka_unit_test(test_tree_100k),
		cmocka_unit_test(test_cmd_short),
		cmocka_unit_test(test_zoom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
