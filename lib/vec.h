/* SPDX-License-Identifier: Apache-2.0 */
/* vec.h - the growable arrays a backend appends its processes and MIG
 * instances to, and the context keeps from tick to tick.  Below both the
 * context (ctx.c) and the backends (lib/backend/), which call down into
 * vec.c: neither calls the other for them. */
#ifndef VRAMZ_VEC_H
#define VRAMZ_VEC_H

#include "vramz/vramz.h"

/* A growable array of process samples the backend appends to. */
struct proc_vec {
	vramz_proc_sample *v;
	unsigned n, cap;
};
/* Appends a zeroed element; NULL on out of memory. */
vramz_proc_sample *proc_vec_push(struct proc_vec *pv);

struct mig_vec {
	vramz_mig_sample *v;
	unsigned n, cap;
};
vramz_mig_sample *mig_vec_push(struct mig_vec *mv);

#endif
