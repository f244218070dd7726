/* SPDX-License-Identifier: Apache-2.0 */
/* advice.c - findings into words.  The detectors produce numbers only;
 * this file turns those of the kinds detect.c, gpuwatch.c and oom.c
 * raise into a sentence of what was seen (summary_KIND) and a sentence of
 * what to do (advice_KIND), so the wording can change, or be translated,
 * without touching a statistic.  Each kind's row (kinds.c) names its two; what the
 * PyTorch agent raised is worded in torch.c, a new kind's in its own file.
 */
#include "detectors.h"
#include "words.h"
#include "xid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *vramz_oom_evidence_str(uint32_t bit)
{
	switch (bit) {
	case VRAMZ_OOM_LOW_FREE: return "low_free";
	case VRAMZ_OOM_LEAKING: return "leaking";
	case VRAMZ_OOM_STEEP_RISE: return "steep_rise";
	case VRAMZ_OOM_AGENT: return "agent";
	case VRAMZ_OOM_ENDED: return "ended";
	}
	return NULL;
}

const char *vramz_severity_str(enum vramz_severity s)
{
	switch (s) {
	case VRAMZ_SEV_INFO: return "info";
	case VRAMZ_SEV_WARNING: return "warning";
	case VRAMZ_SEV_CRITICAL: return "critical";
	}
	return "?";
}

int vramz_severity_parse(const char *s, enum vramz_severity *out)
{
	static const enum vramz_severity all[] = {VRAMZ_SEV_INFO, VRAMZ_SEV_WARNING,
						  VRAMZ_SEV_CRITICAL};
	for (size_t i = 0; s && i < 3; i++)
		if (!strcasecmp(s, vramz_severity_str(all[i]))) {
			*out = all[i];
			return 0;
		}
	return VRAMZ_EINVAL;
}

/* "pid N (cmd) probably ended out of memory on GPU G: 880 MiB free at its
 * last sample; it held 78.6 GiB, +2.0 GiB in its last 10 s" */
void summary_oom(const vramz_finding *f, const char *subject, char *buf, size_t len)
{
	char s[160], a[32], b[32], c[40];
	int k = f->pid ? snprintf(s, sizeof s, "pid %u", (unsigned)f->pid)
		       : snprintf(s, sizeof s, "a process");
	if (f->comm[0] && k > 0 && (size_t)k < sizeof s)
		snprintf(s + k, sizeof s - (size_t)k, " (%s)", f->comm);
	/* certain only from the agent's end record: torch.c's words */
	int n = snprintf(buf, len, "%s probably ended out of memory on GPU %d", s, f->gpu);
	if (n < 0 || (size_t)n >= len)
		return;
	if (f->figures & VRAMZ_FG_REF)
		n += snprintf(buf + n, len - (size_t)n, ": %s free at its last sample",
			      diag_bytes_str(a, sizeof a, (double)f->ref_bytes));
	if (n < 0 || (size_t)n >= len)
		return;
	double rise = f->value;
	snprintf(c, sizeof c, "%s%s", rise >= 0 ? "+" : "-", diag_bytes_str(b, sizeof b, fabs(rise)));
	n += snprintf(buf + n, len - (size_t)n, "%s it held %s, %s in its last %.0f s",
		      (f->figures & VRAMZ_FG_REF) ? ";" : ":",
		      diag_bytes_str(a, sizeof a, (double)f->bytes), c, f->ref_value);
	if (n < 0 || (size_t)n >= len)
		return;
	if (f->evidence & VRAMZ_OOM_LEAKING)
		n += snprintf(buf + n, len - (size_t)n, "; it was leaking %s/min",
			      diag_bytes_str(a, sizeof a, f->rate_bytes_per_s * 60));
	if (n >= 0 && (size_t)n < len && (f->evidence & VRAMZ_OOM_AGENT))
		snprintf(buf + n, len - (size_t)n, "; its allocator had counted out-of-memory errors");
}


void summary_leak(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32], c[32];
	const double mib = 1048576.0;
	snprintf(buf, len, "%s %s %.1f MiB/min (95%% CI %.1f-%.1f, tau %.2f) for %s, now %s%s%s",
		 s, f->ended ? "grew" : "grows", f->rate_bytes_per_s * 60 / mib,
		 f->rate_ci_low_bytes_per_s * 60 / mib, f->rate_ci_high_bytes_per_s * 60 / mib,
		 f->tau, diag_dur_str(a, sizeof a, (double)f->duration_ms),
		 diag_bytes_str(b, sizeof b, (double)f->bytes),
		 (f->figures & VRAMZ_FG_TTO) ? "; out of memory in about " :
		 f->ended ? " when it exited" : "",
		 (f->figures & VRAMZ_FG_TTO) ? diag_dur_str(c, sizeof c, f->time_to_oom_s * 1000) : "");
	size_t n = strlen(buf);
	if (f->figures & VRAMZ_FG_STEPS) /* a staircase (leak.c) */
		snprintf(buf + n, len > n ? len - n : 0, "; in %s steps every %s",
			 diag_bytes_str(a, sizeof a, f->ref_value),
			 diag_dur_str(b, sizeof b, f->value * 1000));
	n = strlen(buf);
	if (f->figures & VRAMZ_FG_ALLOCATOR) /* the series it was judged on */
		snprintf(buf + n, len > n ? len - n : 0, " (judged on PyTorch's allocated bytes)");
	n = strlen(buf);
	if (f->figures & VRAMZ_FG_SITE) /* its PyTorch agent's allocation stacks */
		snprintf(buf + n, len > n ? len - n : 0, "; %.0f %% of the growth is allocated at %s",
			 f->site_share * 100, f->site);
}

void advice_leak(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	if (f->figures & VRAMZ_FG_SITE)
		snprintf(buf, len, "Look at %s: what it allocates each step stays alive (a list "
				   "that keeps tensors, a loss kept without .item(), a growing cache).",
			 f->site);
	else
		snprintf(buf, len, "%s",
			 f->pid ? "Look for tensors kept alive across iterations (lists of losses "
				  "without .item(), growing caches, autograd graphs held by references)."
				: "Memory grows with no single process to blame: check short-lived "
				  "processes and other containers using this GPU.");
}

void summary_imbalance(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32];
	snprintf(buf, len, "%s: GPU %d holds %s, %.1fx the median %s of its %u GPUs", s, f->gpu,
		 diag_bytes_str(a, sizeof a, (double)f->bytes), f->share,
		 diag_bytes_str(b, sizeof b, (double)f->ref_bytes), f->count);
}

void advice_imbalance(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Check that each rank selects its own device (LOCAL_RANK) and that "
				 "work and data are split evenly; rank 0 often gathers extra state.");
}

void summary_stray_context(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32];
	snprintf(buf, len, "%s: %u process%s hold%s %s in small contexts on GPU %d besides their own GPU",
		 s, f->count, f->count == 1 ? "" : "es", f->count == 1 ? "s" : "",
		 diag_bytes_str(a, sizeof a, (double)f->bytes), f->gpu);
}

void advice_stray_context(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Call torch.cuda.set_device(LOCAL_RANK) before any CUDA work, or set "
				 "CUDA_VISIBLE_DEVICES per rank, so no rank creates a context on this GPU.");
}

void summary_idle_holder(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32];
	snprintf(buf, len, "%s %s %s at 0%% SM for %s", s, f->ended ? "held" : "holds",
		 diag_bytes_str(a, sizeof a, (double)f->bytes),
		 diag_dur_str(b, sizeof b, (double)f->duration_ms));
}

void advice_idle_holder(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "If it is a forgotten notebook or a finished job, stop it to free the "
				 "memory (vramz kill); otherwise ignore or raise idle-time.");
}

void summary_orphaned(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32], c[32];
	if (f->pid)
		snprintf(buf, len, "%s holds %s but is not visible from here (other namespace, or gone) for %s",
			 s, diag_bytes_str(a, sizeof a, (double)f->bytes),
			 diag_dur_str(b, sizeof b, (double)f->duration_ms));
	else
		snprintf(buf, len, "%s: %s of %s used is held by no listed process, for %s", s,
			 diag_bytes_str(a, sizeof a, (double)f->bytes),
			 diag_bytes_str(b, sizeof b, (double)f->ref_bytes),
			 diag_dur_str(c, sizeof c, (double)f->duration_ms));
}

void advice_orphaned(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
		 f->pid ? "Run vramz in the host PID namespace (or the same container) "
			  "to attribute this memory."
			: "Look for zombie or defunct processes, MPS servers or other "
			  "namespaces; if nothing holds it, a GPU reset frees it.");
}

void summary_throttle(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32];
	snprintf(buf, len, "%s: clocks held down %.0f%% of busy time (thermal %.0f%%, power %.0f%%) over %s busy",
		 s, f->share * 100, f->value * 100, f->ref_value * 100,
		 diag_dur_str(a, sizeof a, (double)f->duration_ms));
}

void advice_throttle(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Check cooling, airflow and power limits (nvidia-smi -q -d PERFORMANCE); "
				 "sustained throttling slows every job on this GPU.");
}

void summary_pcie_downgraded(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s: PCIe link at gen %.0f x%u while busy (max gen %.0f x%u), %.0f%% of busy time",
		 s, f->value, f->count, f->ref_value, f->ref_count, f->share * 100);
}

void advice_pcie_downgraded(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Reseat the card or check the slot, riser and BIOS PCIe settings; a "
				 "narrower or older link slows host-device transfers.");
}

void summary_mem_temp(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s: memory at %.0f C, limit %.0f C", s, f->value, f->ref_value);
}

void advice_mem_temp(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Improve cooling before the memory throttles or the GPU shuts down.");
}

/* the hint from NVML's figures; the agent's verdict is torch.c's */
void summary_fragmentation(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32], b[32], e[32];
	snprintf(buf, len, "%s still holds %s (peak %s) while its SM use fell from %.0f%% to %.0f%% over the last %s",
		 s, diag_bytes_str(a, sizeof a, (double)f->bytes),
		 diag_bytes_str(b, sizeof b, (double)f->ref_bytes), f->ref_value, f->value,
		 diag_dur_str(e, sizeof e, (double)f->duration_ms));
}

void advice_fragmentation(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Hint only: the allocator may be caching freed blocks; "
				 "torch.cuda.empty_cache() or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
				 "may return them.");
}

void summary_gpu_lost(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	char a[32];
	if (f->figures & VRAMZ_FG_VALUE)
		snprintf(buf, len, "%s fell off the bus %s ago; the last Xid before: %.0f, %s", s,
			 diag_dur_str(a, sizeof a, (double)f->duration_ms), f->value,
			 xid_meaning((unsigned)f->value));
	else
		snprintf(buf, len, "%s fell off the bus %s ago", s,
			 diag_dur_str(a, sizeof a, (double)f->duration_ms));
}

void advice_gpu_lost(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	if (f->figures & VRAMZ_FG_VALUE)
		snprintf(buf, len, "%s", "The GPU needs a reset or a reboot; dmesg has the driver's "
					 "lines around that Xid.");
	else
		snprintf(buf, len, "%s", "Check dmesg for Xid errors; the GPU needs a reset or a reboot.");
}

void advice_oom(const vramz_finding *f, const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s", "Check the job's log for \"CUDA out of memory\"; if it leaked, fix the "
				 "leak, else lower the batch size or use a GPU with more free memory "
				 "(vramz pick, vramz fit).");
}
