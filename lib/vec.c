/* SPDX-License-Identifier: Apache-2.0 */
/* vec.c - appending to the process and MIG arrays (vec.h).  An array
 * keeps its memory from tick to tick (n goes back to 0, cap stays), so a
 * steady sampler stops allocating after its first few ticks. */
#include "vec.h"
#include "grow.h"

#include <string.h>

vramz_proc_sample *proc_vec_push(struct proc_vec *pv)
{
	if (pv->n == pv->cap) {
		vramz_proc_sample *nv = grow_array(pv->v, &pv->cap, 16, sizeof *nv);
		if (!nv)
			return NULL;
		pv->v = nv;
	}
	vramz_proc_sample *p = &pv->v[pv->n++];
	memset(p, 0, sizeof *p);
	return p;
}

vramz_mig_sample *mig_vec_push(struct mig_vec *mv)
{
	if (mv->n == mv->cap) {
		vramz_mig_sample *nv = grow_array(mv->v, &mv->cap, 16, sizeof *nv);
		if (!nv)
			return NULL;
		mv->v = nv;
	}
	vramz_mig_sample *m = &mv->v[mv->n++];
	memset(m, 0, sizeof *m);
	return m;
}
