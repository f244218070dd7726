/* SPDX-License-Identifier: Apache-2.0 */
/* oneshot_ref.c - the reference for `vramz status --json`'s wall time: a
 * minimal C program that loads NVML, initialises, reads the same fields
 * once for every GPU, one GPU after another, prints nothing and shuts
 * down.  bench/oneshot.py times both as fresh processes.
 *   gcc -O2 -Ilib bench/oneshot_ref.c -o oneshot_ref -ldl */
#include <dlfcn.h>
#include <stdio.h>

#include "backend/nvml_abi.h"

#define F(name, ...) nvmlReturn_t (*name)(__VA_ARGS__) = (nvmlReturn_t(*)(__VA_ARGS__))dlsym(h, #name)

int main(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!h)
		return 1;
	F(nvmlInit_v2, void);
	F(nvmlShutdown, void);
	F(nvmlDeviceGetCount_v2, unsigned *);
	F(nvmlDeviceGetHandleByIndex_v2, unsigned, nvmlDevice_t *);
	F(nvmlSystemGetDriverVersion, char *, unsigned);
	F(nvmlSystemGetCudaDriverVersion_v2, int *);
	F(nvmlDeviceGetName, nvmlDevice_t, char *, unsigned);
	F(nvmlDeviceGetUUID, nvmlDevice_t, char *, unsigned);
	F(nvmlDeviceGetPciInfo_v3, nvmlDevice_t, nvmlPciInfo_t *);
	F(nvmlDeviceGetMemoryInfo_v2, nvmlDevice_t, nvmlMemory_v2_t *);
	F(nvmlDeviceGetUtilizationRates, nvmlDevice_t, nvmlUtilization_t *);
	F(nvmlDeviceGetTemperature, nvmlDevice_t, int, unsigned *);
	F(nvmlDeviceGetPowerUsage, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetEnforcedPowerLimit, nvmlDevice_t, unsigned *);
	F(nvmlDeviceGetClockInfo, nvmlDevice_t, int, unsigned *);
	F(nvmlDeviceGetCurrentClocksEventReasons, nvmlDevice_t, unsigned long long *);
	F(nvmlDeviceGetComputeRunningProcesses_v3, nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	F(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);
	F(nvmlDeviceGetProcessUtilization, nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *, unsigned long long);
	nvmlInit_v2();
	unsigned n = 0, v;
	char buf[96];
	int iv;
	nvmlSystemGetDriverVersion(buf, sizeof buf);
	nvmlSystemGetCudaDriverVersion_v2(&iv);
	nvmlDeviceGetCount_v2(&n);
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;
		nvmlPciInfo_t pci;
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlUtilization_t u;
		unsigned long long r;
		nvmlProcessInfo_t pi[64];
		nvmlProcessUtilizationSample_t us[256];
		unsigned c;
		nvmlDeviceGetHandleByIndex_v2(i, &d);
		nvmlDeviceGetName(d, buf, sizeof buf);
		nvmlDeviceGetUUID(d, buf, sizeof buf);
		nvmlDeviceGetPciInfo_v3(d, &pci);
		nvmlDeviceGetMemoryInfo_v2(d, &m);
		nvmlDeviceGetUtilizationRates(d, &u);
		nvmlDeviceGetTemperature(d, 0, &v);
		nvmlDeviceGetPowerUsage(d, &v);
		nvmlDeviceGetEnforcedPowerLimit(d, &v);
		nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &v);
		nvmlDeviceGetClockInfo(d, NVML_CLOCK_MEM, &v);
		nvmlDeviceGetCurrentClocksEventReasons(d, &r);
		c = 64;
		nvmlDeviceGetComputeRunningProcesses_v3(d, &c, pi);
		c = 64;
		nvmlDeviceGetGraphicsRunningProcesses_v3(d, &c, pi);
		c = 256;
		nvmlDeviceGetProcessUtilization(d, us, &c, 0);
	}
	nvmlShutdown();
	return 0;
}
