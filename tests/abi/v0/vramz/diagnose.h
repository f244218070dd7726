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
 * Struct layouts are append-only within a major version.
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
};
#define VRAMZ_FK_COUNT 11 /* one past the last kind */

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
};

#define VRAMZ_JOB_LEN 96

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
					 "pod:UID", "container:<12 hex>",
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
} vramz_finding;

typedef struct vramz_diag_config {
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
} vramz_diag_config;

typedef struct vramz_diag vramz_diag;

VRAMZ_EXPORT void vramz_diag_config_defaults(vramz_diag_config *cfg);

/* NULL cfg: defaults.  NULL on out of memory or an invalid config. */
VRAMZ_EXPORT vramz_diag *vramz_diag_new(const vramz_diag_config *cfg);
VRAMZ_EXPORT void vramz_diag_free(vramz_diag *d);

/* Static facts (PCIe max link, memory temperature limit, total memory) of
 * count GPUs, matched to samples by index.  Optional; call any time. */
VRAMZ_EXPORT int vramz_diag_set_gpu_info(vramz_diag *d, const vramz_gpu_info *info,
					 unsigned count);

/* Feeds one snapshot.  time_ms must not go back (VRAMZ_EINVAL); any
 * cadence.  Returns 0, VRAMZ_EINVAL or VRAMZ_ENOMEM. */
VRAMZ_EXPORT int vramz_diag_feed(vramz_diag *d, const vramz_snapshot *snap);

/* The current findings, most severe first; valid until the next feed or
 * free.  Evaluates first when data arrived since the last evaluation. */
VRAMZ_EXPORT unsigned vramz_diag_findings(vramz_diag *d, const vramz_finding **out);

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
