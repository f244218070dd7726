/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_procs.c - the NVML backend's process lists and per-process
 * utilization, through the public API, against the fake libnvidia-ml.so.1.
 *
 * What a user would see wrong if these broke: a process counted twice or
 * its unknown memory shown as 0, processes missing past the first 64, a
 * new process or its memory shown a second late or never, a busy process
 * called idle, and a 10 Hz sampler made late by calls that cost
 * milliseconds (checked through the fake's call trace, not by timing).
 */
#include "nvml_fixture.h"

static void test_merge_and_dedupe(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-merge.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	const vramz_gpu_sample *g0 = gpu_of(s, 0), *g1 = gpu_of(s, 1);
	assert_int_equal(g0->proc_count, 3);
	const vramz_proc_sample *p = proc_of(s, 0, 4600001);
	assert_int_equal(p->type, VRAMZ_PT_COMPUTE | VRAMZ_PT_GRAPHICS);
	assert_int_equal(p->used_bytes, 3 * GiB); /* once, not 6 */
	assert_int_equal(p->sm_pct, 30);
	assert_int_equal(p->mem_util_pct, 7);
	p = proc_of(s, 0, 4600002);
	assert_int_equal(p->type, VRAMZ_PT_COMPUTE | VRAMZ_PT_GRAPHICS);
	assert_true(p->valid & VRAMZ_P_USED);      /* graphics had a figure */
	assert_int_equal(p->used_bytes, 2 * GiB);
	p = proc_of(s, 0, 4600003);
	assert_int_equal(p->type, VRAMZ_PT_MPS);
	assert_int_equal(p->used_bytes, 1 * GiB);
	/* 6 GiB listed + 100 MiB no process owns */
	assert_int_equal(g0->mem_used_bytes, 6 * GiB + 100 * MiB);
	assert_true(g0->valid & VRAMZ_F_UNATTRIBUTED);
	assert_int_equal(g0->unattributed_bytes, 100 * MiB);

	/* used=na stays unknown, and so does what no process accounts for */
	assert_int_equal(g1->proc_count, 2);
	p = proc_of(s, 1, 4600012);
	assert_false(p->valid & VRAMZ_P_USED);
	assert_int_equal(p->used_bytes, 0);
	assert_false(g1->valid & VRAMZ_F_UNATTRIBUTED);
	assert_true(g1->valid & VRAMZ_F_PROCS);
	/* no process has an SM sample: NVML says NOT_FOUND, a true 0 % */
	for (unsigned i = g1->proc_first; i < g1->proc_first + g1->proc_count; i++) {
		assert_true(s->procs[i].valid & VRAMZ_P_SM);
		assert_int_equal(s->procs[i].sm_pct, 0);
	}
	/* the slice of each GPU holds that GPU's processes only */
	for (unsigned i = g0->proc_first; i < g0->proc_first + g0->proc_count; i++)
		assert_int_equal(s->procs[i].gpu_index, 0);
	done(ctx);
}


static void test_no_proc_flags(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-merge.scn");
	trace_reset();
	const vramz_snapshot *s = sample(ctx, 0);
	assert_int_equal(s->proc_count, 0);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_PROCS);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_UNATTRIBUTED); /* not read: unknown */
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", -1), 0);
	/* lists without per-process utilization */
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_PROCS);
	assert_int_equal(trace_count("nvmlDeviceGetProcessUtilization", -1), 0);
	assert_false(proc_of(s, 0, 4600001)->valid & VRAMZ_P_SM);
	done(ctx);
}


static void test_list_growth_200(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-200procs.scn");
	trace_reset();
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	const vramz_gpu_sample *g = gpu_of(s, 0);
	assert_int_equal(g->proc_count, 200);
	assert_int_equal(s->proc_count, 200);
	uint64_t sum = 0;
	for (uint32_t pid = 4700001; pid <= 4700200; pid++) {
		const vramz_proc_sample *p = proc_of(s, 0, pid);
		assert_int_equal(p->used_bytes, 100 * MiB);
		assert_true(p->valid & VRAMZ_P_SM);
		assert_int_equal(p->sm_pct, (pid - 4700000) % 100);
		sum += p->used_bytes;
	}
	assert_int_equal(g->mem_used_bytes, sum);
	assert_int_equal(g->unattributed_bytes, 0);
	/* the first tick had to grow the buffers... */
	assert_true(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0) >= 2);
	/* ...the next one, with nothing changed (used memory the same),
	 * reuses the lists: no list call, the same 200 processes */
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(s->proc_count, 200);
	assert_int_equal(proc_of(s, 0, 4700200)->used_bytes, 100 * MiB);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 0);
	assert_int_equal(trace_count("nvmlDeviceGetGraphicsRunningProcesses_v3", 0), 0);
	assert_int_equal(trace_count("nvmlDeviceGetMPSComputeRunningProcesses_v3", 0), 0);
	assert_in_range(trace_count("nvmlDeviceGetProcessUtilization", 0), 0, 1);
	done(ctx);
}


/* The hot path: a default tick reads no slow call, a second tick of an
 * unchanged machine reads no process list (test_list_reuse), and the slow
 * calls come only when asked for. */
static void test_tick_calls(void **state)
{
	(void)state;
	trace_reset();
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	expect_no_slow_calls("vramz_open");
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	expect_no_slow_calls("the first default tick");
	trace_reset();
	const vramz_snapshot *s2 = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	expect_no_slow_calls("the second default tick");
	/* a tick that skips the utilization read keeps the last figures */
	assert_true(proc_of(s2, 0, 4200101)->valid & VRAMZ_P_SM);
	assert_int_equal(proc_of(s2, 0, 4200101)->sm_pct, 12);
	assert_int_equal(proc_of(s2, 1, 4200301)->sm_pct, 58);
	for (int gpu = 0; gpu < 2; gpu++) {
		assert_int_equal(trace_count("nvmlDeviceGetMemoryInfo_v2", gpu), 1);
		assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", gpu), 0);
		assert_int_equal(trace_count("nvmlDeviceGetGraphicsRunningProcesses_v3", gpu), 0);
		assert_in_range(trace_count("nvmlDeviceGetProcessUtilization", gpu), 0, 1);
		assert_int_equal(trace_count("nvmlDeviceGetMPSComputeRunningProcesses_v3", gpu), 0);
		/* static facts are not re-read per tick */
		assert_int_equal(trace_count("nvmlDeviceGetName", gpu), 0);
		assert_int_equal(trace_count("nvmlDeviceGetUUID", gpu), 0);
		assert_int_equal(trace_count("nvmlDeviceGetPciInfo_v3", gpu), 0);
	}
	/* the H200 scenario has the PCIe byte counters: a first slow reading
	 * reads them twice, 20 ms apart (one field-values call each, besides
	 * the tick's memory temperature), never the 20 ms-per-direction call */
	trace_reset();
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_SLOW);
	assert_int_equal(trace_count("nvmlDeviceGetPcieThroughput", 0), 0);
	assert_int_equal(trace_count("nvmlDeviceGetFieldValues", 0), 1 + 2);
	assert_int_equal(trace_count("nvmlDeviceGetTotalEnergyConsumption", 1), 1);
	const vramz_gpu_sample *g = gpu_of(s, 1);
	assert_true(g->valid & VRAMZ_F_ENERGY);
	assert_true(g->energy_mj >= 223456789); /* the counter runs on with power */
	assert_true(g->valid & VRAMZ_F_PCIE_TPUT);
	/* a byte either way at each end of a 20 ms window: 50 B/s */
	assert_in_range(g->pcie_tx_bytes_per_s, 3000 * 1024 - 100, 3000 * 1024 + 100);
	assert_in_range(g->pcie_rx_bytes_per_s, 4500 * 1024 - 100, 4500 * 1024 + 100);
	/* the next one: one read, the rate over the time since; no energy
	 * when the caller leaves it out */
	struct timespec gap = {0, 300000000};
	nanosleep(&gap, NULL);
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_SLOW | VRAMZ_SAMPLE_NO_ENERGY);
	assert_int_equal(trace_count("nvmlDeviceGetFieldValues", 1), 1 + 1);
	assert_int_equal(trace_count("nvmlDeviceGetPcieThroughput", 1), 0);
	assert_int_equal(trace_count("nvmlDeviceGetTotalEnergyConsumption", 1), 0);
	g = gpu_of(s, 1);
	assert_false(g->valid & VRAMZ_F_ENERGY);
	assert_true(g->valid & VRAMZ_F_PCIE_TPUT);
	assert_in_range(g->pcie_tx_bytes_per_s, 3000 * 1024 - 10, 3000 * 1024 + 10);
	assert_in_range(g->pcie_rx_bytes_per_s, 4500 * 1024 - 10, 4500 * 1024 + 10);
	done(ctx);

	/* a driver without the counters (1gpu.scn): the throughput call, one
	 * per direction, and the scenario's figure exactly */
	ctx = open_on("1gpu.scn");
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_SLOW);
	assert_int_equal(trace_count("nvmlDeviceGetPcieThroughput", 0), 2);
	g = gpu_of(s, 0);
	assert_true(g->valid & VRAMZ_F_PCIE_TPUT);
	assert_int_equal(g->pcie_tx_bytes_per_s, 512 * 1024);
	assert_int_equal(g->pcie_rx_bytes_per_s, 768 * 1024);
	trace_reset();
	sample(ctx, VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_SLOW);
	assert_int_equal(trace_count("nvmlDeviceGetPcieThroughput", 0), 2); /* still */
	done(ctx);
}


/* Per-process utilization costs NVML 1.5 ms of CPU a GPU on H200: read at
 * most once per interval, never on a GPU whose utilization is 0, and the
 * figures stay valid between reads. */
static void test_proc_util_budget(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-procutil.scn");
	trace_reset();
	const vramz_snapshot *s = NULL;
	for (int i = 0; i < 20; i++)
		s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetProcessUtilization", 0), 0);
	assert_int_equal(trace_count("nvmlDeviceGetProcessUtilization", 1), 1);
	const vramz_proc_sample *idle = proc_of(s, 0, 4700001), *busy = proc_of(s, 1, 4700002);
	assert_true(idle->valid & VRAMZ_P_SM);
	assert_int_equal(idle->sm_pct, 0);
	assert_true(busy->valid & VRAMZ_P_SM);
	assert_int_equal(busy->sm_pct, 40);
	done(ctx);

	/* a caller that wants fresher figures pays for them */
	vramz_open_opts o = {.size = sizeof o, .proc_util_interval_ms = 1};
	use_scenario("core-procutil.scn");
	assert_int_equal(vramz_open(&ctx, &o), 0);
	open_ctx = ctx;
	trace_reset();
	for (int i = 0; i < 3; i++) {
		struct timespec ts = {0, 3000000};
		s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
		nanosleep(&ts, NULL);
	}
	assert_int_equal(trace_count("nvmlDeviceGetProcessUtilization", 1), 3);
	assert_int_equal(trace_count("nvmlDeviceGetProcessUtilization", 0), 0);
	done(ctx);
}


/* A driver that refuses a small buffer without saying how much it needs,
 * on a GPU with 800 samples waiting: the first read still gets them. */
static void test_proc_util_quiet_growth(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-procutil-quiet.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	const vramz_proc_sample *p = proc_of(s, 0, 4700011);
	assert_true(p->valid & VRAMZ_P_SM);
	assert_int_equal(p->sm_pct, 73);
	assert_int_equal(p->mem_util_pct, 12);
	done(ctx);
}


/* Process lists are re-read when the GPU's used memory changes, and at
 * least once a second while it does not; in between the last lists are
 * reused (nvml_procs: they cost more than the rest of a tick on H200). */
static void test_list_reuse(void **state)
{
	(void)state;
	char path[] = "/tmp/vramz-reuse-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_scn(path, REUSE_HEAD "mem_used=auto\n"
		  "proc gpu=0 pid=4800001 used=1GiB type=compute sm=10\n");
	vramz_ctx *ctx = open_on(path);
	trace_reset();
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1);
	assert_int_equal(s->proc_count, 1);
	/* unchanged: reused, with the same figures */
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 0);
	assert_int_equal(trace_count("nvmlDeviceGetGraphicsRunningProcesses_v3", 0), 0);
	assert_int_equal(s->proc_count, 1);
	assert_int_equal(proc_of(s, 0, 4800001)->used_bytes, GiB);
	assert_true(proc_of(s, 0, 4800001)->type & VRAMZ_PT_COMPUTE);
	/* a new process changes used memory: read at once */
	write_scn(path, REUSE_HEAD "mem_used=auto\n"
		  "proc gpu=0 pid=4800001 used=1GiB type=compute sm=10\n"
		  "proc gpu=0 pid=4800002 used=2GiB type=compute sm=0\n");
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1);
	assert_int_equal(s->proc_count, 2);
	assert_int_equal(proc_of(s, 0, 4800002)->used_bytes, 2 * GiB);
	/* a process's memory moving changes it too */
	write_scn(path, REUSE_HEAD "mem_used=auto\n"
		  "proc gpu=0 pid=4800001 used=3GiB type=compute sm=10\n"
		  "proc gpu=0 pid=4800002 used=2GiB type=compute sm=0\n");
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(proc_of(s, 0, 4800001)->used_bytes, 3 * GiB);
	/* a change that leaves used memory the same to the byte (only a
	 * scenario can do that) shows within a second */
	write_scn(path, REUSE_HEAD "mem_used=5GiB\n"
		  "proc gpu=0 pid=4800001 used=3GiB type=compute sm=10\n");
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(gpu_of(s, 0)->mem_used_bytes, 5 * GiB);
	struct timespec nap = {.tv_sec = 1, .tv_nsec = 50000000};
	nanosleep(&nap, NULL);
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses_v3", 0), 1);
	assert_int_equal(s->proc_count, 1);
	done(ctx);
	unlink(path);
}

int main(void)
{
	fixture_begin();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_merge_and_dedupe, teardown),
		cmocka_unit_test_teardown(test_no_proc_flags, teardown),
		cmocka_unit_test_teardown(test_list_growth_200, teardown),
		cmocka_unit_test_teardown(test_tick_calls, teardown),
		cmocka_unit_test_teardown(test_proc_util_budget, teardown),
		cmocka_unit_test_teardown(test_proc_util_quiet_growth, teardown),
		cmocka_unit_test_teardown(test_list_reuse, teardown),
	};
	int fails = cmocka_run_group_tests(tests, NULL, NULL);
	fixture_end();
	return fails;
}
