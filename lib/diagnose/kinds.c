/* SPDX-License-Identifier: Apache-2.0 */
/* kinds.c - the finding kinds, one row each: the one place that says what
 * a kind is.  The engine (engine.c) walks the rows to detect, the words
 * below dispatch on them, the exporter, the report and the options of the
 * tool read them (kinds.h says who reads what).
 *
 * A row, in the order of its fields (struct finding_kind):
 *   kind, name     the enum value (include/vramz/diagnose.h, append-only)
 *                  and the word for JSON, text and VRAMZ_FINDING_KIND;
 *   detect         the detector: reads the engine's state (state.h) and
 *                  emits through the emitter it is handed (detectors.h);
 *   detect_agent   optional: what the PyTorch agent adds of the same
 *                  kind (torch.c), run right after detect;
 *   state          optional: the state slot of a kind that keeps memory
 *                  as it is fed - the sizes of its own structs per GPU,
 *                  per process and per engine, and the hooks that feed
 *                  them (kinds.h, struct kind_state), defined in the
 *                  kind's file; the engine allocates, feeds and frees
 *                  them and knows no kind by name;
 *   summary,       one sentence of what was seen, one of what to do;
 *   advice
 *   agent_words    optional: the words of a finding the agent raised,
 *                  tried first (0: not one of those);
 *   span           KIND_EVENT, KIND_LASTS (the report's band) or
 *                  KIND_TREND (a leak's fitted slope);
 *   at_once        handed out when raised rather than after report_after_ms;
 *   hold_ms        hysteresis: a finding its detector no longer raises
 *                  stays until its condition has been absent this long
 *                  (engine.c: hold_slot); 0 clears it at once (the events,
 *                  gpu_lost and oom, which have their own keeping);
 *   what, needs    the words and the data a log must cover before the
 *                  kind can be judged (analyze's "too short for ..."):
 *                  the sum of up to KIND_NEEDS_MAX config fields (ms);
 *   series         up to KIND_SERIES_MAX Prometheus gauges of its figures;
 *   conf, nconf    its thresholds in vramz_diag_config (CONFS(list)): option
 *                  and config key (NULL: C API only), unit, default, help;
 *                  the engine sets the defaults, src/analyze/diagconf.c makes them
 *                  options and config keys, in table order;
 *   check          optional: the rules its thresholds must keep.
 * Rows are in enum order, row 0 empty; the static assert below ties the
 * table's length to VRAMZ_FK_COUNT and test_diag_kinds checks each row.
 * Designated initializers: a new field is 0 / NULL in the rows that do
 * not name it, so a field added for one kind touches no other row.
 *
 * A new kind: its enum value and VRAMZ_FK_COUNT; a file of its own with
 * its detector, words and state slot (their prototypes in detectors.h,
 * the file in sources.cmake); its row here; a unit test and its name in
 * test_diag_kinds; docs/diagnoses.md.  See docs/architecture.md,
 * "Recipes", "Adding a finding kind" (8 places).
 */
#include "kinds.h"
#include "detectors.h"
#include "words.h"

#include <stdio.h>

#define CTYPE(field)                                                                   \
	_Generic(((vramz_diag_config *)0)->field, int64_t: KC_I64, uint64_t: KC_U64,   \
		 unsigned: KC_UINT, int: KC_INT, double: KC_DOUBLE)
#define CONF(key, unit, field, def, help) \
	{key, unit, CTYPE(field), offsetof(vramz_diag_config, field), def, help}
#define CONFS(list) .conf = list, .nconf = sizeof list / sizeof list[0]
#define NEED_OFF(f) offsetof(vramz_diag_config, f)
#define NEEDS1(a) .needs = {NEED_OFF(a)}, .nneeds = 1
#define NEEDS2(a, b) .needs = {NEED_OFF(a), NEED_OFF(b)}, .nneeds = 2
#define MIN_MS (60 * 1000)
#define GIB (1024.0 * 1024 * 1024)
#define MIB (1024.0 * 1024)

/* ---- thresholds: the engine's own, then each kind's ---- */

static const struct kind_conf conf_engine[] = {
	CONF("window", KC_DURATION, window_ms, 1000, "first window width of each series (1s)"),
	CONF(NULL, KC_COUNT, ring_windows, 512, "windows kept per series"),
	CONF("eval-interval", KC_DURATION, eval_interval_ms, 1000,
	     "evaluate at most this often in data time"),
};

/* after every kind's: job-warmup serves imbalance and stray_context, but
 * stays here so the options keep their order (vramz watch -h) */
static const struct kind_conf conf_engine_late[] = {
	CONF("job-warmup", KC_DURATION, job_warmup_ms, 30000,
	     "judge a job's balance once its processes are this old (30s)"),
	CONF("report-after", KC_DURATION, report_after_ms, 5000,
	     "report a finding once it has held this long (watch 5s, analyze 0)"),
};

static const struct kind_conf conf_leak[] = {
	CONF("leak-warmup", KC_DURATION, leak_warmup_ms, 30000,
	     "ignore each process's first DURATION (30s)"),
	CONF("leak-min-span", KC_DURATION, leak_min_span_ms, 60000, "data needed after warm-up (60s)"),
	CONF(NULL, KC_COUNT, leak_min_windows, 12, "and windows (12)"),
	CONF("leak-min-rate", KC_SIZE, leak_min_rate_bytes_per_min, MIB,
	     "smallest leak per minute reported (1MiB)"),
	CONF("leak-min-rise", KC_SIZE, leak_min_rise_bytes, 64 * MIB,
	     "smallest total rise reported (64MiB)"),
	CONF("leak-p", KC_PROB, leak_p, 0.001,
	     "Mann-Kendall significance, above 0 and below 1 (0.001)"),
	CONF("leak-min-tau", KC_UNIT, leak_min_tau, 0.5, "Mann-Kendall strength, 0 to 1 (0.5)"),
	CONF("leak-critical-tto", KC_DURATION, leak_critical_tto_ms, 60 * MIN_MS,
	     "critical when OOM is nearer (1h)"),
	CONF(NULL, KC_DURATION, leak_fast_tto_ms, 5 * MIN_MS,
	     "judge a leak sooner when it would fill the GPU within this (5min; 0 off)"),
	CONF(NULL, KC_DURATION, leak_fast_warmup_ms, 15000, "the fast rule's warm-up (15s)"),
	CONF(NULL, KC_DURATION, leak_fast_min_span_ms, 10000, "the fast rule's least rise (10s)"),
	CONF(NULL, KC_NUMBER, leak_fast_share, 1.0 / 3,
	     "the rise lasted this share of its time to OOM (1/3)"),
	CONF(NULL, KC_DURATION, leak_onset_min_span_ms, 30000,
	     "a smooth rise of used memory is judged once it lasted (30s)"),
	CONF(NULL, KC_SIZE, leak_onset_min_rise_bytes, 512 * MIB,
	     "or rose, whichever is longer (512MiB)"),
	CONF(NULL, KC_DURATION, leak_onset_alloc_min_span_ms, 20000,
	     "the same on a PyTorch agent's allocated bytes (20s)"),
	CONF(NULL, KC_SIZE, leak_onset_alloc_min_rise_bytes, 256 * MIB,
	     "and its rise (256MiB)"),
	CONF(NULL, KC_COUNT, leak_stair_min_steps, 4, "a staircase is a leak from this many steps (4)"),
	CONF(NULL, KC_DURATION, leak_stair_min_span_ms, 60000, "lasting at least (60s)"),
};

static const struct kind_conf conf_rise[] = {
	CONF(NULL, KC_SIZE, leak_steep_rate_bytes_per_min, 5 * GIB,
	     "memory rising this fast per minute is told while it rises (5GiB; 0 off)"),
	CONF(NULL, KC_DURATION, leak_steep_min_span_ms, 30000, "judged over this much of the rise (30s)"),
};

static const struct kind_conf conf_imbalance[] = {
	CONF("imbalance-ratio", KC_RATIO, imbalance_ratio, 1.5,
	     "max/median of a job's GPUs, 1 or more (1.5)"),
	CONF("imbalance-min", KC_SIZE, imbalance_min_bytes, GIB, "and max - median at least (1GiB)"),
};

static const struct kind_conf conf_stray_context[] = {
	CONF("stray-max", KC_SIZE, stray_max_bytes, GIB, "a context below this is stray (1GiB)"),
};

static const struct kind_conf conf_idle_holder[] = {
	CONF("idle-min", KC_SIZE, idle_min_bytes, GIB, "idle holders hold at least (1GiB)"),
	CONF("idle-time", KC_DURATION, idle_ms, 30 * MIN_MS, "at 0% SM for at least (30min)"),
};

static const struct kind_conf conf_orphaned[] = {
	CONF("orphan-min", KC_SIZE, orphan_min_bytes, GIB, "unattributed memory reported from (1GiB)"),
	CONF("orphan-time", KC_DURATION, orphan_ms, MIN_MS, "sustained for (60s)"),
};

static const struct kind_conf conf_throttle[] = {
	CONF("throttle-share", KC_PERCENT, throttle_share, 0.2, "share of busy time throttled (20%)"),
	CONF("throttle-min-busy", KC_DURATION, throttle_min_busy_ms, MIN_MS, "busy time needed (60s)"),
};

static const struct kind_conf conf_pcie_downgraded[] = {
	CONF("pcie-share", KC_PERCENT, pcie_share, 0.5, "share of busy time below max link (50%)"),
};

static const struct kind_conf conf_mem_temp[] = {
	CONF("mem-temp-margin", KC_CELSIUS, mem_temp_margin_c, 5, "warn this many C below the limit (5)"),
	CONF("mem-temp-max", KC_CELSIUS, mem_temp_max_c, 95,
	     "memory limit C when the GPU does not say (95)"),
};

static const struct kind_conf conf_fragmentation[] = {
	CONF("frag-time", KC_DURATION, frag_ms, 10 * MIN_MS, "low activity near peak for (10min)"),
};

static const struct kind_conf conf_communication_memory[] = {
	CONF("comm-share", KC_PERCENT, comm_share, 0.15,
	     "NCCL's communicators in a process hold this share of its GPU (15%)"),
	CONF(NULL, KC_COUNT, comm_min_groups, 4,
	     "or this many communicators, each costing memory (4; 0 off)"),
};

static const struct kind_conf conf_oom[] = {
	CONF(NULL, KC_SIZE, oom_free_bytes, GIB, "\"little free\": under this (1GiB)"),
	CONF(NULL, KC_PERCENT, oom_free_share, 0.02, "or under this share of total (2%)"),
	CONF(NULL, KC_DURATION, oom_rise_ms, 10000, "the last seconds a steep rise is sought in (10s)"),
	CONF(NULL, KC_DURATION, oom_keep_ms, 10 * MIN_MS, "live: an oom finding stays this long (10min)"),
};

/* ---- the table ---- */

const struct finding_kind finding_kinds[] = {
	[VRAMZ_FK_LEAK] = {
		.kind = VRAMZ_FK_LEAK, .name = "leak",
		.hold_ms = 60000,
		.what = "leaks", NEEDS2(leak_warmup_ms, leak_min_span_ms),
		.detect = detect_leak, .state = &leak_state,
		.summary = summary_leak, .advice = advice_leak,
		.span = KIND_TREND,
		.series = {{"leak_rate_bytes_per_second",
			    "Steady growth of used memory the diagnosis engine attributes to a leak.",
			    KIND_FIG_RATE},
			   {"time_to_oom_seconds",
			    "At the current leak rate, time until the GPU's free memory is gone.",
			    KIND_FIG_TTO}},
		CONFS(conf_leak), .check = check_leak,
	},
	[VRAMZ_FK_IMBALANCE] = {
		.kind = VRAMZ_FK_IMBALANCE, .name = "imbalance",
		.hold_ms = 30000,
		.what = "imbalance", NEEDS1(job_warmup_ms),
		.detect = detect_imbalance, .state = &imbalance_state,
		.summary = summary_imbalance, .advice = advice_imbalance,
		.span = KIND_LASTS,
		CONFS(conf_imbalance), .check = check_imbalance,
	},
	[VRAMZ_FK_STRAY_CONTEXT] = {
		.kind = VRAMZ_FK_STRAY_CONTEXT, .name = "stray_context",
		.hold_ms = 30000,
		.detect = detect_stray_context,
		.summary = summary_stray_context, .advice = advice_stray_context,
		.span = KIND_LASTS,
		CONFS(conf_stray_context),
	},
	[VRAMZ_FK_IDLE_HOLDER] = {
		.kind = VRAMZ_FK_IDLE_HOLDER, .name = "idle_holder",
		.hold_ms = 0, /* 30 min unbroken idle to raise; a busy moment ends it */
		.what = "idle holders", NEEDS1(idle_ms),
		.detect = detect_idle_holder, .state = &idle_holder_state,
		.summary = summary_idle_holder, .advice = advice_idle_holder,
		.span = KIND_LASTS,
		.series = {{"idle_holder_bytes",
			    "Memory held by a process that has not used the GPU for a while.",
			    KIND_FIG_BYTES}},
		CONFS(conf_idle_holder),
	},
	[VRAMZ_FK_ORPHANED] = {
		.kind = VRAMZ_FK_ORPHANED, .name = "orphaned",
		.hold_ms = 30000,
		.what = "orphaned memory", NEEDS1(orphan_ms),
		.detect = detect_orphaned, .state = &orphaned_state,
		.summary = summary_orphaned, .advice = advice_orphaned,
		.span = KIND_LASTS,
		.series = {{"orphan_memory_bytes",
			    "Used memory no live process holds (a dead context, or another namespace).",
			    KIND_FIG_BYTES}},
		CONFS(conf_orphaned),
	},
	[VRAMZ_FK_THROTTLE] = {
		.kind = VRAMZ_FK_THROTTLE, .name = "throttle",
		.hold_ms = 60000,
		.what = "throttling", NEEDS1(throttle_min_busy_ms),
		.detect = detect_throttle, .state = &throttle_state,
		.summary = summary_throttle, .advice = advice_throttle,
		.span = KIND_LASTS,
		CONFS(conf_throttle),
	},
	[VRAMZ_FK_PCIE_DOWNGRADED] = {
		.kind = VRAMZ_FK_PCIE_DOWNGRADED, .name = "pcie_downgraded",
		.hold_ms = 60000,
		.detect = detect_pcie_downgraded, .state = &pcie_state,
		.summary = summary_pcie_downgraded, .advice = advice_pcie_downgraded,
		.span = KIND_LASTS,
		CONFS(conf_pcie_downgraded),
	},
	[VRAMZ_FK_MEM_TEMP] = {
		.kind = VRAMZ_FK_MEM_TEMP, .name = "mem_temp",
		.hold_ms = 30000,
		.detect = detect_mem_temp,
		.summary = summary_mem_temp, .advice = advice_mem_temp,
		.span = KIND_LASTS,
		CONFS(conf_mem_temp),
	},
	[VRAMZ_FK_FRAGMENTATION] = {
		.kind = VRAMZ_FK_FRAGMENTATION, .name = "fragmentation",
		.hold_ms = 60000,
		.what = "fragmentation", NEEDS1(frag_ms),
		.detect = detect_fragmentation, .detect_agent = detect_agent_fragmentation,
		.summary = summary_fragmentation, .advice = advice_fragmentation,
		.agent_words = agent_words_fragmentation,
		.span = KIND_LASTS,
		CONFS(conf_fragmentation),
	},
	[VRAMZ_FK_GPU_LOST] = {
		.kind = VRAMZ_FK_GPU_LOST, .name = "gpu_lost",
		.detect = detect_gpu_lost,
		.summary = summary_gpu_lost, .advice = advice_gpu_lost,
		.span = KIND_EVENT, .at_once = 1,
	},
	[VRAMZ_FK_OOM] = {
		.kind = VRAMZ_FK_OOM, .name = "oom",
		.detect = detect_oom, .detect_agent = detect_agent_oom, .state = &oom_state,
		.summary = summary_oom, .advice = advice_oom, .agent_words = agent_words_oom,
		.span = KIND_EVENT, .at_once = 1,
		.series = {{"oom_ended_bytes",
			    "Memory a process held when it ended, or probably ended, out of memory "
			    "(while the oom finding is current).",
			    KIND_FIG_ENDED_BYTES},
			   {"oom_requested_bytes",
			    "What the last out-of-memory error of a PyTorch process asked for, "
			    "labelled with the line that ran out (while the oom finding is current).",
			    KIND_FIG_REQUESTED, .site_label = 1}},
		CONFS(conf_oom), .check = check_oom,
	},
	[VRAMZ_FK_OUTSIDE_ALLOCATOR] = {
		.kind = VRAMZ_FK_OUTSIDE_ALLOCATOR, .name = "outside_allocator",
		.hold_ms = 30000,
		.detect = detect_outside_allocator, .state = &agent_state,
		.summary = summary_outside_allocator, .advice = advice_outside_allocator,
		.span = KIND_EVENT,
	},
	/* VRAM health (health.c, docs/health.md): nothing to tune; each is
	 * handed out at once, as a lost GPU is */
	[VRAMZ_FK_VRAM_ERRORS] = {
		.kind = VRAMZ_FK_VRAM_ERRORS, .name = "vram_errors",
		.detect = detect_vram_errors, .state = &vram_errors_state,
		.summary = summary_vram_errors, .advice = advice_vram_errors,
		.span = KIND_EVENT, .at_once = 1,
	},
	[VRAMZ_FK_ROW_REMAP] = {
		.kind = VRAMZ_FK_ROW_REMAP, .name = "row_remap",
		.detect = detect_row_remap,
		.summary = summary_row_remap, .advice = advice_row_remap,
		/* the driver's state, not judged over a window: no hold */
		.hold_ms = 0,
		.span = KIND_LASTS, .at_once = 1,
	},
	[VRAMZ_FK_XID] = {
		.kind = VRAMZ_FK_XID, .name = "xid",
		.detect = detect_xid, .state = &xid_state,
		.summary = summary_xid, .advice = advice_xid,
		.span = KIND_EVENT, .at_once = 1,
	},
	[VRAMZ_FK_RISE] = {
		.kind = VRAMZ_FK_RISE, .name = "rise",
		.hold_ms = 30000,
		.detect = detect_rise,
		.summary = summary_rise, .advice = advice_rise,
		.span = KIND_LASTS,
		CONFS(conf_rise),
	},
	[VRAMZ_FK_COMMUNICATION_MEMORY] = {
		.kind = VRAMZ_FK_COMMUNICATION_MEMORY, .name = "communication_memory",
		.hold_ms = 30000,
		.detect = detect_communication_memory,
		.summary = summary_communication_memory, .advice = advice_communication_memory,
		.span = KIND_LASTS,
		.series = {{"communication_memory_bytes",
			    "Memory NCCL's communicators hold in a PyTorch process on the GPU "
			    "(while the communication_memory finding is current).",
			    KIND_FIG_BYTES}},
		CONFS(conf_communication_memory),
	},
};

_Static_assert(sizeof finding_kinds / sizeof finding_kinds[0] == VRAMZ_FK_COUNT,
	       "one row per kind: VRAMZ_FK_COUNT (include/vramz/diagnose.h) is one past the "
	       "last row of finding_kinds[]");

const struct finding_kind *kind_of(enum vramz_finding_kind k)
{
	return (unsigned)k < VRAMZ_FK_COUNT && finding_kinds[k].name ? &finding_kinds[k] : NULL;
}

int64_t kind_needs_ms(const struct finding_kind *k, const vramz_diag_config *c)
{
	int64_t ms = 0;
	for (unsigned i = 0; i < k->nneeds && i < KIND_NEEDS_MAX; i++)
		ms += *(const int64_t *)(const void *)((const char *)c + k->needs[i]);
	return ms;
}

int kind_figure(const vramz_finding *f, enum kind_figure g, double *num, uint64_t *count)
{
	switch (g) {
	case KIND_FIG_RATE:
		if (!(f->figures & VRAMZ_FG_RATE))
			return 0;
		*num = f->rate_bytes_per_s;
		return 1;
	case KIND_FIG_TTO:
		if (!(f->figures & VRAMZ_FG_TTO) || f->time_to_oom_s < 0)
			return 0;
		*num = f->time_to_oom_s;
		return 1;
	case KIND_FIG_BYTES:
	case KIND_FIG_ENDED_BYTES:
		if (!(f->figures & VRAMZ_FG_BYTES) || (g == KIND_FIG_ENDED_BYTES && !f->ended))
			return 0;
		*count = f->bytes;
		return 2;
	case KIND_FIG_REQUESTED:
		if (!(f->figures & VRAMZ_FG_OOM) || !f->requested_bytes)
			return 0;
		*count = f->requested_bytes;
		return 2;
	}
	return 0;
}

/* ---- every threshold, in option order ---- */

#define LEN(a) (sizeof a / sizeof a[0])

unsigned kind_conf_count(void)
{
	unsigned n = LEN(conf_engine) + LEN(conf_engine_late);
	for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++)
		n += finding_kinds[k].nconf;
	return n;
}

const struct kind_conf *kind_conf_at(unsigned i)
{
	if (i < LEN(conf_engine))
		return &conf_engine[i];
	i -= LEN(conf_engine);
	for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++) {
		if (i < finding_kinds[k].nconf)
			return &finding_kinds[k].conf[i];
		i -= finding_kinds[k].nconf;
	}
	return i < LEN(conf_engine_late) ? &conf_engine_late[i] : NULL;
}

/* ---- the public words: each row's, the agent's first ---- */

const char *vramz_finding_kind_str(enum vramz_finding_kind k)
{
	const struct finding_kind *fk = kind_of(k);
	return fk ? fk->name : "?";
}

const char *vramz_finding_summary(const vramz_finding *f, char *buf, size_t len)
{
	char s[160];
	diag_subject_str(f, s, sizeof s);
	const struct finding_kind *k = kind_of(f->kind);
	if (k && k->agent_words && k->agent_words(f, s, 0, buf, len))
		return buf;
	if (k)
		k->summary(f, s, buf, len);
	else
		snprintf(buf, len, "%s: unknown finding", s);
	return buf;
}

const char *vramz_finding_advice(const vramz_finding *f, char *buf, size_t len)
{
	const struct finding_kind *k = kind_of(f->kind);
	if (k && k->agent_words && k->agent_words(f, "", 1, buf, len))
		return buf;
	if (k)
		k->advice(f, "", buf, len);
	else
		snprintf(buf, len, "%s", "");
	return buf;
}
