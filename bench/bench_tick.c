/* bench_tick.c - what one steady sampling tick of every GPU costs through
 * libvramz, in wall and CPU microseconds, for the flag sets the commands
 * use.  Run it beside bench-ref's nvml_floor (the same NVML calls made
 * directly) on the same machine and report the ratio, never a bare time.
 *
 *   bench_tick [TICKS]     (default 2000)
 * Works against the fake NVML too (then it measures vramz's own overhead).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "vramz/vramz.h"

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double cpu_us(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 2000;
	static const struct {
		const char *name;
		unsigned flags;
	} sets[] = {
		{"gpu-only", 0},
		{"procs", VRAMZ_SAMPLE_PROCS},
		{"default", VRAMZ_SAMPLE_DEFAULT},
		{"default+link", VRAMZ_SAMPLE_DEFAULT | VRAMZ_SAMPLE_LINK},
	};
	vramz_ctx *ctx;
	double t0 = now_us();
	int rc = vramz_open(&ctx, NULL);
	if (rc < 0) {
		fprintf(stderr, "bench_tick: %s: %s\n", vramz_strerror(rc), vramz_last_error(ctx));
		vramz_close(ctx);
		return 1;
	}
	double open_us = now_us() - t0;
	const vramz_snapshot *snap;
	vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &snap); /* attach + size buffers */
	printf("bench_tick gpus=%u procs=%u ticks=%d open_ms=%.1f\n", vramz_gpu_count(ctx),
	       snap->proc_count, ticks, open_us / 1e3);
	for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
		double c0 = cpu_us(), w0 = now_us();
		for (int k = 0; k < ticks; k++)
			vramz_sample(ctx, sets[s].flags, &snap);
		double w = now_us() - w0, c = cpu_us() - c0;
		printf("  %-13s wall_us_per_tick=%.1f cpu_us_per_tick=%.1f\n", sets[s].name,
		       w / ticks, c / ticks);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("  max_rss_kib=%ld\n", ru.ru_maxrss);
	vramz_close(ctx);
	return 0;
}
