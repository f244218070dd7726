/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_kinds.c - the table of finding kinds (lib/diagnose/kinds.c):
 * one well-formed row per kind, in enum order; the names, spans, series
 * and thresholds users see (JSON "kind", the report's bands, metric
 * names, options) as they were; every threshold's C type matching what
 * its option writes; and a detector emitting through the emitter it is
 * handed, never into the engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "diag_sim.h"
#include "diagnose/detectors.h"
#include "kinds.h"
#include "diagnose/state.h"

static void one_row_per_kind(void **s)
{
	(void)s;
	static const char *const names[] = {
		NULL, "leak", "imbalance", "stray_context", "idle_holder", "orphaned", "throttle",
		"pcie_downgraded", "mem_temp", "fragmentation", "gpu_lost", "oom",
		"outside_allocator", "vram_errors", "row_remap", "xid", "rise", "communication_memory"};
	assert_int_equal(sizeof names / sizeof names[0], VRAMZ_FK_COUNT);
	assert_null(kind_of((enum vramz_finding_kind)0));
	assert_null(kind_of((enum vramz_finding_kind)VRAMZ_FK_COUNT));
	for (int k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		const struct finding_kind *fk = kind_of((enum vramz_finding_kind)k);
		assert_non_null(fk);
		assert_int_equal(fk->kind, k);
		assert_string_equal(fk->name, names[k]);
		assert_string_equal(vramz_finding_kind_str(fk->kind), names[k]);
		assert_non_null(fk->detect);
		assert_non_null(fk->summary);
		assert_non_null(fk->advice);
		/* hysteresis (issue 27): what is judged over a window holds for
		 * a while after its condition goes; events have their own keeping,
		 * and a state the driver reports (row_remap) is not judged */
		if ((fk->span == KIND_EVENT && fk->kind != VRAMZ_FK_OUTSIDE_ALLOCATOR) ||
		    fk->kind == VRAMZ_FK_IDLE_HOLDER || fk->kind == VRAMZ_FK_ROW_REMAP)
			assert_int_equal(fk->hold_ms, 0);
		else
			assert_true(fk->hold_ms >= 30000 && fk->hold_ms <= 60000);
		assert_true(!fk->nconf || fk->conf);
	}
}

/* what the report draws, what is handed out at once, which kinds have
 * the agent's say: as before the table */
static void spans_and_at_once(void **s)
{
	(void)s;
	for (int k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		const struct finding_kind *fk = &finding_kinds[k];
		enum kind_span want = k == VRAMZ_FK_LEAK ? KIND_TREND
				    : k == VRAMZ_FK_GPU_LOST || k == VRAMZ_FK_OOM ||
				      k == VRAMZ_FK_OUTSIDE_ALLOCATOR || k == VRAMZ_FK_VRAM_ERRORS ||
				      k == VRAMZ_FK_XID ? KIND_EVENT : KIND_LASTS;
		assert_int_equal(fk->span, want);
		/* VRAM health is handed out at once, as a lost GPU */
		assert_int_equal(fk->at_once, k == VRAMZ_FK_GPU_LOST || k == VRAMZ_FK_OOM ||
						      (k >= VRAMZ_FK_VRAM_ERRORS && k <= VRAMZ_FK_XID));
		assert_int_equal(fk->detect_agent != NULL,
				 k == VRAMZ_FK_FRAGMENTATION || k == VRAMZ_FK_OOM);
		assert_int_equal(fk->agent_words != NULL,
				 k == VRAMZ_FK_FRAGMENTATION || k == VRAMZ_FK_OOM);
	}
}

/* the metric families, in the order the exporter writes them */
static void prometheus_series(void **s)
{
	(void)s;
	static const char *const want[] = {"leak_rate_bytes_per_second", "time_to_oom_seconds",
					   "idle_holder_bytes", "orphan_memory_bytes",
					   "oom_ended_bytes", "oom_requested_bytes",
					   "communication_memory_bytes"};
	unsigned n = 0;
	for (int k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++)
		for (unsigned i = 0; i < KIND_SERIES_MAX && finding_kinds[k].series[i].metric; i++) {
			assert_true(n < 7);
			assert_string_equal(finding_kinds[k].series[i].metric, want[n]);
			assert_non_null(finding_kinds[k].series[i].help);
			n++;
		}
	assert_int_equal(n, 7);
	vramz_finding f = {.kind = VRAMZ_FK_LEAK, .figures = VRAMZ_FG_RATE | VRAMZ_FG_TTO,
			   .rate_bytes_per_s = 5, .time_to_oom_s = -1, .bytes = 9};
	double num = 0;
	uint64_t count = 0;
	assert_int_equal(kind_figure(&f, KIND_FIG_RATE, &num, &count), 1);
	assert_true(num == 5);
	assert_int_equal(kind_figure(&f, KIND_FIG_TTO, &num, &count), 0); /* unknown: absent */
	assert_int_equal(kind_figure(&f, KIND_FIG_BYTES, &num, &count), 0); /* not flagged */
	f.figures |= VRAMZ_FG_BYTES;
	assert_int_equal(kind_figure(&f, KIND_FIG_BYTES, &num, &count), 2);
	assert_int_equal(count, 9);
}

/* Every threshold: the C type its unit's option writes is the field's,
 * keys and fields are unique, and the keys are the options users know,
 * in the order `vramz watch -h` lists them. */
static void thresholds(void **s)
{
	(void)s;
	static const char *const keys[] = {
		"window", "eval-interval", "leak-warmup", "leak-min-span", "leak-min-rate",
		"leak-min-rise", "leak-p", "leak-min-tau", "leak-critical-tto", "imbalance-ratio",
		"imbalance-min", "stray-max", "idle-min", "idle-time", "orphan-min", "orphan-time",
		"throttle-share", "throttle-min-busy", "pcie-share", "mem-temp-margin",
		"mem-temp-max", "frag-time", "comm-share", "job-warmup", "report-after"};
	static const enum kind_conf_ctype ctype_of[] = {
		[KC_DURATION] = KC_I64, [KC_SIZE] = KC_U64,   [KC_COUNT] = KC_UINT,
		[KC_CELSIUS] = KC_INT,  [KC_PERCENT] = KC_DOUBLE, [KC_PROB] = KC_DOUBLE,
		[KC_UNIT] = KC_DOUBLE,  [KC_RATIO] = KC_DOUBLE,   [KC_NUMBER] = KC_DOUBLE};
	unsigned n = kind_conf_count(), nk = 0;
	assert_null(kind_conf_at(n));
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	for (unsigned i = 0; i < n; i++) {
		const struct kind_conf *c = kind_conf_at(i);
		assert_non_null(c);
		assert_int_equal(c->ctype, ctype_of[c->unit]);
		assert_true(c->off >= sizeof cfg.size && c->off < sizeof cfg);
		for (unsigned j = 0; j < i; j++)
			assert_true(kind_conf_at(j)->off != c->off);
		/* vramz_diag_config_init sets the table's default */
		const char *v = (const char *)&cfg + c->off;
		double got = c->ctype == KC_I64    ? (double)*(const int64_t *)(const void *)v
			   : c->ctype == KC_U64    ? (double)*(const uint64_t *)(const void *)v
			   : c->ctype == KC_UINT   ? (double)*(const unsigned *)(const void *)v
			   : c->ctype == KC_INT    ? (double)*(const int *)(const void *)v
						   : *(const double *)(const void *)v;
		assert_true(got == c->def);
		if (c->key) {
			assert_true(nk < sizeof keys / sizeof keys[0]);
			assert_string_equal(c->key, keys[nk]);
			assert_non_null(c->help);
			nk++;
		}
	}
	assert_int_equal(nk, sizeof keys / sizeof keys[0]);
	/* a few defaults users read in docs/diagnoses.md */
	assert_int_equal(cfg.leak_warmup_ms, 30000);
	assert_int_equal(cfg.idle_ms, 30 * 60 * 1000);
	assert_true(cfg.throttle_share == 0.2);
	assert_true(cfg.leak_fast_share == 1.0 / 3);
	assert_int_equal(cfg.mem_temp_max_c, 95);
	assert_int_equal(cfg.oom_keep_ms, 10 * 60 * 1000);
	assert_null(cfg.proc_root);
	assert_int_equal(cfg.keep_ended, 0);
}

/* each row's check: the engine refuses what it refuses */
static void checks(void **s)
{
	(void)s;
	char buf[160];
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	for (int k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++)
		if (finding_kinds[k].check)
			assert_null(finding_kinds[k].check(&c, buf, sizeof buf));
	c.imbalance_ratio = 0.5;
	assert_string_equal(finding_kinds[VRAMZ_FK_IMBALANCE].check(&c, buf, sizeof buf),
			    "imbalance_ratio 0.5: must be at least 1");
	vramz_diag *d = NULL;
	assert_int_equal(vramz_diag_create(&d, &c), VRAMZ_EINVAL);
	assert_string_equal(vramz_diag_error(d), "imbalance_ratio 0.5: must be at least 1");
	vramz_diag_free(d);
	vramz_diag_config_defaults(&c);
	c.oom_free_share = 1;
	assert_int_equal(vramz_diag_create(&d, &c), VRAMZ_EINVAL);
	assert_string_equal(vramz_diag_error(d), "oom_free_share 1: must be at least 0 and below 1");
	vramz_diag_free(d);
}

/* An emitter of the test's: what a detector hands it is all it emits. */
struct catch {
	struct emitter em;
	vramz_finding f[8];
	unsigned n;
};

static vramz_finding *catch_add(struct emitter *em, enum vramz_severity sev, double headline)
{
	struct catch *c = em->sink;
	(void)headline;
	if (c->n == 8)
		return NULL;
	vramz_finding *f = &c->f[c->n++];
	memset(f, 0, sizeof *f);
	f->kind = em->kind;
	f->severity = sev;
	f->gpu = -1;
	return f;
}

static void detectors_emit_through_the_emitter(void **s)
{
	(void)s;
	struct sim m;
	sim_init(&m, 2, 80 * GiB);
	sim_proc(&m, 0, 100, 7)->used_bytes = (uint64_t)(8 * GiB);
	vramz_diag *d = vramz_diag_new(NULL);
	assert_int_equal(sim_feed(d, &m, 1000, NULL), 0);
	m.g[1].lost = 1;
	assert_int_equal(sim_feed(d, &m, 9000, NULL), 0);
	const vramz_finding *f;
	unsigned before = vramz_diag_findings(d, &f);
	assert_int_equal(count_kind(d, VRAMZ_FK_GPU_LOST, NULL), 1);
	struct catch c = {.em = {catch_add, VRAMZ_FK_GPU_LOST, &c}};
	assert_int_equal(finding_kinds[VRAMZ_FK_GPU_LOST].detect(d, &c.em), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.f[0].kind, VRAMZ_FK_GPU_LOST);
	assert_int_equal(c.f[0].gpu, 1);
	assert_int_equal(c.f[0].severity, VRAMZ_SEV_CRITICAL);
	assert_int_equal(vramz_diag_findings(d, &f), before); /* the engine got nothing */
	/* an emitter out of memory: the detector says so */
	c.n = 8;
	assert_int_equal(finding_kinds[VRAMZ_FK_GPU_LOST].detect(d, &c.em), VRAMZ_ENOMEM);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_row_per_kind),
		cmocka_unit_test(spans_and_at_once),
		cmocka_unit_test(prometheus_series),
		cmocka_unit_test(thresholds),
		cmocka_unit_test(checks),
		cmocka_unit_test(detectors_emit_through_the_emitter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
