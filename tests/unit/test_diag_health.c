/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_health.c - the VRAM health findings (lib/diagnose/health.c):
 * a GPU with errors it already had, a remap it already finished and no
 * Xid raises nothing; a new uncorrected error or a memory Xid is critical
 * vram_errors, corrected errors rising a warning; a pending remap is a
 * warning to drain and reset, a failed one critical; each new Xid is an
 * xid finding per process that was on the GPU (whose job it hit); a lost
 * GPU's finding names the last Xid seen before it went.  And every Xid of
 * lib/xid.c is in docs/health.md's table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "diag_sim.h"
#include "xid.h"

#define HEALTH_BITS (VRAMZ_F_ECC_MODE | VRAMZ_F_ECC_VOL | VRAMZ_F_REMAP | VRAMZ_F_XID)

static void health_init(struct sim *m, unsigned n)
{
	sim_init(m, n, 80 * GiB);
	for (unsigned i = 0; i < n; i++) {
		m->g[i].valid |= HEALTH_BITS;
		m->g[i].ecc_mode = 1;
	}
}

static vramz_diag *fresh(void)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.keep_ended = 0;
	return vramz_diag_new(&c);
}

static void healthy_gpu_raises_nothing(void **s)
{
	(void)s;
	struct sim m;
	health_init(&m, 1);
	/* old errors and a finished remap: what it had when first seen */
	m.g[0].ecc_corrected_volatile = 40;
	m.g[0].ecc_uncorrected_volatile = 2;
	m.g[0].remap_correctable_rows = 3;
	vramz_diag *d = fresh();
	for (int64_t t = 0; t <= 20000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_VRAM_ERRORS, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_ROW_REMAP, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_XID, NULL), 0);
	vramz_diag_free(d);
}

static void new_uncorrected_is_critical_corrected_a_warning(void **s)
{
	(void)s;
	struct sim m;
	health_init(&m, 2);
	vramz_diag *d = fresh();
	const vramz_finding *f;
	for (int64_t t = 0; t <= 10000; t += 1000) {
		if (t == 5000) {
			m.g[0].ecc_uncorrected_volatile = 1;
			m.g[1].ecc_corrected_volatile = 8;
		}
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_VRAM_ERRORS, NULL), t >= 5000 ? 2 : 0);
	}
	const vramz_finding *all;
	unsigned n = vramz_diag_findings(d, &all);
	for (unsigned i = 0; i < n; i++) {
		f = &all[i];
		if (f->kind != VRAMZ_FK_VRAM_ERRORS)
			continue;
		assert_int_equal(f->severity, f->gpu == 0 ? VRAMZ_SEV_CRITICAL : VRAMZ_SEV_WARNING);
		assert_int_equal(f->count, f->gpu == 0 ? 1 : 0);
		assert_int_equal(f->ref_count, f->gpu == 0 ? 0 : 8);
	}
	vramz_diag_free(d);
}

static void remap_pending_warns_failure_is_critical(void **s)
{
	(void)s;
	struct sim m;
	health_init(&m, 2);
	m.g[0].remap_pending = 1;
	m.g[1].remap_failure = 1;
	vramz_diag *d = fresh();
	assert_int_equal(sim_feed(d, &m, 0, NULL), 0);
	const vramz_finding *all;
	unsigned n = vramz_diag_findings(d, &all), seen = 0;
	char buf[256];
	for (unsigned i = 0; i < n; i++) {
		if (all[i].kind != VRAMZ_FK_ROW_REMAP)
			continue;
		seen++;
		vramz_finding_advice(&all[i], buf, sizeof buf);
		if (all[i].gpu == 0) {
			assert_int_equal(all[i].severity, VRAMZ_SEV_WARNING);
			assert_non_null(strstr(buf, "Drain and reset"));
		} else {
			assert_int_equal(all[i].severity, VRAMZ_SEV_CRITICAL);
			assert_non_null(strstr(buf, "Replace the GPU"));
		}
	}
	assert_int_equal(seen, 2);
	vramz_diag_free(d);
}

/* Xid 48 on GPU 0 while pids 100 and 101 run there (and 200 on GPU 1):
 * one xid finding for each of the two, vram_errors critical; then GPU 0
 * is lost and its gpu_lost finding says Xid 48. */
static void xid_names_the_processes_and_the_loss(void **s)
{
	(void)s;
	struct sim m;
	health_init(&m, 2);
	sim_proc(&m, 0, 100, 7)->used_bytes = (uint64_t)GiB;
	sim_proc(&m, 0, 101, 7)->used_bytes = (uint64_t)GiB;
	sim_proc(&m, 1, 200, 8)->used_bytes = (uint64_t)GiB;
	vramz_diag *d = fresh();
	for (int64_t t = 0; t <= 6000; t += 1000) {
		if (t == 3000) {
			m.g[0].xid_events = 1;
			m.g[0].xid_last = 48;
			m.g[0].xid_time_ms = 3000;
		}
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_XID, NULL), t >= 3000 ? 2 : 0);
	}
	const vramz_finding *all, *f;
	unsigned n = vramz_diag_findings(d, &all), pids = 0;
	char buf[256];
	for (unsigned i = 0; i < n; i++)
		if (all[i].kind == VRAMZ_FK_XID) {
			assert_int_equal(all[i].gpu, 0);
			assert_true(all[i].pid == 100 || all[i].pid == 101);
			pids += all[i].pid;
			vramz_finding_summary(&all[i], buf, sizeof buf);
			assert_non_null(strstr(buf, "Xid 48, double-bit ECC error"));
		}
	assert_int_equal(pids, 201);
	assert_int_equal(count_kind(d, VRAMZ_FK_VRAM_ERRORS, &f), 1);
	assert_int_equal(f->severity, VRAMZ_SEV_CRITICAL);
	assert_int_equal(f->gpu, 0);
	/* GPU 0 falls off the bus */
	m.g[0].lost = 1;
	assert_int_equal(sim_feed(d, &m, 7000, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_GPU_LOST, &f), 1);
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "the last Xid before: 48"));
	vramz_diag_free(d);
}

/* docs/health.md's Xid table lists every row of lib/xid.c */
static void docs_list_every_xid(void **s)
{
	(void)s;
	const char *src = getenv("TESTS_SRC"); /* ctest's tests/ */
	char path[4096];
	snprintf(path, sizeof path, "%s/../docs/health.md", src ? src : "tests");
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char doc[65536];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = 0;
	for (unsigned i = 0; i < xid_table_count; i++) {
		char row[32];
		snprintf(row, sizeof row, "\n| %u |", xid_table[i].code);
		if (!strstr(doc, row))
			fail_msg("docs/health.md lacks the row of Xid %u", xid_table[i].code);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(healthy_gpu_raises_nothing),
		cmocka_unit_test(new_uncorrected_is_critical_corrected_a_warning),
		cmocka_unit_test(remap_pending_warns_failure_is_critical),
		cmocka_unit_test(xid_names_the_processes_and_the_loss),
		cmocka_unit_test(docs_list_every_xid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
