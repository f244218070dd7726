/* SPDX-License-Identifier: Apache-2.0 */
/* torch.c - findings from inside a PyTorch process: what its vramz.torch
 * agent (python/vramz/torch, joined into the process rows by lib/agent.c)
 * says that NVML cannot.
 *
 *  - fragmentation: free pieces of split blocks are a large share of what
 *    the caching allocator reserved while its allocation retries climb
 *    (each retry frees the whole cache and stalls the step); replaces the
 *    outside-only hint (detect.c) for an attached process;
 *  - outside_allocator: memory the process holds outside the allocator
 *    (CUDA context, cuBLAS / cuDNN workspaces, NCCL buffers) large in bytes
 *    and share;
 *  - oom: the allocator's own out-of-memory count rose while the process
 *    lives on: "ran out of memory 3 times and carried on", a warning
 *    with the line of the last one (read from the agent's oom record);
 *    its death of one is oom.c's, from the end record;
 *  - leak sites: for a leak of an attached process that records allocation
 *    stacks, the engine (live only) asks the agent for its live allocations
 *    by Python line and names the line that grew most, with its share of
 *    the growth.
 *
 * The detectors (numbers) are the agent's half of three rows of the kinds
 * table (kinds.c): detect_agent of fragmentation and oom, detect of
 * outside_allocator; their words are the agent_words and the summary and
 * advice of those rows, at the end of this file.  What the agent said is
 * kept per process by torch_feed in struct torch_state (detectors.h),
 * the state slot of outside_allocator (agent_state below).  The thresholds are
 * docs/diagnoses.md's.
 */
#include "state.h"
#include "detectors.h"
#include "agent.h"
#include "words.h"

#include <stdio.h>
#include <string.h>

#define FRAG_MIN_SHARE 0.25             /* inactive split / reserved */
#define FRAG_MIN_BYTES (1ull << 30)     /* and at least this much split */
#define FRAG_RETRY_MS (10 * 60 * 1000)  /* retries rose within this */
#define FRAG_CLIMB_MS (60 * 1000)       /* "still climbing": rose within this */
#define OUTSIDE_MIN_BYTES (2ull << 30)  /* outside the allocator, at least */
#define OUTSIDE_MIN_SHARE 0.30          /* and this share of the process's memory */
#define SITES_EVERY_MS (30 * 1000)      /* ask the agent again after this */
#define SITES_FIRST_MS (5 * 1000)       /* ... or this, while no answer had growth */
#define OOM_READ_MS (5 * 1000)          /* read an OOM's record at most this often */

static int torch_feed(vramz_diag *d, struct proc_state *p, void *st, const vramz_proc_sample *s,
		      int64_t t)
{
	struct torch_state *ts = st;
	ts->on = (s->valid & VRAMZ_P_TORCH) != 0;
	if (!ts->on)
		return 0;
	ts->uid = s->uid;
	ts->history = (s->torch_valid & VRAMZ_T_HISTORY) != 0;
	ts->reserved = (s->torch_valid & VRAMZ_T_RESERVED) ? s->torch_reserved_bytes : 0;
	ts->inactive = (s->torch_valid & VRAMZ_T_INACTIVE_SPLIT) ? s->torch_inactive_split_bytes : 0;
	ts->allocated = (s->torch_valid & VRAMZ_T_ALLOCATED) ? s->torch_allocated_bytes : 0;
	ts->outside_ok = (s->valid & VRAMZ_P_OUTSIDE) != 0;
	ts->outside = s->outside_allocator_bytes;
	ts->parts_ok = ts->outside_ok && (s->valid & VRAMZ_P_OUTSIDE_PARTS);
	ts->part_context = ts->parts_ok ? s->outside_context_bytes : 0;
	ts->part_libraries = ts->parts_ok ? s->outside_libraries_bytes : 0;
	ts->part_nccl = ts->parts_ok ? s->outside_nccl_bytes : 0;
	ts->part_other = ts->parts_ok ? s->outside_other_bytes : 0;
	ts->nccl_comms = ts->parts_ok ? s->outside_nccl_comms : 0;
	if (s->torch_valid & VRAMZ_T_RETRIES) {
		if (!ts->seen || s->torch_alloc_retries < ts->retries_base)
			ts->retries_base = s->torch_alloc_retries; /* first sight, or a restart */
		else if (s->torch_alloc_retries > ts->retries)
			ts->retries_rose_ms = t;
		ts->retries = s->torch_alloc_retries;
	}
	if (s->torch_valid & VRAMZ_T_OOMS) {
		if (!ts->seen || s->torch_ooms < ts->ooms_base)
			ts->ooms_base = s->torch_ooms;
		ts->ooms = s->torch_ooms;
		/* the process's own count, which oom.c weighs at its end */
		p->agent_ooms = ts->ooms;
		p->agent_ooms_first = ts->ooms_base;
	}
	if (!ts->seen)
		ts->first_ms = t;
	ts->seen = 1;
	return 0;
}

/* the engine's block holds a log's agent records (agentrec.c) */
const struct kind_state agent_state = {
	.proc_size = sizeof(struct torch_state), .diag_size = sizeof(struct agent_recs *),
	.feed_proc = torch_feed,
	.fini_diag = agent_recs_fini,
};

/* Raised when free pieces of split blocks are a large share of the
 * reserved memory while retries rose lately; once raised, it holds while
 * the retries keep climbing (FRAG_CLIMB_MS), whatever the share does from
 * one second to the next: a pool under a cap that frees its cache and
 * retries is fragmenting even at the moments its split share dips. */
static int emit_fragmentation(const vramz_diag *d, struct emitter *em, struct proc_state *p)
{
	struct torch_state *ts = torch_of(d, p);
	int climbing = ts->retries > ts->retries_base && p->last_ms - ts->retries_rose_ms <= FRAG_CLIMB_MS;
	int raise = ts->reserved && ts->inactive >= FRAG_MIN_BYTES &&
		    (double)ts->inactive >= FRAG_MIN_SHARE * (double)ts->reserved &&
		    ts->retries > ts->retries_base && p->last_ms - ts->retries_rose_ms <= FRAG_RETRY_MS;
	ts->frag_on = raise || (ts->frag_on && climbing && ts->reserved);
	if (!ts->frag_on)
		return 0;
	vramz_finding *f = emit(em, VRAMZ_SEV_WARNING, (double)ts->inactive);
	if (!f)
		return VRAMZ_ENOMEM;
	finding_subject_proc(f, p);
	f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_SHARE | VRAMZ_FG_COUNT;
	f->bytes = ts->inactive;
	f->ref_bytes = ts->reserved;
	f->share = (double)ts->inactive / (double)ts->reserved;
	f->count = (unsigned)(ts->retries - ts->retries_base);
	f->ref_count = (unsigned)ts->retries;
	return 0;
}

static int emit_outside(const vramz_diag *d, struct emitter *em, const struct proc_state *p)
{
	const struct torch_state *ts = torch_of(d, p);
	if (!ts->outside_ok || ts->outside < OUTSIDE_MIN_BYTES || !p->last_bytes ||
	    (double)ts->outside < OUTSIDE_MIN_SHARE * (double)p->last_bytes)
		return 0;
	vramz_finding *f = emit(em, VRAMZ_SEV_INFO, (double)ts->outside);
	if (!f)
		return VRAMZ_ENOMEM;
	finding_subject_proc(f, p);
	f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_SHARE;
	f->bytes = ts->outside;
	f->ref_bytes = p->last_bytes;
	f->share = (double)ts->outside / (double)p->last_bytes;
	torch_parts(f, ts);
	return 0;
}

void torch_parts(vramz_finding *f, const struct torch_state *ts)
{
	if (!ts->parts_ok)
		return;
	f->figures |= VRAMZ_FG_PARTS;
	f->outside_context_bytes = ts->part_context;
	f->outside_libraries_bytes = ts->part_libraries;
	f->outside_nccl_bytes = ts->part_nccl;
	f->outside_other_bytes = ts->part_other;
	f->nccl_comms = ts->nccl_comms;
}

/* The oom fields of f from the agent's record of its last out-of-memory
 * error: the line that ran out, the bytes asked, the limit, the GPU's free
 * memory then and what held the allocator's memory. */
void torch_oom_figures(vramz_finding *f, const struct agent_figures *fig)
{
	const struct agent_frame *at = agent_oom_line(fig);
	if (at) {
		agent_site_text(f->site, sizeof f->site, at->file, at->line, at->func);
		f->site_share = 0;
		f->figures |= VRAMZ_FG_SITE;
	}
	if (!fig->oom_valid)
		return;
	f->figures |= VRAMZ_FG_OOM;
	f->requested_bytes = fig->oom_requested_bytes;
	f->limit_bytes = fig->oom_limit_bytes;
	if (fig->oom_has_free) {
		f->figures |= VRAMZ_FG_REF;
		f->ref_bytes = fig->oom_free_bytes; /* the GPU's free memory at the error */
	}
	uint64_t held = fig->oom_allocated_bytes ? fig->oom_allocated_bytes : fig->oom_reserved_bytes;
	f->nholders = 0;
	for (unsigned i = 0; i < fig->nholders && i < VRAMZ_OOM_HOLDERS; i++) {
		const struct agent_holder *h = &fig->holder[i];
		if ((fig->oom_cuda >= 0 && h->cuda >= 0 && h->cuda != fig->oom_cuda) ||
		    !h->at.line || !h->at.file[0] || !strcmp(h->at.file, "?"))
			continue; /* another device's, or a site without a line */
		struct vramz_oom_holder *o = &f->holders[f->nholders++];
		agent_site_text(o->site, sizeof o->site, h->at.file, h->at.line, h->at.func);
		o->bytes = h->bytes;
		o->share = held ? (double)h->bytes / (double)held : 0;
		if (o->share > 1)
			o->share = 1;
	}
}

/* The agent's record of its latest OOM, read when the count rose (live:
 * at most every OOM_READ_MS, however many a batch-size probe raises; a
 * log's records are in memory, looked up at every evaluation, so the
 * logger's own pace of writing them cannot hide one). */
static void read_oom_record(const vramz_diag *d, struct proc_state *p)
{
	struct torch_state *ts = torch_of(d, p);
	if (d->live && (ts->ooms <= ts->oom_read_ooms ||
			(ts->oom_read_ms && p->last_ms - ts->oom_read_ms < OOM_READ_MS)))
		return;
	ts->oom_read_ms = p->last_ms;
	ts->oom_read_ooms = ts->ooms;
	struct agent_figures fig;
	if (diag_agent_figures(d, p, &fig) || !fig.oom_valid)
		return;
	memset(&ts->oom_rec, 0, sizeof ts->oom_rec);
	torch_oom_figures(&ts->oom_rec, &fig);
	ts->oom_rec.figures &= ~VRAMZ_FG_REF; /* the count's finding says what is free now */
}

/* A live process whose allocator counted out-of-memory errors it went on
 * from: a warning, not a death (oom.c tells a death by the end record). */
static int emit_oom(const vramz_diag *d, struct emitter *em, struct proc_state *p)
{
	struct torch_state *ts = torch_of(d, p);
	if (ts->ooms <= ts->ooms_base)
		return 0;
	read_oom_record(d, p);
	vramz_finding *f = emit(em, VRAMZ_SEV_WARNING, (double)ts->ooms);
	if (!f)
		return VRAMZ_ENOMEM;
	finding_subject_proc(f, p);
	const vramz_finding *r = &ts->oom_rec;
	if (r->figures & (VRAMZ_FG_SITE | VRAMZ_FG_OOM)) {
		memcpy(f->site, r->site, sizeof f->site);
		f->requested_bytes = r->requested_bytes;
		f->limit_bytes = r->limit_bytes;
		f->nholders = r->nholders;
		memcpy(f->holders, r->holders, sizeof f->holders);
		f->figures |= r->figures & (VRAMZ_FG_SITE | VRAMZ_FG_OOM);
	}
	f->figures |= VRAMZ_FG_COUNT | VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_EVIDENCE;
	f->evidence = VRAMZ_OOM_AGENT;
	f->count = (unsigned)(ts->ooms - ts->ooms_base);
	f->bytes = p->last_bytes;     /* what the process holds (NVML) */
	f->ref_bytes = ts->reserved;  /* of which the allocator's */
	const struct gpu_state *g = p->gpu < d->ngpus ? &d->gpus[p->gpu] : NULL;
	if (!p->ended && g && g->seen && (g->last.valid & VRAMZ_F_MEM)) { /* free now */
		f->figures |= VRAMZ_FG_VALUE;
		f->value = (double)g->last.mem_free_bytes;
		f->ref_value = (double)g->last.mem_total_bytes;
	}
	return 0;
}

/* Leak sites: asks, reads, and copies the best site into the finding. */
void torch_leak_site(vramz_diag *d, struct proc_state *p, vramz_finding *f)
{
	struct torch_state *ts = torch_of(d, p);
	if (!d->live || !ts->on || !ts->history)
		return;
	int64_t now = p->last_ms;
	char dir[256];
	if (agent_find_dir(p->pid, p->start_ticks, ts->uid, dir, sizeof dir))
		return;
	struct agent_sites s;
	if (ts->sites_asked_ms && agent_read_sites(dir, p->pid, p->start_ticks, ts->uid, &s) == 0 &&
	    s.since_ms && s.has_growth && s.growth_bytes && s.n && s.time_ms >= ts->sites_asked_ms - 1000) {
		const struct agent_site *b = &s.site[0];
		agent_site_text(ts->site, sizeof ts->site, b->file, b->line, b->func);
		ts->site_share = (double)b->growth_bytes / (double)s.growth_bytes;
	}
	if (!ts->sites_asked_ms ||
	    now - ts->sites_asked_ms >= (ts->site[0] ? SITES_EVERY_MS : SITES_FIRST_MS)) {
		if (agent_request_sites(dir, p->pid, p->start_ticks, ts->uid) == 0)
			ts->sites_asked_ms = now;
	}
	if (ts->site[0]) {
		memcpy(f->site, ts->site, sizeof f->site);
		f->site_share = ts->site_share;
		f->figures |= VRAMZ_FG_SITE;
	}
}

/* The processes whose agent speaks: in use, attached, alive - or, in a
 * log (keep_ended), ended and judged as they were at their end, unless
 * the end was out of memory (oom.c's finding, which counts the OOMs it
 * caught before as evidence: no "carried on" beside a death). */
static int agent_speaks(const vramz_diag *d, const struct proc_state *p)
{
	return p->used && torch_of(d, p)->on && (!p->ended || (d->cfg.keep_ended && !oom_ended(d, p)));
}

int detect_agent_fragmentation(vramz_diag *d, struct emitter *em)
{
	int rc = 0;
	for (unsigned i = 0; i < d->nprocs && !rc; i++)
		if (agent_speaks(d, &d->procs[i]))
			rc = emit_fragmentation(d, em, &d->procs[i]);
	return rc;
}

int detect_outside_allocator(vramz_diag *d, struct emitter *em)
{
	int rc = 0;
	for (unsigned i = 0; i < d->nprocs && !rc; i++)
		if (agent_speaks(d, &d->procs[i]))
			rc = emit_outside(d, em, &d->procs[i]);
	return rc;
}

int detect_agent_oom(vramz_diag *d, struct emitter *em)
{
	int rc = 0;
	for (unsigned i = 0; i < d->nprocs && !rc; i++)
		if (agent_speaks(d, &d->procs[i]))
			rc = emit_oom(d, em, &d->procs[i]);
	return rc;
}

static const char *gib(char *b, size_t n, double v)
{
	snprintf(b, n, "%.1f GiB", v / 1073741824.0);
	return b;
}

int agent_words_fragmentation(const vramz_finding *f, const char *subject, int advice,
			      char *buf, size_t len)
{
	char a[32], b[32];
	if (!(f->figures & VRAMZ_FG_COUNT))
		return 0; /* the hint from NVML's figures: advice.c's */
	if (advice)
		snprintf(buf, len, "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so "
				   "segments grow instead of splitting, and use fewer distinct "
				   "tensor sizes (pad or bucket shapes).");
	else
		snprintf(buf, len, "%s: %s of the allocator's %s is free pieces of split blocks "
				   "(%.0f%%) and allocations had to free the cache and retry %u "
				   "times (%u in all)",
			 subject, gib(a, sizeof a, (double)f->bytes),
			 gib(b, sizeof b, (double)f->ref_bytes), f->share * 100, f->count,
			 f->ref_count);
	return 1;
}

void summary_outside_allocator(const vramz_finding *f, const char *subject, char *buf, size_t len)
{
	char a[32], b[32], parts[256];
	int n = snprintf(buf, len, "%s holds %s outside PyTorch's allocator, %.0f%% of its %s", subject,
			 gib(a, sizeof a, (double)f->bytes), f->share * 100,
			 gib(b, sizeof b, (double)f->ref_bytes));
	if (n >= 0 && (size_t)n < len && outside_parts_words(f, parts, sizeof parts))
		snprintf(buf + n, len - (size_t)n, ": %s", parts);
}

void advice_outside_allocator(const vramz_finding *f, const char *subject, char *buf, size_t len)
{
	(void)subject;
	switch (outside_largest(f)) {
	case OUTSIDE_NCCL:
		snprintf(buf, len, "Most of it is NCCL's communicators, one per process group and "
				   "GPU: create fewer groups, or create them lazily (no device_id at "
				   "init_process_group: a group's communicator is then made at its "
				   "first collective, never for an unused group), destroy groups "
				   "when done, try NCCL_NVLS_ENABLE=0 and a smaller NCCL_BUFFSIZE.");
		break;
	case OUTSIDE_CONTEXT:
		snprintf(buf, len, "Most of it is the CUDA context, paid once per process and GPU: "
				   "run fewer processes per GPU, and keep each process off GPUs it "
				   "does not use (CUDA_VISIBLE_DEVICES).");
		break;
	case OUTSIDE_LIBRARIES:
		snprintf(buf, len, "Most of it is CUDA libraries' kernels and handles (cuDNN, "
				   "cuFFT, ...): keep CUDA_MODULE_LOADING=LAZY (the default), and "
				   "CUBLAS_WORKSPACE_CONFIG bounds cuBLAS's workspaces.");
		break;
	case OUTSIDE_OTHER:
		snprintf(buf, len, "Most of it is none of the parts the agent measured (context, "
				   "libraries, NCCL): another library's own pool (CuPy, XLA, "
				   "TensorRT), or NCCL buffers made outside the wrapped calls; "
				   "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True helps only where "
				   "PyTorch's own allocator is the cause.");
		break;
	default:
		snprintf(buf, len, "This memory is the CUDA context, cuBLAS/cuDNN workspaces and "
				   "NCCL buffers: fewer communicators or smaller NCCL buffers "
				   "(NCCL_BUFFSIZE), CUBLAS_WORKSPACE_CONFIG, or fewer processes "
				   "per GPU return it.");
	}
}

/* " at model.py:88 in forward() asking 20.0 GiB with 9.8 GiB free (its
 * allocator's limit 35.6 GiB); 62 % of its memory was allocated at
 * data.py:40 in load()" - what the agent's oom record says */
static void oom_where(const vramz_finding *f, int with_free, char *buf, size_t len)
{
	char a[32], b[32];
	int n = 0;
	buf[0] = 0;
	if (f->figures & VRAMZ_FG_SITE)
		n += snprintf(buf + n, len - (size_t)n, " at %s", f->site);
	if (n >= 0 && (size_t)n < len && (f->figures & VRAMZ_FG_OOM) && f->requested_bytes)
		n += snprintf(buf + n, len - (size_t)n, " asking %s",
			      diag_bytes_str(a, sizeof a, (double)f->requested_bytes));
	if (n >= 0 && (size_t)n < len && with_free && (f->figures & VRAMZ_FG_REF))
		n += snprintf(buf + n, len - (size_t)n, " with %s free",
			      diag_bytes_str(a, sizeof a, (double)f->ref_bytes));
	if (n >= 0 && (size_t)n < len && (f->figures & VRAMZ_FG_OOM) && f->limit_bytes)
		n += snprintf(buf + n, len - (size_t)n, " (its allocator's limit %s)",
			      diag_bytes_str(b, sizeof b, (double)f->limit_bytes));
	if (n >= 0 && (size_t)n < len && (f->figures & VRAMZ_FG_OOM) && f->nholders)
		snprintf(buf + n, len - (size_t)n, "; %.0f %% of its memory was allocated at %s",
			 f->holders[0].share * 100, f->holders[0].site);
}

int agent_words_oom(const vramz_finding *f, const char *subject, int advice, char *buf,
		    size_t len)
{
	char a[32], b[32], c[32], w[512];
	int died = (f->evidence & VRAMZ_OOM_ENDED) != 0;
	/* a live process's count rose (ours, with its count), or its agent
	 * recorded its death; an end NVML's figures suggest is advice.c's */
	if (!died && (!(f->evidence & VRAMZ_OOM_AGENT) || !(f->figures & VRAMZ_FG_COUNT)))
		return 0;
	if (advice) {
		snprintf(buf, len, "%sLower the batch size or sequence length, free cached blocks "
				   "(expandable_segments:True), or move the job to a GPU with "
				   "more free memory.",
			 (f->figures & VRAMZ_FG_SITE) ? "Look at the line that ran out and what "
							 "held the memory. " : "");
		return 1;
	}
	oom_where(f, died, w, sizeof w);
	if (died)
		snprintf(buf, len, "%s died out of memory%s%s", subject, w,
			 (f->figures & VRAMZ_FG_SITE) ? "" : " (torch.OutOfMemoryError)");
	else if (f->figures & VRAMZ_FG_VALUE)
		snprintf(buf, len, "%s ran out of memory %u time%s and carried on%s%s; it holds %s "
				   "(%s reserved by the allocator), the GPU has %s free",
			 subject, f->count, f->count == 1 ? "" : "s", w[0] ? "; the last" : "", w,
			 gib(a, sizeof a, (double)f->bytes), gib(b, sizeof b, (double)f->ref_bytes),
			 gib(c, sizeof c, f->value));
	else /* an ended process of a log: what it held at its end */
		snprintf(buf, len, "%s ran out of memory %u time%s and carried on%s%s; it %s %s "
				   "(%s reserved by the allocator)",
			 subject, f->count, f->count == 1 ? "" : "s", w[0] ? "; the last" : "", w,
			 f->ended ? "held" : "holds", gib(a, sizeof a, (double)f->bytes),
			 gib(b, sizeof b, (double)f->ref_bytes));
	return 1;
}
