/* SPDX-License-Identifier: Apache-2.0 */
/* comm.c - the communication_memory kind (issue 37): NCCL's communicators
 * holding a large share of a GPU in a PyTorch process.
 *
 * Every process group (each tensor-, pipeline- and data-parallel group of
 * a large job) makes communicators of its own, each with buffers of
 * hundreds of MiB (564 MiB for one rank alone with NCCL 2.28 on an H100),
 * more with peers, NVLS and more channels; none of it is in PyTorch's
 * memory tools.  The process's vramz.torch agent measures them as they
 * appear (python/vramz/torch/_outside.py); lib/agent.c joins its records
 * into the row's outside_nccl_bytes and outside_nccl_comms.  Raised when
 * that part reaches comm_share of the GPU's memory (a warning), or when
 * comm_min_groups communicators each cost memory (the part grows with
 * each new group: a hint while it is still small).  Numbers first, the
 * words at the end.
 */
#include "state.h"
#include "detectors.h"
#include "words.h"

#include <stdio.h>

#define COMM_MIN_EACH (64ull << 20) /* a communicator that costs memory */

static int emit_comm(const vramz_diag *d, struct emitter *em, const struct proc_state *p)
{
	const struct torch_state *ts = torch_of(d, p);
	const struct gpu_state *g = p->gpu < d->ngpus ? &d->gpus[p->gpu] : NULL;
	if (!ts->parts_ok || !ts->part_nccl || !g || !g->seen || !(g->last.valid & VRAMZ_F_MEM) ||
	    !g->last.mem_total_bytes)
		return 0;
	double share = (double)ts->part_nccl / (double)g->last.mem_total_bytes;
	int big = share >= d->cfg.comm_share;
	int many = d->cfg.comm_min_groups && ts->nccl_comms >= d->cfg.comm_min_groups &&
		   ts->part_nccl / ts->nccl_comms >= COMM_MIN_EACH;
	if (!big && !many)
		return 0;
	vramz_finding *f = emit(em, big ? VRAMZ_SEV_WARNING : VRAMZ_SEV_INFO, (double)ts->part_nccl);
	if (!f)
		return VRAMZ_ENOMEM;
	finding_subject_proc(f, p);
	f->figures = VRAMZ_FG_BYTES | VRAMZ_FG_REF | VRAMZ_FG_SHARE | VRAMZ_FG_COUNT;
	f->bytes = ts->part_nccl;
	f->ref_bytes = g->last.mem_total_bytes;
	f->share = share;
	f->count = ts->nccl_comms;
	torch_parts(f, ts);
	return 0;
}

int detect_communication_memory(vramz_diag *d, struct emitter *em)
{
	int rc = 0;
	for (unsigned i = 0; i < d->nprocs && !rc; i++) {
		const struct proc_state *p = &d->procs[i];
		if (p->used && torch_of(d, p)->on && (!p->ended || d->cfg.keep_ended))
			rc = emit_comm(d, em, p);
	}
	return rc;
}

void summary_communication_memory(const vramz_finding *f, const char *subject, char *buf,
				  size_t len)
{
	char a[32], b[32], c[32];
	unsigned n = f->count ? f->count : 1;
	snprintf(buf, len, "%s: NCCL's communicators hold %s (%u communicator%s, %s each), %.0f%% "
			   "of the GPU's %s",
		 subject, diag_bytes_str(a, sizeof a, (double)f->bytes), f->count,
		 f->count == 1 ? "" : "s", diag_bytes_str(b, sizeof b, (double)f->bytes / n),
		 f->share * 100, diag_bytes_str(c, sizeof c, (double)f->ref_bytes));
}

void advice_communication_memory(const vramz_finding *f, const char *subject, char *buf,
				 size_t len)
{
	(void)f;
	(void)subject;
	snprintf(buf, len, "Each process group makes communicators of its own: create fewer "
			   "groups, or create them lazily (no device_id at init_process_group: a "
			   "group's communicator is then made at its first collective, never for "
			   "an unused one), destroy_process_group(g) when a group is done; "
			   "NCCL_NVLS_ENABLE=0 drops NVLink SHARP buffers, a smaller NCCL_BUFFSIZE "
			   "shrinks each channel's buffers to its peers.");
}
