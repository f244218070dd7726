/* nvml_callcost.c - the cost of each NVML call vramz makes, first call and
 * steady state, per GPU, so the sampler's hot path can be chosen from
 * measurements rather than guesses.  Built and run on a GPU machine:
 *   gcc -O2 -Ilib bench/nvml_callcost.c -o callcost -ldl && ./callcost [REPS]
 * Uses vramz's own NVML declarations (lib/backend/nvml_abi.h). */
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
