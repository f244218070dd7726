/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_segment.c - a fuzz target for the daemon's segment reader
 * (lib/segment_read.c), for libFuzzer (tests/fuzz/run.sh segment) or
 * AFL++ (-DFUZZ_AFL_MAIN).  The input is a whole segment file's bytes:
 * the reader must refuse or read it, never crash, and a snapshot it hands
 * out must keep the invariants the views rely on (process slices inside
 * the process array, GPU indices known).  tests/unit/test_segment.c runs
 * the same function over mutated segments in every ctest run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "segment.h"

int fuzz_segment_one(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int fuzz_segment_one(const uint8_t *data, size_t size)
{
	/* a private, 8-aligned copy: the reader's atomics want alignment */
	uint64_t *buf = malloc((size / 8 + 1) * 8);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct seg_reader *r;
	char err[400] = "";
	int ok = 0;
	int rc = seg_reader_open_mem(&r, buf, size, err, sizeof err);
	if (rc == 0) {
		const struct seg_header *h = seg_reader_header(r);
		for (unsigned i = 0; i < h->gpu_count; i++) {
			int present;
			if (!seg_reader_gpu(r, i, &present))
				abort();
		}
		const struct seg_snapshot *s;
		rc = seg_reader_read(r, &s, err, sizeof err);
		if (rc == 0) {
			for (unsigned i = 0; i < s->snap.gpu_count; i++) {
				const vramz_gpu_sample *g = &s->snap.gpus[i];
				if (g->index >= h->gpu_count || g->proc_first + g->proc_count > s->snap.proc_count)
					abort();
			}
			ok = 1;
		}
	}
	if (rc < 0 && rc != VRAMZ_ENOMEM && !err[0])
		abort(); /* every refusal says why */
	seg_reader_close(r);
	free(buf);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_segment_one(data, size);
	return 0;
}

#ifdef FUZZ_AFL_MAIN
#include <stdio.h>
int main(int argc, char **argv)
{
	static uint8_t in[1 << 22];
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
	if (!f)
		return 1;
	size_t n = fread(in, 1, sizeof in, f);
	fuzz_segment_one(in, n);
	return 0;
}
#endif
