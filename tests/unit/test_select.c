/* SPDX-License-Identifier: Apache-2.0 */
/* test_select.c - every -g form against a context opened on the fake NVML.
 *
 * Users paste GPU names from nvidia-smi (indices, bus ids), CUDA (UUIDs,
 * MIG UUIDs) and lspci (short bus ids), so each spelling must select the
 * GPU they meant, in the order they gave; and a typo must fail with the
 * right code and a message that quotes the bad item, without changing the
 * selection already in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vramz/vramz.h"

static vramz_ctx *open_on(const char *scn)
{
	char path[4096];
	const char *dir = getenv("SCENARIOS");
	assert_non_null(dir);
	snprintf(path, sizeof path, "%s/%s", dir, scn);
	setenv("FAKE_NVML_SCENARIO", path, 1);
	vramz_ctx *ctx = NULL;
	int rc = vramz_open(&ctx, NULL);
	if (rc)
		fail_msg("vramz_open(%s): %s: %s", scn, vramz_strerror(rc), vramz_last_error(ctx));
	return ctx;
}

/* The selection spec gives, as a list of backend indices. */
static void expect_sel(vramz_ctx *ctx, const char *spec, const unsigned *want, unsigned n)
{
	int rc = vramz_select(ctx, spec);
	if (rc)
		fail_msg("select '%s': %s (%s)", spec ? spec : "(null)", vramz_strerror(rc),
			 vramz_last_error(ctx));
	assert_int_equal(vramz_selected_count(ctx), n);
	for (unsigned i = 0; i < n; i++)
		if (vramz_selected_index(ctx, i) != want[i])
			fail_msg("select '%s': position %u is GPU %u, want %u", spec, i,
				 vramz_selected_index(ctx, i), want[i]);
}
#define SEL(ctx, spec, ...)                                                  \
	expect_sel(ctx, spec, (const unsigned[]){__VA_ARGS__},               \
		   sizeof((const unsigned[]){__VA_ARGS__}) / sizeof(unsigned))

/* spec fails with code, the message names `names`, and the selection in
 * place (GPU 1 alone) is untouched. */
static void expect_bad(vramz_ctx *ctx, const char *spec, int code, const char *names)
{
	assert_int_equal(vramz_select(ctx, "1"), 0);
	int rc = vramz_select(ctx, spec);
	if (rc != code)
		fail_msg("select '%s': got %d (%s), want %d (%s); detail '%s'", spec, rc,
			 vramz_strerror(rc), code, vramz_strerror(code), vramz_last_error(ctx));
	const char *msg = vramz_last_error(ctx);
	if (!strstr(msg, names))
		fail_msg("select '%s': message '%s' does not name '%s'", spec, msg, names);
	assert_null(strchr(msg, '\n'));
	assert_int_equal(vramz_selected_count(ctx), 1);
	assert_int_equal(vramz_selected_index(ctx, 0), 1);
}

static int setup8(void **state)
{
	*state = open_on("8gpu.scn");
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	vramz_close(*state);
	return 0;
}

static void test_all_and_default(void **state)
{
	vramz_ctx *ctx = *state;
	assert_int_equal(vramz_gpu_count(ctx), 8);
	SEL(ctx, "all", 0, 1, 2, 3, 4, 5, 6, 7);
	SEL(ctx, "3", 3);
	SEL(ctx, NULL, 0, 1, 2, 3, 4, 5, 6, 7);
}

static void test_indices_and_ranges(void **state)
{
	vramz_ctx *ctx = *state;
	SEL(ctx, "0", 0);
	SEL(ctx, "7", 7);
	SEL(ctx, "0,2", 0, 2);
	SEL(ctx, "5,1,3", 5, 1, 3);          /* order as given */
	SEL(ctx, "2-4", 2, 3, 4);
	SEL(ctx, "6-6", 6);
	SEL(ctx, "6,0-2,7", 6, 0, 1, 2, 7);
	SEL(ctx, "0-7", 0, 1, 2, 3, 4, 5, 6, 7);
	SEL(ctx, "007", 7);                  /* leading zeros are still 7 */
}

static void test_duplicates_dropped(void **state)
{
	vramz_ctx *ctx = *state;
	SEL(ctx, "1,1", 1);
	SEL(ctx, "3,1-4,2", 3, 1, 2, 4);     /* first mention wins */
	SEL(ctx, "0-2,1-3", 0, 1, 2, 3);
	SEL(ctx, "GPU-3a09,0", 0);           /* same GPU by UUID and index */
	SEL(ctx, "18:00.0,0,GPU-3a096533", 0);
}

static void test_spaces_around_items(void **state)
{
	vramz_ctx *ctx = *state;
	SEL(ctx, " 1 , 2", 1, 2);
	SEL(ctx, "0,\t3", 0, 3);
}

static void test_uuid_prefixes(void **state)
{
	vramz_ctx *ctx = *state;
	SEL(ctx, "GPU-e6edaf80-e941-4610-ae76-a9b71d1d784f", 4); /* full */
	SEL(ctx, "GPU-e6ed", 4);
	SEL(ctx, "gpu-E6EDAF80", 4);        /* case does not matter */
	SEL(ctx, "GPU-107ac806,GPU-b0f9", 7, 6);
}

static void test_pci_bus_ids(void **state)
{
	vramz_ctx *ctx = *state;
	SEL(ctx, "00000000:9A:00.0", 4);     /* as nvidia-smi prints it */
	SEL(ctx, "00000000:9a:00.0", 4);
	SEL(ctx, "0000:9a:00.0", 4);         /* as lspci -D prints it */
	SEL(ctx, "9a:00.0", 4);              /* as lspci prints it */
	SEL(ctx, "9A:00.0", 4);
	SEL(ctx, "db:00.0,18:00.0", 7, 0);
}

static void test_bad_forms(void **state)
{
	vramz_ctx *ctx = *state;
	expect_bad(ctx, "", VRAMZ_EINVAL, "empty");
	expect_bad(ctx, ",", VRAMZ_EINVAL, "','");
	expect_bad(ctx, "0,", VRAMZ_EINVAL, "'0,'");
	expect_bad(ctx, ",0", VRAMZ_EINVAL, "',0'");
	expect_bad(ctx, "0,,1", VRAMZ_EINVAL, "'0,,1'");
	expect_bad(ctx, "0, ,1", VRAMZ_EINVAL, "empty item");
	expect_bad(ctx, "3-1", VRAMZ_EINVAL, "'3-1'");
	expect_bad(ctx, "1-", VRAMZ_EINVAL, "'1-'");
	expect_bad(ctx, "-1", VRAMZ_EINVAL, "'-1'");
	expect_bad(ctx, "1-2-3", VRAMZ_EINVAL, "'1-2-3'");
	expect_bad(ctx, "x", VRAMZ_EINVAL, "'x'");
	expect_bad(ctx, "0,x", VRAMZ_EINVAL, "'x'");
	expect_bad(ctx, "0x1", VRAMZ_EINVAL, "'0x1'");
	expect_bad(ctx, "1 2", VRAMZ_EINVAL, "'1 2'");
	expect_bad(ctx, "1.5", VRAMZ_EINVAL, "'1.5'");
	expect_bad(ctx, "ALLX", VRAMZ_EINVAL, "'ALLX'");
	expect_bad(ctx, "99", VRAMZ_ENOTFOUND, "'99'");
	expect_bad(ctx, "8", VRAMZ_ENOTFOUND, "'8'");
	expect_bad(ctx, "0,8", VRAMZ_ENOTFOUND, "'8'");
	expect_bad(ctx, "99999999999999999999999", VRAMZ_ENOTFOUND, "'99999999999999999999999'");
	expect_bad(ctx, "4294967296", VRAMZ_ENOTFOUND, "'4294967296'");
	expect_bad(ctx, "6-9", VRAMZ_ENOTFOUND, "'6-9'");
	expect_bad(ctx, "0-99999999999999999999999", VRAMZ_ENOTFOUND, "99999999999999999999999");
	expect_bad(ctx, "GPU-7", VRAMZ_EINVAL, "'GPU-7'");   /* 7589.. and 7c2f.. */
	expect_bad(ctx, "GPU-", VRAMZ_EINVAL, "'GPU-'");
	expect_bad(ctx, "GPU-ffff", VRAMZ_ENOTFOUND, "'GPU-ffff'");
	expect_bad(ctx, "MIG-ffff", VRAMZ_ENOTFOUND, "'MIG-ffff'"); /* no MIG here */
	expect_bad(ctx, "00000000:9B:00.0", VRAMZ_ENOTFOUND, "'00000000:9B:00.0'");
	expect_bad(ctx, "9b:00.0", VRAMZ_ENOTFOUND, "'9b:00.0'");
	expect_bad(ctx, "0001:9a:00.0", VRAMZ_ENOTFOUND, "'0001:9a:00.0'"); /* other domain */
	expect_bad(ctx, "9a:00", VRAMZ_EINVAL, "'9a:00'");
	expect_bad(ctx, "9a:00.0x", VRAMZ_EINVAL, "'9a:00.0x'");
	expect_bad(ctx, "zz:00.0", VRAMZ_EINVAL, "'zz:00.0'");
	expect_bad(ctx, "100:00.0", VRAMZ_EINVAL, "'100:00.0'");
	expect_bad(ctx, "9a:20.0", VRAMZ_EINVAL, "'9a:20.0'");
	expect_bad(ctx, "9a:00.8", VRAMZ_EINVAL, "'9a:00.8'");
	expect_bad(ctx, "1:2:3:4", VRAMZ_EINVAL, "'1:2:3:4'");
	/* what sscanf's %x would have let through */
	expect_bad(ctx, "0x9a:00.0", VRAMZ_EINVAL, "'0x9a:00.0'");
	expect_bad(ctx, "9a:+0.0", VRAMZ_EINVAL, "'9a:+0.0'");
	expect_bad(ctx, "9a:00.-0", VRAMZ_EINVAL, "'9a:00.-0'");
	expect_bad(ctx, "-1:9a:00.0", VRAMZ_EINVAL, "'-1:9a:00.0'");
	expect_bad(ctx, "000000000:9a:00.0", VRAMZ_EINVAL, "'000000000:9a:00.0'");
	expect_bad(ctx, "9a: 00.0", VRAMZ_EINVAL, "'9a: 00.0'");
}

/* Selection decides what a sample reads: the snapshot's GPUs follow it. */
static void test_sample_follows_selection(void **state)
{
	vramz_ctx *ctx = *state;
	const vramz_snapshot *snap;
	assert_int_equal(vramz_select(ctx, "6,GPU-3a09"), 0);
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &snap), 0);
	assert_int_equal(snap->gpu_count, 2);
	assert_int_equal(snap->gpus[0].index, 6);
	assert_int_equal(snap->gpus[1].index, 0);
	for (unsigned i = 0; i < snap->proc_count; i++)
		assert_true(snap->procs[i].gpu_index == 6 || snap->procs[i].gpu_index == 0);
}

static void test_mig_uuid_selects_parent(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("mig.scn");
	SEL(ctx, "MIG-a1b2c3d4-0005-5e6f-8a9b-0c1d2e3f4a55", 0);
	SEL(ctx, "mig-A1B2C3D4-000D", 0);
	SEL(ctx, "MIG-a1b2c3d4-0001,0", 0);
	assert_int_equal(vramz_select(ctx, "MIG-a1b2c3d4"), VRAMZ_EINVAL);
	assert_non_null(strstr(vramz_last_error(ctx), "'MIG-a1b2c3d4'"));
	assert_int_equal(vramz_select(ctx, "MIG-a1b2c3d4-0002"), VRAMZ_ENOTFOUND);
	assert_non_null(strstr(vramz_last_error(ctx), "'MIG-a1b2c3d4-0002'"));
	/* a GPU UUID prefix never matches a MIG instance, nor the reverse */
	assert_int_equal(vramz_select(ctx, "GPU-a1b2"), VRAMZ_ENOTFOUND);
	assert_int_equal(vramz_select(ctx, "MIG-5f1c"), VRAMZ_ENOTFOUND);
	vramz_close(ctx);
}

static void test_two_gpus_pci_and_uuid(void **state)
{
	(void)state;
	vramz_ctx *ctx = open_on("2gpu-h200.scn");
	SEL(ctx, "3b:00.0", 1);
	SEL(ctx, "0000:3B:00.0,19:00.0", 1, 0);
	SEL(ctx, "GPU-2d94b7e0", 1);
	SEL(ctx, "1-1,0", 1, 0);
	assert_int_equal(vramz_select(ctx, "2"), VRAMZ_ENOTFOUND);
	assert_int_equal(vramz_select(ctx, "0-2"), VRAMZ_ENOTFOUND);
	assert_non_null(strstr(vramz_last_error(ctx), "'0-2'"));
	assert_int_equal(vramz_select(ctx, "GPU-"), VRAMZ_EINVAL);
	vramz_close(ctx);
}

int main(void)
{
	const struct CMUnitTest eight[] = {
		cmocka_unit_test(test_all_and_default),
		cmocka_unit_test(test_indices_and_ranges),
		cmocka_unit_test(test_duplicates_dropped),
		cmocka_unit_test(test_spaces_around_items),
		cmocka_unit_test(test_uuid_prefixes),
		cmocka_unit_test(test_pci_bus_ids),
		cmocka_unit_test(test_bad_forms),
		cmocka_unit_test(test_sample_follows_selection),
	};
	const struct CMUnitTest others[] = {
		cmocka_unit_test(test_mig_uuid_selects_parent),
		cmocka_unit_test(test_two_gpus_pci_and_uuid),
	};
	int fails = cmocka_run_group_tests_name("select_8gpu", eight, setup8, teardown);
	fails += cmocka_run_group_tests_name("select_other", others, NULL, NULL);
	return fails;
}
