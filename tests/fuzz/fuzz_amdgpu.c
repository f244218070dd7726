/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_amdgpu.c - libFuzzer target for the amdgpu backend's parsers
 * (lib/backend/amdgpu_parse.c): sysfs counts, pp_dpm tables, link speeds,
 * uevent and DRM fdinfo, each fed the same bytes.  Build and run:
 *   clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -Ilib tests/fuzz/fuzz_amdgpu.c lib/backend/amdgpu_parse.c -o fuzz_amdgpu
 *   ./fuzz_amdgpu -max_total_time=60
 * CI runs a bounded, seeded form of it (test_random_bytes in
 * tests/unit/test_amdgpu_parse.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/amdgpu_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *t = malloc(size + 1);
	uint64_t v;
	unsigned u;
	struct amd_uevent ue;
	struct amd_fdinfo fi;

	if (!t)
		return 0;
	memcpy(t, data, size);
	t[size] = '\0'; /* the backend reads files as text: NUL ends them */
	(void)amd_parse_u64(t, &v);
	(void)amd_parse_dpm_current(t, &u);
	(void)amd_parse_dpm_max(t, &u);
	(void)amd_parse_link_gen(t, &u);
	(void)amd_parse_uevent(t, &ue);
	if (amd_parse_fdinfo(t, &fi) == 0 && (!fi.is_amdgpu || !fi.pdev[0]))
		abort();
	free(t);
	return 0;
}
