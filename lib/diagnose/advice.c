/* SPDX-License-Identifier: Apache-2.0 */
/* advice.c - findings into words.  The detectors produce numbers only;
 * this file is the one place that turns them into a sentence of what was
 * seen (summary) and a sentence of what to do (advice), so the wording can
 * change, or be translated, without touching a statistic.
 */
#include "diag_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[VRAMZ_FK_COUNT] = {
	[VRAMZ_FK_LEAK] = "leak",
	[VRAMZ_FK_IMBALANCE] = "imbalance",
	[VRAMZ_FK_STRAY_CONTEXT] = "stray_context",
	[VRAMZ_FK_IDLE_HOLDER] = "idle_holder",
	[VRAMZ_FK_ORPHANED] = "orphaned",
	[VRAMZ_FK_THROTTLE] = "throttle",
	[VRAMZ_FK_PCIE_DOWNGRADED] = "pcie_downgraded",
	[VRAMZ_FK_MEM_TEMP] = "mem_temp",
	[VRAMZ_FK_FRAGMENTATION] = "fragmentation",
	[VRAMZ_FK_GPU_LOST] = "gpu_lost",
	[VRAMZ_FK_OOM] = "oom",
	[VRAMZ_FK_OUTSIDE_ALLOCATOR] = "outside_allocator",
};

const char *vramz_oom_evidence_str(uint32_t bit)
{
	switch (bit) {
	case VRAMZ_OOM_LOW_FREE: return "low_free";
	case VRAMZ_OOM_LEAKING: return "leaking";
	case VRAMZ_OOM_STEEP_RISE: return "steep_rise";
	case VRAMZ_OOM_AGENT: return "agent";
	}
	return NULL;
}

const char *vramz_finding_kind_str(enum vramz_finding_kind k)
{
	return (unsigned)k < VRAMZ_FK_COUNT && kind_names[k] ? kind_names[k] : "?";
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

const char *diag_bytes_str(char *b, size_t n, double v)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (fabs(v) >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(b, n, i <= 2 ? "%.0f %s" : "%.1f %s", v, u[i]);
	return b;
}

static const char *dur_str(char *b, size_t n, double ms)
{
	double s = ms / 1000;
	if (s < 90)
		snprintf(b, n, "%.0fs", s);
	else if (s < 5400)
		snprintf(b, n, "%.0fm", s / 60);
	else if (s < 172800)
		snprintf(b, n, "%.0fh%02.0fm", floor(s / 3600), fmod(floor(s / 60), 60));
	else
		snprintf(b, n, "%.0fd%02.0fh", floor(s / 86400), fmod(floor(s / 3600), 24));
	return b;
}

/* "pid 4242 (python) on GPU 0", "GPU 3", "job torchrun:abc" */
static const char *subject_str(const vramz_finding *f, char *b, size_t n)
{
	if (f->pid) {
		int k = snprintf(b, n, "pid %u", (unsigned)f->pid);
		if (f->comm[0] && k > 0 && (size_t)k < n)
			k += snprintf(b + k, n - (size_t)k, " (%s)", f->comm);
		if (f->gpu >= 0 && k > 0 && (size_t)k < n)
			snprintf(b + k, n - (size_t)k, " on GPU %d", f->gpu);
	} else if (f->job[0]) {
		snprintf(b, n, "job %s", f->job);
	} else if (f->gpu >= 0) {
		snprintf(b, n, "GPU %d", f->gpu);
	} else {
		snprintf(b, n, "the machine");
	}
	return b;
}

/* "pid N (cmd) probably ended out of memory on GPU G: 880 MiB free at its
 * last sample; it held 78.6 GiB, +2.0 GiB in its last 10 s" */
static void oom_summary(const vramz_finding *f, char *buf, size_t len)
{
	char s[160], a[32], b[32], c[40];
	int k = f->pid ? snprintf(s, sizeof s, "pid %u", (unsigned)f->pid)
		       : snprintf(s, sizeof s, "a process");
	if (f->comm[0] && k > 0 && (size_t)k < sizeof s)
		snprintf(s + k, sizeof s - (size_t)k, " (%s)", f->comm);
	int n = snprintf(buf, len, "%s %s out of memory on GPU %d", s,
			 (f->evidence & VRAMZ_OOM_AGENT) ? "ended" : "probably ended", f->gpu);
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
		snprintf(buf + n, len - (size_t)n, "; its allocator counted the error");
}

const char *vramz_finding_summary(const vramz_finding *f, char *buf, size_t len)
{
	char s[160], a[32], b[32], c[32], e[32];
	subject_str(f, s, sizeof s);
	const double mib = 1048576.0;
	if (torch_words(f, s, 0, buf, len))
		return buf;
	switch (f->kind) {
	case VRAMZ_FK_LEAK:
		snprintf(buf, len, "%s %s %.1f MiB/min (95%% CI %.1f-%.1f, tau %.2f) for %s, now %s%s%s",
			 s, f->ended ? "grew" : "grows", f->rate_bytes_per_s * 60 / mib,
			 f->rate_ci_low_bytes_per_s * 60 / mib, f->rate_ci_high_bytes_per_s * 60 / mib,
			 f->tau, dur_str(a, sizeof a, (double)f->duration_ms),
			 diag_bytes_str(b, sizeof b, (double)f->bytes),
			 (f->figures & VRAMZ_FG_TTO) ? "; out of memory in about " :
			 f->ended ? " when it exited" : "",
			 (f->figures & VRAMZ_FG_TTO) ? dur_str(c, sizeof c, f->time_to_oom_s * 1000) : "");
		if (f->figures & VRAMZ_FG_SITE) { /* its PyTorch agent's allocation stacks */
			size_t n = strlen(buf);
			snprintf(buf + n, len > n ? len - n : 0, "; %.0f %% of the growth is allocated at %s",
				 f->site_share * 100, f->site);
		}
		break;
	case VRAMZ_FK_IMBALANCE:
		snprintf(buf, len, "%s: GPU %d holds %s, %.1fx the median %s of its %u GPUs", s,
			 f->gpu, diag_bytes_str(a, sizeof a, (double)f->bytes), f->share,
			 diag_bytes_str(b, sizeof b, (double)f->ref_bytes), f->count);
		break;
	case VRAMZ_FK_STRAY_CONTEXT:
		snprintf(buf, len, "%s: %u process%s hold%s %s in small contexts on GPU %d besides their own GPU",
			 s, f->count, f->count == 1 ? "" : "es", f->count == 1 ? "s" : "",
			 diag_bytes_str(a, sizeof a, (double)f->bytes), f->gpu);
		break;
	case VRAMZ_FK_IDLE_HOLDER:
		snprintf(buf, len, "%s %s %s at 0%% SM for %s", s, f->ended ? "held" : "holds",
			 diag_bytes_str(a, sizeof a, (double)f->bytes),
			 dur_str(b, sizeof b, (double)f->duration_ms));
		break;
	case VRAMZ_FK_ORPHANED:
		if (f->pid)
			snprintf(buf, len, "%s holds %s but is not visible from here (other namespace, or gone) for %s",
				 s, diag_bytes_str(a, sizeof a, (double)f->bytes),
				 dur_str(b, sizeof b, (double)f->duration_ms));
		else
			snprintf(buf, len, "%s: %s of %s used is held by no listed process, for %s", s,
				 diag_bytes_str(a, sizeof a, (double)f->bytes),
				 diag_bytes_str(b, sizeof b, (double)f->ref_bytes),
				 dur_str(c, sizeof c, (double)f->duration_ms));
		break;
	case VRAMZ_FK_THROTTLE:
		snprintf(buf, len, "%s: clocks held down %.0f%% of busy time (thermal %.0f%%, power %.0f%%) over %s busy",
			 s, f->share * 100, f->value * 100, f->ref_value * 100,
			 dur_str(a, sizeof a, (double)f->duration_ms));
		break;
	case VRAMZ_FK_PCIE_DOWNGRADED:
		snprintf(buf, len, "%s: PCIe link at gen %.0f x%u while busy (max gen %.0f x%u), %.0f%% of busy time",
			 s, f->value, f->count, f->ref_value, f->ref_count, f->share * 100);
		break;
	case VRAMZ_FK_MEM_TEMP:
		snprintf(buf, len, "%s: memory at %.0f C, limit %.0f C", s, f->value, f->ref_value);
		break;
	case VRAMZ_FK_FRAGMENTATION:
		snprintf(buf, len, "%s still holds %s (peak %s) while its SM use fell from %.0f%% to %.0f%% over the last %s",
			 s, diag_bytes_str(a, sizeof a, (double)f->bytes),
			 diag_bytes_str(b, sizeof b, (double)f->ref_bytes), f->ref_value, f->value,
			 dur_str(e, sizeof e, (double)f->duration_ms));
		break;
	case VRAMZ_FK_GPU_LOST:
		snprintf(buf, len, "%s fell off the bus %s ago", s,
			 dur_str(a, sizeof a, (double)f->duration_ms));
		break;
	case VRAMZ_FK_OOM:
		oom_summary(f, buf, len);
		break;
	default:
		snprintf(buf, len, "%s: unknown finding", s);
	}
	return buf;
}

const char *vramz_finding_advice(const vramz_finding *f, char *buf, size_t len)
{
	const char *t;
	if (torch_words(f, "", 1, buf, len))
		return buf;
	switch (f->kind) {
	case VRAMZ_FK_LEAK:
		if (f->figures & VRAMZ_FG_SITE) {
			snprintf(buf, len, "Look at %s: what it allocates each step stays alive (a list "
					   "that keeps tensors, a loss kept without .item(), a growing cache).",
				 f->site);
			return buf;
		}
		t = f->pid ? "Look for tensors kept alive across iterations (lists of losses "
			     "without .item(), growing caches, autograd graphs held by references)."
			   : "Memory grows with no single process to blame: check short-lived "
			     "processes and other containers using this GPU.";
		break;
	case VRAMZ_FK_IMBALANCE:
		t = "Check that each rank selects its own device (LOCAL_RANK) and that work "
		    "and data are split evenly; rank 0 often gathers extra state.";
		break;
	case VRAMZ_FK_STRAY_CONTEXT:
		t = "Call torch.cuda.set_device(LOCAL_RANK) before any CUDA work, or set "
		    "CUDA_VISIBLE_DEVICES per rank, so no rank creates a context on this GPU.";
		break;
	case VRAMZ_FK_IDLE_HOLDER:
		t = "If it is a forgotten notebook or a finished job, stop it to free the "
		    "memory (vramz kill); otherwise ignore or raise idle-time.";
		break;
	case VRAMZ_FK_ORPHANED:
		t = f->pid ? "Run vramz in the host PID namespace (or the same container) "
			     "to attribute this memory."
			   : "Look for zombie or defunct processes, MPS servers or other "
			     "namespaces; if nothing holds it, a GPU reset frees it.";
		break;
	case VRAMZ_FK_THROTTLE:
		t = "Check cooling, airflow and power limits (nvidia-smi -q -d PERFORMANCE); "
		    "sustained throttling slows every job on this GPU.";
		break;
	case VRAMZ_FK_PCIE_DOWNGRADED:
		t = "Reseat the card or check the slot, riser and BIOS PCIe settings; a "
		    "narrower or older link slows host-device transfers.";
		break;
	case VRAMZ_FK_MEM_TEMP:
		t = "Improve cooling before the memory throttles or the GPU shuts down.";
		break;
	case VRAMZ_FK_FRAGMENTATION:
		t = "Hint only: the allocator may be caching freed blocks; "
		    "torch.cuda.empty_cache() or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
		    "may return them.";
		break;
	case VRAMZ_FK_GPU_LOST:
		t = "Check dmesg for Xid errors; the GPU needs a reset or a reboot.";
		break;
	case VRAMZ_FK_OOM:
		t = "Check the job's log for \"CUDA out of memory\"; if it leaked, fix the leak, "
		    "else lower the batch size or use a GPU with more free memory "
		    "(vramz pick, vramz fit).";
		break;
	default:
		t = "";
	}
	snprintf(buf, len, "%s", t);
	return buf;
}
