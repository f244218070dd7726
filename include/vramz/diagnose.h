/* SPDX-License-Identifier: Apache-2.0 */
/* diagnose.h - the diagnosis engine of libvramz: turns a stream of
 * snapshots (live from vramz_sample, or replayed from a log) into findings
 * such as "pid 4242 leaks 64 MiB/min on GPU 0, out of memory in 1h10m".
 *
 * The engine keeps bounded memory per series: samples are reduced to
 * per-window maxima in fixed-size rings that merge neighbouring windows
 * when full, so a day-long log costs the same as a minute.  A finding
 * carries numbers only (kind, severity, subject, figures);
 * vramz_finding_summary() and vramz_finding_advice() put them into words.
 * docs/diagnoses.md documents every kind, its figures and its thresholds.
 *
 * Struct layouts are append-only within a major version; vramz.h says how
 * a program built against an older header keeps working (the config's
 * `size`, the record sizes vramz_diag_create passes).
 */
#ifndef VRAMZ_DIAGNOSE_H
#define VRAMZ_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vramz_finding_kind {
	VRAMZ_FK_LEAK = 1,          /* memory of a process (or a GPU) keeps rising */
	VRAMZ_FK_IMBALANCE,         /* one job's GPUs hold very different amounts */
	VRAMZ_FK_STRAY_CONTEXT,     /* a job's processes hold small contexts on a GPU not theirs */
	VRAMZ_FK_IDLE_HOLDER,       /* a process holds memory at 0 % SM for long */
	VRAMZ_FK_ORPHANED,          /* memory no visible live process accounts for */
	VRAMZ_FK_THROTTLE,          /* clocks held down by thermal / power reasons */
	VRAMZ_FK_PCIE_DOWNGRADED,   /* PCIe link below its max while busy */
	VRAMZ_FK_MEM_TEMP,          /* memory temperature near its limit */
	VRAMZ_FK_FRAGMENTATION,     /* hint: memory held near its peak after work fell */
	VRAMZ_FK_GPU_LOST,          /* the GPU fell off the bus */
	VRAMZ_FK_OOM,               /* a process probably ended out of memory */
	VRAMZ_FK_OUTSIDE_ALLOCATOR, /* a PyTorch process holds much outside its allocator */
	VRAMZ_FK_VRAM_ERRORS,       /* new ECC errors: uncorrected (or a memory Xid), or corrected rising */
	VRAMZ_FK_ROW_REMAP,         /* a row remap waits for a reset, or failed */
	VRAMZ_FK_XID,               /* the driver raised a critical Xid error */
	VRAMZ_FK_RISE,              /* memory of a process rises steeply now (not yet a leak) */
	VRAMZ_FK_COMMUNICATION_MEMORY, /* NCCL's communicators hold a large share of a GPU */
};
#define VRAMZ_FK_COUNT 18 /* one past the last kind */

enum vramz_severity {
	VRAMZ_SEV_INFO = 1,
	VRAMZ_SEV_WARNING = 2,
	VRAMZ_SEV_CRITICAL = 3,
};

/* Bits of vramz_finding.figures: which figures are meaningful for this
 * finding (the others are zero and must be shown as unknown). */
enum {
	VRAMZ_FG_RATE = 1u << 0,     /* rate_bytes_per_s, rate_ci_low/high */
	VRAMZ_FG_TREND = 1u << 1,    /* tau, p_value (Mann-Kendall) */
	VRAMZ_FG_DURATION = 1u << 2, /* duration_ms */
	VRAMZ_FG_TTO = 1u << 3,      /* time_to_oom_s */
	VRAMZ_FG_BYTES = 1u << 4,    /* bytes */
	VRAMZ_FG_REF = 1u << 5,      /* ref_bytes */
	VRAMZ_FG_SHARE = 1u << 6,    /* share */
	VRAMZ_FG_VALUE = 1u << 7,    /* value, ref_value */
	VRAMZ_FG_COUNT = 1u << 8,    /* count */
	VRAMZ_FG_EVIDENCE = 1u << 9, /* evidence (VRAMZ_OOM_*) */
	VRAMZ_FG_SITE = 1u << 10,    /* site, site_share (leak of a PyTorch process);
					site alone for an oom: the line that ran out */
	VRAMZ_FG_OOM = 1u << 11,     /* requested_bytes, limit_bytes, holders (oom
					with its PyTorch agent's record of the error) */
	VRAMZ_FG_ALLOCATOR = 1u << 12, /* leak: judged on the process's allocator's
					  allocated bytes (its PyTorch agent's),
					  not NVML's used memory */
	VRAMZ_FG_STEPS = 1u << 13,   /* leak: growth in steps at a steady cadence:
					count steps, value their median interval (s),
					ref_value their median height (bytes) */
	VRAMZ_FG_PARTS = 1u << 14,   /* outside_*_bytes, nccl_comms: where the
					memory outside PyTorch's allocator is
					(outside_allocator, communication_memory) */
};

/* Bits of vramz_finding.evidence for an oom finding: what made the end of
 * the process look like an out-of-memory crash.  Without VRAMZ_OOM_AGENT
 * the finding is worded as probable. */
enum {
	VRAMZ_OOM_LOW_FREE = 1u << 0,   /* its GPU had little free memory at its last samples */
	VRAMZ_OOM_LEAKING = 1u << 1,    /* it was leaking, near out of memory */
	VRAMZ_OOM_STEEP_RISE = 1u << 2, /* its memory rose steeply in its last seconds */
	VRAMZ_OOM_AGENT = 1u << 3,      /* its own allocator counted an out-of-memory
					   error (the PyTorch agent); alone, that it
					   caught one: a live process's "ran out of
					   memory N times and carried on" */
	VRAMZ_OOM_ENDED = 1u << 4,      /* its agent recorded that it died of an
					   uncaught out-of-memory error: certain */
};
/* "low_free", "leaking", "steep_rise", "agent", "ended"; NULL for another bit */
VRAMZ_EXPORT const char *vramz_oom_evidence_str(uint32_t bit);

#define VRAMZ_JOB_LEN 96
#define VRAMZ_OOM_HOLDERS 3

typedef struct vramz_finding {
	uint64_t id;                  /* stable: kind + subject, same across feeds */
	unsigned revision;            /* bumped when severity or a headline figure
					 changes materially (watch: "changed") */
	enum vramz_finding_kind kind;
	enum vramz_severity severity;
	/* subject */
	int gpu;                      /* backend index; -1 none */
	uint32_t pid;                 /* 0 none */
	uint64_t start_time_ticks;    /* with pid: tells a reused pid apart; 0 unknown */
	char job[VRAMZ_JOB_LEN];      /* what grouped the job: "slurm:123",
					 "pod:NAMESPACE/NAME" or "pod:UID",
					 "container:<12 hex>",
					 "torchrun:RUNID", "master:HOST:PORT",
					 "mpi:NS", "parent:PID (comm)"; "" none */
	char comm[16];                /* "" unknown */
	char user[VRAMZ_USER_LEN];    /* "" unknown */
	int ended;                    /* the process exited (kept in log analysis) */
	/* figures, meaningful per the figures bits; docs/diagnoses.md per kind */
	uint32_t figures;             /* VRAMZ_FG_* */
	double rate_bytes_per_s;      /* leak: Theil-Sen slope */
	double rate_ci_low_bytes_per_s, rate_ci_high_bytes_per_s; /* 95 % */
	double tau;                   /* Mann-Kendall tau, -1..1 */
	double p_value;               /* one-sided, rising */
	int64_t duration_ms;          /* how long the condition has held */
	double time_to_oom_s;         /* -1 unknown */
	uint64_t bytes;               /* the amount at stake */
	uint64_t ref_bytes;           /* what bytes is compared with */
	double share;                 /* a fraction or ratio, per kind */
	double value, ref_value;      /* per kind: temperature and limit, link gen ... */
	unsigned count, ref_count;    /* per kind: processes, GPUs, link width */
	int64_t first_seen_ms;        /* data time the finding was first raised */
	int64_t last_update_ms;       /* data time of its latest evaluation */
	/* appended */
	uint32_t evidence;            /* VRAMZ_OOM_* (oom), with VRAMZ_FG_EVIDENCE */
	/* where a PyTorch process's leak grows, with VRAMZ_FG_SITE: the Python
	 * line its agent saw gain the most live memory, "train.py:57 in
	 * step()", and that line's share of the growth (0..1) */
	char site[160];
	double site_share;
	/* appended (issue 27), with VRAMZ_FG_OOM: the out-of-memory
	 * error its PyTorch agent saw - the bytes asked, the allocator's
	 * limit then (set_per_process_memory_fraction's cap, else the GPU's
	 * total) - and with history=True the largest live allocation sites
	 * then, largest first, each with its share of what the allocator
	 * held (0..1) */
	uint64_t requested_bytes;
	uint64_t limit_bytes;
	unsigned nholders;
	struct vramz_oom_holder {
		char site[160];           /* "data.py:40 in load()" */
		uint64_t bytes;
		double share;
	} holders[VRAMZ_OOM_HOLDERS];
	/* appended (issue 36): a leak's or rise's onset, the data time its
	 * rise began (wall clock, as first_seen_ms); 0 unknown */
	int64_t onset_ms;
	/* appended (issue 37), with VRAMZ_FG_PARTS: the parts of the
	 * process's memory outside PyTorch's allocator, as its agent
	 * measured them (vramz_proc_sample's outside_*_bytes) */
	uint64_t outside_context_bytes;
	uint64_t outside_libraries_bytes;
	uint64_t outside_nccl_bytes;
	uint64_t outside_other_bytes;
	unsigned nccl_comms;          /* NCCL communicators among them */
	/* appended (issue 39): the name of the process's container in its
	 * Kubernetes pod (vramz_proc_sample's container_name), beside a job
	 * "pod:NAMESPACE/NAME"; "" unknown or no pod */
	char container_name[VRAMZ_KUBE_NAME_LEN];
} vramz_finding;

typedef struct vramz_diag_config {
	size_t size;                  /* sizeof(vramz_diag_config), as
					 vramz_diag_config_init sets it */
	int64_t window_ms;            /* first window width (1000); grows as rings merge */
	unsigned ring_windows;        /* windows kept per series (512, even, >= 16) */
	int64_t eval_interval_ms;     /* evaluate at most this often in data time (1000) */
	int keep_ended;               /* 1: exited processes' findings stay (logs);
					 0: they clear (live) */
	/* leak */
	int64_t leak_warmup_ms;       /* ignored start of each process (30 s) */
	int64_t leak_min_span_ms;     /* data needed after warm-up (60 s) */
	unsigned leak_min_windows;    /* and windows (12) */
	uint64_t leak_min_rate_bytes_per_min; /* 1 MiB/min */
	uint64_t leak_min_rise_bytes; /* rise over the leak (64 MiB) */
	double leak_p;                /* Mann-Kendall significance (0.001) */
	double leak_min_tau;          /* and strength (0.5) */
	int64_t leak_critical_tto_ms; /* critical below this time to OOM (1 h) */
	/* imbalance and stray contexts */
	double imbalance_ratio;       /* max / median of a job's GPUs (1.5) */
	uint64_t imbalance_min_bytes; /* and max - median (1 GiB) */
	uint64_t stray_max_bytes;     /* a context below this is "small" (1 GiB) */
	/* idle holder */
	uint64_t idle_min_bytes;      /* 1 GiB */
	int64_t idle_ms;              /* 30 min */
	/* orphaned memory */
	uint64_t orphan_min_bytes;    /* 1 GiB */
	int64_t orphan_ms;            /* sustained (60 s) */
	/* throttling, link, temperature */
	double throttle_share;        /* of busy time (0.2) */
	int64_t throttle_min_busy_ms; /* busy time needed (60 s) */
	double pcie_share;            /* of busy time below max (0.5) */
	int mem_temp_margin_c;        /* warn within this of the limit (5) */
	int mem_temp_max_c;           /* limit when the GPU does not say (95) */
	/* fragmentation hint */
	int64_t frag_ms;              /* low activity near peak this long (10 min) */
	/* appended: job grouping and reporting (docs/diagnoses.md) */
	int64_t job_warmup_ms;        /* imbalance / stray contexts only once every
					 process of the job is this old (30 s) */
	int64_t report_after_ms;      /* a finding is handed out once it has held
					 this long in data time (5 s); gpu_lost at once */
	const char *proc_root;        /* live: the /proc whose environments and
					 parents tell jobs apart ("/proc"); NULL (the
					 default): none, as for a log's processes */
	/* appended: fast leaks (docs/diagnoses.md, "Fast leaks") */
	int64_t leak_fast_tto_ms;     /* judge a leak before warm-up + span when it
					 would fill the GPU within this (5 min); 0 off */
	int64_t leak_fast_warmup_ms;  /* ignored start of each process for it (15 s) */
	int64_t leak_fast_min_span_ms; /* and the least rise it needs (10 s) */
	double leak_fast_share;       /* the rise must have lasted this share of
					 the time to OOM it projects (1/3) */
	/* appended: out-of-memory ends (oom) */
	uint64_t oom_free_bytes;      /* "little free": under this (1 GiB) */
	double oom_free_share;        /* or under this share of total (0.02) */
	int64_t oom_rise_ms;          /* the last seconds a steep rise is sought in (10 s) */
	int64_t oom_keep_ms;          /* live: an oom finding stays this long (10 min) */
	/* appended (issue 27), steep rises since issue 36 (docs/diagnoses.md,
	 * "Steep rises"): memory rising this fast is told while it rises */
	uint64_t leak_steep_rate_bytes_per_min; /* (5 GiB); 0 off */
	int64_t leak_steep_min_span_ms; /* over this much of it (30 s) */
	/* appended (issue 36): leaks from their onset (docs/diagnoses.md,
	 * "Leaks from their onset") */
	int64_t leak_onset_min_span_ms; /* a smooth rise of NVML's figure lasts (30 s) */
	uint64_t leak_onset_min_rise_bytes; /* and rises (512 MiB), whichever is longer */
	int64_t leak_onset_alloc_min_span_ms; /* the same on the allocator's own
					 figure (a PyTorch agent's): 20 s */
	uint64_t leak_onset_alloc_min_rise_bytes; /* and 256 MiB */
	unsigned leak_stair_min_steps; /* a staircase is a leak from this many steps (4) */
	int64_t leak_stair_min_span_ms; /* lasting at least (60 s) */
	/* appended (issue 37): communication_memory */
	double comm_share;            /* NCCL's part of a process's memory on a GPU
					 from this share of the GPU (0.15) */
	unsigned comm_min_groups;     /* or this many communicators, each costing
					 memory (4; 0 off) */
} vramz_diag_config;

typedef struct vramz_diag vramz_diag;

/* Sets cfg->size = size and every field to its default.  VRAMZ_EINVAL
 * when size is smaller than the config's first sized version. */
VRAMZ_EXPORT int vramz_diag_config_init(vramz_diag_config *cfg, size_t size);
#define vramz_diag_config_defaults(cfg) \
	((void)vramz_diag_config_init((cfg), sizeof *(cfg)))

/* vramz_abi with vramz_finding's size: what vramz_diag_create passes. */
static inline const vramz_abi *vramz_diag_abi_current(void)
{
	static const vramz_abi abi = {
		sizeof(vramz_abi), sizeof(vramz_gpu_info), sizeof(vramz_gpu_sample),
		sizeof(vramz_proc_sample), sizeof(vramz_mig_sample),
		sizeof(vramz_snapshot), sizeof(vramz_finding)};
	return &abi;
}

/* Creates an engine.  NULL cfg: defaults.  Returns 0; VRAMZ_EINVAL for a
 * config it rejects, with vramz_diag_error() naming the field
 * ("ring_windows 8: must be even and at least 16"); VRAMZ_ENOMEM.  On
 * VRAMZ_EINVAL *out is set so the error can be read; free it either way.
 * abi NULL: the library's own record sizes. */
VRAMZ_EXPORT int vramz_diag_create_abi(vramz_diag **out, const vramz_diag_config *cfg,
				       const vramz_abi *abi);
#define vramz_diag_create(out, cfg) \
	vramz_diag_create_abi((out), (cfg), vramz_diag_abi_current())
/* Detail of the last failure ("" none). */
VRAMZ_EXPORT const char *vramz_diag_error(const vramz_diag *d);
/* As vramz_diag_create, NULL on any failure (kept from 0.1, which could
 * not tell a bad config from out of memory). */
VRAMZ_EXPORT vramz_diag *vramz_diag_new_abi(const vramz_diag_config *cfg,
					    const vramz_abi *abi);
#define vramz_diag_new(cfg) vramz_diag_new_abi((cfg), vramz_diag_abi_current())
VRAMZ_EXPORT void vramz_diag_free(vramz_diag *d);

/* Static facts (PCIe max link, memory temperature limit, total memory) of
 * count GPUs (an array at the caller's record size), matched to samples by
 * index.  Optional; call any time. */
VRAMZ_EXPORT int vramz_diag_set_gpu_info(vramz_diag *d, const vramz_gpu_info *info,
					 unsigned count);

/* Feeds one snapshot; any cadence.  The engine keeps its own time, which
 * never goes back: it advances by the elapsed mono_ns when both this
 * snapshot and the previous one carry it (live), else by the elapsed
 * time_ms; a recorded clock that steps back continues at the previous
 * cadence (docs/diagnoses.md, "Time").  So a clock step, either way, is
 * never an error.  Findings' times are handed out on the wall clock of the
 * latest snapshot.  Returns 0, VRAMZ_EINVAL (bad arguments) or
 * VRAMZ_ENOMEM. */
VRAMZ_EXPORT int vramz_diag_feed(vramz_diag *d, const vramz_snapshot *snap);

/* Clock steps absorbed so far (live: the wall clock and the monotonic one
 * disagreed by more than a second between two snapshots; recorded: the
 * time went back); *last_step_ms (may be NULL): the latest one, negative
 * for a step back.  A caller compares the count around a feed to say
 * where a step happened. */
VRAMZ_EXPORT unsigned vramz_diag_clock_steps(const vramz_diag *d, int64_t *last_step_ms);

/* The current findings, most severe first; valid until the next feed or
 * free.  Evaluates first when data arrived since the last evaluation. */
VRAMZ_EXPORT unsigned vramz_diag_findings(vramz_diag *d, const vramz_finding **out);

/* At most this many processes (GPU, pid, start) have a series at once: a
 * series keeps ring_windows windows (24 KiB at the default), so the bound
 * is about 100 MiB.  Beyond it, exited processes' series go first, then
 * those of the smallest peak usage; findings about them may be missing. */
#define VRAMZ_DIAG_SERIES_MAX 4096
/* Process series dropped at that bound since vramz_diag_new. */
VRAMZ_EXPORT unsigned long vramz_diag_series_dropped(const vramz_diag *d);

/* "leak", "imbalance", ... ; "?" for an unknown kind */
VRAMZ_EXPORT const char *vramz_finding_kind_str(enum vramz_finding_kind k);
/* "info", "warning", "critical" */
VRAMZ_EXPORT const char *vramz_severity_str(enum vramz_severity s);
/* Parses those names; 0 or VRAMZ_EINVAL. */
VRAMZ_EXPORT int vramz_severity_parse(const char *s, enum vramz_severity *out);

/* Findings raised earlier and cleared since (kept only with keep_ended,
 * the most recent 256), oldest first: a log's idle stretch that ended, a
 * hot hour.  Valid until the next feed or free. */
VRAMZ_EXPORT unsigned vramz_diag_cleared(vramz_diag *d, const vramz_finding **out);

/* ---- the idle rule (one for the engine's idle_holder and kill --idle) ----
 *
 * A process is idle only while its SM share reads 0 and its memory stays
 * within noise of where the stretch began (vramz_idle_noise_bytes): an
 * allocating data loader at 0 % SM is not idle.  An unknown SM reading
 * neither starts nor breaks a stretch; vramz_idle_verdict, which judges a
 * whole observation (kill --idle's window), calls unknown "not idle". */
typedef struct vramz_idle_track {
	int64_t since_ms;             /* start of the current idle stretch; -1 none */
	uint64_t ref_bytes;           /* memory when the stretch began */
	/* over everything fed since vramz_idle_reset */
	int64_t first_ms, last_ms;
	uint64_t first_bytes, last_bytes, lo_bytes, hi_bytes;
	unsigned samples, sm_unknown; /* samples, and those without an SM reading */
	unsigned sm_max_pct;          /* highest SM reading */
	int64_t idle_from_ms;         /* first stretch start; -1 never idle */
} vramz_idle_track;

VRAMZ_EXPORT void vramz_idle_reset(vramz_idle_track *t);
/* One sample of the process (its used_bytes and sm_pct, per p->valid). */
VRAMZ_EXPORT void vramz_idle_feed(vramz_idle_track *t, int64_t t_ms, const vramz_proc_sample *p);
/* How far memory may move and still be "unchanged": max(64 MiB, 1 %). */
VRAMZ_EXPORT uint64_t vramz_idle_noise_bytes(uint64_t level_bytes);
/* Whether everything fed was idle: every sample's SM known and 0, memory
 * within noise throughout.  1 idle; 0 not, with the reason in why ("its
 * memory grew 1.2 GiB in the window", "it used the GPU (SM up to 12 %)",
 * "its SM share was not reported at every sample"). */
VRAMZ_EXPORT int vramz_idle_verdict(const vramz_idle_track *t, char *why, size_t len);

/* One sentence of what was seen, with its numbers, e.g. "pid 4242 (python)
 * on GPU 0 grows 64.0 MiB/min (95 % CI 63.1-64.9) for 12m; out of memory
 * in about 1h10m".  Returns buf. */
VRAMZ_EXPORT const char *vramz_finding_summary(const vramz_finding *f, char *buf, size_t len);
/* One sentence of what to do about it.  Returns buf. */
VRAMZ_EXPORT const char *vramz_finding_advice(const vramz_finding *f, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
