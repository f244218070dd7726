/* SPDX-License-Identifier: Apache-2.0 */
/* detectors.h - what the rows of the kinds table (kinds.c) point at: the
 * emitter each detector is handed, and every detector, word and check
 * function a row names, listed by the file that defines it.
 *
 * A detector is `int detect_KIND(vramz_diag *d, struct emitter *em)`: it
 * reads the engine's state (state.h) and adds its findings through em,
 * returning 0 or VRAMZ_ENOMEM.  It never calls the engine: the engine
 * walks the table and hands each row's detector an emitter of that row's
 * kind, so lib/diagnose's graph is a star with kinds.c and the engine at
 * its centre (lint.callgraph, tools/callgraph.sh, checks it has no
 * cycle).  Words are `void summary_KIND(f, subject, buf, len)` and
 * `advice_KIND(...)`; a row's thresholds are checked by
 * `check_KIND(cfg, buf, len)`, which names the first rule the config
 * breaks (NULL: none).  A row's state slot is a `struct kind_state
 * KIND_state` (kinds.h) beside the structs it sizes, in the file of its
 * detector; a struct that other files read is here, under its file, with
 * the reader that finds it.  Not installed.
 */
#ifndef VRAMZ_DIAG_DETECTORS_H
#define VRAMZ_DIAG_DETECTORS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"
#include "kinds.h"
#include "leak.h"
#include "ring.h"
#include "state.h"

/* What a detector emits through.  The engine sets kind to the row's:
 * a detector emits its own kind only. */
struct emitter {
	/* adds a finding of em->kind with sev to the evaluation being built
	 * and returns it, zeroed but for kind, severity, gpu -1 and an
	 * unknown time to OOM, for the detector to fill (subject, figures);
	 * NULL when out of memory.  headline: the figure whose material
	 * change (a quarter) makes a new revision ("changed" in watch). */
	vramz_finding *(*add)(struct emitter *em, enum vramz_severity sev, double headline);
	enum vramz_finding_kind kind;
	void *sink;                    /* the engine's */
};

static inline vramz_finding *emit(struct emitter *em, enum vramz_severity sev, double headline)
{
	return em->add(em, sev, headline);
}

/* ---- detect.c: the detectors on NVML's figures ---- */
/* the state slots of the leak, imbalance (stray_context reads it too),
 * idle_holder and orphaned rows */
extern const struct kind_state leak_state, imbalance_state, idle_holder_state, orphaned_state;
/* what the leak row keeps of a process: the cached fits of its series
 * (oom.c reuses them at its end), its allocator's series, and whether
 * this evaluation found it leaking (rise.c leaves it be) */
struct leak_proc {
	struct leak_cache leak;        /* of NVML's used memory (proc_state.mem) */
	struct ring alloc;             /* its allocator's allocated bytes (a PyTorch
					  agent's), created when first told; w NULL none */
	struct leak_cache alloc_leak;
	int leaking;                   /* detect_leak raised a leak of it in this
					  evaluation */
};
static inline struct leak_proc *leak_of(const vramz_diag *d, const struct proc_state *p)
{
	return kind_proc_state(d, p, VRAMZ_FK_LEAK);
}
int detect_leak(vramz_diag *d, struct emitter *em);
int detect_imbalance(vramz_diag *d, struct emitter *em);
int detect_stray_context(vramz_diag *d, struct emitter *em);
int detect_idle_holder(vramz_diag *d, struct emitter *em);
int detect_orphaned(vramz_diag *d, struct emitter *em);
int detect_fragmentation(vramz_diag *d, struct emitter *em); /* the hint */
const char *check_leak(const vramz_diag_config *c, char *buf, size_t len);
const char *check_imbalance(const vramz_diag_config *c, char *buf, size_t len);

/* ---- gpuwatch.c: a GPU's own figures (lost, throttling, link, temperature) ---- */
/* the state slots of the throttle and pcie_downgraded rows */
extern const struct kind_state throttle_state, pcie_state;
int detect_gpu_lost(vramz_diag *d, struct emitter *em);
int detect_throttle(vramz_diag *d, struct emitter *em);
int detect_pcie_downgraded(vramz_diag *d, struct emitter *em);
int detect_mem_temp(vramz_diag *d, struct emitter *em);

/* ---- health.c: VRAM health (ECC errors, row remapping, Xid events) ---- */
/* the vram_errors row's slot (ECC, remap, the Xid figures; row_remap and
 * xid read it) and the xid row's (who was on a GPU when a new Xid came) */
extern const struct kind_state vram_errors_state, xid_state;
/* 1 with *xid the last Xid event GPU g had, 0 when it had none */
int health_last_xid(const vramz_diag *d, const struct gpu_state *g, unsigned *xid);
int detect_vram_errors(vramz_diag *d, struct emitter *em);
int detect_row_remap(vramz_diag *d, struct emitter *em);
int detect_xid(vramz_diag *d, struct emitter *em);
void summary_vram_errors(const vramz_finding *f, const char *s, char *buf, size_t len);
void advice_vram_errors(const vramz_finding *f, const char *s, char *buf, size_t len);
void summary_row_remap(const vramz_finding *f, const char *s, char *buf, size_t len);
void advice_row_remap(const vramz_finding *f, const char *s, char *buf, size_t len);
void summary_xid(const vramz_finding *f, const char *s, char *buf, size_t len);
void advice_xid(const vramz_finding *f, const char *s, char *buf, size_t len);

/* ---- oom.c: processes that probably ended out of memory ---- */
/* its slot: the oom events, and per process whether it ended out of
 * memory (its proc_gone hook records an event when a process's end
 * looks like an out-of-memory crash; detect_oom emits the current ones) */
extern const struct kind_state oom_state;
struct oom_proc {
	int oom_end;                   /* its end was recorded as out of memory */
};
static inline int oom_ended(const vramz_diag *d, const struct proc_state *p)
{
	return ((const struct oom_proc *)kind_proc_state(d, p, VRAMZ_FK_OOM))->oom_end;
}
int detect_oom(vramz_diag *d, struct emitter *em);
const char *check_oom(const vramz_diag_config *c, char *buf, size_t len);

/* ---- torch.c: what a process's PyTorch agent says ---- */
/* What a process's agent said, kept by torch_feed: the state of the
 * outside_allocator row (the row wholly the agent's), which the agent's
 * halves of fragmentation and oom, communication_memory and the leak's
 * site read too; the engine's block of the row holds a log's agent
 * records (agentrec.c). */
#define AGENT_SLOT VRAMZ_FK_OUTSIDE_ALLOCATOR
extern const struct kind_state agent_state;
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
static inline struct torch_state *torch_of(const vramz_diag *d, const struct proc_state *p)
{
	return kind_proc_state(d, p, AGENT_SLOT);
}
/* Its PyTorch agent speaks for it. */
static inline int torch_is_attached(const vramz_diag *d, const struct proc_state *p)
{
	return torch_of(d, p)->seen && torch_of(d, p)->on;
}
int detect_agent_fragmentation(vramz_diag *d, struct emitter *em);
int detect_agent_oom(vramz_diag *d, struct emitter *em);
int detect_outside_allocator(vramz_diag *d, struct emitter *em);
/* the words of a finding the agent raised (advice 0: the summary); 0 when
 * f is not one (then the row's summary and advice speak) */
int agent_words_fragmentation(const vramz_finding *f, const char *subject, int advice,
			      char *buf, size_t len);
int agent_words_oom(const vramz_finding *f, const char *subject, int advice, char *buf,
		    size_t len);
void summary_outside_allocator(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_outside_allocator(const vramz_finding *f, const char *subject, char *buf, size_t len);
/* the oom fields of f (site, requested_bytes, holders) from the agent's
 * record of its last out-of-memory error */
struct agent_figures;
void torch_oom_figures(vramz_finding *f, const struct agent_figures *fig);
/* agentrec.c: what p's agent says, its latest OOM and its end - live from
 * its file (agent_read_end), in a log from the records kept of it
 * (diag_note_agent).  0, or VRAMZ_ENOTFOUND and the like: nothing known. */
int diag_agent_figures(const vramz_diag *d, const struct proc_state *p, struct agent_figures *fig);
/* the agent slot's fini_diag: frees a log's agent records */
void agent_recs_fini(void *st);
/* detect_leak, for a leak of process p: where in its Python code it
 * grows (live, agent recording allocation history), into f's site */
void torch_leak_site(vramz_diag *d, struct proc_state *p, vramz_finding *f);

/* the parts of the memory outside the allocator into f (VRAMZ_FG_PARTS),
 * when the agent measures them */
void torch_parts(vramz_finding *f, const struct torch_state *ts);

/* ---- comm.c: NCCL's communicators (issue 37) ---- */
int detect_communication_memory(vramz_diag *d, struct emitter *em);
void summary_communication_memory(const vramz_finding *f, const char *subject, char *buf,
				  size_t len);
void advice_communication_memory(const vramz_finding *f, const char *subject, char *buf,
				 size_t len);

/* ---- rise.c: memory rising steeply now (not yet a leak) ---- */
int detect_rise(vramz_diag *d, struct emitter *em);
void summary_rise(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_rise(const vramz_finding *f, const char *subject, char *buf, size_t len);

/* ---- advice.c: the words of the kinds above ---- */
void summary_leak(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_leak(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_imbalance(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_imbalance(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_stray_context(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_stray_context(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_idle_holder(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_idle_holder(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_orphaned(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_orphaned(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_throttle(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_throttle(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_pcie_downgraded(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_pcie_downgraded(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_mem_temp(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_mem_temp(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_fragmentation(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_fragmentation(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_gpu_lost(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_gpu_lost(const vramz_finding *f, const char *subject, char *buf, size_t len);
void summary_oom(const vramz_finding *f, const char *subject, char *buf, size_t len);
void advice_oom(const vramz_finding *f, const char *subject, char *buf, size_t len);

#endif
