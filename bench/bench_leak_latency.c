/* SPDX-License-Identifier: Apache-2.0 */
/* bench_leak_latency.c - how soon the diagnosis engine reports a leak,
 * against its rate (issue 27, item 4): a process on a 141 GiB GPU (an
 * H200) that has run steadily for 10 minutes, with a per-iteration
 * sawtooth of 256 MiB and 16 MiB of noise, starts to leak at RATE; the
 * engine is fed at 1 Hz as `vramz watch` is, with watch's settings
 * (report-after 5 s), and the time from the leak's start to its first
 * report is printed with the rule's rate then and the time the GPU would
 * have been full.  Prints a table (docs/performance.md, "Leak detection
 * latency"); asserts nothing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "vramz/diagnose.h"

#define MiB 1048576.0
#define GiB 1073741824.0
#define TOTAL (143771.0 * MiB)
#define START_S 600.0
#define PERIOD_MS 1000

static uint64_t rng = 88172645463325252ull;

static double gauss(void) { return bench_gauss(&rng); }

/* Seconds from the leak's start to its first report (-1: none before the
 * GPU was full); *rate the finding's rate then. */
static double latency(double rate, double *found_rate, double *full_s)
{
	vramz_gpu_sample g;
	vramz_proc_sample p;
	memset(&g, 0, sizeof g);
	memset(&p, 0, sizeof p);
	g.valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_PROCS;
	g.mem_total_bytes = (uint64_t)TOTAL;
	g.mem_reserved_bytes = (uint64_t)(616 * MiB);
	g.util_gpu_pct = 90;
	p.pid = 4242;
	p.valid = VRAMZ_P_USED | VRAMZ_P_SM | VRAMZ_P_VISIBLE;
	p.start_time_ticks = 1;
	p.sm_pct = 90;
	snprintf(p.comm, sizeof p.comm, "python");
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	vramz_diag *d = vramz_diag_new(&cfg);
	double base = 20 * GiB;
	*full_s = (TOTAL - 616 * MiB - base - 256 * MiB) / rate;
	double found = -1;
	for (int64_t t = 0; found < 0; t += PERIOD_MS) {
		double ts = (double)t / 1000.0;
		double leak = ts > START_S ? (ts - START_S) * rate : 0;
		if (ts > START_S && ts - START_S > *full_s)
			break;
		double used = base + 256 * MiB * fmod(ts / 0.7, 1.0) + 16 * MiB * gauss() + leak;
		p.used_bytes = (uint64_t)used;
		g.mem_used_bytes = p.used_bytes;
		g.mem_free_bytes = (uint64_t)(TOTAL - 616 * MiB - used);
		vramz_snapshot s = {.time_ms = 1796000000000 + t, .gpu_count = 1, .gpus = &g,
				    .proc_count = 1, .procs = &p};
		vramz_diag_feed(d, &s);
		const vramz_finding *f;
		unsigned n = vramz_diag_findings(d, &f);
		for (unsigned i = 0; i < n; i++)
			if (f[i].kind == VRAMZ_FK_LEAK && f[i].pid == 4242) {
				found = ts - START_S;
				*found_rate = f[i].rate_bytes_per_s;
				break;
			}
	}
	vramz_diag_free(d);
	return found;
}

int main(void)
{
	static const double rates[] = {5 * MiB, 10 * MiB, 17.1 * MiB, 20 * MiB, 24 * MiB,
				       50 * MiB, 100 * MiB, 480 * MiB, GiB, 2 * GiB};
	printf("leak detection latency: steady 10 min, then a leak; 141 GiB GPU, 1 Hz, report-after 5 s\n");
	printf("%12s %12s %14s %16s %14s\n", "RATE MiB/s", "GiB/min", "REPORTED s", "RATE SEEN MiB/s",
	       "GPU FULL s");
	for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
		double seen = 0, full;
		double s = latency(rates[i], &seen, &full);
		char rep[32];
		if (s < 0)
			snprintf(rep, sizeof rep, "never");
		else
			snprintf(rep, sizeof rep, "%.0f", s);
		printf("%12.1f %12.2f %14s %16.1f %14.0f\n", rates[i] / MiB, rates[i] * 60 / GiB, rep,
		       s < 0 ? 0 : seen / MiB, full);
	}
	return 0;
}
