/* SPDX-License-Identifier: Apache-2.0 */
/* recorded.c - see recorded.h: sample() and procs() of a backend whose
 * samples were taken elsewhere and are only handed out here. */
#include "backend/recorded.h"

const vramz_gpu_sample *recorded_gpu(const vramz_snapshot *s, unsigned idx)
{
	for (unsigned i = 0; s && i < s->gpu_count; i++)
		if (s->gpus[i].index == idx)
			return &s->gpus[i];
	return NULL;
}

int recorded_sample(const vramz_snapshot *s, unsigned idx, vramz_gpu_sample *out)
{
	const vramz_gpu_sample *g = recorded_gpu(s, idx);
	if (!g)
		return VRAMZ_ENOTFOUND;
	if (g->lost)
		return VRAMZ_ELOST;
	*out = *g;
	out->valid &= ~(uint32_t)VRAMZ_F_PROCS; /* the context sets it from procs() */
	out->proc_first = out->proc_count = 0;
	return 0;
}

int recorded_procs(const vramz_snapshot *s, unsigned idx, struct proc_vec *out)
{
	const vramz_gpu_sample *g = recorded_gpu(s, idx);
	if (!g || !(g->valid & VRAMZ_F_PROCS))
		return VRAMZ_EUNSUPPORTED; /* not recorded (a daemon without --procs) */
	for (unsigned i = 0; i < g->proc_count; i++) {
		vramz_proc_sample *p = proc_vec_push(out);
		if (!p)
			return VRAMZ_ENOMEM;
		*p = s->procs[g->proc_first + i];
	}
	return 0;
}
