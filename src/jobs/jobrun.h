/* SPDX-License-Identifier: Apache-2.0 */
/* jobrun.h - run one command and measure its GPU memory from outside:
 * the engine under `vramz run` (one run, reported) and `vramz fit` (many
 * runs at different batch sizes). */
#ifndef VRAMZ_JOBRUN_H
#define VRAMZ_JOBRUN_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

struct jobrun_opts {
	int64_t interval_ms;   /* sampling period (absolute deadlines) */
	int capture;           /* child's stdout+stderr through a pipe, scanned
				  for out-of-memory messages */
	int echo;              /* with capture: copy the output to our stderr */
	/* called after every tick with the snapshot; member[i] says whether
	 * snap->procs[i] belongs to the command.  Called once more after the
	 * command ended, with member NULL: the closing tick, its processes
	 * gone.  May be NULL. */
	void (*on_tick)(void *arg, const vramz_snapshot *snap, const unsigned char *member);
	void *arg;
};

struct jobrun_gpu {
	unsigned index;            /* backend index */
	int touched;               /* the command held memory here at some tick */
	uint64_t peak_bytes;       /* max over ticks of the command's sum here */
	int64_t peak_at_ms;        /* since start */
	unsigned procs_peak;       /* most of its processes here at once */
	uint64_t sm_pct_sum;       /* per-process SM % of the command, summed per tick */
	unsigned sm_ticks;         /* ticks with a known SM figure */
	int energy_ok;
	uint64_t energy_start_mj, energy_end_mj;  /* whole GPU */
};

#define JOBRUN_MAX_GPUS 64

struct jobrun_result {
	int started;               /* the command was executed */
	int exec_errno;            /* when not: why (exit 127 / 126) */
	int exited, exit_code;     /* normal exit */
	int signaled, signo;       /* killed by a signal */
	int oom_message;           /* captured output mentioned out of memory */
	int interrupted;           /* we forwarded SIGINT/SIGTERM/SIGHUP */
	int64_t duration_ms;
	unsigned ticks, late_ticks;  /* late: a deadline missed by > 1 period */
	uint64_t peak_total_bytes;   /* max over ticks of the sum over GPUs */
	int64_t peak_total_at_ms;
	unsigned procs_seen;         /* distinct GPU processes of the command */
	unsigned left_running;       /* descendants still alive at the end */
	unsigned long proc_reads;    /* /proc stat reads for tree membership */
	unsigned ngpus;
	struct jobrun_gpu gpus[JOBRUN_MAX_GPUS];
	char tail[2048];             /* last captured output (capture only) */
};

/* Runs argv (PATH search, no shell) in its own process group and samples
 * ctx's selected GPUs until it exits.  Returns 0 (the result says how the
 * command ended) or a negative code for a failure of vramz itself, with a
 * message in err. */
int jobrun(vramz_ctx *ctx, char **argv, const struct jobrun_opts *o,
	   struct jobrun_result *r, char *err, size_t errlen);

/* The exit status a shell would report: code, 128+signal, 127/126. */
int jobrun_status(const struct jobrun_result *r);

/* 1 when text mentions running out of GPU memory (CUDA, PyTorch, JAX, TF). */
int jobrun_is_oom_text(const char *text);

/* "0.42s", "12.3s", then "3m05s"-style: run times people compare. */
const char *jobrun_fmt_secs(char *buf, size_t len, int64_t ms);

#endif
