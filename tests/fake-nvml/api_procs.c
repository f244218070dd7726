/* SPDX-License-Identifier: Apache-2.0 */
/* api_procs.c - the fake's relational NVML calls: process lists, per-process
 * utilization, MIG instances, NVLink and PCIe topology.
 *
 * These are the calls whose protocols callers get wrong, so the fake keeps
 * them exact.  A list call counts first: with no entries it returns SUCCESS
 * and *count 0; with a NULL buffer or *count smaller than needed it sets
 * *count to the need and returns INSUFFICIENT_SIZE; otherwise it fills and
 * sets *count to what it wrote.  Compute, graphics and MPS lists are
 * separate, a `follow` process vanishes from all of them once its real pid
 * is gone, and a MIG device handle lists only its own instance's processes.
 */
#include "fake.h"

#include <string.h>
#include <time.h>

/* ---- process lists ------------------------------------------------------- */

static bool listed(const struct fake_call *c, const struct fake_proc *p,
		   unsigned type)
{
	if (p->gpu != (unsigned)c->index || !(p->types & type))
		return false;
	if (c->mig && (p->gi != c->mig->gi || p->ci != c->mig->ci))
		return false;
	return fake_proc_alive(p);
}

/* Lock held.  Exactly one of v3 (the _v2/_v3 struct) and v1 is used. */
static nvmlReturn_t list_procs(const struct fake_call *c, unsigned type,
			       unsigned *n, nvmlProcessInfo_t *v3,
			       nvmlProcessInfo_v1_t *v1)
{
	unsigned need = 0, out = 0;

	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < c->w->nprocs; i++)
		need += listed(c, &c->w->procs[i], type);
	if (!need) {
		*n = 0;
		return NVML_SUCCESS;
	}
	if ((!v3 && !v1) || *n < need) {
		*n = need;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	/* A followed pid may exit between the passes: stop at `need`. */
	for (unsigned i = 0; i < c->w->nprocs && out < need; i++) {
		const struct fake_proc *p = &c->w->procs[i];

		if (!listed(c, p, type))
			continue;
		if (v3) {
			v3[out].pid = p->pid;
			v3[out].usedGpuMemory = fake_proc_used(p);
			v3[out].gpuInstanceId = p->gi;
			v3[out].computeInstanceId = p->ci;
		} else {
			v1[out].pid = p->pid;
			v1[out].usedGpuMemory = fake_proc_used(p);
		}
		out++;
	}
	*n = out;
	return NVML_SUCCESS;
}

static nvmlReturn_t procs_call(enum fake_fn fn, unsigned type, nvmlDevice_t d,
			       unsigned *n, nvmlProcessInfo_t *v3,
			       nvmlProcessInfo_v1_t *v1)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, CALL_RELOAD | CALL_MIG_OK);

	if (r == NVML_SUCCESS)
		r = list_procs(&c, type, n, v3, v1);
	return fake_leave(&c, r);
}

#if FAKE_NEW_API
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetComputeRunningProcesses_v3, FAKE_PT_COMPUTE, d, n, p, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetComputeRunningProcesses_v2, FAKE_PT_COMPUTE, d, n, p, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetGraphicsRunningProcesses_v3, FAKE_PT_GRAPHICS, d, n, p, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetGraphicsRunningProcesses_v2, FAKE_PT_GRAPHICS, d, n, p, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetMPSComputeRunningProcesses_v3, FAKE_PT_MPS, d, n, p, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p)
{
	return procs_call(FN_nvmlDeviceGetMPSComputeRunningProcesses_v2, FAKE_PT_MPS, d, n, p, NULL);
}
#endif

FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	return procs_call(FN_nvmlDeviceGetComputeRunningProcesses, FAKE_PT_COMPUTE, d, n, NULL, p);
}

FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	return procs_call(FN_nvmlDeviceGetGraphicsRunningProcesses, FAKE_PT_GRAPHICS, d, n, NULL, p);
}

/* ---- per-process utilization --------------------------------------------- */

static unsigned long long realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL +
	       (unsigned long long)ts.tv_nsec / 1000ULL;
}

static bool sampled(const struct fake_call *c, const struct fake_proc *p)
{
	return p->has_sm && p->gpu == (unsigned)c->index && fake_proc_alive(p);
}

/* Every process with sm= set has a sample stamped "now": none newer than a
 * `since` in the future, so that reads NOT_FOUND as on a real idle GPU. */
static nvmlReturn_t proc_util(const struct fake_call *c,
			      nvmlProcessUtilizationSample_t *s, unsigned *n,
			      unsigned long long since_us)
{
	unsigned long long now = realtime_us();
	unsigned need = 0, out = 0, per = c->w->util_samples ? c->w->util_samples : 1;

	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < c->w->nprocs; i++)
		need += sampled(c, &c->w->procs[i]) * per;
	if (!need || since_us >= now)
		return NVML_ERROR_NOT_FOUND;
	if (!s || *n < need) {
		if (!c->w->util_quiet)
			*n = need;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	for (unsigned i = 0; i < c->w->nprocs && out < need; i++) {
		const struct fake_proc *p = &c->w->procs[i];

		if (!sampled(c, p))
			continue;
		for (unsigned k = 0; k < per; k++)
			s[out++] = (nvmlProcessUtilizationSample_t){
				.pid = p->pid, .timeStamp = now - (per - 1 - k) * 1000, .smUtil = p->sm,
				.memUtil = p->mem, .encUtil = p->enc, .decUtil = p->dec,
			};
	}
	*n = out;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *s, unsigned int *n, unsigned long long since_us)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetProcessUtilization, d, CALL_RELOAD);

	if (r == NVML_SUCCESS)
		r = proc_util(&c, s, n, since_us);
	return fake_leave(&c, r);
}

/* ---- MIG ----------------------------------------------------------------- */

/* mig lines count only while the GPU is in MIG mode. */
static unsigned active_migs(const struct fake_gpu *g)
{
	return g->has[GF_MIG] && g->v[GF_MIG] ? g->nmig : 0;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetMigMode, d, 0);

	if (r == NVML_SUCCESS && (!cur || !pend))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_MIG])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*cur = *pend = c.gpu->v[GF_MIG] ? 1 : 0;
	return fake_leave(&c, r);
}

/* mig_max= models the hardware's slot count (7 on an A100); without it
 * the count is the number of mig lines. */
static unsigned mig_slots(const struct fake_gpu *g)
{
	if (!g->v[GF_MIG])
		return 0;
	return g->has[GF_MIG_MAX] ? (unsigned)g->v[GF_MIG_MAX] : g->nmig;
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetMaxMigDeviceCount, d, 0);

	if (r == NVML_SUCCESS && !n)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_MIG])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*n = mig_slots(c.gpu);
	return fake_leave(&c, r);
}

/* An index below the slot count but past the configured instances is an
 * empty slot: NOT_FOUND, as callers iterating to the max must expect. */
FAKE_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i, nvmlDevice_t *m)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetMigDeviceHandleByIndex, d, 0);

	if (r == NVML_SUCCESS && !m)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.gpu->has[GF_MIG])
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS && i >= mig_slots(c.gpu) && i >= active_migs(c.gpu))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && i >= active_migs(c.gpu))
		r = NVML_ERROR_NOT_FOUND;
	if (r == NVML_SUCCESS)
		*m = fake_mig_handle(c.gpu->mig_first + i);
	return fake_leave(&c, r);
}

static nvmlReturn_t instance_call(enum fake_fn fn, nvmlDevice_t d, unsigned *id)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, fn, d, CALL_MIG_OK);

	if (r == NVML_SUCCESS && !id)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS && !c.mig)
		r = NVML_ERROR_NOT_SUPPORTED;
	if (r == NVML_SUCCESS)
		*id = fn == FN_nvmlDeviceGetGpuInstanceId ? c.mig->gi : c.mig->ci;
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id)
{
	return instance_call(FN_nvmlDeviceGetGpuInstanceId, d, id);
}

FAKE_API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int *id)
{
	return instance_call(FN_nvmlDeviceGetComputeInstanceId, d, id);
}

/* ---- NVLink and topology ------------------------------------------------- */

/* Lock held: links below nvlinks= exist; those an nvlink line joined are up. */
static nvmlReturn_t link_check(const struct fake_gpu *g, unsigned link)
{
	if (link >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!g->has[GF_NVLINKS] || link >= g->v[GF_NVLINKS])
		return NVML_ERROR_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *on)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetNvLinkState, d, 0);

	if (r == NVML_SUCCESS && !on)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = link_check(c.gpu, link);
	if (r == NVML_SUCCESS)
		*on = c.gpu->link_peer[link] >= 0 ? NVML_FEATURE_ENABLED :
						     NVML_FEATURE_DISABLED;
	return fake_leave(&c, r);
}

/* The peer's PCI address; remote=none links read FFFFFFFF:FF:FF.0, as
 * measured on H200 systems, so callers cannot rely on it. */
static nvmlReturn_t remote_pci(const struct fake_call *c, unsigned link,
			       nvmlPciInfo_t *p)
{
	int peer = c->gpu->link_peer[link];

	if (peer < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (c->gpu->link_remote_none[link]) {
		memset(p, 0, sizeof(*p));
		p->domain = 0xFFFFFFFFu;
		p->bus = p->device = 0xFF;
		strcpy(p->busId, "FFFFFFFF:FF:FF.0");
		strcpy(p->busIdLegacy, "FFFF:FF:FF.0");
		return NVML_SUCCESS;
	}
	if (!c->w->gpus[peer].has_pci)
		return NVML_ERROR_NOT_SUPPORTED;
	fake_fill_pci(&c->w->gpus[peer], p);
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetNvLinkRemotePciInfo_v2, d, 0);

	if (r == NVML_SUCCESS && !p)
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS)
		r = link_check(c.gpu, link);
	if (r == NVML_SUCCESS)
		r = remote_pci(&c, link, p);
	return fake_leave(&c, r);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t *l)
{
	struct fake_call c;
	nvmlReturn_t r = fake_enter_dev(&c, FN_nvmlDeviceGetTopologyCommonAncestor, a, 0);
	int bi = r == NVML_SUCCESS ? fake_resolve(b) : -1;

	if (r == NVML_SUCCESS && (!l || bi < 0))
		r = NVML_ERROR_INVALID_ARGUMENT;
	if (r == NVML_SUCCESS) {
		unsigned ai = (unsigned)c.index;

		if (ai == (unsigned)bi)
			*l = NVML_TOPOLOGY_INTERNAL;
		else
			*l = c.w->topo_set[ai][bi] ? c.w->topo[ai][bi] : c.w->topo_default;
	}
	return fake_leave(&c, r);
}
