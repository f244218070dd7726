/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_health.c - VRAM health from NVML: the ECC mode and error counters,
 * remapped rows, retired pages, the PCIe replay counter (read with
 * VRAMZ_SAMPLE_HEALTH, on the slow path), and the driver's Xid and ECC
 * events (nvml_events_open / nvml_events_wait, for a watcher thread).
 *
 * Each reading a GPU does not support stays unknown, never 0: Hopper
 * remaps rows and answers NOT_SUPPORTED for retired pages; a GPU with ECC
 * off refuses its counters.  CALL remembers a refusal, so a refused call
 * is asked once.  docs/health.md lists the fields and nvidia-smi's names.
 */
#include "clock.h"
#include "nvml_impl.h"

#include <stdint.h>
#include <stdlib.h>

static int ecc_count(struct backend *b, struct gpu *gp, nvmlMemoryErrorType_t e,
		     nvmlEccCounterType_t c, uint64_t *out)
{
	unsigned long long n;
	if (CALL_ARG(b, gp, nvmlDeviceGetTotalEccErrors, gp->h, e, c, &n) != NVML_SUCCESS)
		return 0;
	*out = n;
	return 1;
}

/* Pages retired for one cause: the count of the INSUFFICIENT_SIZE
 * protocol (a call with room for none says how many there are).  Its
 * answer depends on the cause argument, so CALL_ARG; a NOT_SUPPORTED
 * (every GPU since Ampere) is remembered here instead. */
static int retired(struct backend *b, struct gpu *gp, nvmlPageRetirementCause_t c,
		   unsigned *out)
{
	unsigned n = 0;
	nvmlReturn_t r = nvml_unsupported(gp, ID_nvmlDeviceGetRetiredPages_v2)
				 ? NVML_ERROR_NOT_SUPPORTED
				 : CALL_ARG(b, gp, nvmlDeviceGetRetiredPages_v2, gp->h, c, &n, NULL, NULL);
	if (r == NVML_ERROR_NOT_SUPPORTED)
		gp->unsup[ID_nvmlDeviceGetRetiredPages_v2 / 64] |=
			1ull << (ID_nvmlDeviceGetRetiredPages_v2 % 64);
	if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE)
		return 0;
	*out = n;
	return 1;
}

/* how long the ECC mode read for VRAM health is kept: it changes only
 * when the GPU is reset or the machine rebooted, and the call is the
 * dearest of a health reading (307 us of CPU a GPU on the H200, the rest
 * 370 us together; docs/health.md) */
#define ECC_MODE_KEEP_NS (600 * 1000000000LL)

/* The ECC mode, read at most every ECC_MODE_KEEP_NS. */
static void ecc_mode(struct backend *b, struct gpu *gp, vramz_gpu_sample *o)
{
	int64_t now = clock_mono_ns();
	if (!gp->ecc_read_ns || now - gp->ecc_read_ns >= ECC_MODE_KEEP_NS) {
		nvmlEnableState_t cur, pend;
		gp->ecc_read_ns = now;
		gp->ecc_known = CALL(b, gp, nvmlDeviceGetEccMode, gp->h, &cur, &pend) == NVML_SUCCESS;
		gp->ecc_on = gp->ecc_known && cur == NVML_FEATURE_ENABLED;
	}
	if (gp->ecc_known) {
		o->ecc_mode = gp->ecc_on;
		o->valid |= VRAMZ_F_ECC_MODE;
	}
}

void nvml_health(struct backend *b, struct gpu *gp, vramz_gpu_sample *o)
{
	nvmlEnableState_t pend;
	unsigned u[4];

	ecc_mode(b, gp, o);
	/* the counters need ECC on: with it off they are no reading */
	if (!((o->valid & VRAMZ_F_ECC_MODE) && !o->ecc_mode)) {
		if (ecc_count(b, gp, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
			      &o->ecc_corrected_volatile) &&
		    ecc_count(b, gp, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
			      &o->ecc_uncorrected_volatile))
			o->valid |= VRAMZ_F_ECC_VOL;
		if (ecc_count(b, gp, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
			      &o->ecc_corrected_aggregate) &&
		    ecc_count(b, gp, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
			      &o->ecc_uncorrected_aggregate))
			o->valid |= VRAMZ_F_ECC_AGG;
	}
	if (gp->lost)
		return;
	if (CALL(b, gp, nvmlDeviceGetRemappedRows, gp->h, &u[0], &u[1], &u[2], &u[3]) ==
	    NVML_SUCCESS) {
		o->remap_correctable_rows = u[0];
		o->remap_uncorrectable_rows = u[1];
		o->remap_pending = u[2] != 0;
		o->remap_failure = u[3] != 0;
		o->valid |= VRAMZ_F_REMAP;
	}
	if (retired(b, gp, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
		    &o->retired_sbe_pages) &&
	    retired(b, gp, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &o->retired_dbe_pages))
		o->valid |= VRAMZ_F_RETIRED;
	if (CALL(b, gp, nvmlDeviceGetRetiredPagesPendingStatus, gp->h, &pend) == NVML_SUCCESS) {
		o->retired_pending = pend == NVML_FEATURE_ENABLED;
		o->valid |= VRAMZ_F_RETIRED_PENDING;
	}
	if (CALL(b, gp, nvmlDeviceGetPcieReplayCounter, gp->h, &u[0]) == NVML_SUCCESS) {
		o->pcie_replays = u[0];
		o->valid |= VRAMZ_F_PCIE_REPLAY;
	}
}

/* The events vramz watches: the Xid critical errors and both ECC kinds
 * (the same bits as VRAMZ_EV_*). */
#define WATCHED ((unsigned long long)(nvmlEventTypeXidCriticalError | \
				      nvmlEventTypeDoubleBitEccError |  \
				      nvmlEventTypeSingleBitEccError))

int nvml_events_open(struct backend *b, const unsigned char *sel)
{
	if (!b->f.nvmlEventSetCreate || !b->f.nvmlDeviceRegisterEvents ||
	    !b->f.nvmlEventSetWait_v2)
		return VRAMZ_EUNSUPPORTED;
	if (!b->evset && b->f.nvmlEventSetCreate(&b->evset) != NVML_SUCCESS) {
		b->evset = NULL;
		return VRAMZ_EBACKEND;
	}
	int n = 0;
	for (unsigned i = 0; i < b->n; i++) {
		struct gpu *gp = &b->g[i];
		unsigned long long types = WATCHED;
		if (!sel[i] || gp->lost)
			continue;
		if (CALL(b, gp, nvmlDeviceGetSupportedEventTypes, gp->h, &types) == NVML_SUCCESS)
			types &= WATCHED;
		else
			types = WATCHED;
		if (types && CALL_ARG(b, gp, nvmlDeviceRegisterEvents, gp->h, types, b->evset) ==
				     NVML_SUCCESS)
			n++;
	}
	return n;
}

int nvml_events_wait(struct backend *b, unsigned timeout_ms, unsigned *idx, unsigned *type,
		     uint64_t *data)
{
	nvmlEventData_t ev = {0};
	if (!b->evset)
		return VRAMZ_EINVAL;
	nvmlReturn_t r = b->f.nvmlEventSetWait_v2(b->evset, &ev, timeout_ms);
	if (r == NVML_ERROR_TIMEOUT)
		return 0;
	if (r != NVML_SUCCESS)
		return nvml_map_rc(r);
	for (unsigned i = 0; i < b->n; i++)
		if (b->g[i].h == ev.device) {
			*idx = i;
			*type = (unsigned)(ev.eventType & WATCHED);
			*data = ev.eventType & nvmlEventTypeXidCriticalError ? ev.eventData : 0;
			return 1;
		}
	return 0; /* a device we do not know: as if nothing came */
}

void nvml_events_close(struct backend *b)
{
	if (b->evset && b->f.nvmlEventSetFree)
		b->f.nvmlEventSetFree(b->evset);
	b->evset = NULL;
}
