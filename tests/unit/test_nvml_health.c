/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_health.c - VRAM health through the library against the fake
 * NVML (tests/scenarios/health.scn): VRAMZ_SAMPLE_HEALTH reads each GPU's
 * counters, unsupported ones (retired pages on Hopper) stay unknown, not
 * 0, and nothing is read without the flag; a refused call is not asked
 * again, nor the ECC mode within 10 minutes; vramz_events_open registers every GPU and vramz_events_wait
 * times out when nothing is due, then hands out the scenario's events in
 * order with global indices and the Xid as data. */
#include "nvml_fixture.h"

static void test_health_fields(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("health.scn");
	const vramz_snapshot *s = sample(ctx, 0);
	assert_int_equal(gpu_of(s, 1)->valid & (VRAMZ_F_ECC_VOL | VRAMZ_F_REMAP), 0);
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_HEALTH);
	const vramz_gpu_sample *g1 = gpu_of(s, 1), *g3 = gpu_of(s, 3);
	assert_true(g1->valid & VRAMZ_F_ECC_MODE);
	assert_int_equal(g1->ecc_mode, 1);
	assert_true(g1->valid & VRAMZ_F_ECC_VOL);
	assert_int_equal(g1->ecc_corrected_volatile, 12);
	assert_int_equal(g1->ecc_corrected_aggregate, 40);
	assert_true(g1->valid & VRAMZ_F_REMAP);
	assert_int_equal(g1->remap_correctable_rows, 3);
	assert_int_equal(g1->remap_pending, 1);
	assert_int_equal(g1->pcie_replays, 7);
	assert_int_equal(g3->remap_failure, 1);
	assert_int_equal(g3->remap_uncorrectable_rows, 1);
	assert_int_equal(g3->ecc_uncorrected_aggregate, 2);
	/* Hopper: no retired pages, no pending status; no watcher: no Xid */
	assert_int_equal(g1->valid & (VRAMZ_F_RETIRED | VRAMZ_F_RETIRED_PENDING | VRAMZ_F_XID), 0);
	assert_int_equal(trace_count("nvmlDeviceGetRetiredPages_v2", 1), 1);
	/* refused once, not asked again */
	trace_reset();
	sample(ctx, VRAMZ_SAMPLE_HEALTH);
	assert_int_equal(trace_count("nvmlDeviceGetRetiredPages_v2", -1), 0);
	assert_int_equal(trace_count("nvmlDeviceGetRetiredPagesPendingStatus", -1), 0);
	assert_int_equal(trace_count("nvmlDeviceGetRemappedRows", -1), 4);
	/* the ECC mode (the dearest call, 0.3 ms on H200) is kept 10 min:
	 * the second reading still says it, without asking */
	assert_int_equal(trace_count("nvmlDeviceGetEccMode", -1), 0);
	assert_int_equal(gpu_of(sample(ctx, VRAMZ_SAMPLE_HEALTH), 1)->ecc_mode, 1);
	done(ctx);
}

static void test_events(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("health.scn");
	vramz_event ev;
	assert_int_equal(vramz_events_wait(ctx, 10, &ev), VRAMZ_EINVAL); /* not opened */
	assert_int_equal(vramz_events_open(ctx), 4);
	assert_int_equal(vramz_events_wait(ctx, 100, &ev), 0);
	static const struct { unsigned gpu, type; uint64_t data; } want[] = {
		{1, VRAMZ_EV_ECC_SBE, 0}, {2, VRAMZ_EV_ECC_DBE, 0}, {2, VRAMZ_EV_XID, 48},
		{3, VRAMZ_EV_XID, 79}};
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(vramz_events_wait(ctx, 10000, &ev), 1);
		assert_int_equal(ev.gpu, want[i].gpu);
		assert_int_equal(ev.type, want[i].type);
		assert_int_equal(ev.data, want[i].data);
		assert_true(ev.time_ms > 1700000000000ull);
	}
	assert_int_equal(vramz_events_wait(ctx, 200, &ev), 0);
	done(ctx);
}

int main(void)
{
	fixture_begin();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_health_fields, teardown),
		cmocka_unit_test_teardown(test_events, teardown),
	};
	int fails = cmocka_run_group_tests(tests, NULL, NULL);
	fixture_end();
	return fails;
}
