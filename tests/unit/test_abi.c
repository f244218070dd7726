/* SPDX-License-Identifier: Apache-2.0 */
/* test_abi.c - the library's side of the ABI promise (lib/abi.c): sized
 * structs from older and newer callers, record sizes a caller may and may
 * not declare, and arrays re-strided so each element keeps its values.
 * tests/abi/caller_v0.c proves the same end to end with 0.1's headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "abi.h"
#include "nvml_fixture.h"
#include "vramz/diagnose.h"

static void test_open_opts_sizes(void **state)
{
	vramz_ctx *ctx;
	use_scenario("2gpu-h200.scn");
	/* a size left 0 is a caller that never set it */
	vramz_open_opts o = {0};
	assert_int_equal(vramz_open(&ctx, &o), VRAMZ_EINVAL);
	assert_non_null(strstr(vramz_last_error(ctx), "vramz_open_opts.size 0"));
	vramz_close(ctx);

	/* a newer caller's struct: extra zero bytes are fine, a set one is not */
	struct {
		vramz_open_opts o;
		uint64_t later_field;
	} big = {.o = VRAMZ_OPEN_OPTS_INIT};
	big.o.size = sizeof big;
	assert_int_equal(vramz_open(&ctx, &big.o), 0);
	assert_int_equal(vramz_gpu_count(ctx), 2);
	vramz_close(ctx);
	big.later_field = 1;
	assert_int_equal(vramz_open(&ctx, &big.o), VRAMZ_EINVAL);
	assert_non_null(strstr(vramz_last_error(ctx), "newer libvramz"));
	vramz_close(ctx);
}

static void test_abi_sizes_checked(void **state)
{
	vramz_ctx *ctx;
	use_scenario("2gpu-h200.scn");
	vramz_abi a = *vramz_abi_current();
	a.proc_sample += 8; /* built against a newer header */
	assert_int_equal(vramz_open_abi(&ctx, NULL, &a), VRAMZ_EINVAL);
	assert_non_null(strstr(vramz_last_error(ctx), "vramz_proc_sample"));
	vramz_close(ctx);
	a = *vramz_abi_current();
	a.gpu_sample = 8; /* smaller than 0.1's */
	assert_int_equal(vramz_open_abi(&ctx, NULL, &a), VRAMZ_EINVAL);
	vramz_close(ctx);
	/* 0: the library's own, and the snapshot says what it is */
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	assert_int_equal(vramz_open_abi(&ctx, NULL, &a), 0);
	const vramz_snapshot *s;
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &s), 0);
	assert_int_equal(s->gpu_size, sizeof(vramz_gpu_sample));
	assert_int_equal(s->proc_size, sizeof(vramz_proc_sample));
	assert_ptr_equal(vramz_snapshot_gpu(s, 1), &s->gpus[1]);
	assert_ptr_equal(vramz_snapshot_proc(s, 3), &s->procs[3]);
	assert_null(vramz_snapshot_gpu(s, 2));
	vramz_close(ctx);
}

struct rec_new {
	uint64_t a;
	uint32_t b;
	uint32_t appended;
	uint64_t appended2;
};

static void test_restride(void **state)
{
	struct rec_new src[3] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
	struct abi_buf buf = {0};
	size_t old = offsetof(struct rec_new, appended); /* an older caller's size */
	const unsigned char *o = abi_restride(&buf, src, 3, sizeof src[0], old);
	assert_non_null(o);
	for (unsigned i = 0; i < 3; i++) {
		uint64_t a;
		uint32_t b;
		memcpy(&a, o + i * old, sizeof a);
		memcpy(&b, o + i * old + 8, sizeof b);
		assert_int_equal(a, src[i].a);
		assert_int_equal(b, src[i].b);
	}
	/* and back: the fields the old records lack are zero (unknown) */
	struct abi_buf back = {0};
	const struct rec_new *n = abi_restride(&back, o, 3, old, sizeof src[0]);
	assert_int_equal(n[2].a, 9);
	assert_int_equal(n[2].b, 10);
	assert_int_equal(n[2].appended, 0);
	assert_int_equal(n[2].appended2, 0);
	assert_ptr_equal(abi_restride(&buf, src, 3, sizeof src[0], sizeof src[0]), src);
	free(buf.p);
	free(back.p);
}

static void test_diag_config_sizes(void **state)
{
	vramz_diag *d;
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	assert_int_equal(c.size, sizeof c);
	assert_int_equal(vramz_diag_create(&d, &c), 0);
	vramz_diag_free(d);
	c.ring_windows = 8;
	assert_int_equal(vramz_diag_create(&d, &c), VRAMZ_EINVAL);
	assert_string_equal(vramz_diag_error(d), "ring_windows 8: must be at least 16");
	vramz_diag_free(d);
	c.ring_windows = 512;
	c.size = 4;
	assert_int_equal(vramz_diag_create(&d, &c), VRAMZ_EINVAL);
	assert_non_null(strstr(vramz_diag_error(d), "vramz_diag_config.size 4"));
	vramz_diag_free(d);
	assert_int_equal(vramz_diag_config_init(&c, 4), VRAMZ_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_opts_sizes),
		cmocka_unit_test(test_abi_sizes_checked),
		cmocka_unit_test(test_restride),
		cmocka_unit_test(test_diag_config_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
