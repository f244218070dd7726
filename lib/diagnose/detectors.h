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
 * its centre (lint.diaggraph, tools/diaggraph.sh, checks it has no
 * cycle).  Words are `void summary_KIND(f, subject, buf, len)` and
 * `advice_KIND(...)`; a row's thresholds are checked by
 * `check_KIND(cfg, buf, len)`, which names the first rule the config
 * breaks (NULL: none).  Not installed.
 */
#ifndef VRAMZ_DIAG_DETECTORS_H
#define VRAMZ_DIAG_DETECTORS_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"

struct proc_state;
struct gpu_state;

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
/* feed hooks of the throttle, pcie_downgraded and orphaned rows */
void throttle_feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t,
		       int64_t dt);
void pcie_feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t,
		   int64_t dt);
void orphaned_feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t,
		       int64_t dt);
int detect_leak(vramz_diag *d, struct emitter *em);
int detect_imbalance(vramz_diag *d, struct emitter *em);
int detect_stray_context(vramz_diag *d, struct emitter *em);
int detect_idle_holder(vramz_diag *d, struct emitter *em);
int detect_orphaned(vramz_diag *d, struct emitter *em);
int detect_throttle(vramz_diag *d, struct emitter *em);
int detect_pcie_downgraded(vramz_diag *d, struct emitter *em);
int detect_mem_temp(vramz_diag *d, struct emitter *em);
int detect_fragmentation(vramz_diag *d, struct emitter *em); /* the hint */
int detect_gpu_lost(vramz_diag *d, struct emitter *em);
const char *check_leak(const vramz_diag_config *c, char *buf, size_t len);
const char *check_imbalance(const vramz_diag_config *c, char *buf, size_t len);

/* ---- health.c: VRAM health (ECC errors, row remapping, Xid events) ---- */
/* the vram_errors row's feed hook (ECC, remap, the Xid figures) and the
 * xid row's after-feed hook (who was on a GPU when a new Xid came) */
void health_feed_gpu(vramz_diag *d, struct gpu_state *g, const vramz_gpu_sample *s, int64_t t,
		     int64_t dt);
void health_after_feed(vramz_diag *d);
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
int detect_oom(vramz_diag *d, struct emitter *em);
const char *check_oom(const vramz_diag_config *c, char *buf, size_t len);
/* the engine, while feeding: p was just found gone from a list that was
 * read; records an oom event when its end looks like an out-of-memory
 * crash (detect_oom emits the current ones) */
void oom_check(vramz_diag *d, struct proc_state *p);

/* ---- torch.c: what a process's PyTorch agent says ---- */
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
/* the engine, while feeding: the agent's figures of process p */
void torch_feed(struct proc_state *p, const vramz_proc_sample *s, int64_t t);
/* the oom fields of f (site, requested_bytes, holders) from the agent's
 * record of its last out-of-memory error */
struct agent_figures;
void torch_oom_figures(vramz_finding *f, const struct agent_figures *fig);
/* agentrec.c: what p's agent says, its latest OOM and its end - live from
 * its file (agent_read_end), in a log from the records kept of it
 * (diag_note_agent).  0, or VRAMZ_ENOTFOUND and the like: nothing known. */
int diag_agent_figures(const vramz_diag *d, const struct proc_state *p, struct agent_figures *fig);
void diag_agent_free(vramz_diag *d);
/* detect_leak, for a leak of process p: where in its Python code it
 * grows (live, agent recording allocation history), into f's site */
void torch_leak_site(vramz_diag *d, struct proc_state *p, vramz_finding *f);

/* the parts of the memory outside the allocator into f (VRAMZ_FG_PARTS),
 * when the agent measures them */
struct torch_state;
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
