/* SPDX-License-Identifier: Apache-2.0 */
/* bench_analyze.c - how long `vramz analyze` spends diagnosing a day of a
 * busy machine: 24 hours of 8 GPUs at 10 Hz (864,000 ticks, 6.9 million
 * GPU samples, two processes per GPU, one of them leaking 4 MiB/min), generated in
 * memory and fed to the engine with analyze's settings.  Target: under
 * 10 s on one core.  Prints figures; asserts only that the leak is found.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "vramz/diagnose.h"

#define NGPU 8
#define NPROC (2 * NGPU)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	vramz_gpu_sample g[NGPU];
	vramz_proc_sample p[NPROC];
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.keep_ended = 1;
	cfg.eval_interval_ms = 60000;
	vramz_diag *d = vramz_diag_new(&cfg);
	memset(g, 0, sizeof g);
	memset(p, 0, sizeof p);
	const double MiB = 1048576.0, GiB = 1073741824.0;
	for (unsigned i = 0; i < NPROC; i++) {
		p[i].gpu_index = i / 2;
		p[i].pid = 1000 + i;
		p[i].pgid = 1000 + (i / 2) * 2;
		p[i].start_time_ticks = 5000 + i;
		p[i].valid = VRAMZ_P_USED | VRAMZ_P_SM | VRAMZ_P_VISIBLE;
		snprintf(p[i].comm, sizeof p[i].comm, "python");
	}
	const int64_t ticks = 24LL * 3600 * 10;
	uint64_t rng = 1;
	double t0 = now_s();
	for (int64_t k = 0; k < ticks; k++) {
		double ts = k / 10.0;
		for (unsigned i = 0; i < NPROC; i++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			double noise = (double)(rng >> 40) / 16777216.0 * 64 * MiB;
			double saw = 2 * GiB * fmod(ts / 0.9 + i * 0.1, 1.0);
			double v = 8 * GiB + saw + noise;
			if (i == 7) /* GPU 3's second process leaks 4 MiB/min */
				v += ts * 4 * MiB / 60;
			p[i].used_bytes = (uint64_t)v;
			p[i].sm_pct = 40;
		}
		for (unsigned j = 0; j < NGPU; j++) {
			g[j].index = j;
			g[j].valid = VRAMZ_F_MEM | VRAMZ_F_UTIL | VRAMZ_F_PROCS | VRAMZ_F_UNATTRIBUTED |
				     VRAMZ_F_THROTTLE | VRAMZ_F_TEMP_MEM;
			g[j].mem_total_bytes = (uint64_t)(80 * GiB);
			g[j].mem_used_bytes = p[2 * j].used_bytes + p[2 * j + 1].used_bytes;
			g[j].mem_free_bytes = g[j].mem_total_bytes - g[j].mem_used_bytes;
			g[j].util_gpu_pct = 70;
			g[j].temp_mem_c = 60;
			g[j].proc_first = 2 * j;
			g[j].proc_count = 2;
		}
		vramz_snapshot s = {.time_ms = 1700000000000LL + k * 100, .gpu_count = NGPU, .gpus = g,
				    .proc_count = NPROC, .procs = p};
		if (vramz_diag_feed(d, &s)) {
			fprintf(stderr, "feed failed\n");
			return 1;
		}
	}
	double t1 = now_s();
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f);
	double t2 = now_s();
	printf("bench_analyze: 24 h x %d GPUs x 10 Hz = %lld ticks, %lld GPU samples, %lld process samples\n",
	       NGPU, (long long)ticks, (long long)ticks * NGPU, (long long)ticks * NPROC);
	printf("  feed + periodic evaluation: %.2f s (%.0f ns per tick)\n", t1 - t0,
	       (t1 - t0) / (double)ticks * 1e9);
	printf("  final evaluation:           %.3f s\n", t2 - t1);
	printf("  total:                      %.2f s (target < 10 s on one core)\n", t2 - t0);
	int found = 0;
	for (unsigned i = 0; i < n; i++) {
		char b[512];
		printf("  finding: %s %s\n", vramz_finding_kind_str(f[i].kind),
		       vramz_finding_summary(&f[i], b, sizeof b));
		found |= f[i].kind == VRAMZ_FK_LEAK && f[i].pid == 1007;
	}
	vramz_diag_free(d);
	if (!found) {
		fprintf(stderr, "bench_analyze: the 4 MiB/min leak was not found\n");
		return 1;
	}
	return 0;
}
