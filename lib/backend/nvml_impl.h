/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_impl.h - what the NVML backend's files share: the resolved NVML
 * functions, per-GPU and backend state, and CALL, which counts, times and
 * remembers refusals.  Internal to lib/backend/nvml*.c.
 *   nvml.c        open / close, identity and details, the per-tick fields,
 *                 MIG instances, topology, the backend table
 *   nvml_procs.c  process lists (reused while used memory is unchanged) and
 *                 per-process utilization
 *   nvml_health.c VRAM health (VRAMZ_SAMPLE_HEALTH) and the driver's events
 */
#ifndef VRAMZ_NVML_IMPL_H
#define VRAMZ_NVML_IMPL_H

#include "backend.h"
#include "backend/nvml_abi.h"
#include "clock.h"

#include <stdint.h>
#include <time.h>

struct nvml_fns {
#define NVML_FN_PTR(req, name, args) nvmlReturn_t(*name) args;
	NVML_FUNCS(NVML_FN_PTR)
#undef NVML_FN_PTR
	nvmlErrorString_fn nvmlErrorString;
};

/* Which version of a call with fallbacks this library has. */
enum { V_NONE, V1, V2, V3 };

struct gpu {
	nvmlDevice_t h;
	int lost;
	uint64_t unsup[2];             /* calls that answered NOT_SUPPORTED, by id */
	unsigned mig_known, mig_cur, mig_pend; /* read at attach */
	nvmlProcessInfo_t *pbuf;       /* process-list scratch */
	unsigned pcap;
	nvmlProcessUtilizationSample_t *ubuf;
	unsigned ucap;
	unsigned long long util_since_us; /* last process-utilization timestamp */
	int64_t util_read_ns;          /* CLOCK_MONOTONIC of the last read, 0 never */
	int ucount;                    /* samples in ubuf from it; -1 unreadable */
	int gpu_idle;                  /* the last tick's utilization was a valid 0 */
	int64_t mps_read_ns;           /* last read of the MPS list */
	unsigned mps_seen;             /* it listed processes then */
	struct nvml_prof *prof;        /* VRAMZ_PROFILE_NVML only, else NULL */
	int memtemp_unsup;             /* the memory-temperature field was refused */
	/* the PCIe byte counters (fields 197/198) at the last slow reading */
	int pcnt_unsup;                /* refused: nvmlDeviceGetPcieThroughput instead */
	int pcnt_have;
	unsigned long long pcnt_tx, pcnt_rx;
	int64_t pcnt_us;               /* when (the driver's timestamp, or ours) */
	uint64_t tick_used;            /* this tick's used memory ... */
	int tick_used_ok;              /* ... when it was read */
	/* the process lists as last read from the driver (see nvml_procs) */
	vramz_proc_sample *lcache;
	unsigned lcount, lcap;
	int lcache_ok;
	uint64_t lcache_used;          /* used memory when they were read */
	int64_t lcache_ns;             /* and when (CLOCK_MONOTONIC) */
	/* the ECC mode as last read for VRAM health (nvml_health.c) */
	int64_t ecc_read_ns;           /* CLOCK_MONOTONIC, 0 never */
	int ecc_known, ecc_on;
};

struct backend {
	void *dl;
	struct nvml_fns f;
	int mem_v;                     /* V2 or V1 */
	int proc_v;                    /* V3, V2 or V1 for compute & graphics */
	int mps_v;                     /* V3, V2 or V_NONE */
	unsigned n;
	struct gpu *g;
	int inited;
	int exiting;                   /* VRAMZ_OPEN_EXITING */
	int64_t pu_interval_ns;        /* per-process utilization at most this often */
	nvmlEventSet_t evset;          /* nvml_events_open's, else NULL */
};

static inline int nvml_map_rc(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return 0;
	case NVML_ERROR_LIBRARY_NOT_FOUND: return VRAMZ_ENOLIB;
	case NVML_ERROR_DRIVER_NOT_LOADED: return VRAMZ_EDRIVER;
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return VRAMZ_EMISMATCH;
	case NVML_ERROR_NO_PERMISSION: return VRAMZ_EPERM;
	case NVML_ERROR_GPU_IS_LOST: return VRAMZ_ELOST;
	case NVML_ERROR_NOT_SUPPORTED: return VRAMZ_EUNSUPPORTED;
	case NVML_ERROR_FUNCTION_NOT_FOUND: return VRAMZ_ESYMBOL;
	case NVML_ERROR_MEMORY: return VRAMZ_ENOMEM;
	case NVML_ERROR_NOT_FOUND: return VRAMZ_ENOTFOUND;
	case NVML_ERROR_INVALID_ARGUMENT: return VRAMZ_EINVAL;
	default: return VRAMZ_EBACKEND;
	}
}


/* Call ids, one per NVML function, for the per-GPU "unsupported" memory. */
enum nvml_id {
#define NVML_FN_ID(req, name, args) ID_##name,
	NVML_FUNCS(NVML_FN_ID)
#undef NVML_FN_ID
	ID_COUNT
};

/* VRAMZ_OPEN_PROFILE: every NVML call a GPU makes is counted and timed
 * (wall, and the calling thread's CPU) for vramz_call_stats.  The lent GPU
 * machines have no perf; this is how a command's CPU was split there. */
struct nvml_prof {
	int64_t t0_wall, t0_cpu;       /* of the call in flight */
	uint64_t calls[ID_COUNT + 1];
	int64_t wall_ns[ID_COUNT + 1], cpu_ns[ID_COUNT + 1];
};

static inline int64_t nvml_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void nvml_prof_begin(struct gpu *gp)
{
	if (gp && gp->prof) {
		gp->prof->t0_cpu = nvml_thread_cpu_ns();
		gp->prof->t0_wall = clock_mono_ns();
	}
}

static inline void nvml_prof_end(struct gpu *gp, unsigned id)
{
	struct nvml_prof *p = gp->prof;
	int64_t wall = clock_mono_ns(), cpu = nvml_thread_cpu_ns();
	p->calls[id]++;
	p->wall_ns[id] += wall - p->t0_wall;
	p->cpu_ns[id] += cpu - p->t0_cpu;
}

/* Calls an optional NVML function; NOT_SUPPORTED when this driver lacks it.
 * A call that once answered NOT_SUPPORTED on a GPU is not asked again:
 * on H200 a refused nvmlDeviceGetFanSpeed still costs 90-170 us, more
 * than all the fields of a tick together.  A GPU_IS_LOST answer marks the
 * GPU so later ticks skip it. */
#define CALL(b, gp, name, ...)                                                  \
	(!(b)->f.name || nvml_unsupported((gp), ID_##name)                      \
		 ? NVML_ERROR_NOT_SUPPORTED                                     \
		 : nvml_note((gp), ID_##name, 1, (nvml_prof_begin(gp), (b)->f.name(__VA_ARGS__))))

/* The same without that memory, for calls whose answer depends on an
 * argument (a link index, a clock or threshold type, a peer GPU) or that
 * go to another handle (a MIG instance): NVLink state answers
 * NOT_SUPPORTED for links past the GPU's count, a memory-temperature
 * threshold for most boards, and neither says anything about the other
 * links or thresholds. */
#define CALL_ARG(b, gp, name, ...)                                              \
	(!(b)->f.name ? NVML_ERROR_NOT_SUPPORTED                                \
		      : nvml_note((gp), ID_##name, 0, (nvml_prof_begin(gp), (b)->f.name(__VA_ARGS__))))

static inline int nvml_unsupported(const struct gpu *gp, unsigned id)
{
	return gp && (gp->unsup[id / 64] >> (id % 64) & 1);
}

static inline nvmlReturn_t nvml_note(struct gpu *gp, unsigned id, int remember, nvmlReturn_t r)
{
	if (!gp)
		return r;
	if (gp->prof)
		nvml_prof_end(gp, id);
	if (r == NVML_ERROR_GPU_IS_LOST)
		gp->lost = 1;
	else if (remember &&
		 (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND))
		gp->unsup[id / 64] |= 1ull << (id % 64);
	return r;
}

int nvml_procs(struct backend *b, unsigned idx, unsigned flags, struct proc_vec *out);
/* nvml_health.c: VRAMZ_SAMPLE_HEALTH's readings into o; the events */
void nvml_health(struct backend *b, struct gpu *gp, vramz_gpu_sample *o);
int nvml_events_open(struct backend *b, const unsigned char *sel);
int nvml_events_wait(struct backend *b, unsigned timeout_ms, unsigned *idx, unsigned *type,
		     uint64_t *data);
void nvml_events_close(struct backend *b);

#endif
