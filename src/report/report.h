/* SPDX-License-Identifier: Apache-2.0 */
/* report.h - the inside of `vramz report` (src/cmd/cmd-report.c): a log set is
 * reduced in one pass to a fixed number of pixel columns per GPU
 * (reduce.c), drawn as SVG (svg.c) and laid out with its tables as one
 * self-contained HTML page (reportpage.c).  docs/report.md says what the page
 * shows and why.
 */
#ifndef VRAMZ_REPORT_H
#define VRAMZ_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "hashtab.h"
#include "vramz/diagnose.h"
#include "vramz/vramz.h"

#define REP_COLS 1000u /* pixel columns of every plot's time axis */
#define REP_TOP 6u     /* processes drawn as their own band, per GPU */
/* Processes per GPU that keep a value per column: the highest peaks so
 * far.  The bands are the REP_TOP highest peaks at the end, always among
 * them; a process's memory costs a few hundred bytes, not a column
 * array's 12 KB (docs/report.md, "Memory"). */
#define REP_CANDS (4u * REP_TOP)
/* A span longer than this (a year and a day) is drawn, its axis bounded
 * (svg_axis_step), with a note that the log's clock probably jumped. */
#define REP_ODD_SPAN_MS (366LL * 86400000)

/* Throttle classes shown in the power lane */
enum { REP_THR_THERMAL = 1, REP_THR_POWER = 2 };

/* One GPU's ticks that fell into one pixel column.  Memory keeps the
 * minimum and maximum (so a spike shorter than a column survives); the
 * stack of processes is the breakdown at the column's highest tick. */
struct rep_col {
	uint32_t n;                /* ticks in the column; 0: none */
	uint32_t win;              /* tick number of the highest memory tick */
	uint8_t gap;               /* the logger stopped just before this column */
	uint8_t lost;              /* the GPU was lost at a tick of the column */
	uint8_t procs;             /* the winner had its process list */
	uint8_t thr;               /* REP_THR_* seen */
	uint8_t util_min, util_max;
	uint32_t valid;            /* VRAMZ_F_* seen in the column */
	uint64_t mem_min, mem_max; /* used + reserved bytes */
	uint64_t total, reserved, unattr, used; /* at the winner */
	int16_t temp_max, tmem_max;  /* °C */
	uint32_t power_max_mw, limit_mw;
	/* the other sensors of the page's detail view, their highest */
	uint8_t umem_max, fan_max;   /* % */
	uint16_t sm_max, mclk_max;   /* MHz */
	uint64_t tx_max, rx_max;     /* PCIe bytes/s */
};

struct rep_gpu {
	unsigned index;
	int have_info;
	vramz_gpu_info info;
	struct rep_col *cols;      /* [REP_COLS] */
	unsigned long ticks;
	int64_t first_ms, last_ms;
	uint64_t total_max, mem_peak;
	uint32_t power_peak_mw, limit_max_mw;
	int temp_peak, tmem_peak, any_temp_mem;
	uint32_t seen;             /* VRAMZ_F_* of any tick: a lane for each sensor seen */
	unsigned clk_peak;         /* MHz, SM or memory */
	uint64_t io_peak;          /* PCIe bytes/s, TX or RX */
	unsigned util_peak;
	double util_sum;
	unsigned long util_n;
	int lost;
	int any_procs;             /* a tick of this GPU had its process list */
	unsigned top[REP_TOP];     /* indices into rep.procs, by peak */
	unsigned ntop;
	/* the candidates' columns: slot k held by procs[cand_proc[k]] */
	uint64_t (*cand_val)[REP_COLS];   /* [REP_CANDS] bytes at each column's winner */
	uint32_t (*cand_stamp)[REP_COLS]; /* [REP_CANDS] which tick val is from */
	unsigned cand_proc[REP_CANDS];
	unsigned ncand;
};

struct rep_proc {
	unsigned gpu;
	uint32_t pid;
	uint64_t start_ticks;
	char user[VRAMZ_USER_LEN];
	char comm[16];
	char cmd[VRAMZ_CMD_LEN];
	/* its job as ps shows it: "NAMESPACE/POD (CONTAINER)", "slurm:ID" ... */
	char job[VRAMZ_POD_LEN + 2 * VRAMZ_KUBE_NAME_LEN + 8];
	int64_t first_ms, last_ms;
	uint64_t first_bytes, peak_bytes, last_bytes;
	int have_bytes;
	double sm_sum;
	unsigned long sm_n;
	int cand;                  /* its slot in its GPU's candidates, -1 none */
	int band;                  /* 0..REP_TOP-1, or -1: drawn in "other" */
};

struct rep_gap {
	int64_t from_ms, to_ms;
};

struct rep {
	int64_t t0_ms, t1_ms;      /* the time axis */
	uint32_t tick;             /* ticks fed, numbered from 1 */
	int64_t prev_ms;
	int64_t deltas[31];        /* the first intervals, for the gap rule */
	unsigned ndeltas;
	int64_t gap_ms;            /* an interval longer than this is a gap */
	struct rep_gap *gaps;
	unsigned ngaps, gapcap;
	struct rep_gpu **gpus;     /* by log index; NULL: not in the log */
	unsigned ngpus;
	unsigned char *want;       /* by log index: 0 unknown, 1 selected, 2 not */
	unsigned wantcap;
	struct rep_proc *procs;
	unsigned nprocs, pcap;
	struct htab index;         /* procs[] by GPU, pid, start (lib/internal/hashtab.h) */
	const char *gpu_spec;      /* -g, or NULL for all */
	/* from the diagnosis */
	vramz_finding *findings;
	unsigned nfind;
	unsigned long skipped;
	char source[512];          /* the log's name(s), for the title */
};

/* reduce.c */
int rep_init(struct rep *r, int64_t t0_ms, int64_t t1_ms, const char *gpu_spec);
/* info may be NULL; returns 0 or VRAMZ_ENOMEM */
int rep_feed(struct rep *r, const vramz_snapshot *snap,
	     const vramz_gpu_info *(*info)(void *arg, unsigned idx), void *arg);
/* Picks each GPU's top processes; checks -g named GPUs of the log (else
 * returns VRAMZ_ENOTFOUND with the bad item in bad). */
int rep_finish(struct rep *r, char *bad, size_t badlen);
int rep_col_of(const struct rep *r, int64_t t_ms);   /* clamped */
double rep_x_of(const struct rep *r, int64_t t_ms);  /* 0..REP_COLS, unclamped */
int64_t rep_t_of_col(const struct rep *r, unsigned col); /* the column's start */
uint64_t rep_proc_at(const struct rep *r, const struct rep_proc *p, const struct rep_col *c,
		     unsigned col);
void rep_free(struct rep *r);

/* svg.c: one GPU's plots (memory, utilization, temperature, power, and
 * the clocks, fan and PCIe throughput where the log has them) */
void svg_gpu(FILE *o, const struct rep *r, const struct rep_gpu *g);
/* The time axis's step for a span: at most 9 ticks, whatever the span. */
int64_t svg_axis_step(int64_t span_ms);
/* The note an odd span gets ("" when none), in the page and on stderr. */
const char *rep_span_note(const struct rep *r, char *buf, size_t len);

/* reportpage.c: the whole document */
int page_write(FILE *o, const struct rep *r);

/* sha256.c: for the page's Content-Security-Policy hashes */
void sha256_b64(const void *data, size_t len, char out[45]);

/* htmlesc.c: html text escaping, for the page and its plots */
void html_esc(FILE *o, const char *s);

#endif
