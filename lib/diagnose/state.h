/* SPDX-License-Identifier: Apache-2.0 */
/* state.h - the diagnosis engine's state per GPU and per process, which
 * the engine (engine.c) keeps as it is fed and the detectors read.  Data
 * and a few inline readers only: a detector that includes it reads the
 * engine's figures but cannot call the engine, so lib/diagnose's graph
 * stays a star (docs/architecture.md, "The diagnoses").  Not installed. */
#ifndef VRAMZ_DIAG_STATE_H
#define VRAMZ_DIAG_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vramz/diagnose.h"
#include "abi.h"
#include "hashtab.h"
#include "leak.h"
#include "ring.h"

struct jobkey_cache;

struct gpu_state {
	int seen, lost;
	unsigned index;
	int64_t first_ms, last_ms, lost_ms;
	struct ring mem;               /* mem_used_bytes */
	vramz_gpu_sample last;         /* latest valid sample */
	int have_info;
	vramz_gpu_info info;
	/* cumulative times (ms) */
	int64_t busy_ms, thr_thermal_ms, thr_power_ms, thr_hw_ms;
	int64_t link_busy_ms, link_low_ms;
	unsigned link_low_gen, link_low_width; /* latest downgraded link seen busy */
	int64_t orphan_since_ms;       /* -1: not above threshold */
	struct leak_cache leak;
	uint64_t procs_tick;           /* tick whose process list was read */
	/* VRAM health (health.c): counts when first seen, and now */
	int ecc_known;                 /* an ECC counter was read */
	uint64_t ecc_unc_base, ecc_corr_base, ecc_unc, ecc_corr;
	int remap_known;
	unsigned remap_pending, remap_failure;
	int xid_known;                 /* an event watcher's figures came */
	unsigned xid_base, xid_count, xid_last, xid_captured; /* counts of Xid events */
	uint64_t xid_time_ms;
	/* the processes on the GPU when its latest new Xid came (whose job it hit) */
#define XID_PROCS_MAX 8
	unsigned xid_nprocs;
	struct xid_proc {
		uint32_t pid;
		uint64_t start_ticks;
		char comm[16];
		char user[VRAMZ_USER_LEN];
		char job[VRAMZ_JOB_LEN];
	} xid_procs[XID_PROCS_MAX];
};

/* what a process's PyTorch agent said (torch.c) */
struct torch_state {
	int seen, on, history, outside_ok;
	int frag_on;                   /* fragmentation raised: holds while retries climb */
	uint32_t uid;
	int64_t first_ms, retries_rose_ms;
	uint64_t reserved, inactive, allocated, outside;
	uint64_t retries, retries_base, ooms, ooms_base;
	int64_t sites_asked_ms;        /* 0: never asked */
	char site[160];
	double site_share;
	/* the agent's record of its latest OOM (live): read once the count
	 * rose, kept as the oom fields of a finding (torch.c) */
	uint64_t oom_read_ooms;
	int64_t oom_read_ms;
	vramz_finding oom_rec;
	/* where the memory outside the allocator is (issue 37): the row's
	 * outside_*_bytes, with parts_ok */
	int parts_ok;
	uint64_t part_context, part_libraries, part_nccl, part_other;
	unsigned nccl_comms;
};

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
	int64_t first_ms, last_ms;
	int ended;
	int oom_end;                   /* oom.c recorded its end as out of memory */
	uint64_t last_bytes, peak_bytes;
	/* its GPU at its latest sample (for oom): free memory and total */
	uint64_t gpu_free_bytes, gpu_total_bytes;
	int gpu_mem_known;
	uint64_t agent_ooms;           /* hook: out-of-memory errors its own allocator
					  counted (the PyTorch agent's join, issue 15);
					  0 none or unknown */
	uint64_t agent_ooms_first;     /* that count when first seen */
	struct ring mem;               /* NVML's used memory */
	struct leak_cache leak;
	struct ring alloc;             /* its allocator's allocated bytes (a PyTorch
					  agent's), created when first told; w NULL none */
	struct leak_cache alloc_leak;
	int leaking;                   /* detect_leak raised a leak of it in this
					  evaluation (detect_rise leaves it be) */
	vramz_idle_track idle;         /* idle.c: the idle rule's state */
	int64_t hidden_since_ms;       /* invisible and holding >= orphan_min: since */
	uint64_t seen_tick;
	struct torch_state torch;
};

/* a process that probably ended out of memory (oom.c: oom_check) */
struct oom_event {
	vramz_finding f;               /* subject and figures, filled at its end */
	int64_t end_ms;                /* engine time it was found gone */
};
#define DIAG_OOM_MAX 64

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
	void *detect_buf;              /* detect.c's per-evaluation arrays, kept */
	size_t detect_cap;
	void *jobs_buf;                /* detect.c: the processes of jobs in job order, */
	size_t jobs_cap;               /* sorted once per evaluation for the imbalance */
	unsigned jobs_n;               /* and stray_context rows both */
	uint64_t jobs_tick;            /* the tick they were sorted at; 0 never */
	struct jobkey_cache *jobs;
	struct oom_event ooms[DIAG_OOM_MAX]; /* the latest, oldest dropped */
	unsigned nooms;
	int live;                      /* created with a proc_root: a live machine */
	struct agent_recs *recs;       /* a log's agent records (agentrec.c); NULL none */
	unsigned long series_dropped;  /* process series dropped at the bound */
	struct abi_state abi;          /* the caller's record sizes (lib/abi.h) */
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

/* Its PyTorch agent speaks for it (torch.c). */
static inline int torch_is_attached(const struct proc_state *p)
{
	return p->torch.seen && p->torch.on;
}

/* Idle holder: at 0 % SM with memory unchanged (idle.c's rule), holding
 * idle_min_bytes, for idle_ms.  The fragmentation hint asks it too. */
static inline int proc_idle_held(const vramz_diag *d, const struct proc_state *p)
{
	return p->idle.since_ms >= 0 && p->last_bytes >= d->cfg.idle_min_bytes &&
	       p->last_ms - p->idle.since_ms >= d->cfg.idle_ms;
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
	f->ended = p->ended;
}

#endif
