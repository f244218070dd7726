/* SPDX-License-Identifier: Apache-2.0 */
/* logread.c - reading a CSV log back as the snapshots the live sampler
 * produces (include/vramz/log.h), so replay, analyze and the dashboard
 * share one path with the live views.
 *
 * Logs run to gigabytes, so the reader streams: one large buffer per file
 * filled by read(2), lines found with memchr, each row parsed in one pass
 * by a program built from the header (csvrow.c), straight into arrays
 * reused tick after tick, so memory follows the widest tick, never the
 * file.  Columns are matched by
 * header name: a newer log's extra columns are skipped and a missing
 * optional column is simply unknown.  A number out of its field's
 * plausible range (fields.c: a used above the total, 4294967295 %, -1 degC)
 * is unknown too, as in a live sample.  Anything else that does not parse is
 * an error naming FILE:LINE and the reason, except a last line without its
 * newline, which is what a crash mid-write leaves and so ends the log.
 *
 * Rows with the same time form one tick.  The process sibling is read in
 * step: its rows at a tick's time become that snapshot's processes, rows
 * for times the GPU file lacks (a kill between the two writes) are skipped,
 * and a tick whose GPU rows list more or fewer processes than the sibling
 * holds is an error: the files are not one pair (check_pairing).
 *
 * This file makes ticks of rows; logrows.c reads the files row by row (the
 * lines, the header's mapping, each row's parse), and logread.h holds the
 * state the two share.
 */
#include "vramz/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"
#include "fields.h"
#include "grow.h"
#include "logfile.h"
#include "log/logread.h"


int vramz_log_open_abi(vramz_log_reader **out, const char *path, const vramz_abi *abi)
{
	vramz_log_reader *r = calloc(1, sizeof *r);
	*out = r;
	if (!r)
		return VRAMZ_ENOMEM;
	r->g.fd = r->p.fd = -1;
	int arc = abi_init(&r->abi, abi, r->err, sizeof r->err);
	if (arc)
		return arc;
	int fd = strcmp(path, "-") ? log_open_file(path, r->err, sizeof r->err) : dup(STDIN_FILENO);
	if (fd < 0 && !strcmp(path, "-")) {
		snprintf(r->err, sizeof r->err, "%s: %s", path, strerror(errno));
		return VRAMZ_EIO;
	}
	if (fd < 0)
		return fd;
	int rc = lr_open_csv(r, &r->g, path, fd);
	if (rc == 0)
		rc = lr_map_columns(r, &r->g, 0);
	if (rc || !strcmp(path, "-"))
		return rc;
	size_t slen = strlen(path) + 16;
	char *sib = malloc(slen);
	if (!sib)
		return VRAMZ_ENOMEM;
	log_sibling_path(path, sib, slen);
	fd = log_open_file(sib, r->err, sizeof r->err);
	if (fd < 0) {
		rc = fd == VRAMZ_ENOTFOUND ? 0 : fd;
		if (!rc)
			r->err[0] = 0;
	} else {
		r->have_procs = 1;
		rc = lr_open_csv(r, &r->p, sib, fd);
		if (rc == 0)
			rc = lr_map_columns(r, &r->p, 1);
	}
	free(sib);
	return rc;
}


/* The GPU file says how many processes each GPU had (proc_count); the
 * sibling must hold exactly those rows at that time.  When it does not,
 * the two files are not one log's pair (a rotation an older vramz was
 * killed in, or files copied from different places): saying so beats
 * replaying a tick without its processes as if it had none.  Only a
 * sibling whose last line was cut short (a power loss) may end early. */
static int check_pairing(vramz_log_reader *r, unsigned ngpus, int64_t t)
{
	if (!r->have_procs)
		return 0;
	for (unsigned i = 0; i < ngpus; i++) {
		const vramz_gpu_sample *g = &r->gpus[i];
		if (!(g->valid & VRAMZ_F_PROCS) || g->proc_count == r->want[i])
			continue;
		if (r->procs_done && r->p.torn && g->proc_count < r->want[i])
			continue;
		char tb[LOG_TIME_LEN + 1];
		log_fmt_time(tb, t);
		return lr_fail(r, &r->g,
			     "gpu %u lists %u processes at %s but %s has %u there: the "
			     "process file is not this log's pair (from an interrupted "
			     "rotation, or copied from elsewhere); move it away to read "
			     "the GPU rows alone",
			     g->index, r->want[i], tb, r->p.path, g->proc_count);
	}
	return 0;
}

/* Gathers the process rows at time t into r->procs, grouped in the order of
 * the tick's GPUs, and sets each GPU's slice. */
static int attach_procs(vramz_log_reader *r, unsigned ngpus, int64_t t)
{
	unsigned n = 0;
	while (ngpus > r->wcap) {
		unsigned *w = grow_array(r->want, &r->wcap, 16, sizeof *w);
		if (!w)
			return VRAMZ_ENOMEM;
		r->want = w;
	}
	for (unsigned i = 0; i < ngpus; i++) {
		r->want[i] = r->gpus[i].proc_count;
		r->gpus[i].proc_first = r->gpus[i].proc_count = 0;
	}
	/* rows are parsed in place in praw; the one read ahead for this tick
	 * waits where the last tick ended */
	if (r->have_pnext && r->pahead) {
		r->praw[0] = r->praw[r->pahead];
		r->pahead = 0;
	}
	while (r->have_procs && !r->procs_done) {
		if (!r->have_pnext) {
			if (n == r->pcap) {
				/* one past MAX_TICK_PROCS, for the row that fails */
				unsigned ncap = r->pcap ? r->pcap * 2 : 64;
				if (ncap > MAX_TICK_PROCS + 1)
					ncap = MAX_TICK_PROCS + 1;
				vramz_proc_sample *a = realloc(r->praw, ncap * sizeof *a);
				if (!a)
					return VRAMZ_ENOMEM;
				r->praw = a;
				r->pcap = ncap;
			}
			int rc = lr_read_proc_row(r, &r->praw[n], &r->pnext_time);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				r->procs_done = 1;
				break;
			}
			r->have_pnext = 1;
			r->pahead = n;
		}
		/* rows of a later tick wait for it: after it in time, or - the
		 * recorded clock stepped back - the next tick's time, or before
		 * the previous tick's (time only goes back across a step) */
		if (r->pnext_time > t ||
		    (r->pnext_time < t && ((r->carry && r->pnext_time == r->carry_time) ||
					   (r->have_prev && r->pnext_time < r->prev_time))))
			break;
		r->have_pnext = 0;
		if (r->pnext_time < t) {
			/* a tick the GPU file lacks (a kill between the two
			 * writes), unless it is the last tick's time: then
			 * that tick had more rows than its GPU rows list */
			if (r->have_prev && r->pnext_time == r->prev_time && r->prev_listed)
				return lr_fail(r, &r->p, "more process rows than %s lists at this "
					     "time: the process file is not this log's pair",
					     r->g.path);
			continue;
		}
		unsigned gi = r->praw[n].gpu_index;
		if (gi >= r->icap || r->stamp[gi] != r->tick) {
			if (r->g.torn) /* a torn tick at the end lost that GPU's row */
				continue;
			char tb[LOG_TIME_LEN + 1];
			log_fmt_time(tb, t);
			return lr_fail(r, &r->p, "process of gpu %u, which has no row at %s in %s",
				     gi, tb, r->g.path);
		}
		const vramz_gpu_sample *gs = &r->gpus[r->slot[gi]];
		if ((gs->valid & VRAMZ_F_PROCS) && gs->proc_count >= r->want[r->slot[gi]]) {
			/* that GPU has all it lists: a next tick at the same
			 * time (a repeated timestamp) begins here */
			r->have_pnext = 1;
			break;
		}
		if (n >= MAX_TICK_PROCS)
			return lr_fail(r, &r->p, "more than %u processes in one tick", MAX_TICK_PROCS);
		n++;
		r->gpus[r->slot[gi]].proc_count++;
	}
	unsigned first = 0;
	for (unsigned i = 0; i < ngpus; i++) {
		r->gpus[i].proc_first = first;
		first += r->gpus[i].proc_count;
		r->gpus[i].proc_count = 0;
	}
	/* the writer lists a tick's processes GPU by GPU in the order of its
	 * GPU rows: then praw is the answer as it stands */
	unsigned in_order = 1;
	for (unsigned k = 1; k < n && in_order; k++)
		in_order = r->slot[r->praw[k - 1].gpu_index] <= r->slot[r->praw[k].gpu_index];
	if (!in_order && r->procs_cap < r->pcap) {
		vramz_proc_sample *b = realloc(r->procs, r->pcap * sizeof *b);
		if (!b)
			return VRAMZ_ENOMEM;
		r->procs = b;
		r->procs_cap = r->pcap;
	}
	for (unsigned k = 0; k < n; k++) {
		vramz_gpu_sample *g = &r->gpus[r->slot[r->praw[k].gpu_index]];
		if (!in_order)
			r->procs[g->proc_first + g->proc_count] = r->praw[k];
		g->proc_count++;
	}
	r->tick_procs = in_order ? r->praw : r->procs;
	r->snap.proc_count = n;
	r->prev_listed = 0;
	for (unsigned i = 0; i < ngpus; i++)
		r->prev_listed |= (r->gpus[i].valid & VRAMZ_F_PROCS) != 0;
	return check_pairing(r, ngpus, t);
}

static int ensure_gpus(vramz_log_reader *r, unsigned n)
{
	if (n < r->gcap)
		return 0;
	vramz_gpu_sample *ng = grow_array(r->gpus, &r->gcap, 16, sizeof *ng);
	if (!ng)
		return VRAMZ_ENOMEM;
	r->gpus = ng;
	return 0;
}

static int next_tick(vramz_log_reader *r, const vramz_snapshot **snap);

int vramz_log_next(vramz_log_reader *r, const vramz_snapshot **snap)
{
	if (r->failed)
		return r->failed;
	int rc = next_tick(r, snap);
	/* at the record sizes the caller was built with (abi.c) */
	if (rc == 1 && !(*snap = abi_snapshot_out(&r->abi, &r->snap)))
		rc = VRAMZ_ENOMEM;
	if (rc < 0)
		r->failed = rc;
	return rc;
}

static int next_tick(vramz_log_reader *r, const vramz_snapshot **snap)
{
	unsigned n = 0;
	int64_t t = 0, rt;
	int rc;
	if (r->deferred)
		return r->deferred;
	if (r->done)
		return 0;
	r->tick++;
	if ((rc = ensure_gpus(r, 1)))
		return rc;
	if (r->carry) {
		r->gpus[0] = r->gpus[r->carry - 1];
		t = r->carry_time;
		r->carry = 0;
		r->tick_line = r->carry_line;
	} else {
		rc = lr_read_gpu_row(r, &r->gpus[0], &t);
		if (rc <= 0) {
			r->done = 1;
			return rc;
		}
		r->tick_line = r->g.line;
	}
	r->stamp[r->gpus[0].index] = r->tick;
	r->slot[r->gpus[0].index] = 0;
	for (n = 1;; n++) {
		if ((rc = ensure_gpus(r, n)))
			return rc;
		rc = lr_read_gpu_row(r, &r->gpus[n], &rt);
		if (rc < 0) {
			/* a bad row after this tick's rows: the tick read so
			 * far goes out, the error comes with the next call
			 * (top --replay keeps showing the last good tick) */
			r->deferred = rc;
			break;
		}
		if (rc == 0)
			break;
		unsigned idx = r->gpus[n].index;
		if (rt != t || r->stamp[idx] == r->tick) {
			/* the first row of the next tick */
			r->carry = (int)n + 1;
			r->carry_time = rt;
			r->carry_line = r->g.line;
			break;
		}
		r->stamp[idx] = r->tick;
		r->slot[idx] = n;
	}
	if ((rc = attach_procs(r, n, t)))
		return rc;
	r->prev_time = t;
	r->have_prev = 1;
	r->snap.time_ms = t;
	/* the log's own clock; saturated where ns overflow (past 2262) */
	r->snap.mono_ns = t > INT64_MAX / 1000000 ? INT64_MAX
			: t < INT64_MIN / 1000000 ? INT64_MIN : t * 1000000;
	r->snap.gpu_count = n;
	r->snap.gpus = r->gpus;
	r->snap.procs = r->tick_procs;
	r->snap.mig_count = 0;
	r->snap.migs = NULL;
	*snap = &r->snap;
	return 1;
}

const char *vramz_log_error(const vramz_log_reader *r)
{
	return r ? r->err : "out of memory";
}

unsigned long vramz_log_tick_line(const vramz_log_reader *r)
{
	return r ? r->tick_line : 0;
}

unsigned vramz_log_gpu_count(const vramz_log_reader *r)
{
	return r->ninfo;
}

const vramz_gpu_info *vramz_log_gpu(const vramz_log_reader *r, unsigned index)
{
	return index < r->ninfo && r->known[index] ? &r->info[index] : NULL;
}

void vramz_log_close(vramz_log_reader *r)
{
	if (!r)
		return;
	lr_close_csv(&r->g);
	lr_close_csv(&r->p);
	free(r->gpus);
	free(r->praw);
	free(r->procs);
	free(r->want);
	free(r->info);
	free(r->known);
	free(r->stamp);
	free(r->slot);
	abi_free(&r->abi);
	free(r);
}

