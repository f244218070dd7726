/* SPDX-License-Identifier: Apache-2.0 */
/* test_backends.c - the table of backends (lib/ctx.c, backends[]): a
 * recorded source is chosen by the open options and opened alone (a log by
 * replay_path; the daemon's segment only through vramz_open_daemon, never
 * by a caller's flag), and without one the live backends are probed, each
 * GPU naming the backend that reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "vramz/daemon.h"
#include "vramz/vramz.h"

static char demo[512];

static int setup(void **state)
{
	(void)state;
	const char *src = getenv("TESTS_SRC");
	snprintf(demo, sizeof demo, "%s/logs/demo.csv", src ? src : "tests");
	/* no amdgpu on the test machine's sysfs either way */
	setenv("VRAMZ_SYSFS_ROOT", "/nonexistent-sysfs", 1);
	return 0;
}

static void a_log_is_its_own_backend(void **state)
{
	(void)state;
	vramz_open_opts o = VRAMZ_OPEN_OPTS_INIT;
	o.replay_path = demo;
	vramz_ctx *ctx;
	assert_int_equal(vramz_open(&ctx, &o), 0);
	assert_int_equal(vramz_backend_count(ctx), 1);
	assert_string_equal(vramz_backend(ctx, 0)->name, "replay");
	assert_true(vramz_gpu_count(ctx) >= 2);
	assert_string_equal(vramz_gpu(ctx, 0)->backend, "replay");
	vramz_close(ctx);
}

/* The segment's flag is the library's own: a caller setting that bit still
 * gets its log replayed, not read as a daemon's segment. */
static void a_callers_flags_cannot_ask_for_the_segment(void **state)
{
	(void)state;
	vramz_open_opts o = VRAMZ_OPEN_OPTS_INIT;
	o.replay_path = demo;
	o.flags = BACKEND_OPEN_LIBRARY;
	vramz_ctx *ctx;
	assert_int_equal(vramz_open(&ctx, &o), 0);
	assert_string_equal(vramz_backend(ctx, 0)->name, "replay");
	vramz_close(ctx);
}

/* vramz_open_daemon picks the segment row: a CSV log where the segment
 * should be is refused as a segment, not replayed. */
static void the_daemon_opens_the_segment_row(void **state)
{
	(void)state;
	char dir[TMPDIR_LEN], path[600];
	assert_int_equal(tmpdir_make(dir, "backends"), 0);
	vramz_ctx *ctx;
	int rc = vramz_open_daemon(&ctx, dir, 0);
	assert_int_equal(rc, VRAMZ_ENOTFOUND);
	assert_non_null(strstr(vramz_last_error(ctx), "no daemon segment in"));
	vramz_close(ctx);

	snprintf(path, sizeof path, "%s/%s", dir, VRAMZ_SEGMENT_NAME);
	FILE *in = fopen(demo, "rb"), *out;
	assert_non_null(in);
	assert_non_null(out = fopen(path, "wb"));
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	chmod(path, 0644);
	rc = vramz_open_daemon(&ctx, dir, 0);
	assert_true(rc < 0);
	vramz_close(ctx);
	assert_int_equal(tmpdir_remove(dir), 0);
}

static void live_backends_in_probe_order(void **state)
{
	(void)state;
	char scn[512];
	const char *s = getenv("SCENARIOS");
	snprintf(scn, sizeof scn, "%s/2gpu-h200.scn", s ? s : "tests/scenarios");
	setenv("FAKE_NVML_SCENARIO", scn, 1);
	vramz_ctx *ctx;
	assert_int_equal(vramz_open(&ctx, NULL), 0);
	assert_int_equal(vramz_backend_count(ctx), 1);
	const vramz_backend_info *bk = vramz_backend(ctx, 0);
	assert_string_equal(bk->name, "nvml");
	assert_string_equal(bk->vendor, "nvidia");
	assert_true(bk->driver_version[0] != 0);
	assert_int_equal(bk->gpu_first, 0);
	assert_int_equal(bk->gpu_count, 2);
	assert_string_equal(vramz_gpu(ctx, 1)->backend, "nvml");
	assert_string_equal(vramz_gpu(ctx, 1)->vendor, "nvidia");
	vramz_close(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_log_is_its_own_backend),
		cmocka_unit_test(a_callers_flags_cannot_ask_for_the_segment),
		cmocka_unit_test(the_daemon_opens_the_segment_row),
		cmocka_unit_test(live_backends_in_probe_order),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
