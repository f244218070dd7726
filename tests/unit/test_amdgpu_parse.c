/* SPDX-License-Identifier: Apache-2.0 */
/* test_amdgpu_parse.c - the amdgpu backend's parsers on the formats the
 * kernel documents, on the variations real files show, and on garbage:
 * garbage is unknown (-1), never a number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend/amdgpu_parse.h"

static void test_u64(void **state)
{
	uint64_t v = 7;
	(void)state;
	assert_int_equal(amd_parse_u64("206158430208\n", &v), 0);
	assert_true(v == 206158430208ull);
	assert_int_equal(amd_parse_u64("0", &v), 0);
	assert_true(v == 0);
	v = 7;
	assert_int_equal(amd_parse_u64("", &v), -1);
	assert_int_equal(amd_parse_u64("-1\n", &v), -1);
	assert_int_equal(amd_parse_u64("12 MiB\n", &v), -1);
	assert_int_equal(amd_parse_u64("99999999999999999999999\n", &v), -1); /* overflow */
	assert_int_equal(amd_parse_u64("lots\n", &v), -1);
	assert_true(v == 7); /* untouched on failure */
}

static void test_dpm(void **state)
{
	unsigned mhz = 0;
	(void)state;
	assert_int_equal(amd_parse_dpm_current("0: 500Mhz\n1: 1420Mhz *\n2: 2100Mhz\n", &mhz), 0);
	assert_int_equal(mhz, 1420);
	assert_int_equal(amd_parse_dpm_max("0: 500Mhz\n1: 1420Mhz *\n2: 2100Mhz\n", &mhz), 0);
	assert_int_equal(mhz, 2100);
	/* deep sleep level "S:" is not a numbered level; upper case MHz */
	assert_int_equal(amd_parse_dpm_current("S: 19Mhz\n0: 96MHz *\n1: 456Mhz\n", &mhz), 0);
	assert_int_equal(mhz, 96);
	/* no star: no current level */
	assert_int_equal(amd_parse_dpm_current("0: 500Mhz\n1: 1420Mhz\n", &mhz), -1);
	assert_int_equal(amd_parse_dpm_current("0: Mhz *\ngarbage\n", &mhz), -1);
	assert_int_equal(amd_parse_dpm_max("", &mhz), -1);
}

static void test_link(void **state)
{
	unsigned g = 0;
	(void)state;
	static const struct { const char *t; unsigned gen; } ok[] = {
		{"2.5 GT/s PCIe\n", 1}, {"5.0 GT/s PCIe\n", 2}, {"8.0 GT/s PCIe\n", 3},
		{"16.0 GT/s PCIe\n", 4}, {"32.0 GT/s PCIe\n", 5}, {"64.0 GT/s PCIe\n", 6},
		{"16 GT/s\n", 4},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		assert_int_equal(amd_parse_link_gen(ok[i].t, &g), 0);
		assert_int_equal(g, ok[i].gen);
	}
	assert_int_equal(amd_parse_link_gen("Unknown speed\n", &g), -1);
	assert_int_equal(amd_parse_link_gen("16.0 Gb/s\n", &g), -1);
	assert_int_equal(amd_parse_link_gen("", &g), -1);
}

static void test_uevent(void **state)
{
	struct amd_uevent u;
	(void)state;
	assert_int_equal(amd_parse_uevent("DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_ID=1002:74A1\n"
					  "PCI_SUBSYS_ID=1002:0C34\nPCI_SLOT_NAME=0000:0C:00.0\n", &u), 0);
	assert_string_equal(u.driver, "amdgpu");
	assert_int_equal(u.vendor_id, 0x1002);
	assert_int_equal(u.device_id, 0x74a1);
	assert_string_equal(u.slot, "0000:0c:00.0"); /* lower case, as fdinfo's drm-pdev */
	assert_int_equal(amd_parse_uevent("DRIVER=i915\nPCI_ID=8086:A780\nPCI_SLOT_NAME=0000:00:02.0\n", &u), 0);
	assert_string_equal(u.driver, "i915");
	assert_int_equal(amd_parse_uevent("DRIVER=amdgpu\nPCI_ID=nope\nPCI_SLOT_NAME=0000:03:00.0\n", &u), -1);
	assert_int_equal(amd_parse_uevent("PCI_ID=1002:744C\n", &u), -1);
}

static void test_fdinfo(void **state)
{
	struct amd_fdinfo f;
	(void)state;
	assert_int_equal(amd_parse_fdinfo("pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\n"
					  "drm-client-id:\t11\ndrm-pdev:\t0000:0C:00.0\npasid:\t32770\n"
					  "drm-memory-vram:\t41943040 KiB\ndrm-memory-gtt:\t2048 KiB\n"
					  "drm-engine-gfx:\t1000000 ns\ndrm-engine-compute:\t9000000000 ns\n"
					  "drm-engine-dma:\t5 ns\n", &f), 0);
	assert_true(f.is_amdgpu);
	assert_string_equal(f.pdev, "0000:0c:00.0");
	assert_true(f.client_id == 11);
	assert_true(f.have_vram && f.vram_bytes == 41943040ull * 1024);
	assert_true(f.have_engine && f.gfx_ns == 1000000 && f.compute_ns == 9000000000ull);
	/* newer kernels: drm-resident-vram, in MiB; no engine lines */
	assert_int_equal(amd_parse_fdinfo("drm-driver:\tamdgpu\ndrm-client-id:\t3\n"
					  "drm-pdev:\t0000:03:00.0\ndrm-total-vram:\t900 MiB\n"
					  "drm-resident-vram:\t512 MiB\n", &f), 0);
	assert_true(f.have_vram && f.vram_bytes == 512ull << 20);
	assert_false(f.have_engine);
	/* another driver, a client id that is no number, a negative size */
	assert_int_equal(amd_parse_fdinfo("drm-driver:\ti915\ndrm-client-id:\t4\ndrm-pdev:\t0000:00:02.0\n", &f), -1);
	assert_int_equal(amd_parse_fdinfo("drm-driver:\tamdgpu\ndrm-pdev:\t0000:22:00.0\n"
					  "drm-client-id:\tbanana\ndrm-memory-vram:\t-5 KiB\n", &f), -1);
	assert_int_equal(amd_parse_fdinfo("drm-driver:\tamdgpu\ndrm-client-id:\t5\ndrm-pdev:\t0000:22:00.0\n"
					  "drm-memory-vram:\t-5 KiB\ndrm-engine-gfx:\t12\n", &f), 0);
	assert_false(f.have_vram);   /* unknown, not 0 */
	assert_false(f.have_engine); /* no unit: not a time */
	/* "amdgpu2" is not amdgpu; a huge size overflows to unknown */
	assert_int_equal(amd_parse_fdinfo("drm-driver:\tamdgpu2\ndrm-client-id:\t5\ndrm-pdev:\tx\n", &f), -1);
	assert_int_equal(amd_parse_fdinfo("drm-driver:\tamdgpu\ndrm-client-id:\t5\ndrm-pdev:\t0000:22:00.0\n"
					  "drm-memory-vram:\t18446744073709551615 KiB\n", &f), 0);
	assert_false(f.have_vram);
}

static void test_models(void **state)
{
	(void)state;
	const struct amd_model *m = amd_model_for(0x74a1);
	assert_non_null(m);
	assert_string_equal(m->mem_type, "HBM3");
	assert_int_equal(m->bus_width_bits, 8192);
	assert_null(amd_model_for(0xffff));
}

/* Random bytes through every parser: no crash, no read past the text
 * (ASan in the sanitizer build).  Bounded and seeded: the same run each
 * time.  tests/fuzz/fuzz_amdgpu.c does this at length. */
static void test_random_bytes(void **state)
{
	char buf[512];
	uint64_t v;
	unsigned u;
	struct amd_uevent ue;
	struct amd_fdinfo fi;
	static const char *const seeds[] = {"drm-driver:\tamdgpu\n", "drm-client-id:\t", "drm-pdev:\t",
					    "drm-memory-vram:\t", " KiB\n", " ns\n", "1: ", "Mhz *\n",
					    "GT/s", "PCI_ID=", "DRIVER=amdgpu\n", "\n", "9999999999"};
	(void)state;
	srand(19);
	for (int i = 0; i < 20000; i++) {
		size_t n = 0, len = (size_t)(rand() % (int)(sizeof buf - 1));
		while (n < len) {
			if (rand() % 3 == 0) {
				const char *s = seeds[rand() % (int)(sizeof seeds / sizeof seeds[0])];
				size_t k = strlen(s);
				if (n + k > len)
					break;
				memcpy(buf + n, s, k);
				n += k;
			} else {
				buf[n++] = (char)(rand() % 255 + 1);
			}
		}
		buf[n] = '\0';
		(void)amd_parse_u64(buf, &v);
		(void)amd_parse_dpm_current(buf, &u);
		(void)amd_parse_dpm_max(buf, &u);
		(void)amd_parse_link_gen(buf, &u);
		(void)amd_parse_uevent(buf, &ue);
		if (amd_parse_fdinfo(buf, &fi) == 0)
			assert_true(fi.is_amdgpu && fi.have_client_id && fi.pdev[0]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_dpm),
		cmocka_unit_test(test_link),
		cmocka_unit_test(test_uevent),
		cmocka_unit_test(test_fdinfo),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_random_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
