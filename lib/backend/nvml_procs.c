/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_procs.c - the NVML backend's process lists and per-process
 * utilization (nvml_impl.h says how the backend is split).
 *
 * Measured on H200 (docs/performance.md): with processes listed, the
 * compute list costs 80-200 us of CPU a GPU and the graphics list 30-80 us
 * when asked ten times a second, and per-process utilization 1.5 ms a read;
 * so the lists are reused while the GPU's used memory is unchanged (for at
 * most a second) and utilization is read at most every 5 s, never while
 * the GPU is idle.
 */
#include "nvml_impl.h"
#include "fields.h"

#include <stdlib.h>
#include <string.h>

/* Reads one process list into gp->pbuf, growing it on INSUFFICIENT_SIZE
 * (processes can start between the sizing call and the read, so retry).
 * Returns the count, or a negative code. */
static int read_list(struct backend *b, struct gpu *gp, int which)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		unsigned n = gp->pcap;
		nvmlReturn_t r;
		if (which == 2 && b->mps_v == V3)
			r = CALL(b, gp, nvmlDeviceGetMPSComputeRunningProcesses_v3, gp->h, &n, gp->pbuf);
		else if (which == 2 && b->mps_v == V2)
			r = CALL(b, gp, nvmlDeviceGetMPSComputeRunningProcesses_v2, gp->h, &n, gp->pbuf);
		else if (which == 2)
			return VRAMZ_EUNSUPPORTED; /* no MPS call in this library */
		else if (b->proc_v == V3)
			r = which ? CALL(b, gp, nvmlDeviceGetGraphicsRunningProcesses_v3, gp->h, &n, gp->pbuf)
				  : CALL(b, gp, nvmlDeviceGetComputeRunningProcesses_v3, gp->h, &n, gp->pbuf);
		else if (b->proc_v == V2)
			r = which ? CALL(b, gp, nvmlDeviceGetGraphicsRunningProcesses_v2, gp->h, &n, gp->pbuf)
				  : CALL(b, gp, nvmlDeviceGetComputeRunningProcesses_v2, gp->h, &n, gp->pbuf);
		else if (b->proc_v == V1) {
			/* the old 16-byte layout: read into the same buffer, then
			 * widen in place from the end so nothing is overwritten */
			nvmlProcessInfo_v1_t *v1 = (nvmlProcessInfo_v1_t *)gp->pbuf;
			r = which ? CALL(b, gp, nvmlDeviceGetGraphicsRunningProcesses, gp->h, &n, v1)
				  : CALL(b, gp, nvmlDeviceGetComputeRunningProcesses, gp->h, &n, v1);
			if (r == NVML_SUCCESS) {
				for (unsigned i = n; i-- > 0;) {
					nvmlProcessInfo_v1_t e = v1[i];
					gp->pbuf[i].pid = e.pid;
					gp->pbuf[i].usedGpuMemory = e.usedGpuMemory;
					gp->pbuf[i].gpuInstanceId = 0xFFFFFFFFu;
					gp->pbuf[i].computeInstanceId = 0xFFFFFFFFu;
				}
			}
		} else
			return VRAMZ_EUNSUPPORTED;
		if (r == NVML_SUCCESS)
			return (int)n;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			return nvml_map_rc(r);
		unsigned ncap = (n > gp->pcap ? n : gp->pcap) * 2 + 16;
		nvmlProcessInfo_t *nb = realloc(gp->pbuf, ncap * sizeof *nb);
		if (!nb)
			return VRAMZ_ENOMEM;
		gp->pbuf = nb;
		gp->pcap = ncap;
	}
	return VRAMZ_EBACKEND;
}

/* Finds pid (and MIG instance) among the GPU's entries appended so far. */
static vramz_proc_sample *find_proc(struct proc_vec *out, unsigned first,
				    const nvmlProcessInfo_t *e)
{
	for (unsigned i = first; i < out->n; i++) {
		vramz_proc_sample *p = &out->v[i];
		if (p->pid == e->pid && p->gi_id == e->gpuInstanceId &&
		    p->ci_id == e->computeInstanceId)
			return p;
	}
	return NULL;
}

/* Per-process SM utilization.  On H200 one read costs 1.5 ms of CPU a GPU
 * (measured; docs/performance.md), more than everything else in a tick,
 * so a GPU is read at most every proc_util_interval (5 s by default;
 * NVML returns every sample since the last read, and the peak per
 * process is kept), and not at all while the GPU's own utilization says
 * no kernel ran: then every process's share is 0 without asking.
 * NOT_FOUND likewise means no process ran in the window: a true 0 %.
 * VRAMZ_SAMPLE_PROC_UTIL_NOW skips both shortcuts. */
static void add_proc_util(struct backend *b, struct gpu *gp, struct proc_vec *out,
			  unsigned first, unsigned flags)
{
	int64_t now = clock_mono_ns();
	int now_asked = !!(flags & VRAMZ_SAMPLE_PROC_UTIL_NOW);
	if (!now_asked && gp->util_read_ns && now - gp->util_read_ns < b->pu_interval_ns) {
		/* reuse the last reading */
	} else if (!now_asked && gp->gpu_idle) {
		gp->ucount = 0;
		gp->util_read_ns = now;
		gp->util_since_us = (unsigned long long)clock_real_us();
	} else {
		unsigned n = 0;
		nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
		/* the first read asks for the last second only: since 0, NVML
		 * returns its whole sample history (thousands on a busy GPU) */
		if (!gp->util_since_us)
			gp->util_since_us = (unsigned long long)clock_real_us() - 1000000;
		for (int attempt = 0; attempt < 6 && r == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
			n = gp->ucap;
			r = CALL(b, gp, nvmlDeviceGetProcessUtilization, gp->h, gp->ubuf, &n,
				 gp->util_since_us);
			if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
				/* H200 answered INSUFFICIENT_SIZE without raising the count
				 * (a 64-sample buffer was refused), so grow fourfold too */
				unsigned ncap = n > gp->ucap ? n + n / 2 + 16 : gp->ucap * 4;
				nvmlProcessUtilizationSample_t *nb = realloc(gp->ubuf, ncap * sizeof *nb);
				if (!nb)
					return;
				gp->ubuf = nb;
				gp->ucap = ncap;
			}
		}
		if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_FOUND) {
			gp->ucount = -1;
			return;
		}
		gp->ucount = r == NVML_ERROR_NOT_FOUND ? 0 : (int)n;
		gp->util_read_ns = now;
		for (int k = 0; k < gp->ucount; k++)
			if (gp->ubuf[k].timeStamp > gp->util_since_us)
				gp->util_since_us = gp->ubuf[k].timeStamp;
	}
	if (gp->ucount < 0)
		return;
	for (unsigned i = first; i < out->n; i++) {
		out->v[i].sm_pct = 0;
		out->v[i].mem_util_pct = 0;
		out->v[i].valid |= VRAMZ_P_SM | VRAMZ_P_MEMUTIL;
	}
	for (int k = 0; k < gp->ucount; k++) {
		const nvmlProcessUtilizationSample_t *s = &gp->ubuf[k];
		for (unsigned i = first; i < out->n; i++) {
			vramz_proc_sample *p = &out->v[i];
			if (p->pid != s->pid)
				continue;
			/* several samples of one pid in the window: keep the peak */
			if (s->smUtil > p->sm_pct)
				p->sm_pct = s->smUtil;
			if (s->memUtil > p->mem_util_pct)
				p->mem_util_pct = s->memUtil;
		}
	}
}

/* the longest a process list is reused while used memory stays the same */
#define LIST_REUSE_NS 1000000000
/* how often an empty MPS client list is asked again */
#define MPS_RECHECK_NS 5000000000LL

int nvml_procs(struct backend *b, unsigned idx, unsigned flags,
		      struct proc_vec *out)
{
	struct gpu *gp = &b->g[idx];
	unsigned first = out->n;
	static const unsigned types[] = {VRAMZ_PT_COMPUTE, VRAMZ_PT_GRAPHICS, VRAMZ_PT_MPS};
	int got = 0;

	if (gp->lost)
		return VRAMZ_ELOST;
	/* On H200, with a process listed, the compute list costs 80 us of CPU
	 * a GPU and the graphics list 30 us when asked ten times a second:
	 * more than every other field of the tick together.  Whatever a list
	 * can show changing - a context created or destroyed, a process's
	 * memory growing or shrinking - changes the GPU's used memory, read
	 * this tick.  So while used memory reads the same to the byte, the
	 * lists last read are reused, for at most LIST_REUSE_NS; MIG GPUs are
	 * always read. */
	int64_t now = clock_mono_ns();
	if (gp->lcache_ok && gp->tick_used_ok && gp->tick_used == gp->lcache_used &&
	    now - gp->lcache_ns < LIST_REUSE_NS && !(gp->mig_known && gp->mig_cur)) {
		for (unsigned k = 0; k < gp->lcount; k++) {
			vramz_proc_sample *p = proc_vec_push(out);
			if (!p)
				return VRAMZ_ENOMEM;
			*p = gp->lcache[k];
		}
		goto util;
	}
	gp->lcache_ok = 0;
	int all_ok = 1; /* only a complete reading is reused */
	for (int which = 0; which < 3; which++) {
		/* MPS clients are rare and the list costs 12-80 us a GPU: while
		 * it is empty, look again every 5 s rather than at each read */
		if (which == 2) {
			if (!gp->mps_seen && gp->mps_read_ns && now - gp->mps_read_ns < MPS_RECHECK_NS)
				continue;
			gp->mps_read_ns = now;
		}
		int n = read_list(b, gp, which);
		if (which == 2)
			gp->mps_seen = n > 0;
		if (n == VRAMZ_ENOMEM || n == VRAMZ_ELOST)
			return n;
		if (n < 0) {
			/* a list this GPU never answers is no gap; a failed one is */
			all_ok &= n == VRAMZ_EUNSUPPORTED;
			continue;
		}
		got = 1;
		for (int k = 0; k < n; k++) {
			const nvmlProcessInfo_t *e = &gp->pbuf[k];
			vramz_proc_sample *p = find_proc(out, first, e);
			if (!p) {
				p = proc_vec_push(out);
				if (!p)
					return VRAMZ_ENOMEM;
				p->gpu_index = idx;
				p->pid = e->pid;
				p->gi_id = e->gpuInstanceId;
				p->ci_id = e->computeInstanceId;
				if (e->gpuInstanceId != 0xFFFFFFFFu)
					p->valid |= VRAMZ_P_MIG;
			}
			p->type |= types[which];
			/* one context listed as compute and graphics: the same
			 * memory twice, so keep the larger figure, not the sum;
			 * NVML_VALUE_NOT_AVAILABLE and any other figure out of
			 * range (fields.h) are no figure */
			if (e->usedGpuMemory <= FIELD_MAX_BYTES &&
			    (!(p->valid & VRAMZ_P_USED) || e->usedGpuMemory > p->used_bytes)) {
				p->used_bytes = e->usedGpuMemory;
				p->valid |= VRAMZ_P_USED;
			}
		}
	}
	if (!got)
		return VRAMZ_EUNSUPPORTED;
	if (gp->tick_used_ok && all_ok) {
		unsigned n = out->n - first;
		if (n > gp->lcap) {
			vramz_proc_sample *nc = realloc(gp->lcache, (size_t)n * 2 * sizeof *nc);
			if (nc) {
				gp->lcache = nc;
				gp->lcap = n * 2;
			}
		}
		if (n <= gp->lcap) {
			if (n)
				memcpy(gp->lcache, out->v + first, (size_t)n * sizeof *gp->lcache);
			gp->lcount = n;
			gp->lcache_ok = 1;
			gp->lcache_used = gp->tick_used;
			gp->lcache_ns = now;
		}
	}
util:
	if ((flags & (VRAMZ_SAMPLE_PROC_UTIL | VRAMZ_SAMPLE_PROC_UTIL_NOW)) && out->n > first)
		add_proc_util(b, gp, out, first, flags);
	/* a utilization sample above 100 % makes that process's share unknown */
	for (unsigned i = first; i < out->n; i++)
		field_sanitize_proc(&out->v[i]);
	return 0;
}
