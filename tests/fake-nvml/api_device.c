/* SPDX-License-Identifier: Apache-2.0 */
/* api_device.c - the fake's per-GPU readings: identity, static facts and
 * the cheap dynamic sensors.
 *
 * Each value comes from one field of the scenario's gpu line; a field the
 * line leaves out (or sets to "na") makes its call return
 * NVML_ERROR_NOT_SUPPORTED, which is how real GPUs differ (a fanless H200,
 * a consumer card without ECC).  Memory is derived, not stored: state.c sums
 * the processes and applies growth rates, and the v1 call reports reserved
 * memory as used, as real drivers since R510 do.  Most calls refuse MIG
 * device handles with NOT_SUPPORTED; name, UUID and memory accept them.
 */
#include "fake.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

nvmlReturn_t fake_copy_str(char *buf, unsigned len, const char *s)
{
	size_t n = strlen(s);

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

void fake_fill_pci(const struct fake_gpu *g, nvmlPciInfo_t *p)
{
	memset(p, 0, sizeof(*p));
	p->domain = g->pci_domain;
	p->bus = g->pci_bus;
	p->device = g->pci_dev;
	p->pciDeviceId = (unsigned)g->v[GF_PCI_ID];
	p->pciSubSystemId = (unsigned)g->v[GF_PCI_SUBSYS];
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X",
		 g->pci_domain & 0xFFFF, g->pci_bus & 0xFF, g->pci_dev & 0x1F,
		 g->pci_fn & 7);
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X",
		 g->pci_domain, g->pci_bus & 0xFF, g->pci_dev & 0x1F, g->pci_fn & 7);
}

static nvmlReturn_t read_uint(const struct fake_gpu *g, enum fake_gf f,
			      unsigned *out)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!g->has[f])
		return NVML_ERROR_NOT_SUPPORTED;
	*out = (unsigned)g->v[f];
	return NVML_SUCCESS;
}

/* The whole of a call that reads one unsigned field. */
static nvmlReturn_t uint_call(enum fake_fn fn, nvmlDevice_t d, enum fake_gf f,
			      unsigned *out)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, 0);

	if (r == NVML_SUCCESS)
		r = read_uint(c.gpu, f, out);
	return fake_leave(&c, r);
}

/* ---- identity ------------------------------------------------------------ */

static const char *string_of(const struct fake_call *c, enum fake_fn fn)
{
	switch (fn) {
	case FN_nvmlDeviceGetName:
		return c->mig && c->mig->name[0] ? c->mig->name : c->gpu->name;
	case FN_nvmlDeviceGetUUID:
		return c->mig ? c->mig->uuid : c->gpu->uuid;
	case FN_nvmlDeviceGetSerial:
		return c->gpu->serial;
	default:
		return c->gpu->vbios;
	}
}

static nvmlReturn_t string_call(enum fake_fn fn, nvmlDevice_t d, char *buf,
				unsigned len)
{
	bool mig_ok = fn == FN_nvmlDeviceGetName || fn == FN_nvmlDeviceGetUUID;
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, mig_ok ? CALL_MIG_OK : 0);

	if (r == NVML_SUCCESS) {
		const char *s = string_of(&c, fn);

		r = *s ? fake_copy_str(buf, len, s) : NVML_ERROR_NOT_SUPPORTED;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned int len)
{
	return string_call(FN_nvmlDeviceGetName, d, buf, len);
}

FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned int len)
{
	return string_call(FN_nvmlDeviceGetUUID, d, buf, len);
}

FAKE_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *buf, unsigned int len)
{
	return string_call(FN_nvmlDeviceGetSerial, d, buf, len);
}

FAKE_API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *buf, unsigned int len)
{
	return string_call(FN_nvmlDeviceGetVbiosVersion, d, buf, len);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetPciInfo_v3, d, 0);

	if (r == NVML_SUCCESS && !p)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has_pci)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		fake_fill_pci(c.gpu, p);
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned int *a)
{
	return uint_call(FN_nvmlDeviceGetArchitecture, d, GF_ARCH, a);
}

FAKE_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *maj, int *min)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetCudaComputeCapability, d, 0);

	if (r == NVML_SUCCESS && (!maj || !min))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has_cc)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		*maj = c.gpu->cc_major;
		*min = c.gpu->cc_minor;
	}
	return fake_leave(&c, r);
}

/* ---- static facts -------------------------------------------------------- */

FAKE_API nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t d, unsigned int *bits)
{
	return uint_call(FN_nvmlDeviceGetMemoryBusWidth, d, GF_BUS_WIDTH, bits);
}

/* Graphics and SM clocks are one domain on current GPUs: gr_clock defaults
 * to sm_clock.  Returns GF_COUNT for a clock type NVML does not have. */
static enum fake_gf clock_field(const struct fake_gpu *g, nvmlClockType_t t, bool max)
{
	switch (t) {
	case NVML_CLOCK_GRAPHICS:
		if (g->has[max ? GF_MAX_GR_CLOCK : GF_GR_CLOCK])
			return max ? GF_MAX_GR_CLOCK : GF_GR_CLOCK;
		return max ? GF_MAX_SM_CLOCK : GF_SM_CLOCK;
	case NVML_CLOCK_SM:
		return max ? GF_MAX_SM_CLOCK : GF_SM_CLOCK;
	case NVML_CLOCK_MEM:
		return max ? GF_MAX_MEM_CLOCK : GF_MEM_CLOCK;
	case NVML_CLOCK_VIDEO:
		return max ? GF_MAX_VIDEO_CLOCK : GF_VIDEO_CLOCK;
	}
	return GF_COUNT;
}

static nvmlReturn_t clock_call(enum fake_fn fn, nvmlDevice_t d, nvmlClockType_t t,
			       unsigned *mhz)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, 0);

	if (r == NVML_SUCCESS) {
		enum fake_gf f = clock_field(c.gpu, t, fn == FN_nvmlDeviceGetMaxClockInfo);

		r = f == GF_COUNT ? NVML_ERROR_INVALID_ARGUMENT : read_uint(c.gpu, f, mhz);
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return clock_call(FN_nvmlDeviceGetMaxClockInfo, d, t, mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return clock_call(FN_nvmlDeviceGetClockInfo, d, t, mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
	return uint_call(FN_nvmlDeviceGetMaxPcieLinkGeneration, d, GF_PCIE_MAX_GEN, gen);
}

#if FAKE_NEW_API
/* The GPU's own maximum, which the platform may cap: pcie_gpu_max_gen,
 * defaulting to pcie_max_gen. */
FAKE_API nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetGpuMaxPcieLinkGeneration, d, 0);

	if (r == NVML_SUCCESS)
		r = read_uint(c.gpu, c.gpu->has[GF_PCIE_GPU_MAX_GEN] ?
			      GF_PCIE_GPU_MAX_GEN : GF_PCIE_MAX_GEN, gen);
	return fake_leave(&c, r);
}
#endif

FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	return uint_call(FN_nvmlDeviceGetMaxPcieLinkWidth, d, GF_PCIE_MAX_WIDTH, w);
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
	return uint_call(FN_nvmlDeviceGetCurrPcieLinkGeneration, d, GF_PCIE_GEN, gen);
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	return uint_call(FN_nvmlDeviceGetCurrPcieLinkWidth, d, GF_PCIE_WIDTH, w);
}

/* Real NVML samples for 20 ms here; scenarios model that with `latency`. */
FAKE_API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t ctr, unsigned int *kbps)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetPcieThroughput, d, 0);

	if (r == NVML_SUCCESS && ctr != NVML_PCIE_UTIL_TX_BYTES &&
	    ctr != NVML_PCIE_UTIL_RX_BYTES)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = read_uint(c.gpu, ctr == NVML_PCIE_UTIL_TX_BYTES ? GF_PCIE_TX : GF_PCIE_RX, kbps);
	return fake_leave(&c, r);
}

static nvmlReturn_t state_call(enum fake_fn fn, nvmlDevice_t d, enum fake_gf f,
			       nvmlEnableState_t *cur, nvmlEnableState_t *pend)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, 0);

	if (r == NVML_SUCCESS && (!cur || (fn == FN_nvmlDeviceGetEccMode && !pend)))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[f])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		*cur = c.gpu->v[f] ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
		if (pend)
			*pend = *cur;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *cur, nvmlEnableState_t *pend)
{
	return state_call(FN_nvmlDeviceGetEccMode, d, GF_ECC, cur, pend);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
	return state_call(FN_nvmlDeviceGetPersistenceMode, d, GF_PERSISTENCE, m, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *mw)
{
	return uint_call(FN_nvmlDeviceGetPowerManagementDefaultLimit, d, GF_POWER_DEFAULT, mw);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned int *min, unsigned int *max)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetPowerManagementLimitConstraints, d, 0);

	if (r == NVML_SUCCESS && (!min || !max))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && (!c.gpu->has[GF_POWER_MIN] || !c.gpu->has[GF_POWER_MAX]))
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		*min = (unsigned)c.gpu->v[GF_POWER_MIN];
		*max = (unsigned)c.gpu->v[GF_POWER_MAX];
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
	return uint_call(FN_nvmlDeviceGetEnforcedPowerLimit, d, GF_POWER_LIMIT, mw);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t t, unsigned int *c)
{
	static const enum fake_gf fields[] = {
		[NVML_TEMPERATURE_THRESHOLD_SHUTDOWN] = GF_T_SHUTDOWN,
		[NVML_TEMPERATURE_THRESHOLD_SLOWDOWN] = GF_T_SLOWDOWN,
		[NVML_TEMPERATURE_THRESHOLD_MEM_MAX] = GF_T_MEM_MAX,
		[NVML_TEMPERATURE_THRESHOLD_GPU_MAX] = GF_T_GPU_MAX,
	};
	struct fake_call call;
	nvmlReturn_t r = fake_enter_dev(&call, FN_nvmlDeviceGetTemperatureThreshold, d, 0);

	if (r == NVML_SUCCESS && (unsigned)t >= sizeof(fields) / sizeof(fields[0]))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = read_uint(call.gpu, fields[t], c);
	return fake_leave(&call, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, nvmlBAR1Memory_t *m)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetBAR1MemoryInfo, d, 0);

	if (r == NVML_SUCCESS && !m)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_BAR1_TOTAL])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		unsigned long long total = c.gpu->v[GF_BAR1_TOTAL];
		unsigned long long used = c.gpu->v[GF_BAR1_USED];

		m->bar1Total = total;
		m->bar1Used = used < total ? used : total;
		m->bar1Free = total - m->bar1Used;
	}
	return fake_leave(&c, r);
}

/* ---- memory and sensors -------------------------------------------------- */

/* Lock held: the v2 figures of a GPU or MIG device. */
static nvmlReturn_t memory_now(const struct fake_call *c, nvmlMemory_v2_t *m)
{
	if (c->mig) {
		fake_mig_memory(c->w, c->mig, m);
		return NVML_SUCCESS;
	}
	if (!c->gpu->has[GF_MEM_TOTAL])
		return NVML_ERROR_NOT_SUPPORTED;
	fake_gpu_memory(c->w, (unsigned)c->index, m);
	return NVML_SUCCESS;
}

#if FAKE_NEW_API
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetMemoryInfo_v2, d,
					CALL_RELOAD | CALL_MEMORY | CALL_MIG_OK);

	if (r == NVML_SUCCESS && !m)
		r = NVML_ERROR_INVALID_ARGUMENT;
	/* NVML checks the caller's struct version before anything else. */
	if (r == NVML_SUCCESS && m->version != nvmlMemory_v2)
		r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (r == NVML_SUCCESS)
		r = memory_now(&c, m);
	return fake_leave(&c, r);
}
#endif

/* v1 predates "reserved": it counts reserved memory as used. */
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	struct fake_call c;
	nvmlMemory_v2_t v2;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetMemoryInfo, d,
					CALL_RELOAD | CALL_MEMORY | CALL_MIG_OK);

	if (r == NVML_SUCCESS && !m)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = memory_now(&c, &v2);
	if (r == NVML_SUCCESS) {
		m->total = v2.total;
		m->used = v2.used + v2.reserved;
		m->free = v2.total > m->used ? v2.total - m->used : 0;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetUtilizationRates, d, 0);

	if (r == NVML_SUCCESS && !u)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_UTIL])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		u->gpu = (unsigned)c.gpu->v[GF_UTIL];
		u->memory = (unsigned)c.gpu->v[GF_MEM_UTIL];
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *c)
{
	struct fake_call call;
	nvmlReturn_t r = fake_enter_dev(&call, FN_nvmlDeviceGetTemperature, d, 0);

	if (r == NVML_SUCCESS && s != NVML_TEMPERATURE_GPU)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = read_uint(call.gpu, GF_TEMP, c);
	return fake_leave(&call, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	return uint_call(FN_nvmlDeviceGetPowerUsage, d, GF_POWER, mw);
}

static nvmlReturn_t reasons_call(enum fake_fn fn, nvmlDevice_t d, unsigned long long *bits)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, 0);

	if (r == NVML_SUCCESS && !bits)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_THROTTLE])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*bits = c.gpu->v[GF_THROTTLE];
	return fake_leave(&c, r);
}

#if FAKE_NEW_API
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	return reasons_call(FN_nvmlDeviceGetCurrentClocksEventReasons, d, r);
}
#endif

FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
	return reasons_call(FN_nvmlDeviceGetCurrentClocksThrottleReasons, d, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *minor)
{
	return uint_call(FN_nvmlDeviceGetMinorNumber, d, GF_MINOR, minor);
}

FAKE_API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int *pct)
{
	return uint_call(FN_nvmlDeviceGetFanSpeed, d, GF_FAN, pct);
}

/* A counter: energy= at nvmlInit, then power= integrated over time. */
/* Field values: the memory temperature (scenario key temp_mem) is the one
 * field the fake knows; any other, or temp_mem absent, answers that
 * field NOT_SUPPORTED while the call itself succeeds, as NVML does. */
FAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetFieldValues, d, 0);

	if (r == NVML_SUCCESS && (n < 0 || (n > 0 && !v)))
		r = NVML_ERROR_INVALID_ARGUMENT;
	struct timespec ts; /* one reading: one time for all its fields */
	clock_gettime(CLOCK_REALTIME, &ts);
	for (int i = 0; r == NVML_SUCCESS && i < n; i++) {
		v[i].timestamp = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		v[i].latencyUsec = 0;
		if (v[i].fieldId == NVML_FI_DEV_MEMORY_TEMP && c.gpu->has[GF_TEMP_MEM]) {
			if (c.gpu->temp_mem_signed) {
				v[i].valueType = NVML_VALUE_TYPE_SIGNED_INT;
				v[i].value.siVal = (int)(long long)c.gpu->v[GF_TEMP_MEM];
			} else {
				v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
				v[i].value.uiVal = (unsigned)c.gpu->v[GF_TEMP_MEM];
			}
			v[i].nvmlReturn = NVML_SUCCESS;
		} else if ((v[i].fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES ||
			    v[i].fieldId == NVML_FI_DEV_PCIE_COUNT_RX_BYTES) &&
			   c.gpu->has[GF_PCIE_COUNTERS] && c.gpu->v[GF_PCIE_COUNTERS]) {
			/* pcie_counters=1: the bytes a constant pcie_tx / pcie_rx
			 * (KB/s) would have moved since 1970, at the timestamp
			 * given, so two readings' rate is the scenario's exactly */
			enum fake_gf f = v[i].fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES ? GF_PCIE_TX : GF_PCIE_RX;
			if (!c.gpu->has[f]) {
				v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
				continue;
			}
			unsigned __int128 b = (unsigned __int128)c.gpu->v[f] * 1024u *
					      (unsigned long long)v[i].timestamp;
			v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
			v[i].value.ullVal = (unsigned long long)(b / 1000000u);
			v[i].nvmlReturn = NVML_SUCCESS;
		} else {
			v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		}
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetTotalEnergyConsumption, d, 0);

	if (r == NVML_SUCCESS && !mj)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_ENERGY])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		double mw = c.gpu->has[GF_POWER] ? (double)c.gpu->v[GF_POWER] : 0;

		*mj = c.gpu->v[GF_ENERGY] + (unsigned long long)(mw * fake_elapsed_s());
	}
	return fake_leave(&c, r);
}
