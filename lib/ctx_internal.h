/* SPDX-License-Identifier: Apache-2.0 */
/* ctx_internal.h - the context's layout, shared by the library's modules
 * (ctx.c, select.c, daemon.c) and nothing else: the files of the public API
 * over one context.  A backend does not see it (backend.h). */
#ifndef VRAMZ_CTX_INTERNAL_H
#define VRAMZ_CTX_INTERNAL_H

#include "abi.h"
#include "backend.h"
#include "proc.h"
#include "agent.h"

/* One opened backend and the global indices of its GPUs. */
struct ctx_backend {
	const struct backend_ops *ops;
	struct backend *be;
	vramz_backend_info info;      /* name, vendor, driver, first, count */
};

#define CTX_MAX_BACKENDS 8

struct vramz_ctx {
	struct ctx_backend bk[CTX_MAX_BACKENDS];
	unsigned nbk;
	int recorded;                 /* a recorded source: it has tick() */
	int live_recorded;            /* ... of now, not the past (a daemon's
					 segment): its processes' PyTorch agents
					 are read here, as a live context would */
	vramz_system_info sys;
	unsigned ngpus;
	unsigned char *present;       /* [ngpus] in the default selection (a
					 recorded log may lack some indices) */
	vramz_gpu_info *info;         /* [ngpus] */
	unsigned nsel;
	unsigned *sel;                /* [ngpus] selected backend indices */
	vramz_gpu_sample *gpus;       /* [ngpus], first nsel used */
	int *rcs;                     /* [ngpus] per-GPU result of the last sample */
	unsigned long ticks;          /* samples taken */
	struct proc_vec procs;
	struct mig_vec migs;
	struct proc_cache *pcache;
	struct agent_scan agents;     /* PyTorch agents' files (agent.c) */
	vramz_snapshot snap;
	struct abi_state abi;         /* the caller's record sizes */
	int ev_on;                    /* vramz_events_open took: ... */
	unsigned ev_bk;               /* ... on this backend (events.c) */
	char err[256];
};

/* vramz_open for the library itself: opts is this library's struct and
 * may carry BACKEND_OPEN_LIBRARY flags (vramz_open_daemon's). */
int ctx_open_internal(vramz_ctx **out, const vramz_open_opts *opts);
/* The backend of global GPU index gpu, and the GPU's index in it. */
const struct ctx_backend *ctx_backend_of(const vramz_ctx *ctx, unsigned gpu, unsigned *local);
/* Appends GPU gpu's MIG instances, parent_index global. */
int ctx_migs(vramz_ctx *ctx, unsigned gpu, struct mig_vec *out);

/* Records a detail for vramz_last_error and returns rc. */
int ctx_fail(vramz_ctx *ctx, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
