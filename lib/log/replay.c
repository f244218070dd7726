/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c - the replay backend: a recorded log behind the same
 * backend_ops as NVML, so `vramz status --replay FILE`, `vramz replay` and
 * anything else built on vramz_sample() run unchanged on a recording from
 * another machine (or the demo recording on a laptop with no GPU).
 *
 * The GPUs are those of the log's first tick, by the log's own indices; an
 * index the log never recorded (logged with -g 1,3) answers ENOTFOUND so
 * it stays out of the default selection.  Each vramz_sample() moves one
 * tick on (backend_ops.tick) and ends with VRAMZ_EEOF.  Processes come
 * with the user, command and container recorded at the time, never
 * re-read from this machine's /proc.
 */
#include "backend.h"
#include "backend/recorded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramz/log.h"

struct backend {
	vramz_log_reader *r;
	const vramz_snapshot *cur;
	int first;               /* cur is the first tick, not yet handed out */
	unsigned ngpus;
	vramz_gpu_info *info;    /* [ngpus], as at open */
	unsigned char *present;  /* [ngpus]: in the first tick */
};

static int replay_open(struct backend **out, const vramz_open_opts *opts, char *err, size_t errlen)
{
	struct backend *b = calloc(1, sizeof *b);
	*out = b;
	if (!b)
		return VRAMZ_ENOMEM;
	int rc = vramz_log_open(&b->r, opts->replay_path);
	if (rc == 0)
		rc = vramz_log_next(b->r, &b->cur);
	if (rc < 0) {
		snprintf(err, errlen, "%s", vramz_log_error(b->r));
		return rc;
	}
	if (rc == 0) {
		snprintf(err, errlen, "%s: the log holds no samples", opts->replay_path);
		return VRAMZ_EEOF;
	}
	b->first = 1;
	b->ngpus = vramz_log_gpu_count(b->r);
	b->info = calloc(b->ngpus, sizeof *b->info);
	b->present = calloc(b->ngpus, 1);
	if (!b->info || !b->present)
		return VRAMZ_ENOMEM;
	for (unsigned i = 0; i < b->cur->gpu_count; i++) {
		unsigned idx = b->cur->gpus[i].index;
		const vramz_gpu_info *gi = vramz_log_gpu(b->r, idx);
		if (gi && idx < b->ngpus) {
			b->info[idx] = *gi;
			b->present[idx] = 1;
		}
	}
	return 0;
}

static void replay_close(struct backend *b)
{
	vramz_log_close(b->r);
	free(b->info);
	free(b->present);
	free(b);
}

static int replay_system(struct backend *b, vramz_system_info *sys, vramz_backend_info *bi)
{
	return 0; /* a log does not record the driver */
}

static int replay_wanted(const vramz_open_opts *opts)
{
	return opts->replay_path != NULL;
}

static unsigned replay_count(struct backend *b)
{
	return b->ngpus;
}

static int replay_gpu_info(struct backend *b, unsigned idx, vramz_gpu_info *out)
{
	if (idx >= b->ngpus || !b->present[idx])
		return VRAMZ_ENOTFOUND;
	*out = b->info[idx];
	out->index = idx;
	return 0;
}

static int replay_gpu_details(struct backend *b, unsigned idx, vramz_gpu_info *out)
{
	return 0; /* a log records samples, not the slow static facts */
}

static int replay_tick(struct backend *b, int64_t *time_ms, int64_t *mono_ns, char *err,
		       size_t errlen)
{
	if (b->first) {
		b->first = 0;
	} else {
		int rc = vramz_log_next(b->r, &b->cur);
		if (rc < 0) {
			snprintf(err, errlen, "%s", vramz_log_error(b->r));
			b->cur = NULL;
			return rc;
		}
		if (rc == 0) {
			snprintf(err, errlen, "%s", "end of the log");
			b->cur = NULL;
			return VRAMZ_EEOF;
		}
	}
	*time_ms = b->cur->time_ms;
	*mono_ns = b->cur->mono_ns;
	return 0;
}

static int replay_sample(struct backend *b, unsigned idx, unsigned flags, vramz_gpu_sample *out)
{
	return recorded_sample(b->cur, idx, out); /* not in this tick: unknown, not lost */
}

static int replay_procs(struct backend *b, unsigned idx, unsigned flags, struct proc_vec *out)
{
	return recorded_procs(b->cur, idx, out); /* EUNSUPPORTED: the list was not recorded */
}

static int replay_migs(struct backend *b, unsigned idx, struct mig_vec *out)
{
	return 0;
}

static int replay_topology(struct backend *b, unsigned a, unsigned c, vramz_link *out)
{
	return VRAMZ_EUNSUPPORTED;
}

const struct backend_ops backend_replay = {
	.name = "replay",
	.vendor = "",
	.wanted = replay_wanted,
	.open = replay_open,
	.close = replay_close,
	.system = replay_system,
	.count = replay_count,
	.gpu_info = replay_gpu_info,
	.gpu_details = replay_gpu_details,
	.sample = replay_sample,
	.procs = replay_procs,
	.migs = replay_migs,
	.topology = replay_topology,
	.tick = replay_tick,
};
