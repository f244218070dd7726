/* SPDX-License-Identifier: Apache-2.0 */
/* segment.c (backend) - a live `vramz daemon`'s segment behind the same
 * backend_ops as NVML, so every view built on vramz_sample() runs on it
 * unchanged and loads no driver: `vramz status` from a daemon costs a
 * file map and a copy.
 *
 * Like the replay backend it is a recorded source (backend_ops.tick): each
 * vramz_sample() copies the daemon's latest whole snapshot, and processes
 * arrive attributed by the daemon - except in a redacted segment (the
 * daemon runs as root with /proc hidepid), where this reader attributes
 * the processes its own /proc shows it, and no others.
 *
 * Freshness is checked at open and at every tick: the snapshot must be at
 * most two intervals and VRAMZ_DAEMON_MAX_AGE_MS old, its daemon running
 * (pid and start time) and not stopped.  A daemon that replaced its file
 * (it grew) is followed to the new one.
 *
 * The public API of a daemon (vramz_open_daemon, vramz_daemon_*) is
 * lib/daemon.c, which opens a context over this backend and asks it
 * through segment_backend.h.
 */
#include "backend.h"
#include "backend/recorded.h"
#include "backend/segment_backend.h"
#include "grow.h"
#include "kube.h"
#include "proc.h"
#include "rundir.h"
#include "segment.h"
#include "vramz/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

struct backend {
	char path[512];
	struct seg_reader *r;
	const struct seg_snapshot *cur;
	struct proc_cache *pcache;    /* redacted segments only */
	struct kube_names *kube;      /* the others: pod and container names */
	int64_t age_ms;
	void *filled;                 /* redacted: the findings, names filled in */
	size_t filled_cap;            /* bytes */
};

static int check_fresh(struct backend *b, char *err, size_t errlen)
{
	const struct seg_header *h = seg_reader_header(b->r);
	int64_t age_ms = (clock_mono_ns() - b->cur->snap.mono_ns) / 1000000;
	int64_t max_ms = 2 * (int64_t)h->interval_ms;
	if (max_ms > VRAMZ_DAEMON_MAX_AGE_MS)
		max_ms = VRAMZ_DAEMON_MAX_AGE_MS;
	b->age_ms = age_ms < 0 ? 0 : age_ms;
	/* CLOCK_MONOTONIC is the machine's: a publisher here cannot stamp a
	 * snapshot later than now (a second of slack for nothing at all) */
	if (age_ms < -SEG_FUTURE_SLACK_MS) {
		snprintf(err, errlen,
			 "%s: its latest snapshot is stamped %.1f s in the future (CLOCK_MONOTONIC): "
			 "not this machine's daemon, or forged; not trusted",
			 b->path, (double)-age_ms / 1000);
		return VRAMZ_EIO;
	}
	if (age_ms <= max_ms)
		return 0;
	uint64_t torn;
	if (!seg_pid_alive(h->pid, h->start_ticks)) {
		if (seg_reader_torn(b->r, &torn))
			snprintf(err, errlen,
				 "%s: its daemon (pid %u) died while writing snapshot %llu; the last "
				 "whole one is %.1f s old",
				 b->path, h->pid, (unsigned long long)torn, (double)age_ms / 1000);
		else
			snprintf(err, errlen, "%s: its daemon (pid %u) is gone", b->path, h->pid);
	} else {
		snprintf(err, errlen, "%s: stale: the latest snapshot is %.1f s old (daemon pid %u, every %u ms)",
			 b->path, (double)age_ms / 1000, h->pid, h->interval_ms);
	}
	return VRAMZ_EIO;
}

/* The latest snapshot, following a replaced file once. */
static int read_latest(struct backend *b, char *err, size_t errlen)
{
	for (int again = 0; again < 2; again++) {
		int rc = seg_reader_read(b->r, &b->cur, err, errlen);
		if (rc == 0)
			return check_fresh(b, err, errlen);
		if (rc != VRAMZ_EIO || again)
			return rc;
		/* replaced (grown) or restarted under the same name: reopen */
		struct seg_reader *nr;
		char e2[300];
		if (seg_reader_open(&nr, b->path, e2, sizeof e2) < 0) {
			seg_reader_close(nr);
			return rc;
		}
		const struct seg_header *oh = seg_reader_header(b->r), *nh = seg_reader_header(nr);
		if (nh->gpu_count != oh->gpu_count) { /* not the same machine view */
			seg_reader_close(nr);
			return rc;
		}
		seg_reader_close(b->r);
		b->r = nr;
	}
	return VRAMZ_EIO;
}

static int seg_open(struct backend **out, const vramz_open_opts *opts, char *err, size_t errlen)
{
	struct backend *b = calloc(1, sizeof *b);
	*out = b;
	if (!b)
		return VRAMZ_ENOMEM;
	snprintf(b->path, sizeof b->path, "%s", opts->replay_path);
	int rc = seg_reader_open(&b->r, b->path, err, errlen);
	if (rc < 0)
		return rc;
	if (seg_reader_header(b->r)->flags & SEG_FL_REDACTED) {
		b->pcache = proc_cache_new("/proc");
		if (!b->pcache)
			return VRAMZ_ENOMEM;
	} else if (!(b->kube = kube_names_new(NULL))) {
		return VRAMZ_ENOMEM;
	}
	return read_latest(b, err, errlen);
}

static void seg_close(struct backend *b)
{
	seg_reader_close(b->r);
	proc_cache_free(b->pcache);
	kube_names_free(b->kube);
	free(b->filled);
	free(b);
}

static unsigned seg_count(struct backend *b);

static int seg_system(struct backend *b, vramz_system_info *sys, vramz_backend_info *bi)
{
	/* the publisher's system facts, as its own context had them */
	*sys = seg_reader_header(b->r)->sys;
	sys->backend[0] = 0; /* the context names its backends */
	/* The segment carries one driver, the publisher's first backend's:
	 * the driver of every GPU only when they are all of one vendor.  On
	 * a mixed machine each GPU's is unknown here, not another's. */
	const char *vendor = NULL;
	for (unsigned i = 0; i < seg_count(b); i++) {
		int present = 0;
		const vramz_gpu_info *gi = seg_reader_gpu(b->r, i, &present);
		if (!gi || !present || !gi->vendor[0])
			continue;
		if (vendor && strcmp(vendor, gi->vendor))
			return 0;
		vendor = gi->vendor;
	}
	memcpy(bi->driver_version, sys->driver_version, sizeof bi->driver_version);
	return 0;
}

static unsigned seg_count(struct backend *b)
{
	return seg_reader_header(b->r)->gpu_count;
}

static int seg_gpu_info(struct backend *b, unsigned idx, vramz_gpu_info *out)
{
	int present = 0;
	const vramz_gpu_info *gi = seg_reader_gpu(b->r, idx, &present);
	if (!gi || !present)
		return VRAMZ_ENOTFOUND; /* the daemon does not sample it */
	*out = *gi;
	out->index = idx;
	return 0;
}

static int seg_gpu_details(struct backend *b, unsigned idx, vramz_gpu_info *out)
{
	return seg_gpu_info(b, idx, out) == 0 ? 0 : VRAMZ_EUNSUPPORTED;
}

static int seg_tick(struct backend *b, int64_t *time_ms, int64_t *mono_ns, char *err, size_t errlen)
{
	int rc = read_latest(b, err, errlen);
	if (rc < 0) {
		b->cur = NULL;
		return rc;
	}
	if (b->pcache)
		proc_cache_sweep(b->pcache);
	*time_ms = b->cur->snap.time_ms;
	*mono_ns = b->cur->snap.mono_ns;
	return 0;
}

static int seg_sample(struct backend *b, unsigned idx, unsigned flags, vramz_gpu_sample *out)
{
	return recorded_sample(b->cur ? &b->cur->snap : NULL, idx, out);
}

static int seg_procs(struct backend *b, unsigned idx, unsigned flags, struct proc_vec *out)
{
	unsigned first = out->n;
	int rc = recorded_procs(b->cur ? &b->cur->snap : NULL, idx, out);
	/* redacted: what this reader's own /proc shows it, and no more */
	for (unsigned i = first; rc == 0 && b->pcache && i < out->n; i++)
		if (!(out->v[i].valid & VRAMZ_P_VISIBLE))
			proc_attribute(b->pcache, &out->v[i]);
	/* the record has no room for a pod's names (docs/daemon.md): the
	 * reader names the pod uid and container id the daemon wrote from the
	 * kubelet's directories itself, as the daemon would have */
	int64_t now = b->kube ? clock_mono_ns() : 0;
	for (unsigned i = first; rc == 0 && b->kube && i < out->n; i++)
		if ((out->v[i].valid & VRAMZ_P_VISIBLE) && out->v[i].pod_uid[0])
			kube_names_fill(b->kube, now, &out->v[i]);
	return rc;
}

static int seg_migs(struct backend *b, unsigned idx, struct mig_vec *out)
{
	for (unsigned i = 0; b->cur && i < b->cur->snap.mig_count; i++) {
		if (b->cur->migs[i].parent_index != idx)
			continue;
		vramz_mig_sample *m = mig_vec_push(out);
		if (!m)
			return VRAMZ_ENOMEM;
		*m = b->cur->migs[i];
	}
	return 0;
}

static int seg_topology(struct backend *b, unsigned a, unsigned c, vramz_link *out)
{
	return seg_reader_link(b->r, a, c, out);
}

static int seg_wanted(const vramz_open_opts *opts)
{
	return (opts->flags & BACKEND_OPEN_SEGMENT) != 0;
}

const struct backend_ops backend_segment = {
	.name = "daemon",
	.vendor = "",
	.wanted = seg_wanted,
	.records_now = 1,
	.open = seg_open,
	.close = seg_close,
	.system = seg_system,
	.count = seg_count,
	.gpu_info = seg_gpu_info,
	.gpu_details = seg_gpu_details,
	.sample = seg_sample,
	.procs = seg_procs,
	.migs = seg_migs,
	.topology = seg_topology,
	.tick = seg_tick,
};

/* ---- what lib/daemon.c (the public vramz/daemon.h) asks of a segment ---- */

void segment_backend_info(const struct backend *b, vramz_daemon_info *out)
{
	const struct seg_header *h = seg_reader_header(b->r);
	memset(out, 0, sizeof *out);
	out->pid = h->pid;
	out->interval_ms = h->interval_ms;
	out->sample_flags = h->sample_flags;
	out->procs = (h->flags & SEG_FL_PROCS) != 0;
	out->redacted = (h->flags & SEG_FL_REDACTED) != 0;
	out->started_ms = h->start_ms;
	out->age_ms = b->age_ms;
	out->generation = b->cur ? b->cur->generation : 0;
	snprintf(out->path, sizeof out->path, "%.*s", (int)sizeof out->path - 1, b->path);
}

int segment_backend_covers(const struct backend *b, unsigned index)
{
	int present = 0;
	return seg_reader_gpu(b->r, index, &present) && present;
}

/* In a redacted segment a finding names no user or command: they are
 * filled in from the process rows this reader attributed from its own
 * /proc (seg_procs), for the processes it can see, and no others.  NULL
 * when out of memory. */
static const vramz_finding *fill_findings(struct backend *b, const struct proc_vec *procs)
{
	unsigned n = b->cur->finding_count;
	if (grow_bytes(&b->filled, &b->filled_cap, n * sizeof(vramz_finding)))
		return NULL;
	vramz_finding *out = b->filled;
	memcpy(out, b->cur->findings, n * sizeof *out);
	for (unsigned i = 0; i < n; i++) {
		vramz_finding *f = &out[i];
		for (unsigned k = 0; f->pid && (!f->user[0] || !f->comm[0]) && k < procs->n; k++) {
			const vramz_proc_sample *p = &procs->v[k];
			if (p->pid != f->pid || p->start_time_ticks != f->start_time_ticks ||
			    !(p->valid & VRAMZ_P_VISIBLE))
				continue;
			if (!f->user[0])
				memcpy(f->user, p->user, sizeof f->user);
			if (!f->comm[0])
				memcpy(f->comm, p->comm, sizeof f->comm);
		}
	}
	return out;
}

unsigned segment_backend_findings(struct backend *b, const struct proc_vec *procs,
				  const vramz_finding **out)
{
	static const vramz_finding none[1];
	if (!b->cur || !(seg_reader_header(b->r)->flags & SEG_FL_FINDINGS)) {
		*out = NULL;
		return 0;
	}
	unsigned n = b->cur->finding_count;
	*out = !n ? none : b->pcache ? fill_findings(b, procs) : b->cur->findings;
	return *out ? n : 0;
}
