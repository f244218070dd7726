/* ctx_internal.h - the context's layout, shared by the library's modules
 * (ctx.c, select.c) and nothing else. */
#ifndef VRAMZ_CTX_INTERNAL_H
#define VRAMZ_CTX_INTERNAL_H

#include "backend.h"
#include "proc.h"
#include "agent.h"

struct vramz_ctx {
	const struct backend_ops *ops;
	struct backend *be;
	vramz_system_info sys;
	unsigned ngpus;
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
	char err[256];
};

/* Opens a context on the backend ops (NULL: not built in). */
int ctx_open_ops(vramz_ctx **out, const struct backend_ops *ops, const vramz_open_opts *opts);

/* Records a detail for vramz_last_error and returns rc. */
int ctx_fail(vramz_ctx *ctx, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parses a -g spec against ctx->info into sel; returns count or a negative
 * code with ctx->err naming the bad item. */
int select_parse(vramz_ctx *ctx, const char *spec, unsigned *sel);

#endif
