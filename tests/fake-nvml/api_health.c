/* SPDX-License-Identifier: Apache-2.0 */
/* api_health.c - the fake's VRAM health: ECC counters, remapped rows,
 * retired pages, the PCIe replay counter, and the event API
 * (nvmlEventSetCreate, nvmlDeviceRegisterEvents, nvmlEventSetWait_v2,
 * nvmlEventSetFree), with NVML's signatures (fake.h declares them from
 * nvml_abi.h).
 *
 * Each counter is a gpu-line field moved by the scenario's timeline
 * (`at 5s gpu=2 ecc_dbe=+1`, state.c's fake_gpu_value); a field the line
 * and the timeline leave out is NOT_SUPPORTED, as on a GPU that lacks it
 * (retired pages on Hopper).  An event set delivers each timeline event
 * (xid, ecc_sbe, ecc_dbe) of a GPU registered for its type once its time
 * has come, in file order; a wait with nothing due sleeps until the next
 * one or its timeout, with the lock released, as the driver's does.
 */
#include "fake.h"

#include <string.h>

#define FAKE_MAX_SETS 16

struct nvmlEventSet_st {
	bool used;
	double t0_s;                        /* events from this time on */
	unsigned long long mask[FAKE_MAX_GPUS]; /* registered types */
	unsigned sent[FAKE_MAX_AT];         /* times delivered */
};
static struct nvmlEventSet_st sets[FAKE_MAX_SETS];

static bool ecc_off(const struct fake_gpu *g)
{
	return g->has[GF_ECC] && !g->v[GF_ECC];
}

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t e,
						  nvmlEccCounterType_t t, unsigned long long *n)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetTotalEccErrors, d, 0);
	enum fake_gf f = e ? (t ? GF_ECC_DBE_AGG : GF_ECC_DBE_VOL) : (t ? GF_ECC_SBE_AGG : GF_ECC_SBE_VOL);
	unsigned long long v;

	if (r == NVML_SUCCESS && (!n || (unsigned)e > 1 || (unsigned)t > 1))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && (ecc_off(c.gpu) || !fake_gpu_value(c.w, (unsigned)c.index, f, &v)))
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*n = v;
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr,
						unsigned int *unc, unsigned int *pending,
						unsigned int *failure)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetRemappedRows, d, 0);
	unsigned long long v[4];
	static const enum fake_gf f[4] = {GF_REMAP_CORR, GF_REMAP_UNC, GF_REMAP_PENDING,
					  GF_REMAP_FAILURE};
	bool has = false;

	if (r == NVML_SUCCESS && (!corr || !unc || !pending || !failure))
		r = NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; r == NVML_SUCCESS && i < 4; i++)
		has |= fake_gpu_value(c.w, (unsigned)c.index, f[i], &v[i]);
	if (r == NVML_SUCCESS && !has)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS) {
		*corr = (unsigned)v[0];
		*unc = (unsigned)v[1];
		*pending = (unsigned)v[2];
		*failure = (unsigned)v[3];
	}
	return fake_leave(&c, r);
}

/* The count protocol: fewer slots than pages is INSUFFICIENT_SIZE with
 * the count; addresses are made up (page i at i * 64 KiB). */
FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
						   unsigned int *n, unsigned long long *addr,
						   unsigned long long *ts)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetRetiredPages_v2, d, 0);
	unsigned long long v = 0;

	if (r == NVML_SUCCESS && (!n || (unsigned)cause > 1 || (*n && !addr)))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS &&
	    !fake_gpu_value(c.w, (unsigned)c.index, cause ? GF_RETIRED_DBE : GF_RETIRED_SBE, &v))
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && *n < v) {
		*n = (unsigned)v;
		r = NVML_ERROR_INSUFFICIENT_SIZE;
	} else if (r == NVML_SUCCESS) {
		for (unsigned i = 0; i < v; i++) {
			addr[i] = (unsigned long long)i << 16;
			if (ts)
				ts[i] = 1764633600ull * 1000000 + i;
		}
		*n = (unsigned)v;
	}
	return fake_leave(&c, r);
}

static nvmlReturn_t value_call(enum fake_fn fn, nvmlDevice_t d, enum fake_gf f,
			       unsigned long long *out)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, 0);

	if (r == NVML_SUCCESS && !fake_gpu_value(c.w, (unsigned)c.index, f, out))
		r = NVML_ERROR_NOT_SUPPORTED;
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *p)
{
	unsigned long long v;
	nvmlReturn_t r = p ? value_call(FN_nvmlDeviceGetRetiredPagesPendingStatus, d,
					 GF_RETIRED_PENDING, &v)
			   : NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*p = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int *n)
{
	unsigned long long v;
	nvmlReturn_t r = n ? value_call(FN_nvmlDeviceGetPcieReplayCounter, d, GF_PCIE_REPLAY, &v)
			   : NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		*n = (unsigned)v;
	return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
	return types ? value_call(FN_nvmlDeviceGetSupportedEventTypes, d, GF_EVENTS, types)
		     : NVML_ERROR_INVALID_ARGUMENT;
}

/* ---- events --------------------------------------------------------------- */

static bool set_ok(nvmlEventSet_t s)
{
	return s >= sets && s < sets + FAKE_MAX_SETS && s->used;
}

FAKE_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, FN_nvmlEventSetCreate, 0);

	if (r == NVML_SUCCESS && !set)
		r = NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; r == NVML_SUCCESS; i++) {
		if (i == FAKE_MAX_SETS) {
			r = NVML_ERROR_INSUFFICIENT_RESOURCES;
			break;
		}
		if (sets[i].used)
			continue;
		memset(&sets[i], 0, sizeof(sets[i]));
		sets[i].used = true;
		sets[i].t0_s = fake_elapsed_s();
		*set = &sets[i];
		break;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
					       nvmlEventSet_t set)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceRegisterEvents, d, 0);

	if (r == NVML_SUCCESS && !set_ok(set))
		r = NVML_ERROR_INVALID_ARGUMENT;
	/* NVML refuses the whole mask when one type is unsupported */
	if (r == NVML_SUCCESS && (!c.gpu->has[GF_EVENTS] || (types & ~c.gpu->v[GF_EVENTS])))
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		set->mask[c.index] |= types;
	return fake_leave(&c, r);
}

static unsigned long long at_type(const struct fake_at *a)
{
	return a->kind == AT_XID ? nvmlEventTypeXidCriticalError
	       : a->kind == AT_DBE ? nvmlEventTypeDoubleBitEccError
	       : a->kind == AT_SBE ? nvmlEventTypeSingleBitEccError : 0;
}

/* when set's next delivery of event i is due */
static double due_s(const struct fake_world *w, const struct nvmlEventSet_st *set, unsigned i)
{
	return w->at[i].t_s + set->sent[i] * w->at[i].every_s;
}

/* Lock held: the first undelivered event of set, due or not; -1 none. */
static int next_event(const struct fake_world *w, const struct nvmlEventSet_st *set)
{
	int best = -1;

	for (unsigned i = 0; i < w->nat; i++) {
		const struct fake_at *a = &w->at[i];

		if (set->sent[i] >= a->times || !(at_type(a) & set->mask[a->gpu]) || a->t_s < set->t0_s)
			continue;
		if (best < 0 || due_s(w, set, i) < due_s(w, set, (unsigned)best))
			best = (int)i;
	}
	return best;
}

FAKE_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
					  unsigned int timeout_ms)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, FN_nvmlEventSetWait_v2, 0);
	double deadline = fake_elapsed_s() + timeout_ms / 1e3;

	if (r == NVML_SUCCESS && (!set_ok(set) || !data))
		r = NVML_ERROR_INVALID_ARGUMENT;
	while (r == NVML_SUCCESS) {
		int i = next_event(c.w, set);
		double now = fake_elapsed_s();

		double due = i >= 0 ? due_s(c.w, set, (unsigned)i) : deadline;
		if (i >= 0 && due <= now) {
			const struct fake_at *a = &c.w->at[i];

			set->sent[i]++;
			memset(data, 0, sizeof(*data));
			data->device = fake_gpu_handle(a->gpu);
			data->eventType = at_type(a);
			data->eventData = a->kind == AT_XID ? a->v : 0;
			data->gpuInstanceId = data->computeInstanceId = FAKE_NO_INSTANCE;
			break;
		}
		if (now >= deadline) {
			r = NVML_ERROR_TIMEOUT;
			break;
		}
		double until = due < deadline ? due : deadline;
		if (!fake_pause(&c, (unsigned)((until - now) * 1e6) + 1))
			r = NVML_ERROR_UNINITIALIZED;
	}
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter(&c, FN_nvmlEventSetFree, 0);

	if (r == NVML_SUCCESS && !set_ok(set))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		set->used = false;
	return fake_leave(&c, r);
}
