/* SPDX-License-Identifier: Apache-2.0 */
/* diag_internal.h - what the diagnosis engine's files share: bounded
 * window rings, the trend statistics, and the engine's state per GPU and
 * per process.  Not installed. */
#ifndef VRAMZ_DIAG_INTERNAL_H
#define VRAMZ_DIAG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"
#include "abi.h"
#include "hashtab.h"

/* ---- rings of windows (ring.c) ---- */

/* One window of a series: the maximum of memory (the per-iteration
 * alloc/free sawtooth vanishes in it) plus activity sums. */
struct win {
	int64_t t_first_ms, t_last_ms; /* data times of its first and last sample */
	double max_bytes;
	double min_bytes;
	double act_sum;                /* sum of activity (SM %) over samples */
	uint32_t n;                    /* samples */
	uint32_t act_n;                /* samples with activity known */
};

struct ring {
	struct win *w;
	unsigned cap, n;               /* cap even */
	int64_t width_ms;              /* current window width */
	unsigned merges;               /* times the ring halved */
	uint64_t ver;                  /* bumped when a window opens: analyses cache on it */
};

int ring_init(struct ring *r, unsigned cap, int64_t width_ms);
void ring_free(struct ring *r);
/* act < 0: activity unknown for this sample */
void ring_add(struct ring *r, int64_t t_ms, double bytes, double act);

/* ---- statistics (stats.c) ---- */

struct trend {
	double tau, p_value;           /* Mann-Kendall, one-sided rising */
	double slope, ci_low, ci_high; /* Theil-Sen, units of y per unit of t, 95 % */
};

/* Mann-Kendall with tie correction over y[0..n-1] (in time order). */
void stats_mann_kendall(const double *y, unsigned n, double *tau, double *p_value,
			double *var_s);
/* Theil-Sen slope and Sen's 95 % interval; tmp holds n*(n-1)/2 doubles. */
void stats_theil_sen(const double *t, const double *y, unsigned n, double var_s,
		     double *tmp, double *slope, double *lo, double *hi);
double stats_median(double *v, unsigned n); /* reorders v */
double stats_norm_sf(double z);            /* 1 - Phi(z) */

/* ---- leak analysis of one series (leak.c) ---- */

struct leak_result {
	int is_leak;
	struct trend tr;
	int64_t start_ms, end_ms;      /* of the rising stretch */
	double last_bytes;
	const char *why_not;           /* reason when not a leak (tests, debugging) */
};

/* a series' last leak analyses, redone only when a window has opened */
struct leak_cache {
	uint64_t ver;                  /* ring ver analysed; 0 never */
	struct leak_result r;
	uint64_t fast_ver;             /* the same for the fast rule */
	struct leak_result fast;
};

struct diag_scratch {
	double *t, *y, *tmp;
	size_t cap_pts, cap_tmp;
};

int leak_analyze(const struct ring *r, int64_t life_start_ms, const vramz_diag_config *cfg,
		 struct diag_scratch *s, struct leak_result *out);
/* The fast rule: a rise sure enough and long enough for the time to OOM it
 * projects with free_bytes left (leak_fast_*).  free_bytes < 0: unknown. */
int leak_fast(const struct ring *r, int64_t life_start_ms, double free_bytes,
	      const vramz_diag_config *cfg, struct diag_scratch *s, struct leak_result *out);

/* ---- job identity (jobkey.c) ---- */

struct jobkey_cache;
/* proc_root: the /proc to read environments and parents from; NULL for a
 * log's processes (no reading). NULL on out of memory. */
struct jobkey_cache *jobkey_new(const char *proc_root);
void jobkey_free(struct jobkey_cache *c);
/* The job key of s ("" none), cached per (pid, start time, ppid); snap:
 * the snapshot s is in, where a log's parents are looked up. */
int jobkey_get(struct jobkey_cache *c, const vramz_snapshot *snap, const vramz_proc_sample *s,
	       char *out, size_t len);
/* Uncached (tests). */
void jobkey_compute(struct jobkey_cache *c, const vramz_snapshot *snap,
		    const vramz_proc_sample *s, char *out, size_t len);
/* once per fed snapshot: ages the cache */
void jobkey_tick(struct jobkey_cache *c);
unsigned jobkey_env_reads(const struct jobkey_cache *c);
/* Pure: the key an environment block (NUL-separated) gives, into out ("" none);
 * returns 1 when it names a rank (RANK, LOCAL_RANK, ...). */
int jobkey_from_environ(const char *env, size_t n, char *out, size_t len);
/* 1 launcher, -1 shell / init / server (its children are separate jobs), 0 other */
int jobkey_parent_kind(const char *comm);

/* ---- engine state (engine.c) ---- */

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
};

/* what a process's PyTorch agent said (torch.c) */
struct torch_state {
	int seen, on, history, outside_ok;
	uint32_t uid;
	int64_t first_ms, retries_rose_ms;
	uint64_t reserved, inactive, allocated, outside;
	uint64_t retries, retries_base, ooms, ooms_base;
	int64_t sites_asked_ms;        /* 0: never asked */
	char site[160];
	double site_share;
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
	uint64_t last_bytes, peak_bytes;
	/* its GPU at its latest sample (for oom): free memory and total */
	uint64_t gpu_free_bytes, gpu_total_bytes;
	int gpu_mem_known;
	uint64_t agent_ooms;           /* hook: out-of-memory errors its own allocator
					  counted (the PyTorch agent's join, issue 15);
					  0 none or unknown */
	uint64_t agent_ooms_first;     /* that count when first seen */
	struct ring mem;
	struct leak_cache leak;
	vramz_idle_track idle;         /* idle.c: the idle rule's state */
	int64_t hidden_since_ms;       /* invisible and holding >= orphan_min: since */
	uint64_t seen_tick;
	int idle_raised;               /* set by the idle detector this evaluation */
	struct torch_state torch;
};

/* a process that probably ended out of memory (detect.c: oom_check) */
struct oom_event {
	vramz_finding f;               /* subject and figures, filled at its end */
	int64_t end_ms;                /* engine time it was found gone */
};
#define DIAG_OOM_MAX 64

struct finding_slot {
	vramz_finding f;
	double rev_figure;             /* headline figure at the last revision */
	int reported;                  /* held report_after_ms: handed out */
};

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
	struct finding_slot *next;     /* being built during an evaluation */
	unsigned nnext, cap_next;
	vramz_finding *past;           /* cleared findings (keep_ended) */
	unsigned npast;
	struct diag_scratch scratch;
	void *detect_buf;              /* detect.c's per-evaluation arrays, kept */
	size_t detect_cap;
	struct jobkey_cache *jobs;
	struct oom_event ooms[DIAG_OOM_MAX]; /* the latest, oldest dropped */
	unsigned nooms;
	int live;                      /* created with a proc_root: a live machine */
	unsigned long series_dropped;  /* process series dropped at the bound */
	struct abi_state abi;          /* the caller's record sizes (lib/abi.h) */
	char err[160];                 /* vramz_diag_error */
};

/* advice.c: "880 MiB", "78.6 GiB" */
const char *diag_bytes_str(char *b, size_t n, double v);

#define DIAG_PAST_MAX 256
#define DIAG_ENDED_MAX 512

/* torch.c: the PyTorch agent's findings (fragmentation, outside_allocator,
 * oom) and the sites of attached processes' leaks, after detect_all's */
void torch_feed(struct proc_state *p, const vramz_proc_sample *s, int64_t t);
int detect_torch(vramz_diag *d);
int torch_is_attached(const struct proc_state *p);
/* The words of a finding torch.c raised (advice 0: summary); 0 when it is
 * not one of them. */
int torch_words(const vramz_finding *f, const char *subject, int advice, char *buf, size_t len);

/* detect.c: evaluates every detector into d->next */
int detect_all(vramz_diag *d);
/* detect.c: the leak rules' results for a series, recomputed when stale */
int leak_cached(vramz_diag *d, const struct ring *r, int64_t life_start_ms,
		struct leak_cache *c, struct leak_result *out);
int leak_fast_cached(vramz_diag *d, const struct ring *r, int64_t life_start_ms,
		     double free_bytes, struct leak_cache *c, struct leak_result *out);
/* oom.c: p was just found gone; records an oom event when its end looks
 * like an out-of-memory crash.  detect_ooms emits the current ones. */
void oom_check(vramz_diag *d, struct proc_state *p);
int detect_ooms(vramz_diag *d);
/* time.c: the engine time of a snapshot (one rule for every caller) */
int64_t engine_time(vramz_diag *d, const vramz_snapshot *snap);
/* engine.c: adds a finding to the evaluation being built */
vramz_finding *diag_emit(vramz_diag *d, enum vramz_finding_kind kind,
			 enum vramz_severity sev, double headline);
void diag_subject_proc(vramz_finding *f, const struct proc_state *p);

#endif
