/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_fixture.h - what the NVML backend's unit tests share
 * (test_nvml_backend.c, test_nvml_procs.c): opening a context on a fake
 * NVML scenario, sampling, finding a GPU or process in a snapshot, the
 * fake's call trace (FAKE_NVML_TRACE: one line per NVML call, so costs are
 * checked by what was called, not by timing) and rewriting a live
 * scenario.  Each test program is one translation unit including this. */
#ifndef VRAMZ_NVML_FIXTURE_H
#define VRAMZ_NVML_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "vramz/vramz.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static char trace_path[256];
/* The context a test has open: closed by the teardown if an assertion
 * jumped out first, so one failure does not leave the fake initialised
 * (and its scenario loaded) under the next test. */
static vramz_ctx *open_ctx;

static inline void use_scenario(const char *scn)
{
	char path[4096];
	const char *dir = getenv("SCENARIOS");
	assert_non_null(dir);
	if (scn[0] == '/')
		snprintf(path, sizeof path, "%s", scn);
	else
		snprintf(path, sizeof path, "%s/%s", dir, scn);
	setenv("FAKE_NVML_SCENARIO", path, 1);
}

/* The library of one fake build: "full", "legacy" or "broken". */
static inline const char *variant(const char *name)
{
	static char path[4096];
	const char *root = getenv("FAKE_NVML_ROOT");
	assert_non_null(root);
	snprintf(path, sizeof path, "%s/%s/libnvidia-ml.so.1", root, name);
	return path;
}

static inline vramz_ctx *open_variant(const char *scn, const char *var)
{
	vramz_open_opts o = {.size = sizeof o, .nvml_path = var ? variant(var) : NULL};
	vramz_ctx *ctx = NULL;
	use_scenario(scn);
	int rc = vramz_open(&ctx, &o);
	open_ctx = ctx;
	if (rc)
		fail_msg("vramz_open(%s): %s: %s", scn, vramz_strerror(rc), vramz_last_error(ctx));
	return ctx;
}

static inline void done(vramz_ctx *ctx)
{
	vramz_close(ctx);
	open_ctx = NULL;
}

static inline int teardown(void **state)
{
	(void)state;
	vramz_close(open_ctx);
	open_ctx = NULL;
	return 0;
}

static inline vramz_ctx *open_on(const char *scn)
{
	return open_variant(scn, NULL);
}

static inline const vramz_snapshot *sample(vramz_ctx *ctx, unsigned flags)
{
	const vramz_snapshot *snap = NULL;
	int rc = vramz_sample(ctx, flags, &snap);
	if (rc)
		fail_msg("vramz_sample: %s: %s", vramz_strerror(rc), vramz_last_error(ctx));
	return snap;
}

static inline const vramz_gpu_sample *gpu_of(const vramz_snapshot *s, unsigned index)
{
	for (unsigned i = 0; i < s->gpu_count; i++)
		if (s->gpus[i].index == index)
			return &s->gpus[i];
	fail_msg("GPU %u not in the snapshot", index);
	return NULL;
}

static inline const vramz_proc_sample *proc_of(const vramz_snapshot *s, unsigned gpu, uint32_t pid)
{
	const vramz_proc_sample *hit = NULL;
	for (unsigned i = 0; i < s->proc_count; i++) {
		if (s->procs[i].gpu_index != gpu || s->procs[i].pid != pid)
			continue;
		if (hit)
			fail_msg("pid %u listed twice on GPU %u", pid, gpu);
		hit = &s->procs[i];
	}
	if (!hit)
		fail_msg("pid %u not listed on GPU %u", pid, gpu);
	return hit;
}

/* ---- tracing ------------------------------------------------------------- */

static inline void trace_reset(void)
{
	FILE *f = fopen(trace_path, "w");
	assert_non_null(f);
	fclose(f);
}

/* How many calls of fn (on GPU index gpu, or any with -1) the trace holds. */
static inline int trace_count(const char *fn, int gpu)
{
	FILE *f = fopen(trace_path, "r");
	char line[256], name[200];
	int n = 0, idx;
	assert_non_null(f);
	while (fgets(line, sizeof line, f)) {
		char where[16];
		if (sscanf(line, "%199s %15s", name, where) != 2 || strcmp(name, fn))
			continue;
		idx = where[0] == '-' ? -1 : atoi(where);
		n += gpu < 0 || idx == gpu;
	}
	fclose(f);
	return n;
}

static const char *const slow_calls[] = {
	"nvmlDeviceGetPcieThroughput",
	"nvmlDeviceGetTotalEnergyConsumption",
	"nvmlDeviceGetMaxClockInfo",
	"nvmlDeviceGetMemoryBusWidth",
};

static inline void expect_no_slow_calls(const char *when)
{
	for (size_t i = 0; i < sizeof slow_calls / sizeof slow_calls[0]; i++)
		if (trace_count(slow_calls[i], -1))
			fail_msg("%s called %s (%d times)", when, slow_calls[i],
				 trace_count(slow_calls[i], -1));
}

/* writes a scenario file whole (by rename: the fake reloads on change) */
static inline void write_scn(const char *path, const char *text)
{
	char tmp[300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

#define REUSE_HEAD "driver 580.159.04\nnvml 13.580.159.04\ncuda 13000\n" \
	"gpu 0 name=\"NVIDIA H200\" uuid=GPU-8f3a61c2-5be4-4d0e-9a71-2c6f0e4b7d19 " \
	"pci=00000000:19:00.0 mem_total=143771MiB mem_reserved=616MiB util=50 "

/* main()'s first and last steps: a private trace file for the fake */
static inline void fixture_begin(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(trace_path, sizeof trace_path, "%s/vramz-trace-%d.txt",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	setenv("FAKE_NVML_TRACE", trace_path, 1);
}

static inline void fixture_end(void)
{
	unlink(trace_path);
}

#endif
