/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_logread.c - a fuzz target for the log reader (lib/log/logread.c),
 * for libFuzzer (tests/fuzz/run.sh logread) or, linked with smoke_main.c,
 * for ctest's bounded fuzz.logread and AFL++ (one input from a file or
 * stdin).
 *
 * An input is a GPU log and, after the first NUL byte, its process sibling.
 * Both are written to files because the reader's contract is a path, and
 * read to the end; every snapshot is checked for the invariants the views
 * rely on (process slices inside the process array, GPU indices known).
 * Crashes, sanitizer reports, hangs and leaks are the findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramz/log.h"

static char gpu_path[64], proc_path[64];

static void put(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (n && fwrite(p, 1, n, f) != n)
		abort();
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!gpu_path[0]) {
		const char *d = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
		snprintf(gpu_path, sizeof gpu_path, "%s/vramz-fuzz-%d.csv", d, (int)getpid());
		snprintf(proc_path, sizeof proc_path, "%s/vramz-fuzz-%d.procs.csv", d, (int)getpid());
	}
	const uint8_t *nul = memchr(data, 0, size);
	put(gpu_path, data, nul ? (size_t)(nul - data) : size);
	if (nul)
		put(proc_path, nul + 1, size - (size_t)(nul - data) - 1);
	else
		unlink(proc_path);

	vramz_log_reader *r;
	const vramz_snapshot *s;
	if (vramz_log_open(&r, gpu_path) == 0) {
		int rc;
		while ((rc = vramz_log_next(r, &s)) == 1) {
			unsigned sum = 0;
			if (s->gpu_count == 0)
				abort();
			for (unsigned i = 0; i < s->gpu_count; i++) {
				const vramz_gpu_sample *g = &s->gpus[i];
				if (g->proc_first + g->proc_count > s->proc_count)
					abort();
				if (!vramz_log_gpu(r, g->index))
					abort();
				for (unsigned k = 0; k < g->proc_count; k++)
					if (s->procs[g->proc_first + k].gpu_index != g->index)
						abort();
				sum += g->proc_count;
			}
			if (sum != s->proc_count)
				abort();
		}
		if (rc < 0 && !strchr(vramz_log_error(r), ':'))
			abort(); /* every error names where */
	}
	vramz_log_close(r);
	return 0;
}
