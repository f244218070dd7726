/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_findings.c - the detectors other than leaks (imbalance, stray
 * contexts, idle holders, orphaned memory, throttling, PCIe link, memory
 * temperature, lost GPUs; oom has test_diag_oom.c), each with the case that must NOT raise it;
 * plus what `watch` relies on: stable identity, revisions, clearing, and
 * memory that stays bounded however long the feed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diag_sim.h"
#include "diagnose/state.h"

#define TOTAL (80 * GiB)

static vramz_diag *feed_for(struct sim *m, vramz_diag *d, int64_t from_ms, int64_t to_ms,
			    int64_t step_ms, const double *extra)
{
	for (int64_t t = from_ms; t <= to_ms; t += step_ms)
		assert_int_equal(sim_feed(d, m, t, extra), 0);
	return d;
}

/* 4 ranks of one job (one Slurm job): rank 2's GPU nearly full, the others < 50 % */
static void imbalance_of_four_ranks(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 4, TOTAL);
	for (unsigned r = 0; r < 4; r++)
		sim_proc(&m, r, 500 + r, 500)->used_bytes = (uint64_t)(r == 2 ? 74 * GiB : 30 * GiB);
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 60000, 1000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	assert_int_equal(f->gpu, 2);
	assert_string_equal(f->job, "slurm:500");
	assert_int_equal(f->count, 4);
	assert_int_equal(f->severity, VRAMZ_SEV_CRITICAL);
	assert_true(f->share > 2.4 && f->share < 2.5);
	assert_int_equal(count_kind(d, VRAMZ_FK_STRAY_CONTEXT, NULL), 0);
	vramz_diag_free(d);
}

static void not_imbalance_when_balanced_or_unrelated(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 4, TOTAL);
	/* one balanced job (within 20 %) */
	for (unsigned r = 0; r < 4; r++)
		sim_proc(&m, r, 600 + r, 600)->used_bytes = (uint64_t)((30 + 2 * r) * GiB);
	/* two unrelated single-GPU jobs of very different sizes */
	sim_proc(&m, 0, 700, 700)->used_bytes = (uint64_t)(40 * GiB);
	sim_proc(&m, 1, 701, 701)->used_bytes = (uint64_t)(2 * GiB);
	/* processes not visible from here: never grouped */
	sim_proc(&m, 2, 800, 0)->used_bytes = (uint64_t)(40 * GiB);
	sim_proc(&m, 3, 801, 0)->used_bytes = (uint64_t)(1 * GiB);
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 60000, 1000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_STRAY_CONTEXT, NULL), 0);
	vramz_diag_free(d);
}

/* every rank also holds ~500 MiB on GPU 0 */
static void stray_contexts_on_gpu0(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 4, TOTAL);
	for (unsigned r = 0; r < 4; r++) {
		sim_proc(&m, r, 900 + r, 900)->used_bytes = (uint64_t)(40 * GiB);
		if (r)
			sim_proc(&m, 0, 900 + r, 900)->used_bytes = (uint64_t)(500 * MiB);
	}
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 60000, 1000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_STRAY_CONTEXT, &f), 1);
	assert_int_equal(f->gpu, 0);
	assert_int_equal(f->count, 3);
	assert_true(f->bytes == (uint64_t)(1500 * MiB));
	/* the stray contexts do not make GPU 0 look heavier */
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0);
	char b[256];
	assert_non_null(strstr(vramz_finding_advice(f, b, sizeof b), "set_device"));
	vramz_diag_free(d);
}

static void idle_holder_after_30_minutes(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *nb = sim_proc(&m, 0, 42, 42);
	nb->used_bytes = (uint64_t)(6 * GiB);
	nb->sm_pct = 0;
	vramz_proc_sample *small = sim_proc(&m, 0, 43, 43); /* idle but small */
	small->used_bytes = (uint64_t)(512 * MiB);
	small->sm_pct = 0;
	vramz_proc_sample *unk = sim_proc(&m, 0, 44, 44); /* SM unknown: no claim */
	unk->used_bytes = (uint64_t)(8 * GiB);
	unk->valid &= ~VRAMZ_P_SM;
	vramz_diag *d = vramz_diag_new(NULL);
	feed_for(&m, d, 0, 29 * 60 * 1000, 5000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, NULL), 0);
	feed_for(&m, d, 29 * 60 * 1000 + 5000, 45 * 60 * 1000, 5000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, &f), 1);
	assert_int_equal(f->pid, 42);
	assert_int_equal(f->duration_ms, 45 * 60 * 1000);
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	uint64_t id = f->id;
	int64_t first = f->first_seen_ms;
	/* it wakes up: the finding clears */
	nb->sm_pct = 30;
	feed_for(&m, d, 45 * 60 * 1000 + 5000, 46 * 60 * 1000, 5000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, NULL), 0);
	assert_true(first == 30 * 60 * 1000);
	(void)id;
	vramz_diag_free(d);
}

/* a 400 MiB remainder is driver/context overhead, 3 GiB for minutes is not */
static void orphaned_memory(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	sim_proc(&m, 0, 50, 50)->used_bytes = (uint64_t)(10 * GiB);
	sim_proc(&m, 1, 51, 51)->used_bytes = (uint64_t)(10 * GiB);
	double extra[2] = {400 * MiB, 3 * GiB};
	vramz_diag *d = vramz_diag_new(NULL);
	feed_for(&m, d, 0, 30000, 1000, extra);
	assert_int_equal(count_kind(d, VRAMZ_FK_ORPHANED, NULL), 0); /* not sustained yet */
	feed_for(&m, d, 31000, 120000, 1000, extra);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_ORPHANED, &f), 1);
	assert_int_equal(f->gpu, 1);
	assert_int_equal(f->pid, 0);
	assert_true(f->bytes == (uint64_t)(3 * GiB));
	vramz_diag_free(d);
}

static void hidden_process_holding_memory(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	sim_proc(&m, 0, 77, 0)->used_bytes = (uint64_t)(5 * GiB); /* not visible */
	sim_proc(&m, 0, 78, 0)->used_bytes = (uint64_t)(300 * MiB); /* small: ignored */
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 120000, 1000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_ORPHANED, &f), 1);
	assert_int_equal(f->pid, 77);
	assert_int_equal(f->severity, VRAMZ_SEV_INFO);
	vramz_diag_free(d);
}

static void throttle_while_busy_only(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	/* GPU 0: thermal slowdown 40 % of busy time; GPU 1: power cap only while idle */
	vramz_diag *d = vramz_diag_new(NULL);
	for (int64_t t = 0; t <= 300000; t += 1000) {
		m.g[0].throttle_reasons = (t / 1000) % 5 < 2 ? VRAMZ_THR_SW_THERMAL : 0;
		m.g[1].util_gpu_pct = 0;
		m.g[1].throttle_reasons = VRAMZ_THR_SW_POWER_CAP | VRAMZ_THR_GPU_IDLE;
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_THROTTLE, &f), 1);
	assert_int_equal(f->gpu, 0);
	assert_true(fabs(f->share - 0.4) < 0.02);
	assert_true(fabs(f->value - 0.4) < 0.02 && f->ref_value == 0);
	vramz_diag_free(d);
}

static void pcie_downgraded_only_when_busy(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	vramz_gpu_info info[2];
	memset(info, 0, sizeof info);
	for (unsigned i = 0; i < 2; i++) {
		info[i].index = i;
		info[i].valid = VRAMZ_I_PCIE_MAX;
		info[i].pcie_max_gen = 5;
		info[i].pcie_max_width = 16;
		m.g[i].valid |= VRAMZ_F_PCIE_LINK;
	}
	vramz_diag *d = vramz_diag_new(NULL);
	assert_int_equal(vramz_diag_set_gpu_info(d, info, 2), 0);
	for (int64_t t = 0; t <= 300000; t += 1000) {
		/* GPU 0: gen 4 x8 while busy; GPU 1: gen 1 only at idle (power saving) */
		m.g[0].pcie_gen = 4;
		m.g[0].pcie_width = 8;
		int busy1 = (t / 1000) % 2;
		m.g[1].util_gpu_pct = busy1 ? 80 : 0;
		m.g[1].pcie_gen = busy1 ? 5 : 1;
		m.g[1].pcie_width = 16;
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_PCIE_DOWNGRADED, &f), 1);
	assert_int_equal(f->gpu, 0);
	assert_true(f->value == 4 && f->ref_value == 5 && f->count == 8 && f->ref_count == 16);
	vramz_diag_free(d);
}

static void mem_temp_near_limit(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 3, TOTAL);
	for (unsigned i = 0; i < 3; i++)
		m.g[i].valid |= VRAMZ_F_TEMP_MEM;
	m.g[0].temp_mem_c = 70;
	m.g[1].temp_mem_c = 92;  /* within 5 C of the 95 C default */
	m.g[2].temp_mem_c = 96;  /* over */
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 5000, 1000, NULL);
	const vramz_finding *f;
	/* raised at the first evaluation (1 s), handed out once held 5 s */
	assert_int_equal(vramz_diag_findings(d, &f), 0);
	feed_for(&m, d, 6000, 7000, 1000, NULL);
	unsigned n = vramz_diag_findings(d, &f);
	assert_int_equal(n, 2);
	assert_true(f[0].first_seen_ms == 1000);
	assert_int_equal(f[0].gpu, 2);
	assert_int_equal(f[0].severity, VRAMZ_SEV_CRITICAL); /* most severe first */
	assert_int_equal(f[1].gpu, 1);
	assert_int_equal(f[1].severity, VRAMZ_SEV_WARNING);
	vramz_diag_free(d);
}

static void lost_gpu_and_its_processes(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	sim_proc(&m, 1, 60, 60)->used_bytes = (uint64_t)(4 * GiB);
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 10000, 1000, NULL);
	m.g[1].lost = 1;
	m.g[1].valid = 0;
	m.np = 0;
	feed_for(&m, d, 11000, 20000, 1000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_GPU_LOST, &f), 1);
	assert_int_equal(f->gpu, 1);
	assert_int_equal(f->severity, VRAMZ_SEV_CRITICAL);
	assert_int_equal(f->duration_ms, 9000);
	vramz_diag_free(d);
}

/* identity survives evaluations; a material change bumps the revision */
static void identity_and_revision(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, TOTAL);
	vramz_proc_sample *a = sim_proc(&m, 0, 70, 70), *b = sim_proc(&m, 1, 71, 70);
	a->used_bytes = (uint64_t)(30 * GiB);
	b->used_bytes = (uint64_t)(10 * GiB);
	vramz_diag *d = feed_for(&m, vramz_diag_new(NULL), 0, 40000, 1000, NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	uint64_t id = f->id;
	unsigned rev = f->revision;
	feed_for(&m, d, 41000, 50000, 1000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	/* judged once both ranks are 30 s old (job-warmup) */
	assert_true(f->id == id && f->revision == rev && f->first_seen_ms == 30000);
	a->used_bytes = (uint64_t)(60 * GiB); /* ratio 3 -> 6 */
	feed_for(&m, d, 51000, 52000, 1000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	assert_true(f->id == id && f->revision == rev + 1);
	vramz_diag_free(d);
}

/* logs keep what cleared: an idle stretch that ended is still reported */
static void cleared_findings_kept_for_logs(void **s)
{
	(void)s;
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.keep_ended = 1;
	c.idle_ms = 60000;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *p = sim_proc(&m, 0, 80, 80);
	p->used_bytes = (uint64_t)(4 * GiB);
	p->sm_pct = 0;
	vramz_diag *d = vramz_diag_new(&c);
	feed_for(&m, d, 0, 120000, 1000, NULL);
	p->sm_pct = 50;
	feed_for(&m, d, 121000, 130000, 1000, NULL);
	assert_int_equal(count_kind(d, VRAMZ_FK_IDLE_HOLDER, NULL), 0);
	const vramz_finding *past;
	assert_int_equal(vramz_diag_cleared(d, &past), 1);
	assert_int_equal(past[0].kind, VRAMZ_FK_IDLE_HOLDER);
	assert_int_equal(past[0].duration_ms, 120000);
	vramz_diag_free(d);
}

/* a day at 10 Hz: the series stays within its ring */
static void memory_stays_bounded(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *p = sim_proc(&m, 0, 90, 90);
	vramz_diag *d = vramz_diag_new(NULL);
	for (int64_t t = 0; t <= 24LL * 3600 * 1000; t += 100) {
		p->used_bytes = (uint64_t)(4 * GiB + (t % 7000) * 1000);
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	assert_true(d->nprocs == 1);
	assert_true(d->procs[0].mem.n <= 512 && d->procs[0].mem.n >= 256);
	assert_true(d->gpus[0].mem.n <= 512);
	assert_true(d->procs[0].mem.width_ms >= 86400000 / 512);
	assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, NULL), 0);
	vramz_diag_free(d);
}

/* a clock step back is absorbed (test_diag_time.c has the whole rule) */
static void accepts_time_going_back_rejects_bad_config(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_diag *d = vramz_diag_new(NULL);
	assert_int_equal(sim_feed(d, &m, 5000, NULL), 0);
	assert_int_equal(sim_feed(d, &m, 4000, NULL), 0);
	assert_int_equal(vramz_diag_clock_steps(d, NULL), 1);
	vramz_diag_free(d);
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.leak_p = 0;
	assert_null(vramz_diag_new(&c));
}

static void every_kind_has_words(void **s)
{
	(void)s;
	enum vramz_severity sev;
	assert_int_equal(vramz_severity_parse("Warning", &sev), 0);
	assert_int_equal(sev, VRAMZ_SEV_WARNING);
	assert_int_equal(vramz_severity_parse("loud", &sev), VRAMZ_EINVAL);
	for (int k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		vramz_finding f;
		memset(&f, 0, sizeof f);
		f.kind = (enum vramz_finding_kind)k;
		f.gpu = 1;
		char a[512], b[512];
		assert_string_not_equal(vramz_finding_kind_str(f.kind), "?");
		assert_true(strlen(vramz_finding_summary(&f, a, sizeof a)) > 10);
		assert_true(strlen(vramz_finding_advice(&f, b, sizeof b)) > 10);
	}
	assert_string_equal(vramz_finding_kind_str((enum vramz_finding_kind)99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(imbalance_of_four_ranks),
		cmocka_unit_test(not_imbalance_when_balanced_or_unrelated),
		cmocka_unit_test(stray_contexts_on_gpu0),
		cmocka_unit_test(idle_holder_after_30_minutes),
		cmocka_unit_test(orphaned_memory),
		cmocka_unit_test(hidden_process_holding_memory),
		cmocka_unit_test(throttle_while_busy_only),
		cmocka_unit_test(pcie_downgraded_only_when_busy),
		cmocka_unit_test(mem_temp_near_limit),
		cmocka_unit_test(lost_gpu_and_its_processes),
		cmocka_unit_test(identity_and_revision),
		cmocka_unit_test(cleared_findings_kept_for_logs),
		cmocka_unit_test(memory_stays_bounded),
		cmocka_unit_test(accepts_time_going_back_rejects_bad_config),
		cmocka_unit_test(every_kind_has_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
