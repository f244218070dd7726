/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_backend.c - the NVML backend, through the public API, against
 * the fake libnvidia-ml.so.1 (full, legacy and broken builds).
 *
 * What a user would see wrong if these broke: "used" disagreeing with
 * nvidia-smi (reserved memory), a process counted twice or its unknown
 * memory shown as 0, processes missing past the first 64, a GPU that fell
 * off the bus hiding the others, an unsupported reading printed as a
 * number, a broken driver giving a vague error, and a 10 Hz sampler made
 * late by calls that cost milliseconds.  FAKE_NVML_TRACE (one line per NVML
 * call) lets the last be checked by what was called, not by timing.
 * The process lists and per-process utilization: test_nvml_procs.c.
 */
#include "nvml_fixture.h"

/* ---- memory -------------------------------------------------------------- */

static void test_memory_v2(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(s->gpu_count, 2);
	const vramz_gpu_sample *g = gpu_of(s, 0);
	uint32_t want = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_TEMP |
			VRAMZ_F_POWER | VRAMZ_F_POWER_LIMIT | VRAMZ_F_CLK_SM | VRAMZ_F_CLK_MEM |
			VRAMZ_F_THROTTLE | VRAMZ_F_PROCS | VRAMZ_F_UNATTRIBUTED;
	assert_int_equal(g->valid & want, want);
	assert_false(g->lost);
	assert_int_equal(g->mem_total_bytes, 143771 * MiB);
	assert_int_equal(g->mem_reserved_bytes, 616 * MiB);
	/* nvidia-smi's memory.used: the processes' 10 + 61 GiB, not reserved */
	assert_int_equal(g->mem_used_bytes, 71 * GiB);
	assert_int_equal(g->mem_free_bytes, 143771 * MiB - 616 * MiB - 71 * GiB);
	assert_int_equal(g->unattributed_bytes, 0);
	assert_int_equal(g->util_gpu_pct, 37);
	assert_int_equal(g->util_mem_pct, 12);
	assert_int_equal(g->temp_c, 41);
	assert_int_equal(g->power_mw, 318000);
	assert_int_equal(g->power_limit_mw, 700000);
	assert_int_equal(g->clock_sm_mhz, 1980);
	assert_int_equal(g->clock_mem_mhz, 3201);
	assert_int_equal(g->proc_count, 2);
	/* fan=na: unknown, not 0 */
	assert_false(g->valid & VRAMZ_F_FAN);
	g = gpu_of(s, 1);
	assert_int_equal(g->mem_used_bytes, 85 * GiB);
	assert_int_equal(g->throttle_reasons, VRAMZ_THR_GPU_IDLE);
	/* the 2-rank job is on both GPUs, once on each */
	assert_int_equal(proc_of(s, 0, 4200301)->used_bytes, 61 * GiB);
	assert_int_equal(proc_of(s, 1, 4200301)->used_bytes, 63 * GiB);

	const vramz_system_info *sys = vramz_system(ctx);
	assert_string_equal(sys->driver_version, "580.159.04");
	assert_string_equal(sys->nvidia.nvml_version, "13.580.159.04");
	assert_int_equal(sys->nvidia.cuda_driver_version, 13000);
	assert_string_equal(sys->backend, "nvml");
	done(ctx);
}

static void test_info_and_details(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	const vramz_gpu_info *gi = vramz_gpu(ctx, 1);
	assert_non_null(gi);
	assert_null(vramz_gpu(ctx, 2));
	assert_string_equal(gi->name, "NVIDIA H200");
	assert_string_equal(gi->uuid, "GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48");
	assert_string_equal(gi->pci_bus_id, "00000000:3B:00.0");
	assert_string_equal(gi->mem_type, "HBM3e");
	assert_false(gi->valid & VRAMZ_I_BUS_WIDTH); /* slow: only with details */
	assert_int_equal(vramz_gpu_details(ctx, 1), 0);
	uint32_t want = VRAMZ_I_CC | VRAMZ_I_BUS_WIDTH | VRAMZ_I_MAX_MEMCLK | VRAMZ_I_BANDWIDTH |
			VRAMZ_I_PCIE_MAX | VRAMZ_I_NVLINK | VRAMZ_I_MIG | VRAMZ_I_ECC |
			VRAMZ_I_PERSIST | VRAMZ_I_POWER_LIMITS | VRAMZ_I_T_SHUTDOWN |
			VRAMZ_I_T_SLOWDOWN | VRAMZ_I_T_MEM_MAX | VRAMZ_I_T_GPU_MAX |
			VRAMZ_I_MAX_SMCLK | VRAMZ_I_BAR1 | VRAMZ_I_MEM_TOTAL | VRAMZ_I_ARCH |
			VRAMZ_I_DETAILS;
	assert_int_equal(gi->valid & want, want);
	assert_string_equal(gi->arch, "Hopper");
	assert_int_equal(gi->cc_major, 9);
	assert_int_equal(gi->cc_minor, 0);
	assert_int_equal(gi->mem_bus_width_bits, 6144);
	assert_int_equal(gi->max_mem_clock_mhz, 3201);
	/* 3201 MHz x 2 x 6144 bit / 8 = 4916.7 GB/s */
	assert_int_equal(gi->bandwidth_bytes_per_s, 3201000000ull * 2 * 6144 / 8);
	assert_int_equal(gi->pcie_max_gen, 5);
	assert_int_equal(gi->pcie_max_width, 16);
	assert_int_equal(gi->nvlink_count, 18);
	assert_int_equal(gi->mig_current, 0);
	assert_int_equal(gi->ecc_current, 1);
	assert_int_equal(gi->persistence, 1);
	assert_int_equal(gi->power_default_limit_mw, 700000);
	assert_int_equal(gi->power_min_limit_mw, 200000);
	assert_int_equal(gi->power_max_limit_mw, 700000);
	assert_int_equal(gi->temp_shutdown_c, 95);
	assert_int_equal(gi->temp_slowdown_c, 92);
	assert_int_equal(gi->temp_gpu_max_c, 90);
	assert_string_equal(gi->serial, "1650124000002");
	assert_string_equal(gi->vbios, "96.00.99.00.01");
	assert_int_equal(vramz_gpu_details(ctx, 7), VRAMZ_EINVAL);

	vramz_link l;
	char buf[16];
	assert_int_equal(vramz_topology(ctx, 0, 1, &l), 0);
	assert_int_equal(l.kind, VRAMZ_LINK_NVLINK);
	assert_int_equal(l.nvlinks, 18);
	assert_string_equal(vramz_link_str(&l, buf, sizeof buf), "NV18");
	assert_int_equal(vramz_topology(ctx, 1, 1, &l), 0);
	assert_string_equal(vramz_link_str(&l, buf, sizeof buf), "X");
	assert_int_equal(vramz_topology(ctx, 0, 2, &l), VRAMZ_EINVAL);
	done(ctx);
}

static void test_topology_levels(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("8gpu.scn");
	static const struct {
		unsigned a, b;
		const char *want;
	} cases[] = {
		{0, 1, "NV18"}, {2, 3, "NV12"}, {3, 2, "NV12"}, {4, 5, "PIX"},
		{6, 7, "PIX"}, {0, 2, "NODE"}, {5, 7, "NODE"}, {0, 4, "SYS"},
		{7, 1, "SYS"}, {1, 3, "NODE"},
	};
	/* twice over, in matrix order: an answer about one link or pair (NOT_
	 * SUPPORTED past a GPU's link count) must not stick to the others */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned a = 0; a < 8; a++)
			for (unsigned b = 0; b < 8; b++) {
				vramz_link l;
				assert_int_equal(vramz_topology(ctx, a, b, &l), 0);
			}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		vramz_link l;
		char buf[16];
		assert_int_equal(vramz_topology(ctx, cases[i].a, cases[i].b, &l), 0);
		if (strcmp(vramz_link_str(&l, buf, sizeof buf), cases[i].want))
			fail_msg("GPU%u-GPU%u: %s, want %s", cases[i].a, cases[i].b, buf,
				 cases[i].want);
	}
	/* thresholds are asked one type at a time: no memory maximum on this
	 * board says nothing about the GPU maximum */
	assert_int_equal(vramz_gpu_details(ctx, 2), 0);
	const vramz_gpu_info *gi = vramz_gpu(ctx, 2);
	assert_int_equal(gi->nvlink_count, 12);
	assert_false(gi->valid & VRAMZ_I_T_MEM_MAX);
	assert_true(gi->valid & VRAMZ_I_T_GPU_MAX);
	assert_int_equal(gi->temp_gpu_max_c, 90);
	assert_true(gi->valid & VRAMZ_I_MAX_SMCLK);
	assert_int_equal(gi->max_sm_clock_mhz, 1410);
	vramz_link l;
	assert_int_equal(vramz_topology(ctx, 2, 3, &l), 0);
	assert_int_equal(l.nvlinks, 12);
	done(ctx);
}

/* An older driver: no memory v2 (no reserved figure), 16-byte v1 process
 * records, throttle reasons under their old name. */
static void test_legacy_driver(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_variant("2gpu-h200.scn", "legacy");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	const vramz_gpu_sample *g = gpu_of(s, 0);
	assert_true(g->valid & VRAMZ_F_MEM);
	assert_false(g->valid & VRAMZ_F_MEM_RESERVED);
	assert_int_equal(g->mem_total_bytes, 143771 * MiB);
	/* v1 counts the reserved memory as used */
	assert_int_equal(g->mem_used_bytes, 71 * GiB + 616 * MiB);
	assert_true(g->valid & VRAMZ_F_THROTTLE);
	assert_int_equal(gpu_of(s, 1)->throttle_reasons, VRAMZ_THR_GPU_IDLE);
	/* v1 records widened: pid and memory in the right fields, no MIG ids */
	assert_int_equal(g->proc_count, 2);
	const vramz_proc_sample *p = proc_of(s, 0, 4200101);
	assert_int_equal(p->used_bytes, 10 * GiB);
	assert_true(p->valid & VRAMZ_P_USED);
	assert_false(p->valid & VRAMZ_P_MIG);
	assert_int_equal(p->type, VRAMZ_PT_COMPUTE);
	assert_int_equal(proc_of(s, 0, 4200301)->used_bytes, 61 * GiB);
	assert_int_equal(proc_of(s, 1, 4200201)->used_bytes, 22 * GiB);
	assert_int_equal(proc_of(s, 1, 4200301)->used_bytes, 63 * GiB);
	assert_int_equal(proc_of(s, 1, 4200301)->sm_pct, 58);
	assert_int_equal(vramz_gpu_details(ctx, 0), 0);
	assert_int_equal(vramz_gpu(ctx, 0)->mem_total_bytes, 143771 * MiB);
	assert_true(vramz_system(ctx)->nvidia.cuda_driver_version == 13000);
	done(ctx);
}

static void test_legacy_uses_old_names(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_variant("2gpu-h200.scn", "legacy");
	trace_reset();
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(trace_count("nvmlDeviceGetCurrentClocksThrottleReasons", 0), 1);
	assert_int_equal(trace_count("nvmlDeviceGetMemoryInfo", 0), 1);
	assert_int_equal(trace_count("nvmlDeviceGetComputeRunningProcesses", 0), 1);
	assert_int_equal(trace_count("nvmlDeviceGetGraphicsRunningProcesses", 0), 1);
	done(ctx);
}

/* ---- memory temperature, call counts -------------------------------------- */

/* Memory temperature comes from a field value; a GPU that refuses the field
 * (inside a successful call, as NVML does) is not asked again. */
static void test_memory_temperature(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_true(gpu_of(s, 0)->valid & VRAMZ_F_TEMP_MEM);
	assert_int_equal(gpu_of(s, 0)->temp_mem_c, 45);
	assert_int_equal(gpu_of(s, 1)->temp_mem_c, 52);
	done(ctx);

	char path[] = "/tmp/vramz-memtemp-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_scn(path, REUSE_HEAD "temp=40\n"); /* no temp_mem */
	ctx = open_on(path);
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_TEMP_MEM);
	assert_true(gpu_of(s, 0)->valid & VRAMZ_F_TEMP);
	assert_int_equal(trace_count("nvmlDeviceGetFieldValues", 0), 1);
	trace_reset();
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_TEMP_MEM);
	assert_int_equal(trace_count("nvmlDeviceGetFieldValues", 0), 0);
	done(ctx);
	unlink(path);
}

/* VRAMZ_OPEN_PROFILE counts every call a tick makes, by name; without it
 * nothing is kept. */
static void test_call_stats(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	assert_int_equal(vramz_call_stats(ctx, NULL, 0), 0);
	done(ctx);
	use_scenario("2gpu-h200.scn");
	vramz_open_opts o = {.size = sizeof o, .flags = VRAMZ_OPEN_PROFILE};
	assert_int_equal(vramz_open(&ctx, &o), 0);
	open_ctx = ctx;
	trace_reset();
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	vramz_call_stat st[128];
	unsigned n = vramz_call_stats(ctx, st, 128);
	assert_true(n > 5 && n <= 128);
	assert_int_equal(vramz_call_stats(ctx, st, 2), n); /* the count, whatever the room */
	n = vramz_call_stats(ctx, st, 128);
	int seen = 0;
	for (unsigned i = 0; i < n; i++) {
		assert_true(st[i].calls > 0);
		assert_true(st[i].wall_ns > 0);
		if (!strcmp(st[i].name, "nvmlDeviceGetMemoryInfo_v2")) {
			/* two ticks of two GPUs, as the fake's own trace says */
			assert_int_equal(st[i].calls, 4);
			assert_int_equal(trace_count("nvmlDeviceGetMemoryInfo_v2", -1), 4);
			seen = 1;
		}
	}
	assert_true(seen);
	done(ctx);
}

/* ---- MIG ----------------------------------------------------------------- */

static void test_mig_instances(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("mig.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_int_equal(s->mig_count, 3);
	static const struct {
		unsigned gi;
		uint64_t total, used;
		const char *uuid;
	} want[] = {
		{1, 40192 * MiB, 32 * GiB, "MIG-a1b2c3d4-0001-5e6f-8a9b-0c1d2e3f4a51"},
		{5, 19968 * MiB, 12 * GiB, "MIG-a1b2c3d4-0005-5e6f-8a9b-0c1d2e3f4a55"},
		{13, 9728 * MiB, 1 * GiB, "MIG-a1b2c3d4-000d-5e6f-8a9b-0c1d2e3f4a5d"},
	};
	for (unsigned i = 0; i < 3; i++) {
		const vramz_mig_sample *m = &s->migs[i];
		assert_int_equal(m->parent_index, 0);
		assert_int_equal(m->mig_index, i);
		assert_int_equal(m->gi_id, want[i].gi);
		assert_int_equal(m->ci_id, 0);
		assert_string_equal(m->uuid, want[i].uuid);
		assert_true(m->valid & VRAMZ_F_MEM);
		assert_int_equal(m->mem_total_bytes, want[i].total);
		assert_int_equal(m->mem_used_bytes, want[i].used);
		assert_true(m->mem_free_bytes <= m->mem_total_bytes - m->mem_used_bytes);
	}
	const vramz_proc_sample *p = proc_of(s, 0, 4200403);
	assert_true(p->valid & VRAMZ_P_MIG);
	assert_int_equal(p->gi_id, 5);
	assert_int_equal(p->ci_id, 0);
	assert_int_equal(p->used_bytes, 12 * GiB);
	/* without the flag, no instances */
	s = sample(ctx, VRAMZ_SAMPLE_PROCS);
	assert_int_equal(s->mig_count, 0);
	done(ctx);
}

/* ---- lost GPUs and per-field errors -------------------------------------- */

static void test_lost_mid_run(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("lost.scn");
	const vramz_snapshot *s;
	/* the fake loses GPU 1 right after its 2nd memory reading, so the
	 * second tick meets the loss part way through its calls */
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_false(gpu_of(s, 1)->lost);
	assert_int_equal(gpu_of(s, 1)->mem_used_bytes, 70 * GiB);
	for (int tick = 2; tick <= 4; tick++) {
		s = sample(ctx, VRAMZ_SAMPLE_DEFAULT); /* still succeeds */
		const vramz_gpu_sample *g1 = gpu_of(s, 1), *g0 = gpu_of(s, 0);
		assert_true(g1->lost);
		assert_int_equal(g1->valid, 0);         /* nothing of it is valid */
		assert_int_equal(g1->proc_count, 0);
		assert_false(g0->lost);
		assert_true(g0->valid & VRAMZ_F_MEM);
		assert_int_equal(g0->mem_used_bytes, 8 * GiB);
		assert_int_equal(s->proc_count, 1);
		assert_int_equal(s->procs[0].pid, 4200501);
	}
	/* only the lost GPU selected: the sample fails, and says why */
	assert_int_equal(vramz_select(ctx, "1"), 0);
	const vramz_snapshot *snap = NULL;
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &snap), VRAMZ_ELOST);
	assert_non_null(snap);
	assert_true(snap->gpus[0].lost);
	assert_non_null(strstr(vramz_last_error(ctx), "lost"));
	done(ctx);
}

static void test_lost_at_open(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("core-lost.scn");
	assert_int_equal(vramz_gpu_count(ctx), 3);
	assert_string_equal(vramz_gpu(ctx, 2)->name, "NVIDIA H100 80GB HBM3");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_true(gpu_of(s, 1)->lost);
	assert_false(gpu_of(s, 0)->lost);
	assert_false(gpu_of(s, 2)->lost);
	assert_int_equal(gpu_of(s, 2)->mem_used_bytes, 2 * GiB);
	assert_int_equal(vramz_gpu_details(ctx, 1), VRAMZ_ELOST);
	vramz_link l;
	assert_int_equal(vramz_topology(ctx, 0, 1, &l), VRAMZ_ELOST);
	done(ctx);
}

static void test_errors_stay_unknown(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("errors.scn");
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_SLOW);
	const vramz_gpu_sample *g0 = gpu_of(s, 0), *g1 = gpu_of(s, 1);
	/* GPU 1: NOT_SUPPORTED / NO_PERMISSION / absent readings are unknown */
	assert_false(g1->valid & VRAMZ_F_TEMP);
	assert_false(g1->valid & VRAMZ_F_POWER);
	assert_false(g1->valid & VRAMZ_F_POWER_LIMIT);
	assert_false(g1->valid & VRAMZ_F_ENERGY);
	assert_false(g1->valid & VRAMZ_F_FAN);
	assert_false(g1->valid & VRAMZ_F_PCIE_TPUT);
	assert_int_equal(g1->temp_c, 0);
	assert_int_equal(g1->power_mw, 0);
	assert_true(g1->valid & VRAMZ_F_MEM);
	assert_true(g1->valid & VRAMZ_F_UTIL);
	assert_int_equal(g1->util_gpu_pct, 50);
	assert_false(g1->valid & VRAMZ_F_UNATTRIBUTED); /* used=na processes */
	/* process utilization NOT_SUPPORTED: SM unknown, not 0 */
	const vramz_proc_sample *p = proc_of(s, 1, 4200604);
	assert_false(p->valid & VRAMZ_P_SM);
	assert_int_equal(p->type, VRAMZ_PT_COMPUTE | VRAMZ_PT_GRAPHICS);
	assert_int_equal(p->used_bytes, 9 * GiB);
	assert_false(proc_of(s, 1, 4200602)->valid & VRAMZ_P_USED);
	assert_false(proc_of(s, 1, 4200603)->valid & VRAMZ_P_USED);
	/* GPU 0 keeps its readings: one GPU's errors stay on that GPU */
	uint32_t want = VRAMZ_F_MEM | VRAMZ_F_TEMP | VRAMZ_F_POWER | VRAMZ_F_POWER_LIMIT |
			VRAMZ_F_ENERGY | VRAMZ_F_FAN | VRAMZ_F_UNATTRIBUTED | VRAMZ_F_UTIL;
	assert_int_equal(g0->valid & want, want);
	assert_false(g0->valid & VRAMZ_F_PCIE_TPUT); /* refused on every GPU */
	assert_true(proc_of(s, 0, 4200601)->valid & VRAMZ_P_SM);
	assert_int_equal(proc_of(s, 0, 4200601)->sm_pct, 15);
	/* utilization fails from its 4th call on GPU 1 only */
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_false(gpu_of(s, 1)->valid & VRAMZ_F_UTIL);
	assert_true(gpu_of(s, 1)->valid & VRAMZ_F_MEM);
	assert_true(gpu_of(s, 0)->valid & VRAMZ_F_UTIL);
	/* static facts: a refused serial is empty, not garbage */
	assert_int_equal(vramz_gpu_details(ctx, 1), 0);
	assert_string_equal(vramz_gpu(ctx, 1)->serial, "");
	assert_int_equal(vramz_gpu_details(ctx, 0), 0);
	assert_string_equal(vramz_gpu(ctx, 0)->serial, "1321723000001");
	assert_false(vramz_gpu(ctx, 1)->valid & VRAMZ_I_POWER_LIMITS);
	assert_false(vramz_gpu(ctx, 1)->valid & VRAMZ_I_T_SHUTDOWN);
	done(ctx);
}

/* ---- open failures ------------------------------------------------------- */

/* Writes a scenario into the temporary directory and returns its path. */
static const char *write_scenario(const char *name, const char *body)
{
	static char path[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/vramz-nvml-%d-%s.scn", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid(), name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	fclose(f);
	return path;
}

static void expect_open_fails(const char *var, int code, const char *detail)
{
	vramz_open_opts o = {.size = sizeof o, .nvml_path = var};
	vramz_ctx *ctx = NULL;
	int rc = vramz_open(&ctx, &o);
	open_ctx = ctx;
	assert_non_null(ctx);
	const char *msg = vramz_last_error(ctx);
	if (rc != code)
		fail_msg("open: got %d (%s: %s), want %d (%s)", rc, vramz_strerror(rc), msg, code,
			 vramz_strerror(code));
	if (!strstr(msg, detail))
		fail_msg("open: detail '%s' does not say '%s'", msg, detail);
	assert_null(strchr(msg, '\n'));
	assert_string_not_equal(vramz_strerror(rc), "unknown error");
	done(ctx);
}

static void test_init_errors(void **state)
{
	(void)state;
	static const struct {
		const char *nvml;
		int code;
		const char *says;
	} cases[] = {
		{"DRIVER_NOT_LOADED", VRAMZ_EDRIVER, "Driver Not Loaded"},
		{"LIB_RM_VERSION_MISMATCH", VRAMZ_EMISMATCH, "nvmlInit"},
		{"NO_PERMISSION", VRAMZ_EPERM, "Insufficient Permissions"},
		{"LIBRARY_NOT_FOUND", VRAMZ_ENOLIB, "nvmlInit"},
		{"GPU_IS_LOST", VRAMZ_ELOST, "nvmlInit"},
		{"NOT_SUPPORTED", VRAMZ_EUNSUPPORTED, "nvmlInit"},
		{"FUNCTION_NOT_FOUND", VRAMZ_ESYMBOL, "nvmlInit"},
		{"MEMORY", VRAMZ_ENOMEM, "nvmlInit"},
		{"NOT_FOUND", VRAMZ_ENOTFOUND, "nvmlInit"},
		{"INVALID_ARGUMENT", VRAMZ_EINVAL, "nvmlInit"},
		{"UNKNOWN", VRAMZ_EBACKEND, "nvmlInit"},
		{"TIMEOUT", VRAMZ_EBACKEND, "nvmlInit"},
		{"IRQ_ISSUE", VRAMZ_EBACKEND, "nvmlInit"},
		{"RESET_REQUIRED", VRAMZ_EBACKEND, "nvmlInit"},
		{"OPERATING_SYSTEM", VRAMZ_EBACKEND, "nvmlInit"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char body[256];
		snprintf(body, sizeof body, "driver 580.159.04\ninit_error %s\n", cases[i].nvml);
		setenv("FAKE_NVML_SCENARIO", write_scenario("init", body), 1);
		expect_open_fails(NULL, cases[i].code, cases[i].says);
	}
	unlink(write_scenario("init", ""));
	/* no scenario at all is the fake's "no driver" */
	setenv("FAKE_NVML_SCENARIO", "/nonexistent/none.scn", 1);
	expect_open_fails(NULL, VRAMZ_EDRIVER, "nvmlInit: Driver Not Loaded");
}

static void test_count_and_device_errors(void **state)
{
	(void)state;
	/* the count refused */
	setenv("FAKE_NVML_SCENARIO",
	       write_scenario("count",
			      "gpu 0 name=\"NVIDIA H200\" uuid=GPU-1 pci=00000000:19:00.0\n"
			      "error nvmlDeviceGetCount_v2 NO_PERMISSION\n"),
	       1);
	expect_open_fails(NULL, VRAMZ_EPERM, "nvmlDeviceGetCount");
	/* a driver with no GPUs */
	setenv("FAKE_NVML_SCENARIO", write_scenario("count", "driver 580.159.04\n"), 1);
	expect_open_fails(NULL, VRAMZ_ENODEV, "no GPUs");
	/* one GPU's handle refused: the other is still there, the first lost */
	setenv("FAKE_NVML_SCENARIO",
	       write_scenario("count",
			      "gpu 0 name=\"NVIDIA H200\" uuid=GPU-1 pci=00000000:19:00.0 mem_total=1GiB\n"
			      "gpu 1 name=\"NVIDIA H200\" uuid=GPU-2 pci=00000000:3B:00.0 mem_total=1GiB\n"
			      "error nvmlDeviceGetHandleByIndex_v2 gpu=0 NO_PERMISSION\n"),
	       1);
	vramz_ctx *ctx = NULL;
	assert_int_equal(vramz_open(&ctx, NULL), 0);
	open_ctx = ctx;
	assert_int_equal(vramz_gpu_count(ctx), 2);
	const vramz_snapshot *s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_true(gpu_of(s, 0)->lost);
	assert_false(gpu_of(s, 1)->lost);
	assert_string_equal(vramz_gpu(ctx, 1)->uuid, "GPU-2");
	done(ctx);
	/* memory refused: unknown, never zero; the sample still succeeds */
	setenv("FAKE_NVML_SCENARIO",
	       write_scenario("count",
			      "gpu 0 name=\"NVIDIA H200\" uuid=GPU-1 pci=00000000:19:00.0 mem_total=1GiB temp=40\n"
			      "error nvmlDeviceGetMemoryInfo_v2 NO_PERMISSION\n"
			      "error nvmlDeviceGetComputeRunningProcesses_v3 NO_PERMISSION\n"
			      "error nvmlDeviceGetGraphicsRunningProcesses_v3 NO_PERMISSION\n"
			      "error nvmlDeviceGetMPSComputeRunningProcesses_v3 NO_PERMISSION\n"),
	       1);
	assert_int_equal(vramz_open(&ctx, NULL), 0);
	open_ctx = ctx;
	s = sample(ctx, VRAMZ_SAMPLE_DEFAULT);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_MEM);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_PROCS);
	assert_false(gpu_of(s, 0)->valid & VRAMZ_F_UNATTRIBUTED);
	assert_true(gpu_of(s, 0)->valid & VRAMZ_F_TEMP);
	done(ctx);
	unlink(write_scenario("count", ""));
}

static void test_library_missing_or_broken(void **state)
{
	(void)state;
	use_scenario("1gpu.scn");
	expect_open_fails("/nonexistent/libnvidia-ml.so.1", VRAMZ_ENOLIB,
			  "/nonexistent/libnvidia-ml.so.1");
	expect_open_fails(variant("broken"), VRAMZ_ESYMBOL, "nvmlDeviceGetCount_v2");
	/* and the full build right after still works */
	vramz_ctx *ctx = open_variant("1gpu.scn", "full");
	assert_int_equal(vramz_gpu_count(ctx), 1);
	done(ctx);
}

static void test_strerror_table(void **state)
{
	(void)state;
	for (int e = 0; e >= VRAMZ_EEOF; e--)
		assert_string_not_equal(vramz_strerror(e), "unknown error");
	assert_string_equal(vramz_strerror(1), "unknown error");
	assert_string_equal(vramz_strerror(VRAMZ_EEOF - 1), "unknown error");
	/* the codes' words are vendor-neutral; the detail names the vendor */
	assert_string_equal(vramz_strerror(VRAMZ_ENOLIB), "GPU management library not found");
	for (int e = 0; e >= VRAMZ_EEOF; e--)
		assert_null(strstr(vramz_strerror(e), "NVIDIA"));
	assert_string_equal(vramz_version(), VRAMZ_VERSION_STRING);
}

int main(void)
{
	fixture_begin();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memory_v2, teardown),
		cmocka_unit_test_teardown(test_info_and_details, teardown),
		cmocka_unit_test_teardown(test_topology_levels, teardown),
		cmocka_unit_test_teardown(test_legacy_driver, teardown),
		cmocka_unit_test_teardown(test_legacy_uses_old_names, teardown),
		cmocka_unit_test_teardown(test_mig_instances, teardown),
		cmocka_unit_test_teardown(test_call_stats, teardown),
		cmocka_unit_test_teardown(test_memory_temperature, teardown),
		cmocka_unit_test_teardown(test_lost_mid_run, teardown),
		cmocka_unit_test_teardown(test_lost_at_open, teardown),
		cmocka_unit_test_teardown(test_errors_stay_unknown, teardown),
		cmocka_unit_test_teardown(test_init_errors, teardown),
		cmocka_unit_test_teardown(test_count_and_device_errors, teardown),
		cmocka_unit_test_teardown(test_library_missing_or_broken, teardown),
		cmocka_unit_test_teardown(test_strerror_table, teardown),
	};
	int fails = cmocka_run_group_tests(tests, NULL, NULL);
	fixture_end();
	return fails;
}
