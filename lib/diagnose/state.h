/* SPDX-License-Identifier: Apache-2.0 */
/* state.h - the diagnosis engine's state per GPU and per process, which
 * the engine (engine.c) keeps as it is fed and the detectors read.  Data
 * and a few inline readers only: a detector that includes it reads the
 * engine's figures but cannot call the engine, so lib/diagnose's graph
 * stays a star (docs/architecture.md, "The diagnoses").  What a finding
 * kind keeps is not here: it is the kind's own struct in the kind's own
 * file, in a block the engine allocates for its row (kinds.h, struct
 * kind_state) and that kind_gpu_state / kind_proc_state /
 * kind_diag_state below find.  Not installed. */
#ifndef VRAMZ_DIAG_STATE_H
#define VRAMZ_DIAG_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramz/diagnose.h"
#include "abi.h"
#include "hashtab.h"
#include "leak.h" /* struct diag_scratch */
#include "ring.h"

struct jobkey_cache;

/* A GPU's series and what the engine itself knows of it.  What a kind
 * keeps of a GPU is in that kind's block (kind_gpu_state). */
struct gpu_state {
	int seen, lost;
	unsigned index;
	int64_t first_ms, last_ms, lost_ms;
	struct ring mem;               /* mem_used_bytes */
	vramz_gpu_sample last;         /* latest valid sample */
	int have_info;
	vramz_gpu_info info;
	uint64_t procs_tick;           /* tick whose process list was read */
};

/* A process's series and what the engine itself knows of it.  What a
 * kind keeps of a process is in that kind's block (kind_proc_state). */
struct proc_state {
	int used;                      /* slot in use */
	unsigned gpu;
	uint32_t pid;
	uint64_t start_ticks;
	int visible;
	uint32_t ppid, pgid;
	char job[VRAMZ_JOB_LEN];
	char comm[16];
	char user[VRAMZ_USER_LEN];
	char container_name[VRAMZ_KUBE_NAME_LEN]; /* in its pod, "" none */
	int64_t first_ms, last_ms;
	int ended;
	uint64_t last_bytes, peak_bytes;
	/* its GPU at its latest sample: free memory and total (what an
	 * exited process is judged by) */
	uint64_t gpu_free_bytes, gpu_total_bytes;
	int gpu_mem_known;
	uint64_t agent_ooms;           /* out-of-memory errors its own allocator
					  counted (its PyTorch agent's join, issue
					  15); 0 none or unknown.  A figure of the
					  process that the agent's feed hook sets and
					  test_diag_oom sets as a join would */
	uint64_t agent_ooms_first;     /* that count when first seen */
	struct ring mem;               /* NVML's used memory */
	uint64_t seen_tick;
	char *slots;                   /* the kinds' blocks (kind_proc_state) */
};

struct finding_slot {
	vramz_finding f;
	double rev_figure;             /* headline figure at the last revision */
	int reported;                  /* held report_after_ms: handed out */
	int64_t raised_ms;             /* engine time a detector last raised it */
	int64_t rev_ms;                /* engine time of its last revision */
};

/* "changed" at most this often for one finding, unless its severity (or
 * whether its process ended) changes: engine.c */
#define DIAG_CHANGE_MIN_MS 10000

struct vramz_diag {
	vramz_diag_config cfg;
	struct gpu_state *gpus;
	unsigned ngpus;
	struct proc_state *procs;
	unsigned nprocs, cap_procs;
	struct htab index;             /* procs by (gpu, pid, start): engine.c */
	uint64_t tick;
	int64_t last_ms;               /* engine time of the latest feed (engine.c: engine_time) */
	int have_time;
	/* the one time rule (engine.c: engine_time) */
	int64_t last_wall_ms;          /* the latest snapshot's time_ms */
	int64_t last_mono_ns;          /* and its mono_ns (0 unknown) */
	int64_t last_dt_ms;            /* the latest forward step: the cadence */
	unsigned clock_steps;          /* steps absorbed */
	int64_t last_step_ms;          /* the latest one: wall minus engine elapsed */
	int64_t last_eval_ms;
	int dirty;
	struct finding_slot *cur;      /* current findings */
	unsigned ncur, cap_cur;
	vramz_finding *out;            /* sorted copy of the reported ones, handed out */
	unsigned nout;
	struct finding_slot *next;     /* being built during an evaluation (the emitter's) */
	unsigned nnext, cap_next;
	vramz_finding *past;           /* cleared findings (keep_ended) */
	unsigned npast;
	struct diag_scratch scratch;
	struct jobkey_cache *jobs;
	int live;                      /* created with a proc_root: a live machine */
	unsigned long series_dropped;  /* process series dropped at the bound */
	struct abi_state abi;          /* the caller's record sizes (lib/abi.h) */
	/* the kinds' state slots (kinds.h, struct kind_state): where each
	 * row's block lies in a GPU's, a process's and the engine's */
	struct slot_off {
		size_t gpu, proc, diag;
	} slot_off[VRAMZ_FK_COUNT];
	size_t gpu_slots_size, proc_slots_size;
	char *gpu_slots;               /* ngpus blocks of gpu_slots_size */
	char *diag_slots;
	char err[160];                 /* vramz_diag_error */
};

#define DIAG_PAST_MAX 256
#define DIAG_ENDED_MAX 512

/* time.c: the engine time of a snapshot (one rule for every caller) */
int64_t engine_time(vramz_diag *d, const vramz_snapshot *snap);

/* ---- readers the detectors share ---- */

/* A process whose series is judged: live, or exited and kept (a log). */
static inline int proc_active(const vramz_diag *d, const struct proc_state *p)
{
	return p->used && (!p->ended || d->cfg.keep_ended);
}

/* The state a kind keeps (kinds.h, struct kind_state): row k's block of
 * GPU g, of process p, of the engine.  A row without a slot has none. */
static inline void *kind_gpu_state(const vramz_diag *d, const struct gpu_state *g,
				   enum vramz_finding_kind k)
{
	return d->gpu_slots + (size_t)(g - d->gpus) * d->gpu_slots_size + d->slot_off[k].gpu;
}

static inline void *kind_proc_state(const vramz_diag *d, const struct proc_state *p,
				    enum vramz_finding_kind k)
{
	return p->slots + d->slot_off[k].proc;
}

static inline void *kind_diag_state(const vramz_diag *d, enum vramz_finding_kind k)
{
	return d->diag_slots + d->slot_off[k].diag;
}

/* The finding is about process p (its GPU, pid, job and names). */
static inline void finding_subject_proc(vramz_finding *f, const struct proc_state *p)
{
	f->gpu = (int)p->gpu;
	f->pid = p->pid;
	f->start_time_ticks = p->start_ticks;
	memcpy(f->job, p->job, sizeof f->job);
	memcpy(f->comm, p->comm, sizeof f->comm);
	memcpy(f->user, p->user, sizeof f->user);
	memcpy(f->container_name, p->container_name, sizeof f->container_name);
	f->ended = p->ended;
}

#endif
