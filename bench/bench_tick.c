/* SPDX-License-Identifier: Apache-2.0 */
/* bench_tick.c - what one steady sampling tick of every GPU costs through
 * libvramz, against the floor: the same NVML calls made directly (the
 * loop of shared/bench-ref/nvml_floor.c), measured in the same process,
 * interleaved in rounds so drift in the GPU's state hits both alike.
 * Prints medians over the rounds and the ratio to the floor.
 *
 *   bench_tick [TICKS_PER_ROUND [ROUNDS]]   (default 500 x 9)
 * Runs against the fake NVML too (then it shows vramz's own overhead).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "backend/nvml_abi.h"
#include "vramz/vramz.h"

static double cpu_us(void)
{
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

/* The floor: nvml_floor.c's per-GPU calls. */
struct raw {
	nvmlDevice_t h[64];
	unsigned n;
	nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*compute)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
};

static int raw_open(struct raw *r)
{
	void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW); /* shares vramz's init */
	if (!dl)
		return -1;
	nvmlReturn_t (*count)(unsigned *) = (nvmlReturn_t(*)(unsigned *))dlsym(dl, "nvmlDeviceGetCount_v2");
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *) =
		(nvmlReturn_t(*)(unsigned, nvmlDevice_t *))dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&r->mem = dlsym(dl, "nvmlDeviceGetMemoryInfo_v2");
	*(void **)&r->util = dlsym(dl, "nvmlDeviceGetUtilizationRates");
	*(void **)&r->temp = dlsym(dl, "nvmlDeviceGetTemperature");
	*(void **)&r->power = dlsym(dl, "nvmlDeviceGetPowerUsage");
	*(void **)&r->clock = dlsym(dl, "nvmlDeviceGetClockInfo");
	*(void **)&r->reasons = dlsym(dl, "nvmlDeviceGetCurrentClocksEventReasons");
	*(void **)&r->compute = dlsym(dl, "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&r->graphics = dlsym(dl, "nvmlDeviceGetGraphicsRunningProcesses_v3");
	if (!count || !handle || !r->mem || !r->util || !r->temp || !r->power || !r->clock ||
	    !r->reasons || !r->compute || !r->graphics || count(&r->n) || r->n > 64)
		return -1;
	for (unsigned i = 0; i < r->n; i++)
		handle(i, &r->h[i]);
	return 0;
}

static unsigned long long raw_tick(struct raw *r)
{
	static nvmlProcessInfo_t pi[256];
	unsigned long long sink = 0, rs;
	for (unsigned i = 0; i < r->n; i++) {
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlUtilization_t u;
		unsigned v, c;
		r->mem(r->h[i], &m);
		sink += m.used;
		r->util(r->h[i], &u);
		r->temp(r->h[i], 0, &v);
		r->power(r->h[i], &v);
		r->clock(r->h[i], NVML_CLOCK_SM, &v);
		r->clock(r->h[i], NVML_CLOCK_MEM, &v);
		r->reasons(r->h[i], &rs);
		c = 256;
		r->compute(r->h[i], &c, pi);
		c = 256;
		r->graphics(r->h[i], &c, pi);
		sink += c + u.gpu + v + rs;
	}
	return sink;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define NSETS 5
#define MAXROUNDS 64

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 500;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	if (rounds > MAXROUNDS)
		rounds = MAXROUNDS;
	static const struct {
		const char *name;
		unsigned flags;
	} sets[NSETS] = {
		{"floor (raw NVML)", 0},
		{"gpu fields only", 0},
		{"procs, no /proc", VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_NO_ATTRIB},
		{"procs", VRAMZ_SAMPLE_PROCS},
		{"default", VRAMZ_SAMPLE_DEFAULT},
	};
	vramz_ctx *ctx;
	int rc = vramz_open(&ctx, NULL);
	if (rc < 0) {
		fprintf(stderr, "bench_tick: %s: %s\n", vramz_strerror(rc), vramz_last_error(ctx));
		vramz_close(ctx);
		return 1;
	}
	struct raw raw;
	if (raw_open(&raw)) {
		fprintf(stderr, "bench_tick: cannot resolve the floor's NVML calls\n");
		return 1;
	}
	const vramz_snapshot *snap;
	vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &snap); /* attach + size buffers */
	raw_tick(&raw);
	static double cpu[NSETS][MAXROUNDS];
	unsigned long long sink = 0;
	for (int k = 0; k < rounds; k++)
		for (int s = 0; s < NSETS; s++) {
			double c0 = cpu_us();
			for (int t = 0; t < ticks; t++) {
				if (s == 0)
					sink += raw_tick(&raw);
				else
					vramz_sample(ctx, sets[s].flags, &snap);
			}
			cpu[s][k] = (cpu_us() - c0) / ticks;
		}
	printf("bench_tick gpus=%u procs=%u ticks=%dx%d (median of rounds, CPU us per tick of all GPUs)\n",
	       vramz_gpu_count(ctx), snap->proc_count, ticks, rounds);
	double floor_med = 0;
	for (int s = 0; s < NSETS; s++) {
		qsort(cpu[s], (size_t)rounds, sizeof(double), cmp_dbl);
		double med = cpu[s][rounds / 2];
		if (s == 0)
			floor_med = med;
		printf("  %-18s cpu_us_per_tick=%8.1f  ratio_to_floor=%.2f\n", sets[s].name, med,
		       floor_med > 0 ? med / floor_med : 0);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("  max_rss_kib=%ld (sink %llu)\n", ru.ru_maxrss, sink % 7);
	vramz_close(ctx);
	return 0;
}
