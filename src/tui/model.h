/* SPDX-License-Identifier: Apache-2.0 */
/* model.h - what `vramz top` knows, as plain structs, apart from how it is
 * drawn: the latest copy of each GPU's sample with a history ring, and the
 * process table (one row per pid, merged over the GPUs it uses) with the
 * idle time vramz tracks itself.  Rendering reads it; input changes only
 * the arrangement (sort, filter, tree), never the data. */
#ifndef VRAMZ_TUI_MODEL_H
#define VRAMZ_TUI_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "hashtab.h"

#include "vramz/diagnose.h"
#include "vramz/vramz.h"

#define MODEL_HIST 1024       /* points per GPU: 17 min at 1 Hz */
#define MODEL_PHIST 512       /* points per process and GPU: 8.5 min at 1 Hz */
#define MODEL_PKEEP 60        /* ticks a process's history outlives it */
#define MODEL_MAX_GPUS 64     /* rows keep their GPUs in a 64-bit mask */
#define MODEL_NAME_LEN 48
#define MODEL_JOB_LEN 128 /* "NAMESPACE/POD" of most pods whole */

/* One GPU of one snapshot, as the sampler thread copied it. */
struct tui_gpu {
	vramz_gpu_sample s;
	char name[MODEL_NAME_LEN];        /* "NVIDIA H200"; "" unknown */
	unsigned pcie_max_gen, pcie_max_width; /* 0: unknown */
};

/* A snapshot the sampler thread owns no more: vramz_sample's buffers are
 * reused by the next tick, so each tick is copied into one allocation. */
struct tui_snap {
	struct tui_snap *next;
	int64_t time_ms;                  /* wall clock (replay: recorded) */
	int reset;                        /* replay seek: forget the history */
	int catchup;                      /* replay seek: more follow at once */
	int err;                          /* < 0: the tick failed, see errmsg */
	int keep_last;                    /* an error only (a bad row of a replayed
					     log): the last good tick stays shown */
	int procs_dropped;                /* queued behind a newer tick with many
					     processes: its process rows were
					     freed (sampler.c), the GPUs kept */
	char errmsg[160];
	unsigned ngpus, nprocs;
	struct tui_gpu *gpus;
	vramz_proc_sample *procs;
	/* the diagnosis engine's findings after this tick (sampler.c feeds
	 * it every tick, skipped ones of a seek too), most severe first */
	unsigned nfindings;
	vramz_finding *findings;
};

struct hist_point {
	int64_t time_ms;
	uint64_t used_bytes, reserved_bytes, total_bytes;
	uint8_t util_pct;
	uint8_t mem_valid, util_valid;
	/* the side chart's other sensors (`s` cycles them) */
	uint8_t temp_valid, power_valid, clock_valid;
	int16_t temp_c;
	uint16_t power_w, clock_mhz;          /* SM clock */
};

/* What the chart beside memory shows (`s` cycles, `m` shows or hides) */
enum side_chart { SIDE_UTIL, SIDE_TEMP, SIDE_POWER, SIDE_CLOCK, SIDE_COUNT };

struct model_gpu {
	struct tui_gpu cur;
	int present;                      /* in the latest snapshot */
	struct hist_point hist[MODEL_HIST];
	unsigned hist_head, hist_n;       /* ring: head is the next write */
	/* the newest points that plot as the newest does (memory; utilization):
	 * a plot all of one value looks the same the next frame (render.c) */
	unsigned flat_mem, flat_util;
	int finding;                      /* worst severity naming it, 0 none */
};

/* The process table's columns, in the order shown; the host side (CPU %,
 * resident memory, elapsed time, state) comes from /proc (host.c). */
enum model_col {
	COL_PID, COL_USER, COL_JOB, COL_GPU, COL_VRAM, COL_SM, COL_IDLE,
	COL_CPU, COL_RSS, COL_TIME, COL_STATE, COL_CMD,
	COL_COUNT
};

struct model_row {
	uint32_t pid, ppid, uid;
	uint64_t start_ticks;             /* 0: unknown */
	int visible;                      /* VRAMZ_P_VISIBLE */
	char user[VRAMZ_USER_LEN];
	char job[MODEL_JOB_LEN];          /* fmt_job(): "slurm:123", "ns/pod", "pod:ab12cd34", "container:..." */
	char cmd[VRAMZ_CMD_LEN];
	uint64_t gpu_mask;                /* bit i: backend index i */
	unsigned first_gpu;               /* lowest backend index */
	char gpus[24];                    /* "0", "0,3", "0-7" */
	uint64_t vram_bytes;
	int vram_valid, sm_valid, idle_valid, idle_lower;
	unsigned sm_pct;                  /* highest over its GPUs */
	int64_t idle_ms;                  /* since SM use last seen */
	int depth;                        /* tree view indent */
	int group;                        /* tree view: a parent holding no GPU */
	int finding;                      /* worst severity naming it */
	int tagged;                       /* Space: signalled with the others by k */
	/* its PyTorch agent's figures over its GPUs (lib/agent.c) */
	int torch;
	uint64_t torch_reserved_bytes, outside_bytes;
	/* the host side (host.c): valid flags, the last reading */
	int cpu_valid, rss_valid, age_valid;
	unsigned cpu_tenths;              /* CPU % x 10 over the last interval */
	uint64_t rss_bytes;               /* resident host memory */
	int64_t age_ms;                   /* since the process started */
	char state;                       /* R S D Z T ...; 0 unknown */
};

/* How the rows are arranged: input.c changes it, model_arrange applies it. */
struct arrange {
	enum model_col sort;
	int reverse;                      /* 1: ascending instead of default */
	int tree;
	char text[64];                    /* substring of pid/user/job/command */
	char user[VRAMZ_USER_LEN];        /* "" any */
	int gpu;                          /* backend index, -1 any */
};

struct activity;
struct proc_series;

struct model {
	unsigned ngpus;                   /* slots seen, in selection order */
	struct model_gpu *gpus;
	struct model_row *rows;           /* latest snapshot's processes */
	unsigned nrows, cap_rows;         /* real rows; tree groups follow */
	unsigned ngroups;
	unsigned *order;                  /* arranged view: indices into rows */
	unsigned norder, cap_order;
	struct activity *acts;            /* per-process SM activity history */
	unsigned nacts, cap_acts;
	int64_t now_ms;                   /* time of the latest snapshot */
	unsigned ticks;
	unsigned fed;                     /* ticks fed since the frame last drawn
					     (render.c: a plot kept from the frame
					     before assumes one) */
	/* each process's memory on each GPU, a point a tick (the process
	 * page's chart), and the time of each of those ticks */
	struct proc_series *series;
	unsigned nseries, cap_series;
	int64_t tick_ms[MODEL_PHIST];     /* by tick % MODEL_PHIST */
	char errmsg[160];                 /* the latest tick's failure, "" ok */
	/* rows by pid, activities by pid and start, series by GPU, pid and
	 * start (lib/internal/hashtab.h's process index): a lookup is one probe, not
	 * a scan, so a tick costs O(processes) (100,000 took 27 s to draw) */
	struct htab row_idx, act_idx, series_idx;
};

void model_init(struct model *m);
void model_free(struct model *m);
/* Takes in one snapshot (the model copies what it keeps). */
int model_feed(struct model *m, const struct tui_snap *s);
/* Rebuilds m->order (and tree rows) from m->rows. */
int model_arrange(struct model *m, const struct arrange *a);
/* Row index of pid in rows, -1 when absent. */
int model_find_pid(const struct model *m, uint32_t pid);
/* The i-th history point back from the newest (0 = newest), NULL past end. */
const struct hist_point *model_hist(const struct model_gpu *g, unsigned back);
/* The COMMAND column's text from a command line (its arguments joined by
 * blanks): the program by its base name, and for a Python interpreter the
 * script by its base name too, so the script, not the interpreter's
 * path, is what the column shows ("/opt/py/bin/python3.11 /w/train.py
 * --bs 64" -> "python3.11 train.py --bs 64"; "-m MODULE" kept as given).
 * The process page shows the whole command line. */
void model_cmd_short(const char *cmdline, char *out, size_t len);
/* Column titles for the process table and help. */
const char *model_col_name(enum model_col c);
/* A column's name on the command line and in top.conf: "vram", "cpu" */
const char *model_col_key(enum model_col c);
/* Whether the column sorts largest first (VRAM, SM%, IDLE, the host's). */
int model_col_desc(enum model_col c);
/* The memory of process (pid, start_ticks) on GPU gpu, in GiB, for the
 * ticks back 0 (the newest) .. n - 1 into out (-1: not listed then).
 * Returns how many ticks back it has points (0: none). */
unsigned model_proc_hist(const struct model *m, uint32_t pid, uint64_t start_ticks,
			 unsigned gpu, double *out, unsigned n);

#endif
