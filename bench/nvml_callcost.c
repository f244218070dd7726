/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_callcost.c - the cost of each NVML call vramz makes, first call and
 * steady state, per GPU, so the sampler's hot path can be chosen from
 * measurements rather than guesses.  Built and run on a GPU machine:
 *   gcc -O2 -Ilib bench/nvml_callcost.c -o callcost -ldl && ./callcost [REPS]
 * Uses vramz's own NVML declarations (lib/backend/nvml_abi.h).
 *
 *   ./callcost --rare [ROUNDS] [PERIOD_S]
 * measures instead the calls a daemon's slow thread makes as it makes
 * them: each once per PERIOD_S (default 5 s) for ROUNDS rounds (default 6),
 * 100 ms apart, by the calling thread's CPU clock.  A call asked rarely
 * can cost far more than the same call in a tight loop (the driver's
 * cached state has gone cold), so the slow readings are chosen on these
 * figures. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "backend/nvml_abi.h"

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

#define SYM(name) nvmlReturn_t(*name) = dlsym(h, #name)
#define TIME_N(label, expr, n)                                                \
	do {                                                                  \
		double t0 = now_us();                                         \
		nvmlReturn_t r0 = (expr);                                     \
		double first = now_us() - t0;                                 \
		double c0 = cpu_us();                                         \
		t0 = now_us();                                                \
		for (int k = 0; k < (n); k++)                                 \
			(void)(expr);                                         \
		printf("gpu%u %-44s rc=%-3d first_us=%9.1f steady_us=%8.2f cpu_us=%8.2f\n", i, \
		       label, (int)r0, first, (now_us() - t0) / (n), (cpu_us() - c0) / (n)); \
	} while (0)
#define TIME(label, expr) TIME_N(label, expr, reps)

static double thread_cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Field ids of nvml.h (not in nvml_abi.h: vramz does not read them yet). */
#define FI_TOTAL_ENERGY 83
#define FI_POWER_INSTANT 186
#define FI_PCIE_TX_BYTES 197
#define FI_PCIE_RX_BYTES 198

enum { RARE_ENERGY, RARE_F_ENERGY, RARE_F_PCIE, RARE_F_ALL, RARE_TPUT_TX, RARE_GEN, RARE_WIDTH,
       RARE_UTIL, RARE_COUNT };
static const char *const rare_name[RARE_COUNT] = {
	"nvmlDeviceGetTotalEnergyConsumption", "FieldValues(TOTAL_ENERGY)",
	"FieldValues(PCIE_COUNT_TX+RX)", "FieldValues(ENERGY+PCIE_TX+RX)",
	"nvmlDeviceGetPcieThroughput(TX)", "nvmlDeviceGetCurrPcieLinkGeneration",
	"nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetUtilizationRates"};

static int rare(void *h, int rounds, double period_s)
{
#define RF(name, ...) nvmlReturn_t (*name)(__VA_ARGS__) = (nvmlReturn_t(*)(__VA_ARGS__))dlsym(h, #name)
	RF(nvmlDeviceGetCount_v2, unsigned *);
	RF(nvmlDeviceGetHandleByIndex_v2, unsigned, nvmlDevice_t *);
	RF(nvmlDeviceGetTotalEnergyConsumption, nvmlDevice_t, unsigned long long *);
	RF(nvmlDeviceGetFieldValues, nvmlDevice_t, int, nvmlFieldValue_t *);
	RF(nvmlDeviceGetPcieThroughput, nvmlDevice_t, int, unsigned *);
	RF(nvmlDeviceGetCurrPcieLinkGeneration, nvmlDevice_t, unsigned *);
	RF(nvmlDeviceGetCurrPcieLinkWidth, nvmlDevice_t, unsigned *);
	RF(nvmlDeviceGetUtilizationRates, nvmlDevice_t, nvmlUtilization_t *);
	unsigned n = 0;
	nvmlDeviceGetCount_v2(&n);
	if (rounds < 1 || rounds > 1000)
		rounds = 6;
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;
		nvmlDeviceGetHandleByIndex_v2(i, &d);
		double *cpu = calloc((size_t)rounds * RARE_COUNT, sizeof *cpu);
		double *wall = calloc((size_t)rounds * RARE_COUNT, sizeof *wall);
		int rc[RARE_COUNT] = {0};
		unsigned long long first[3] = {0}, last[3] = {0};
		double t_first = 0, t_last = 0;
		for (int r = 0; r < rounds; r++) {
			double round0 = now_us();
			for (int k = 0; k < RARE_COUNT; k++) {
				nvmlFieldValue_t fv[3];
				memset(fv, 0, sizeof fv);
				unsigned long long e;
				unsigned v;
				nvmlUtilization_t u;
				double c0 = thread_cpu_us(), w0 = now_us();
				nvmlReturn_t x = NVML_ERROR_FUNCTION_NOT_FOUND;
				switch (k) {
				case RARE_ENERGY: x = nvmlDeviceGetTotalEnergyConsumption(d, &e); break;
				case RARE_F_ENERGY:
					fv[0].fieldId = FI_TOTAL_ENERGY;
					x = nvmlDeviceGetFieldValues(d, 1, fv);
					if (!x)
						x = fv[0].nvmlReturn;
					break;
				case RARE_F_PCIE:
					fv[0].fieldId = FI_PCIE_TX_BYTES;
					fv[1].fieldId = FI_PCIE_RX_BYTES;
					x = nvmlDeviceGetFieldValues(d, 2, fv);
					if (!x)
						x = fv[0].nvmlReturn ? fv[0].nvmlReturn : fv[1].nvmlReturn;
					break;
				case RARE_F_ALL:
					fv[0].fieldId = FI_TOTAL_ENERGY;
					fv[1].fieldId = FI_PCIE_TX_BYTES;
					fv[2].fieldId = FI_PCIE_RX_BYTES;
					x = nvmlDeviceGetFieldValues(d, 3, fv);
					if (!x)
						x = fv[0].nvmlReturn ? fv[0].nvmlReturn
						    : fv[1].nvmlReturn ? fv[1].nvmlReturn : fv[2].nvmlReturn;
					break;
				case RARE_TPUT_TX: x = nvmlDeviceGetPcieThroughput(d, 0, &v); break;
				case RARE_GEN: x = nvmlDeviceGetCurrPcieLinkGeneration(d, &v); break;
				case RARE_WIDTH: x = nvmlDeviceGetCurrPcieLinkWidth(d, &v); break;
				case RARE_UTIL: x = nvmlDeviceGetUtilizationRates(d, &u); break;
				}
				cpu[r * RARE_COUNT + k] = thread_cpu_us() - c0;
				wall[r * RARE_COUNT + k] = now_us() - w0;
				rc[k] = (int)x;
				if (k == RARE_F_ALL && !x) {
					for (int j = 0; j < 3; j++)
						(r == 0 ? first : last)[j] = fv[j].value.ullVal;
					*(r == 0 ? &t_first : &t_last) = now_us();
				}
				struct timespec gap = {0, 100000000};
				nanosleep(&gap, NULL);
			}
			double left_us = period_s * 1e6 - (now_us() - round0);
			if (left_us > 0) {
				struct timespec t = {(time_t)(left_us / 1e6), (long)((left_us - (double)(time_t)(left_us / 1e6) * 1e6) * 1e3)};
				nanosleep(&t, NULL);
			}
		}
		printf("gpu%u rare calls: %d rounds, one each per %.1f s (us, by the thread's CPU clock)\n", i, rounds, period_s);
		printf("gpu%u %-40s %4s %10s %10s %10s %10s\n", i, "call", "rc", "cpu_med", "cpu_max", "wall_med", "wall_max");
		for (int k = 0; k < RARE_COUNT; k++) {
			double c[1000], w[1000];
			for (int r = 0; r < rounds; r++) {
				c[r] = cpu[r * RARE_COUNT + k];
				w[r] = wall[r * RARE_COUNT + k];
			}
			qsort(c, (size_t)rounds, sizeof *c, cmp_double);
			qsort(w, (size_t)rounds, sizeof *w, cmp_double);
			printf("gpu%u %-40s %4d %10.1f %10.1f %10.1f %10.1f\n", i, rare_name[k], rc[k], c[rounds / 2],
			       c[rounds - 1], w[rounds / 2], w[rounds - 1]);
		}
		if (rounds > 1 && t_last > t_first)
			printf("gpu%u over %.1f s: energy +%llu mJ (%.1f W), pcie tx %.0f B/s, rx %.0f B/s\n", i,
			       (t_last - t_first) / 1e6, last[0] - first[0],
			       (double)(last[0] - first[0]) / ((t_last - t_first) / 1e3),
			       (double)(last[1] - first[1]) / ((t_last - t_first) / 1e6),
			       (double)(last[2] - first[2]) / ((t_last - t_first) / 1e6));
		free(cpu);
		free(wall);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!h) {
		puts("no libnvidia-ml.so.1");
		return 1;
	}
	nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))dlsym(h, "nvmlInit_v2");
	init();
	if (argc > 1 && !strcmp(argv[1], "--rare"))
		return rare(h, argc > 2 ? atoi(argv[2]) : 6, argc > 3 ? atof(argv[3]) : 5.0);
	nvmlReturn_t (*count)(unsigned *) = (nvmlReturn_t(*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
	nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *) =
		(nvmlReturn_t(*)(unsigned, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
#define F(name, ...) nvmlReturn_t (*name)(__VA_ARGS__) = (nvmlReturn_t(*)(__VA_ARGS__))dlsym(h, #name)
	F(nvmlDeviceGetMemoryInfo_v2, nvmlDevice_t, nvmlMemory_v2_t *);
	F(nvmlDeviceGetUtilizationRates, nvmlDevice_t, nvmlUtilization_t *);
	F(nvmlDeviceGetTemperature, nvmlDevice_t, int, unsigned *);
	F(nvmlDeviceGetPowerUsage, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetEnforcedPowerLimit, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetClockInfo, nvmlDevice_t, int, unsigned *);
	F(nvmlDeviceGetCurrentClocksEventReasons, nvmlDevice_t, unsigned long long *);
	F(nvmlDeviceGetFanSpeed, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetCurrPcieLinkGeneration, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetCurrPcieLinkWidth, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetComputeRunningProcesses_v3, nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	F(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	F(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	F(nvmlDeviceGetProcessUtilization, nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *, unsigned long long);
	F(nvmlDeviceGetName, nvmlDevice_t, char *, unsigned);
	F(nvmlDeviceGetPcieThroughput, nvmlDevice_t, int, unsigned *);
	F(nvmlDeviceGetTotalEnergyConsumption, nvmlDevice_t, unsigned long long *);
	F(nvmlDeviceGetFieldValues, nvmlDevice_t, int, nvmlFieldValue_t *);
	F(nvmlDeviceGetUUID, nvmlDevice_t, char *, unsigned);
	F(nvmlDeviceGetPciInfo_v3, nvmlDevice_t, nvmlPciInfo_t *);
	F(nvmlDeviceGetMigMode, nvmlDevice_t, unsigned *, unsigned *);
	F(nvmlSystemGetDriverVersion, char *, unsigned);
	F(nvmlSystemGetNVMLVersion, char *, unsigned);
	F(nvmlSystemGetCudaDriverVersion_v2, int *);
	unsigned n = 0;
	count(&n);
	unsigned i = 0;
	char buf[96];
	int iv;
	TIME("nvmlSystemGetDriverVersion", nvmlSystemGetDriverVersion(buf, sizeof buf));
	TIME("nvmlSystemGetNVMLVersion", nvmlSystemGetNVMLVersion(buf, sizeof buf));
	TIME("nvmlSystemGetCudaDriverVersion_v2", nvmlSystemGetCudaDriverVersion_v2(&iv));
	for (i = 0; i < n; i++) {
		nvmlDevice_t d;
		double t0 = now_us();
		handle(i, &d);
		printf("gpu%u %-44s first_us=%9.1f\n", i, "nvmlDeviceGetHandleByIndex_v2", now_us() - t0);
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlUtilization_t u;
		unsigned v, c;
		unsigned long long r;
		nvmlProcessInfo_t pi[64];
		nvmlProcessUtilizationSample_t us[8192];
		nvmlPciInfo_t pci;
		TIME("nvmlDeviceGetName", nvmlDeviceGetName(d, buf, sizeof buf));
		TIME("nvmlDeviceGetUUID", nvmlDeviceGetUUID(d, buf, sizeof buf));
		TIME("nvmlDeviceGetPciInfo_v3", nvmlDeviceGetPciInfo_v3(d, &pci));
		TIME("nvmlDeviceGetMemoryInfo_v2", nvmlDeviceGetMemoryInfo_v2(d, &m));
		TIME("nvmlDeviceGetUtilizationRates", nvmlDeviceGetUtilizationRates(d, &u));
		TIME("nvmlDeviceGetTemperature", nvmlDeviceGetTemperature(d, 0, &v));
		TIME("nvmlDeviceGetPowerUsage", nvmlDeviceGetPowerUsage(d, &v));
		TIME("nvmlDeviceGetEnforcedPowerLimit", nvmlDeviceGetEnforcedPowerLimit(d, &v));
		TIME("nvmlDeviceGetClockInfo(SM)", nvmlDeviceGetClockInfo(d, 1, &v));
		TIME("nvmlDeviceGetClockInfo(MEM)", nvmlDeviceGetClockInfo(d, 2, &v));
		TIME("nvmlDeviceGetCurrentClocksEventReasons", nvmlDeviceGetCurrentClocksEventReasons(d, &r));
		TIME("nvmlDeviceGetFanSpeed", nvmlDeviceGetFanSpeed(d, &v));
		TIME("nvmlDeviceGetCurrPcieLinkGeneration", nvmlDeviceGetCurrPcieLinkGeneration(d, &v));
		TIME("nvmlDeviceGetCurrPcieLinkWidth", nvmlDeviceGetCurrPcieLinkWidth(d, &v));
		TIME("nvmlDeviceGetMigMode", nvmlDeviceGetMigMode(d, &v, &c));
		TIME("nvmlDeviceGetComputeRunningProcesses_v3", (c = 64, nvmlDeviceGetComputeRunningProcesses_v3(d, &c, pi)));
		TIME("nvmlDeviceGetGraphicsRunningProcesses_v3", (c = 64, nvmlDeviceGetGraphicsRunningProcesses_v3(d, &c, pi)));
		TIME("nvmlDeviceGetMPSComputeRunningProcesses_v3", (c = 64, nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &c, pi)));
		{
			/* how many each list holds: the cost above depends on it */
			unsigned nc = 64, ng = 64, nm = 64;
			int rc_ = nvmlDeviceGetComputeRunningProcesses_v3(d, &nc, pi);
			int rg_ = nvmlDeviceGetGraphicsRunningProcesses_v3(d, &ng, pi);
			int rm_ = nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &nm, pi);
			printf("gpu%u process lists: compute %u (rc=%d), graphics %u (rc=%d), mps %u (rc=%d)\n",
			       i, rc_ ? 0 : nc, rc_, rg_ ? 0 : ng, rg_, rm_ ? 0 : nm, rm_);
		}
		TIME("nvmlDeviceGetProcessUtilization(since=0)", (c = 8192, nvmlDeviceGetProcessUtilization(d, us, &c, 0)));
		TIME_N("nvmlDeviceGetPcieThroughput(TX)", nvmlDeviceGetPcieThroughput(d, 0, &v), 10);
		TIME_N("nvmlDeviceGetTotalEnergyConsumption", nvmlDeviceGetTotalEnergyConsumption(d, &r), 20);
		if (nvmlDeviceGetFieldValues) {
			nvmlFieldValue_t fv;
			TIME_N("nvmlDeviceGetFieldValues(MEMORY_TEMP)",
			       (memset(&fv, 0, sizeof fv), fv.fieldId = NVML_FI_DEV_MEMORY_TEMP,
				nvmlDeviceGetFieldValues(d, 1, &fv)), 20);
			printf("gpu%u memory temperature: field rc=%d type=%d value(ui)=%u value(ll)=%lld latency_us=%lld\n",
			       i, (int)fv.nvmlReturn, (int)fv.valueType, fv.value.uiVal, fv.value.sllVal,
			       fv.latencyUsec);
			/* PCIe byte counters (NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES, 197/198):
			 * monotonic, so a rate is two reads apart, against the 20 ms
			 * window nvmlDeviceGetPcieThroughput waits out per direction */
			nvmlFieldValue_t pc[2];
			TIME_N("nvmlDeviceGetFieldValues(PCIE_COUNT_TX+RX)",
			       (memset(pc, 0, sizeof pc), pc[0].fieldId = 197, pc[1].fieldId = 198,
				nvmlDeviceGetFieldValues(d, 2, pc)), 20);
			printf("gpu%u pcie counters: tx rc=%d type=%d value=%llu; rx rc=%d value=%llu\n",
			       i, (int)pc[0].nvmlReturn, (int)pc[0].valueType, pc[0].value.ullVal,
			       (int)pc[1].nvmlReturn, pc[1].value.ullVal);
		}
		TIME("nvmlDeviceGetProcessUtilization(since=now-1s)",
		     (c = 8192, nvmlDeviceGetProcessUtilization(d, us, &c, (unsigned long long)(time(NULL) - 1) * 1000000ull)));
	}
	return 0;
}
