/* SPDX-License-Identifier: Apache-2.0 */
/* kinds.h - the table of finding kinds (kinds.c): one row per
 * VRAMZ_FK_* says everything particular to that kind - its name, its
 * detector, its words, whether it lasts, its Prometheus series, its
 * thresholds with their defaults, its hold time.  The engine, the words
 * (vramz_finding_summary, vramz_finding_advice), the exporter
 * (src/format/prom.c), the report (src/report/svg.c) and the options and
 * config file (src/analyze/diagconf.c) walk it, so a new kind is one row.
 *
 * Not installed: the library and the tool share it as they share
 * lib/internal/fields.h.  It names the engine's types only as pointers, so the
 * tool sees no engine state through it.
 */
#ifndef VRAMZ_DIAG_KINDS_H
#define VRAMZ_DIAG_KINDS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"

struct emitter;

/* How a finding spans time, which is how the report draws it. */
enum kind_span {
	KIND_EVENT,   /* it happened (or it is a state with no useful extent):
			 a marker where it was first seen */
	KIND_LASTS,   /* a condition that held for duration_ms up to its last
			 update: a band under the marker */
	KIND_TREND,   /* memory rising over duration_ms: the fitted slope and
			 the projected out-of-memory (a leak) */
};

/* The figure of a finding that a Prometheus series carries. */
enum kind_figure {
	KIND_FIG_RATE,  /* rate_bytes_per_s, with VRAMZ_FG_RATE; a number */
	KIND_FIG_TTO,   /* time_to_oom_s, with VRAMZ_FG_TTO and known; a number */
	KIND_FIG_BYTES, /* bytes, with VRAMZ_FG_BYTES; an integer */
	KIND_FIG_ENDED_BYTES, /* bytes, of a finding whose process ended */
	KIND_FIG_REQUESTED,   /* requested_bytes, with VRAMZ_FG_OOM; an integer */
};

/* One gauge per finding of the kind that carries the figure, labelled
 * with its GPU (and pid, for a process), while the finding is current. */
struct kind_series {
	const char *metric;            /* without "vramz_": "leak_rate_bytes_per_second";
					  NULL: no series */
	const char *help;
	enum kind_figure figure;
	int site_label;                /* labelled site="model.py:88 in forward()"
					  too, when the finding names one */
};
#define KIND_SERIES_MAX 2
#define KIND_NEEDS_MAX 2

/* What a threshold is, for the option parser: its unit and range. */
enum kind_conf_unit {
	KC_DURATION, /* milliseconds: 30s, 10min */
	KC_SIZE,     /* bytes: 1GiB */
	KC_COUNT,    /* a plain number */
	KC_CELSIUS,  /* degrees, 0 to 200 */
	KC_PERCENT,  /* a share 0 to 1, given as 20% or 0.2 */
	KC_PROB,     /* above 0 and below 1 */
	KC_UNIT,     /* 0 to 1 */
	KC_RATIO,    /* 1 or more */
	KC_NUMBER,   /* any number (C API only) */
};

/* Its C type in vramz_diag_config (derived from the field: kinds.c). */
enum kind_conf_ctype { KC_I64, KC_U64, KC_UINT, KC_INT, KC_DOUBLE };

/* One threshold: a field of vramz_diag_config. */
struct kind_conf {
	const char *key;               /* the long option and config file word,
					  "leak-warmup"; NULL: C API only */
	enum kind_conf_unit unit;
	enum kind_conf_ctype ctype;
	size_t off;                    /* in vramz_diag_config */
	double def;                    /* its default, in the field's unit */
	const char *help;              /* one line for -h, with the default */
};

struct gpu_state;
struct proc_state;

/* The memory a kind keeps as it is fed, and the hooks that keep it: the
 * kind's own structs, defined in its own file, which the engine
 * (engine.c) allocates zeroed - one block per GPU (gpu_size), per process
 * series (proc_size) and one per engine (diag_size) - and frees, without
 * knowing what is in them.  The engine hands each hook its kind's block;
 * a detector finds it with kind_gpu_state / kind_proc_state /
 * kind_diag_state (lib/diagnose/state.h).  Every hook is optional, and
 * each runs in table order after the engine's own bookkeeping:
 *   init_gpu, init_proc  once the block is allocated (a field whose
 *                        "none" is not 0: -1 for "not since");
 *   fini_proc, fini_diag before the block is freed (what it points to);
 *   feed_gpu             every GPU sample, a lost GPU's too (s->lost),
 *                        after the engine noted the time (dt: since the
 *                        GPU's last sample, at most 10 s);
 *   feed_proc            every process sample, once the engine has its
 *                        memory series and names; 0 or VRAMZ_ENOMEM;
 *   proc_gone            a process missing from a list that was read,
 *                        before the engine marks it ended;
 *   after_feed           once the whole snapshot is in. */
struct kind_state {
	size_t gpu_size, proc_size, diag_size; /* bytes; 0: none */
	void (*init_gpu)(void *st);
	void (*init_proc)(void *st);
	void (*fini_proc)(void *st);
	void (*fini_diag)(void *st);
	void (*feed_gpu)(vramz_diag *d, struct gpu_state *g, void *st, const vramz_gpu_sample *s,
			 int64_t t, int64_t dt);
	int (*feed_proc)(vramz_diag *d, struct proc_state *p, void *st, const vramz_proc_sample *s,
			 int64_t t);
	void (*proc_gone)(vramz_diag *d, struct proc_state *p, void *st);
	void (*after_feed)(vramz_diag *d);
};

struct finding_kind {
	enum vramz_finding_kind kind;  /* = its index in finding_kinds[] */
	const char *name;              /* "leak": JSON "kind", text, VRAMZ_FINDING_KIND */
	/* numbers: emits this kind's findings from the engine's state;
	 * detect_agent, when set, adds what the PyTorch agent says of the
	 * same kind (torch.c), run right after detect */
	int (*detect)(vramz_diag *d, struct emitter *em);
	int (*detect_agent)(vramz_diag *d, struct emitter *em);
	/* optional: the state slot of a kind that keeps memory of its own as
	 * it is fed (struct kind_state above); the rows of kinds that share
	 * a file's state read the slot of the row that owns it */
	const struct kind_state *state;
	/* words: one sentence of what was seen, one of what to do; subject is
	 * "pid 4242 (python) on GPU 0" and the like.  agent_words, when set,
	 * speaks first for a finding the agent raised (advice 0: the summary)
	 * and returns 0 for one it did not */
	void (*summary)(const vramz_finding *f, const char *subject, char *buf, size_t len);
	void (*advice)(const vramz_finding *f, const char *subject, char *buf, size_t len);
	int (*agent_words)(const vramz_finding *f, const char *subject, int advice, char *buf,
			   size_t len);
	enum kind_span span;
	/* handed out at the evaluation that raises it, not once it has held
	 * report_after_ms: what does not come back by itself */
	int at_once;
	/* hysteresis: a finding stays this long after its condition is gone
	 * (engine.c); 0: it clears at the first evaluation that does not
	 * raise it.  docs/diagnoses.md, "Findings that hold", lists them */
	int64_t hold_ms;
	/* the data a log must cover before this kind can be judged: the sum
	 * of these int64_t (ms) fields of vramz_diag_config; what: "leaks",
	 * for analyze's "too short for leaks" (NULL: no minimum) */
	const char *what;
	size_t needs[KIND_NEEDS_MAX];
	unsigned nneeds;
	struct kind_series series[KIND_SERIES_MAX];
	/* its thresholds, in option order; check names the first rule of
	 * theirs a config breaks ("leak_p 0: must be ..."), NULL when none */
	const struct kind_conf *conf;
	unsigned nconf;
	const char *(*check)(const vramz_diag_config *c, char *buf, size_t len);
};

/* Indexed by kind, VRAMZ_FK_COUNT rows (kinds.c asserts it); row 0 is no
 * kind (the enum starts at 1). */
extern const struct finding_kind finding_kinds[];

/* The row of k; NULL for a value that is no kind. */
const struct finding_kind *kind_of(enum vramz_finding_kind k);

/* The value of figure g of f: 1 with *num set (a rate, a time), 2 with
 * *count set (bytes), 0 when f does not carry it. */
int kind_figure(const vramz_finding *f, enum kind_figure g, double *num, uint64_t *count);

/* The data (ms) a log must cover before kind k can be judged under c. */
int64_t kind_needs_ms(const struct finding_kind *k, const vramz_diag_config *c);

/* Every threshold of vramz_diag_config, in option order: the engine's
 * (window, eval-interval), each kind's in table order, then the
 * engine's later ones (job-warmup, report-after).  i < kind_conf_count(). */
unsigned kind_conf_count(void);
const struct kind_conf *kind_conf_at(unsigned i);

#endif
