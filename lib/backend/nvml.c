/* SPDX-License-Identifier: Apache-2.0 */
/* nvml.c - the NVIDIA backend: NVML loaded with dlopen at run time.
 *
 * vramz builds without CUDA and runs on machines without NVIDIA's library,
 * so NVML is never linked: every symbol is looked up once, at open, from
 * the list in nvml_abi.h.  Where NVML grew a newer version of a call
 * (memory v2 with the reserved figure, process lists v3 with MIG ids,
 * "clock event" reasons) the newest present is used and an older driver
 * falls back to the older name; a call no version of which exists leaves
 * its field unknown.
 *
 * Costs measured on H200s (docs/performance.md,
 * docs/data/nvml-callcost-*-2xh200.txt) decide what is read when: identity
 * at open, slow static facts on demand (gpu_details), cheap dynamic fields
 * every tick, the PCIe link state only with VRAMZ_SAMPLE_LINK, and the
 * PCIe throughput and the 3.4 ms energy read only with VRAMZ_SAMPLE_SLOW,
 * VRAM health only with VRAMZ_SAMPLE_HEALTH (nvml_health.c).
 * Process lists and per-process utilization are in nvml_procs.c; what the
 * two files share (state, CALL) in nvml_impl.h.
 */
#include "nvml_impl.h"
#include "fields.h"
#include "memtypes.h"
#include "par.h"

#include <stdint.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *nvml_str(struct backend *b, nvmlReturn_t r)
{
	const char *s = b->f.nvmlErrorString ? b->f.nvmlErrorString(r) : NULL;
	return s ? s : "unknown NVML error";
}

static void resolve_syms(struct backend *b)
{
#define NVML_FN_SYM(req, name, args) *(void **)&b->f.name = dlsym(b->dl, #name);
	NVML_FUNCS(NVML_FN_SYM)
#undef NVML_FN_SYM
	*(void **)&b->f.nvmlErrorString = dlsym(b->dl, "nvmlErrorString");
	b->mem_v = b->f.nvmlDeviceGetMemoryInfo_v2 ? V2 : b->f.nvmlDeviceGetMemoryInfo ? V1 : V_NONE;
	b->proc_v = b->f.nvmlDeviceGetComputeRunningProcesses_v3 ? V3
		  : b->f.nvmlDeviceGetComputeRunningProcesses_v2 ? V2
		  : b->f.nvmlDeviceGetComputeRunningProcesses ? V1 : V_NONE;
	b->mps_v = b->f.nvmlDeviceGetMPSComputeRunningProcesses_v3 ? V3
		 : b->f.nvmlDeviceGetMPSComputeRunningProcesses_v2 ? V2 : V_NONE;
}

/* The first required symbol this library lacks, or NULL. */
static const char *missing_required(struct backend *b)
{
#define NVML_FN_REQ(req, name, args) \
	if (!strcmp(#req, "REQ") && !b->f.name) return #name;
	NVML_FUNCS(NVML_FN_REQ)
#undef NVML_FN_REQ
	return NULL;
}

static const char *const nvml_names[ID_COUNT] = {
#define NVML_FN_NAME(req, name, args) #name,
	NVML_FUNCS(NVML_FN_NAME)
#undef NVML_FN_NAME
};

static unsigned nvml_call_stats(const struct backend *b, vramz_call_stat *out, unsigned cap)
{
	unsigned k = 0;
	if (!b->g) /* an open that failed before the GPUs were set up */
		return 0;
	for (unsigned id = 0; id < ID_COUNT; id++) {
		vramz_call_stat st = {.name = nvml_names[id]};
		for (unsigned i = 0; i < b->n; i++) {
			const struct nvml_prof *p = b->g[i].prof;
			if (p) {
				st.calls += p->calls[id];
				st.wall_ns += (uint64_t)p->wall_ns[id];
				st.cpu_ns += (uint64_t)p->cpu_ns[id];
			}
		}
		if (!st.calls)
			continue;
		if (k < cap)
			out[k] = st;
		k++;
	}
	return k;
}

static void nvml_close(struct backend *b)
{
	if (!b)
		return;
	if (b->inited && !b->exiting)
		nvml_events_close(b);
	if (b->inited && b->f.nvmlShutdown && !b->exiting)
		b->f.nvmlShutdown();
	for (unsigned i = 0; i < b->n; i++) {
		free(b->g[i].pbuf);
		free(b->g[i].ubuf);
		free(b->g[i].prof);
		free(b->g[i].lcache);
	}
	free(b->g);
	/* after a skipped shutdown the library must stay mapped: its threads
	 * may still run until exit */
	if (b->dl && !b->exiting)
		dlclose(b->dl);
	free(b);
}

/* Gets GPU i's handle and the facts every view needs from it (MIG mode
 * decides whether instances are listed); runs on its own thread. */
static void attach(void *arg, unsigned i)
{
	struct backend *b = arg;
	struct gpu *gp = &b->g[i];
	nvmlReturn_t r = b->f.nvmlDeviceGetHandleByIndex_v2(i, &gp->h);
	if (r != NVML_SUCCESS) {
		/* GPU_IS_LOST, or NO_PERMISSION on one GPU of a cgroup: report
		 * it lost rather than hide the others */
		gp->lost = 1;
		return;
	}
	unsigned cur, pend;
	if (CALL(b, gp, nvmlDeviceGetMigMode, gp->h, &cur, &pend) == NVML_SUCCESS) {
		gp->mig_cur = cur;
		gp->mig_pend = pend;
		gp->mig_known = 1;
	}
}

static int nvml_open(struct backend **out, const vramz_open_opts *opts,
		     char *err, size_t errlen)
{
	struct backend *b = calloc(1, sizeof *b);
	*out = b;
	if (!b)
		return VRAMZ_ENOMEM;
	b->exiting = !!(opts->flags & VRAMZ_OPEN_EXITING);
	b->pu_interval_ns = (int64_t)(opts->proc_util_interval_ms ? opts->proc_util_interval_ms : 5000) * 1000000;
	if (opts->nvml_path) {
		b->dl = dlopen(opts->nvml_path, RTLD_NOW | RTLD_LOCAL);
	} else {
		b->dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!b->dl)
			b->dl = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
	}
	if (!b->dl) {
		snprintf(err, errlen, "%s (is the NVIDIA driver installed?)",
			 opts->nvml_path ? opts->nvml_path : "libnvidia-ml.so.1");
		return VRAMZ_ENOLIB;
	}
	resolve_syms(b);
	const char *miss = missing_required(b);
	if (miss) {
		snprintf(err, errlen, "libnvidia-ml lacks %s (driver too old?)", miss);
		return VRAMZ_ESYMBOL;
	}
	nvmlReturn_t r = b->f.nvmlInit_v2();
	if (r != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlInit: %s", nvml_str(b, r));
		return nvml_map_rc(r);
	}
	b->inited = 1;
	r = b->f.nvmlDeviceGetCount_v2(&b->n);
	if (r != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlDeviceGetCount: %s", nvml_str(b, r));
		b->n = 0;
		return nvml_map_rc(r);
	}
	b->g = calloc(b->n ? b->n : 1, sizeof *b->g);
	if (!b->g)
		return VRAMZ_ENOMEM;
	for (unsigned i = 0; i < b->n; i++) {
		if ((opts->flags & VRAMZ_OPEN_PROFILE) &&
		    !(b->g[i].prof = calloc(1, sizeof *b->g[i].prof)))
			return VRAMZ_ENOMEM;
		/* sized for a busy GPU so a steady tick never needs a sizing call */
		b->g[i].pcap = 64;
		b->g[i].pbuf = malloc(b->g[i].pcap * sizeof *b->g[i].pbuf);
		b->g[i].ucap = 64;
		b->g[i].ubuf = malloc(b->g[i].ucap * sizeof *b->g[i].ubuf);
		if (!b->g[i].pbuf || !b->g[i].ubuf)
			return VRAMZ_ENOMEM;
	}
	/* The first use of each GPU attaches it in the driver: 6.7 ms each on
	 * H200, independent per GPU, so attach them all at once. */
	par_for(b->n, attach, b);
	return 0;
}

static int nvml_system(struct backend *b, vramz_system_info *s, vramz_backend_info *bi)
{
	if (CALL(b, NULL, nvmlSystemGetDriverVersion, bi->driver_version,
		 sizeof bi->driver_version) != NVML_SUCCESS)
		bi->driver_version[0] = 0;
	if (CALL(b, NULL, nvmlSystemGetNVMLVersion, s->nvidia.nvml_version,
		 sizeof s->nvidia.nvml_version) != NVML_SUCCESS)
		s->nvidia.nvml_version[0] = 0;
	int v = 0;
	if (CALL(b, NULL, nvmlSystemGetCudaDriverVersion_v2, &v) != NVML_SUCCESS &&
	    CALL(b, NULL, nvmlSystemGetCudaDriverVersion, &v) != NVML_SUCCESS)
		v = 0;
	s->nvidia.cuda_driver_version = v;
	return 0;
}

static unsigned nvml_count(struct backend *b)
{
	return b->n;
}

static const char *arch_name(unsigned a)
{
	switch (a) {
	case NVML_DEVICE_ARCH_KEPLER: return "Kepler";
	case NVML_DEVICE_ARCH_MAXWELL: return "Maxwell";
	case NVML_DEVICE_ARCH_PASCAL: return "Pascal";
	case NVML_DEVICE_ARCH_VOLTA: return "Volta";
	case NVML_DEVICE_ARCH_TURING: return "Turing";
	case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
	case NVML_DEVICE_ARCH_ADA: return "Ada Lovelace";
	case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
	case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
	default: return NULL;
	}
}

static int nvml_gpu_info(struct backend *b, unsigned idx, vramz_gpu_info *o)
{
	struct gpu *gp = &b->g[idx];
	nvmlPciInfo_t pci;
	if (gp->lost)
		return VRAMZ_ELOST;
	if (CALL(b, gp, nvmlDeviceGetName, gp->h, o->name, sizeof o->name) != NVML_SUCCESS)
		o->name[0] = 0;
	if (CALL(b, gp, nvmlDeviceGetUUID, gp->h, o->uuid, sizeof o->uuid) != NVML_SUCCESS)
		o->uuid[0] = 0;
	if (CALL(b, gp, nvmlDeviceGetPciInfo_v3, gp->h, &pci) == NVML_SUCCESS) {
		pci.busId[sizeof pci.busId - 1] = 0;
		snprintf(o->pci_bus_id, sizeof o->pci_bus_id, "%s", pci.busId);
	}
	if (gp->mig_known) {
		o->mig_current = gp->mig_cur;
		o->mig_pending = gp->mig_pend;
		o->valid |= VRAMZ_I_MIG;
	}
	const struct memtype *mt = memtype_for(o->name);
	if (mt)
		snprintf(o->mem_type, sizeof o->mem_type, "%s", mt->type);
	/* MIG mode decides whether a sample lists instances, so it is known
	 * from open, not only after gpu_details */
	unsigned cur, pend;
	if (CALL(b, gp, nvmlDeviceGetMigMode, gp->h, &cur, &pend) == NVML_SUCCESS) {
		o->mig_current = cur;
		o->mig_pending = pend;
		o->valid |= VRAMZ_I_MIG;
	}
	return gp->lost ? VRAMZ_ELOST : 0;
}

/* the NVLinks up, of those the GPU has (a link it lacks answers
 * INVALID_ARGUMENT or NOT_SUPPORTED) */
static void nvlink_count(struct backend *b, struct gpu *gp, vramz_gpu_info *o)
{
	unsigned n = 0;
	int any = 0;
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t on;
		nvmlReturn_t r = CALL_ARG(b, gp, nvmlDeviceGetNvLinkState, gp->h, l, &on);
		if (r == NVML_SUCCESS) {
			any = 1;
			n += on == NVML_FEATURE_ENABLED;
		} else if (r != NVML_ERROR_INVALID_ARGUMENT && r != NVML_ERROR_NOT_SUPPORTED) {
			break;
		}
	}
	o->nvlink_count = n;
	if (any)
		o->valid |= VRAMZ_I_NVLINK;
}

/* the driver's temperature thresholds, each in its plausible range */
static void temp_thresholds(struct backend *b, struct gpu *gp, vramz_gpu_info *o)
{
	static const struct {
		nvmlTemperatureThresholds_t t;
		uint32_t bit;
		size_t off;
	} th[] = {
		{NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, VRAMZ_I_T_SHUTDOWN, offsetof(vramz_gpu_info, temp_shutdown_c)},
		{NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, VRAMZ_I_T_SLOWDOWN, offsetof(vramz_gpu_info, temp_slowdown_c)},
		{NVML_TEMPERATURE_THRESHOLD_MEM_MAX, VRAMZ_I_T_MEM_MAX, offsetof(vramz_gpu_info, temp_mem_max_c)},
		{NVML_TEMPERATURE_THRESHOLD_GPU_MAX, VRAMZ_I_T_GPU_MAX, offsetof(vramz_gpu_info, temp_gpu_max_c)},
	};
	unsigned u;
	for (size_t i = 0; i < sizeof th / sizeof th[0]; i++) {
		if (CALL_ARG(b, gp, nvmlDeviceGetTemperatureThreshold, gp->h, th[i].t, &u) == NVML_SUCCESS &&
		    u <= FIELD_MAX_TEMP_C) {
			*(int *)((char *)o + th[i].off) = (int)u;
			o->valid |= th[i].bit;
		}
	}
}

static int nvml_gpu_details(struct backend *b, unsigned idx, vramz_gpu_info *o)
{
	struct gpu *gp = &b->g[idx];
	unsigned u, v;
	int maj, min;
	nvmlEnableState_t cur, pend;
	nvmlBAR1Memory_t bar1;
	nvmlMemory_t m1;
	nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};

	if (gp->lost)
		return VRAMZ_ELOST;
	if (CALL(b, gp, nvmlDeviceGetSerial, gp->h, o->serial, sizeof o->serial) != NVML_SUCCESS)
		o->serial[0] = 0;
	if (CALL(b, gp, nvmlDeviceGetVbiosVersion, gp->h, o->vbios, sizeof o->vbios) != NVML_SUCCESS)
		o->vbios[0] = 0;
	if (CALL(b, gp, nvmlDeviceGetArchitecture, gp->h, &u) == NVML_SUCCESS && arch_name(u)) {
		snprintf(o->arch, sizeof o->arch, "%s", arch_name(u));
		o->valid |= VRAMZ_I_ARCH;
	}
	/* the /dev/nvidiaN node: dcgm-exporter's `device` label where the
	 * driver's /proc file cannot be read (a container without it) */
	if (CALL(b, gp, nvmlDeviceGetMinorNumber, gp->h, &u) == NVML_SUCCESS && u < 1000000) {
		o->minor_number = u;
		o->valid |= VRAMZ_I_MINOR;
	}
	if (CALL(b, gp, nvmlDeviceGetCudaComputeCapability, gp->h, &maj, &min) == NVML_SUCCESS) {
		o->cc_major = (unsigned)maj;
		o->cc_minor = (unsigned)min;
		o->valid |= VRAMZ_I_CC;
	}
	/* each figure out of its plausible range (fields.h) stays unknown */
	if (b->mem_v == V2 && CALL(b, gp, nvmlDeviceGetMemoryInfo_v2, gp->h, &m2) == NVML_SUCCESS) {
		o->mem_total_bytes = m2.total;
		if (m2.total && m2.total <= FIELD_MAX_BYTES)
			o->valid |= VRAMZ_I_MEM_TOTAL;
	} else if (CALL(b, gp, nvmlDeviceGetMemoryInfo, gp->h, &m1) == NVML_SUCCESS) {
		o->mem_total_bytes = m1.total;
		if (m1.total && m1.total <= FIELD_MAX_BYTES)
			o->valid |= VRAMZ_I_MEM_TOTAL;
	}
	if (CALL(b, gp, nvmlDeviceGetBAR1MemoryInfo, gp->h, &bar1) == NVML_SUCCESS &&
	    bar1.bar1Total <= FIELD_MAX_BYTES) {
		o->bar1_total_bytes = bar1.bar1Total;
		o->valid |= VRAMZ_I_BAR1;
	}
	if (CALL(b, gp, nvmlDeviceGetMemoryBusWidth, gp->h, &u) == NVML_SUCCESS && u && u <= 65536) {
		o->mem_bus_width_bits = u;
		o->valid |= VRAMZ_I_BUS_WIDTH;
	}
	if (CALL_ARG(b, gp, nvmlDeviceGetMaxClockInfo, gp->h, NVML_CLOCK_MEM, &u) == NVML_SUCCESS &&
	    u <= FIELD_MAX_CLOCK_MHZ) {
		o->max_mem_clock_mhz = u;
		o->valid |= VRAMZ_I_MAX_MEMCLK;
	}
	if (CALL_ARG(b, gp, nvmlDeviceGetMaxClockInfo, gp->h, NVML_CLOCK_SM, &u) == NVML_SUCCESS &&
	    u <= FIELD_MAX_CLOCK_MHZ) {
		o->max_sm_clock_mhz = u;
		o->valid |= VRAMZ_I_MAX_SMCLK;
	}
	uint64_t bw = memtype_bandwidth(memtype_for(o->name), o->max_mem_clock_mhz,
					o->mem_bus_width_bits);
	if (bw) {
		o->bandwidth_bytes_per_s = bw;
		o->valid |= VRAMZ_I_BANDWIDTH;
	}
	/* the link's max (what the slot allows), not only the GPU's */
	if (CALL(b, gp, nvmlDeviceGetMaxPcieLinkGeneration, gp->h, &u) == NVML_SUCCESS &&
	    CALL(b, gp, nvmlDeviceGetMaxPcieLinkWidth, gp->h, &v) == NVML_SUCCESS &&
	    u >= 1 && u <= FIELD_MAX_PCIE_GEN && v >= 1 && v <= FIELD_MAX_PCIE_WIDTH) {
		o->pcie_max_gen = u;
		o->pcie_max_width = v;
		o->valid |= VRAMZ_I_PCIE_MAX;
	}
	if (b->f.nvmlDeviceGetNvLinkState)
		nvlink_count(b, gp, o);
	if (CALL(b, gp, nvmlDeviceGetEccMode, gp->h, &cur, &pend) == NVML_SUCCESS) {
		o->ecc_current = cur == NVML_FEATURE_ENABLED;
		o->ecc_pending = pend == NVML_FEATURE_ENABLED;
		o->valid |= VRAMZ_I_ECC;
	}
	if (CALL(b, gp, nvmlDeviceGetPersistenceMode, gp->h, &cur) == NVML_SUCCESS) {
		o->persistence = cur == NVML_FEATURE_ENABLED;
		o->valid |= VRAMZ_I_PERSIST;
	}
	if (CALL(b, gp, nvmlDeviceGetPowerManagementDefaultLimit, gp->h, &u) == NVML_SUCCESS &&
	    CALL(b, gp, nvmlDeviceGetPowerManagementLimitConstraints, gp->h, &v,
		 &o->power_max_limit_mw) == NVML_SUCCESS &&
	    u <= FIELD_MAX_POWER_MW && v <= FIELD_MAX_POWER_MW && o->power_max_limit_mw <= FIELD_MAX_POWER_MW) {
		o->power_default_limit_mw = u;
		o->power_min_limit_mw = v;
		o->valid |= VRAMZ_I_POWER_LIMITS;
	}
	temp_thresholds(b, gp, o);
	return gp->lost ? VRAMZ_ELOST : 0;
}

/* A field value as an int; 0 when its type is not a number that fits. */
static int field_int(const nvmlFieldValue_t *fv, int *out)
{
	long long v;
	switch (fv->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_INT: v = fv->value.uiVal; break;
	case NVML_VALUE_TYPE_SIGNED_INT: v = fv->value.siVal; break;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT: v = fv->value.usVal; break;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG: v = fv->value.sllVal; break;
	case NVML_VALUE_TYPE_UNSIGNED_LONG: v = fv->value.ulVal > 0x7fffffffUL ? -1 : (long long)fv->value.ulVal; break;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: v = fv->value.ullVal > 0x7fffffffULL ? -1 : (long long)fv->value.ullVal; break;
	case NVML_VALUE_TYPE_DOUBLE: v = (long long)fv->value.dVal; break;
	default: return 0;
	}
	if (v < -1000 || v > 1000) /* no temperature */
		return 0;
	*out = (int)v;
	return 1;
}

/* The per-tick fields: memory, utilization, temperature (core and
 * memory), power, clocks, throttle reasons, fan. */
static void sample_base(struct backend *b, struct gpu *gp, vramz_gpu_sample *o)
{
	unsigned u;
	unsigned long long r;
	nvmlUtilization_t ut;

	if (b->mem_v == V2) {
		nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
		nvmlReturn_t rc = CALL(b, gp, nvmlDeviceGetMemoryInfo_v2, gp->h, &m);
		if (rc == NVML_SUCCESS) {
			o->mem_total_bytes = m.total;
			o->mem_reserved_bytes = m.reserved;
			o->mem_used_bytes = m.used;
			o->mem_free_bytes = m.free;
			o->valid |= VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED;
			gp->tick_used = m.used;
			gp->tick_used_ok = 1;
		}
	} else if (b->mem_v == V1) {
		/* v1 "used" includes the reserved memory; it stays unseparated */
		nvmlMemory_t m;
		if (CALL(b, gp, nvmlDeviceGetMemoryInfo, gp->h, &m) == NVML_SUCCESS) {
			o->mem_total_bytes = m.total;
			o->mem_used_bytes = m.used;
			o->mem_free_bytes = m.free;
			o->valid |= VRAMZ_F_MEM;
			gp->tick_used = m.used;
			gp->tick_used_ok = 1;
		}
	}
	if (gp->lost)
		return;
	gp->gpu_idle = 0;
	if (CALL(b, gp, nvmlDeviceGetUtilizationRates, gp->h, &ut) == NVML_SUCCESS) {
		gp->gpu_idle = ut.gpu == 0;
		o->util_gpu_pct = ut.gpu;
		o->util_mem_pct = ut.memory;
		o->valid |= VRAMZ_F_UTIL;
	}
	if (CALL(b, gp, nvmlDeviceGetTemperature, gp->h, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS) {
		o->temp_c = (int)u;
		o->valid |= VRAMZ_F_TEMP;
	}
	/* Memory (HBM) temperature, as nvidia-smi's "Memory Current Temp": a
	 * field value, 2-15 us of CPU after a first 2 ms on H200.  A GPU that
	 * refuses the field (its own return, inside a successful call) is not
	 * asked again. */
	if (!gp->memtemp_unsup) {
		nvmlFieldValue_t fv;
		memset(&fv, 0, sizeof fv);
		fv.fieldId = NVML_FI_DEV_MEMORY_TEMP;
		if (CALL(b, gp, nvmlDeviceGetFieldValues, gp->h, 1, &fv) != NVML_SUCCESS)
			; /* the call itself refused: CALL remembers */
		else if (fv.nvmlReturn == NVML_SUCCESS && field_int(&fv, &o->temp_mem_c))
			o->valid |= VRAMZ_F_TEMP_MEM;
		else if (fv.nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
			gp->memtemp_unsup = 1;
	}
	if (CALL(b, gp, nvmlDeviceGetPowerUsage, gp->h, &u) == NVML_SUCCESS) {
		o->power_mw = u;
		o->valid |= VRAMZ_F_POWER;
	}
	if (CALL(b, gp, nvmlDeviceGetEnforcedPowerLimit, gp->h, &u) == NVML_SUCCESS) {
		o->power_limit_mw = u;
		o->valid |= VRAMZ_F_POWER_LIMIT;
	}
	if (CALL_ARG(b, gp, nvmlDeviceGetClockInfo, gp->h, NVML_CLOCK_SM, &u) == NVML_SUCCESS) {
		o->clock_sm_mhz = u;
		o->valid |= VRAMZ_F_CLK_SM;
	}
	if (CALL_ARG(b, gp, nvmlDeviceGetClockInfo, gp->h, NVML_CLOCK_MEM, &u) == NVML_SUCCESS) {
		o->clock_mem_mhz = u;
		o->valid |= VRAMZ_F_CLK_MEM;
	}
	if ((b->f.nvmlDeviceGetCurrentClocksEventReasons
		     ? CALL(b, gp, nvmlDeviceGetCurrentClocksEventReasons, gp->h, &r)
		     : CALL(b, gp, nvmlDeviceGetCurrentClocksThrottleReasons, gp->h, &r)) ==
	    NVML_SUCCESS) {
		o->throttle_reasons = r;
		o->valid |= VRAMZ_F_THROTTLE;
	}
	if (CALL(b, gp, nvmlDeviceGetFanSpeed, gp->h, &u) == NVML_SUCCESS) {
		o->fan_pct = u;
		o->valid |= VRAMZ_F_FAN;
	}
}

/* The PCIe byte counters, both in one field-values call; 1 when they
 * answered (o's throughput set, or left unknown when they went back), 0
 * when they did not (nvmlDeviceGetPcieThroughput then; for good once they
 * answered NOT_SUPPORTED).
 *
 * Why: nvmlDeviceGetPcieThroughput samples a 20 ms window per direction
 * (21 ms of wall and 1 ms of CPU each on H200 when asked every few
 * seconds), while the counters cost 0.8 ms for both and give the average
 * over the whole time since the last reading, not a 20 ms glimpse of it.
 * A first reading (or one after the counters went back) has no earlier
 * one, so it takes its own 20 ms window, as the old call did. */
static int pcie_counter_read(struct backend *b, struct gpu *gp, unsigned long long *tx,
			     unsigned long long *rx, int64_t *us)
{
	nvmlFieldValue_t fv[2];
	memset(fv, 0, sizeof fv);
	fv[0].fieldId = NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
	fv[1].fieldId = NVML_FI_DEV_PCIE_COUNT_RX_BYTES;
	nvmlReturn_t r = CALL(b, gp, nvmlDeviceGetFieldValues, gp->h, 2, fv);
	if (r == NVML_SUCCESS && fv[0].nvmlReturn != NVML_SUCCESS)
		r = fv[0].nvmlReturn;
	if (r == NVML_SUCCESS && fv[1].nvmlReturn != NVML_SUCCESS)
		r = fv[1].nvmlReturn;
	if (r != NVML_SUCCESS) {
		if (r == NVML_ERROR_NOT_SUPPORTED)
			gp->pcnt_unsup = 1; /* for good: the older call from now on */
		return -1;
	}
	*tx = fv[0].value.ullVal;
	*rx = fv[1].value.ullVal;
	/* the driver's time of the reading when it gives one: a counter it
	 * refreshes on its own cadence is exact against its own clock */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t mine = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	*us = fv[0].timestamp > 0 ? fv[0].timestamp : -mine;
	return 0;
}

static int pcie_counters(struct backend *b, struct gpu *gp, vramz_gpu_sample *o)
{
	if (gp->pcnt_unsup || !b->f.nvmlDeviceGetFieldValues)
		return 0;
	unsigned long long tx, rx;
	int64_t us;
	for (int tries = 0; tries < 2; tries++) {
		if (pcie_counter_read(b, gp, &tx, &rx, &us) < 0) {
			gp->pcnt_have = 0;
			return 0;
		}
		/* a rate needs an earlier reading on the same clock (the
		 * driver's stamps are positive, ours negated), the counters not
		 * gone back, and 10 ms between the two */
		int64_t dt = gp->pcnt_have && (us > 0) == (gp->pcnt_us > 0)
				     ? (us > 0 ? us - gp->pcnt_us : gp->pcnt_us - us) : 0;
		int ok = dt >= 10000 && tx >= gp->pcnt_tx && rx >= gp->pcnt_rx;
		if (ok) {
			o->pcie_tx_bytes_per_s = (uint64_t)(((double)(tx - gp->pcnt_tx) * 1e6) / (double)dt + 0.5);
			o->pcie_rx_bytes_per_s = (uint64_t)(((double)(rx - gp->pcnt_rx) * 1e6) / (double)dt + 0.5);
			o->valid |= VRAMZ_F_PCIE_TPUT;
		}
		gp->pcnt_tx = tx;
		gp->pcnt_rx = rx;
		gp->pcnt_us = us;
		gp->pcnt_have = 1;
		if (ok || tries)
			break;
		struct timespec win = {0, 20000000}; /* the window of the first reading */
		nanosleep(&win, NULL);
	}
	return 1;
}

static int nvml_sample(struct backend *b, unsigned idx, unsigned flags,
		       vramz_gpu_sample *o)
{
	struct gpu *gp = &b->g[idx];
	unsigned u, v;
	unsigned long long r;

	if (gp->lost)
		return VRAMZ_ELOST;
	gp->tick_used_ok = 0;
	if (!(flags & VRAMZ_SAMPLE_SLOW_ONLY))
		sample_base(b, gp, o);
	/* a memory reading with a 0 total, or a part above it, is no reading
	 * (and no cue to re-read the process lists) */
	if ((o->valid & VRAMZ_F_MEM) &&
	    !field_mem_ok(o->mem_total_bytes, o->mem_used_bytes, o->mem_free_bytes)) {
		o->valid &= ~(uint32_t)(VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED);
		gp->tick_used_ok = 0;
	}
	if (gp->lost)
		return VRAMZ_ELOST;
	/* 30 us a GPU on H200: more than the rest of the tick together */
	if ((flags & VRAMZ_SAMPLE_LINK) &&
	    CALL(b, gp, nvmlDeviceGetCurrPcieLinkGeneration, gp->h, &u) == NVML_SUCCESS &&
	    CALL(b, gp, nvmlDeviceGetCurrPcieLinkWidth, gp->h, &v) == NVML_SUCCESS) {
		o->pcie_gen = u;
		o->pcie_width = v;
		o->valid |= VRAMZ_F_PCIE_LINK;
	}
	if (flags & VRAMZ_SAMPLE_SLOW) {
		if (pcie_counters(b, gp, o) == 0 &&
		    CALL_ARG(b, gp, nvmlDeviceGetPcieThroughput, gp->h, NVML_PCIE_UTIL_TX_BYTES, &u) == NVML_SUCCESS &&
		    CALL_ARG(b, gp, nvmlDeviceGetPcieThroughput, gp->h, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS) {
			o->pcie_tx_bytes_per_s = (uint64_t)u * 1024;
			o->pcie_rx_bytes_per_s = (uint64_t)v * 1024;
			o->valid |= VRAMZ_F_PCIE_TPUT;
		}
		if (!(flags & VRAMZ_SAMPLE_NO_ENERGY) &&
		    CALL(b, gp, nvmlDeviceGetTotalEnergyConsumption, gp->h, &r) == NVML_SUCCESS) {
			o->energy_mj = r;
			o->valid |= VRAMZ_F_ENERGY;
		}
	}
	if ((flags & VRAMZ_SAMPLE_HEALTH) && !gp->lost)
		nvml_health(b, gp, o);
	/* 0xFFFFFFFF and the like: unknown, never 4294967295 % (fields.c) */
	field_sanitize(o);
	return gp->lost ? VRAMZ_ELOST : 0;
}

static int nvml_migs(struct backend *b, unsigned idx, struct mig_vec *out)
{
	struct gpu *gp = &b->g[idx];
	unsigned max = 0;
	if (gp->lost)
		return VRAMZ_ELOST;
	if (CALL(b, gp, nvmlDeviceGetMaxMigDeviceCount, gp->h, &max) != NVML_SUCCESS)
		return VRAMZ_EUNSUPPORTED;
	for (unsigned i = 0; i < max; i++) {
		nvmlDevice_t m;
		if (CALL(b, gp, nvmlDeviceGetMigDeviceHandleByIndex, gp->h, i, &m) != NVML_SUCCESS)
			continue; /* NOT_FOUND: slot empty */
		vramz_mig_sample *ms = mig_vec_push(out);
		if (!ms)
			return VRAMZ_ENOMEM;
		ms->parent_index = idx;
		ms->mig_index = i;
		CALL_ARG(b, gp, nvmlDeviceGetGpuInstanceId, m, &ms->gi_id);
		CALL_ARG(b, gp, nvmlDeviceGetComputeInstanceId, m, &ms->ci_id);
		if (CALL_ARG(b, gp, nvmlDeviceGetUUID, m, ms->uuid, sizeof ms->uuid) != NVML_SUCCESS)
			ms->uuid[0] = 0;
		nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
		nvmlMemory_t m1;
		if (b->mem_v == V2 && CALL_ARG(b, gp, nvmlDeviceGetMemoryInfo_v2, m, &m2) == NVML_SUCCESS) {
			ms->mem_total_bytes = m2.total;
			ms->mem_used_bytes = m2.used;
			ms->mem_free_bytes = m2.free;
			ms->valid |= VRAMZ_F_MEM;
		} else if (CALL_ARG(b, gp, nvmlDeviceGetMemoryInfo, m, &m1) == NVML_SUCCESS) {
			ms->mem_total_bytes = m1.total;
			ms->mem_used_bytes = m1.used;
			ms->mem_free_bytes = m1.free;
			ms->valid |= VRAMZ_F_MEM;
		}
		if (!field_mem_ok(ms->mem_total_bytes, ms->mem_used_bytes, ms->mem_free_bytes))
			ms->valid &= ~(uint32_t)VRAMZ_F_MEM;
	}
	return 0;
}

static int nvml_topology(struct backend *b, unsigned a, unsigned c, vramz_link *out)
{
	struct gpu *ga = &b->g[a], *gc = &b->g[c];
	nvmlPciInfo_t peer, cpci;
	nvmlGpuTopologyLevel_t lvl;
	unsigned links = 0;

	if (ga->lost || gc->lost)
		return VRAMZ_ELOST;
	/* NVLink: count a's active links whose remote end is c.  On H200
	 * boards the remote PCI info can read FFFFFFFF:FF:FF.0 (NVSwitch or
	 * direct links), so when no link names c, a direct 2-GPU system's
	 * active links are credited by the count both ends report. */
	if (b->f.nvmlDeviceGetNvLinkState &&
	    CALL(b, gc, nvmlDeviceGetPciInfo_v3, gc->h, &cpci) == NVML_SUCCESS) {
		unsigned active = 0, unnamed = 0;
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			nvmlEnableState_t on;
			if (CALL_ARG(b, ga, nvmlDeviceGetNvLinkState, ga->h, l, &on) != NVML_SUCCESS ||
			    on != NVML_FEATURE_ENABLED)
				continue;
			active++;
			if (CALL_ARG(b, ga, nvmlDeviceGetNvLinkRemotePciInfo_v2, ga->h, l, &peer) != NVML_SUCCESS)
				continue;
			if (!strcasecmp(peer.busId, cpci.busId))
				links++;
			else if (!strncasecmp(peer.busId, "FFFFFFFF", 8))
				unnamed++;
		}
		if (!links && unnamed == active && active && b->n == 2)
			links = active;
	}
	if (links) {
		out->kind = VRAMZ_LINK_NVLINK;
		out->nvlinks = links;
		return 0;
	}
	nvmlReturn_t r = CALL_ARG(b, ga, nvmlDeviceGetTopologyCommonAncestor, ga->h, gc->h, &lvl);
	if (r != NVML_SUCCESS)
		return nvml_map_rc(r);
	switch (lvl) {
	case NVML_TOPOLOGY_INTERNAL: out->kind = VRAMZ_LINK_SELF; break;
	case NVML_TOPOLOGY_SINGLE: out->kind = VRAMZ_LINK_PIX; break;
	case NVML_TOPOLOGY_MULTIPLE: out->kind = VRAMZ_LINK_PXB; break;
	case NVML_TOPOLOGY_HOSTBRIDGE: out->kind = VRAMZ_LINK_PHB; break;
	case NVML_TOPOLOGY_NODE: out->kind = VRAMZ_LINK_NODE; break;
	case NVML_TOPOLOGY_SYSTEM: out->kind = VRAMZ_LINK_SYS; break;
	default: out->kind = VRAMZ_LINK_UNKNOWN; break;
	}
	return 0;
}

const struct backend_ops backend_nvml = {
	.name = "nvml",
	.vendor = "nvidia",
	.parallel_safe = 1,
	.open = nvml_open,
	.close = nvml_close,
	.system = nvml_system,
	.count = nvml_count,
	.gpu_info = nvml_gpu_info,
	.gpu_details = nvml_gpu_details,
	.sample = nvml_sample,
	.procs = nvml_procs,
	.migs = nvml_migs,
	.topology = nvml_topology,
	.call_stats = nvml_call_stats,
	.events_open = nvml_events_open,
	.events_wait = nvml_events_wait,
};
