/* SPDX-License-Identifier: Apache-2.0 */
/* agentlog.c - the PyTorch agents' records of a log (agentlog.h). */
#include "agentlog.h"
#include "agentrec.h"
#include "cli.h"
#include "evfile.h"
#include "grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* an OOM record is read and written at most this often per process (a
 * batch-size probe raises hundreds; the end row carries the last one) */
#define OOM_ROW_EVERY_MS 5000

struct followed {
	uint32_t pid, uid;
	uint64_t start;
	unsigned gpu;                 /* the GPU it was last seen on */
	uint64_t ooms;                /* the count the last row (or first sight) had */
	int64_t oom_row_ms;           /* when the last torch_oom row went; 0 none */
	uint64_t seen;                /* the tick it was last in a list */
};

struct agentlog {
	const char *cmd;              /* the command, for its one line on failure */
	int fd;                       /* the events file; -1 after a failed write */
	char path[4096];              /* its name, followed across rotations */
	uint64_t tick;
	struct followed *f;
	unsigned n, cap;
	struct logbuf row;
};

struct agentlog *agentlog_open(const char *cmd, const char *log_path)
{
	char path[4096], err[600];
	if (log_events_path(log_path, path, sizeof path))
		return NULL; /* no events file beside it: no records, as no Xids */
	struct agentlog *a = calloc(1, sizeof *a);
	if (!a || (a->fd = evfile_open(path, err, sizeof err)) < 0) {
		cli_err("%s: %s; the PyTorch agents' records are not logged", cmd,
			a ? err : "out of memory");
		free(a);
		return NULL;
	}
	a->cmd = cmd;
	memcpy(a->path, path, sizeof a->path);
	return a;
}

void agentlog_close(struct agentlog *a)
{
	if (!a)
		return;
	if (a->fd >= 0)
		close(a->fd);
	free(a->f);
	logbuf_free(&a->row);
	free(a);
}

static struct followed *find(struct agentlog *a, uint32_t pid, uint64_t start)
{
	for (unsigned i = 0; i < a->n; i++)
		if (a->f[i].pid == pid && a->f[i].start == start)
			return &a->f[i];
	return NULL;
}

/* the log's index of the GPU of fig's OOM, -1 unknown */
static int oom_gpu(const struct agent_figures *fig, const vramz_snapshot *snap, log_info_fn info,
		   void *arg, const char **uuid)
{
	*uuid = agent_oom_uuid(fig);
	for (unsigned i = 0; *uuid && i < snap->gpu_count; i++) {
		const vramz_gpu_info *gi = info(arg, snap->gpus[i].index);
		if (gi && !strcmp(gi->uuid, *uuid))
			return (int)snap->gpus[i].index;
	}
	return -1;
}

static int write_row(struct agentlog *a, const vramz_snapshot *snap, log_info_fn info, void *arg,
		     const char *event, const struct followed *p, const struct agent_figures *fig)
{
	const char *uuid;
	int gpu = oom_gpu(fig, snap, info, arg, &uuid);
	a->row.len = 0;
	if (agentrow_format(&a->row, snap->time_ms, event, gpu, uuid, p->uid, fig))
		return -1;
	char err[600];
	if (evfile_follow(&a->fd, a->path, err, sizeof err))
		return -1;
	return evfile_append(a->fd, &a->row);
}

/* p is in this tick's lists: its OOM count rose past the last row's */
static int follow(struct agentlog *a, const vramz_snapshot *snap, log_info_fn info, void *arg,
		  const vramz_proc_sample *s)
{
	struct followed *p = find(a, s->pid, s->start_time_ticks);
	uint64_t ooms = (s->torch_valid & VRAMZ_T_OOMS) ? s->torch_ooms : 0;
	if (!p) {
		if (a->n == a->cap) {
			struct followed *nf = grow_array(a->f, &a->cap, 16, sizeof *a->f);
			if (!nf)
				return -1;
			a->f = nf;
		}
		p = &a->f[a->n++];
		*p = (struct followed){.pid = s->pid, .uid = s->uid, .start = s->start_time_ticks,
				       .ooms = ooms};
	}
	p->gpu = s->gpu_index;
	if (p->seen == a->tick)
		return 0; /* its row on another GPU did this */
	p->seen = a->tick;
	struct agent_figures fig;
	if (ooms <= p->ooms || (p->oom_row_ms && snap->time_ms - p->oom_row_ms < OOM_ROW_EVERY_MS) ||
	    agent_read_figures(p->pid, p->start, p->uid, &fig) || !fig.oom_valid)
		return 0;
	p->ooms = ooms;
	p->oom_row_ms = snap->time_ms;
	return write_row(a, snap, info, arg, AGENT_EV_OOM, p, &fig);
}

/* the GPU's process list was read this tick */
static int listed(const vramz_snapshot *snap, unsigned gpu)
{
	for (unsigned i = 0; i < snap->gpu_count; i++)
		if (snap->gpus[i].index == gpu)
			return (snap->gpus[i].valid & VRAMZ_F_PROCS) != 0;
	return 0;
}

static int follow_tick(struct agentlog *a, const vramz_snapshot *snap, log_info_fn info, void *arg)
{
	int rc = 0;
	a->tick++;
	for (unsigned i = 0; i < snap->proc_count && !rc; i++) {
		const vramz_proc_sample *s = &snap->procs[i];
		if ((s->valid & (VRAMZ_P_TORCH | VRAMZ_P_VISIBLE)) == (VRAMZ_P_TORCH | VRAMZ_P_VISIBLE))
			rc = follow(a, snap, info, arg, s);
	}
	/* gone from a list that was read: how it ended, if its agent said */
	for (unsigned i = 0; i < a->n;) {
		struct followed *p = &a->f[i];
		if (p->seen == a->tick || !listed(snap, p->gpu)) {
			i++;
			continue;
		}
		struct agent_figures fig;
		if (!rc && agent_read_end(p->pid, p->start, p->uid, &fig) == 0 &&
		    (fig.end.valid || fig.oom_valid))
			rc = write_row(a, snap, info, arg, AGENT_EV_END, p, &fig);
		a->f[i] = a->f[--a->n];
	}
	return rc;
}

void agentlog_tick(struct agentlog *a, const vramz_snapshot *snap, log_info_fn info, void *arg)
{
	if (!a || a->fd < 0 || !follow_tick(a, snap, info, arg))
		return;
	cli_err("%s: cannot write the PyTorch agents' records to the events file (%s); "
		"they are not logged from here", a->cmd, strerror(errno));
	close(a->fd);
	a->fd = -1;
}
