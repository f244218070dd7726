/* SPDX-License-Identifier: Apache-2.0 */
/* daemon.c - the public side of a running `vramz daemon`
 * (vramz/daemon.h): finding its segment and opening a context over it,
 * and what only such a context can tell (the daemon's details, the GPUs
 * it samples, the findings it publishes).
 *
 * The reading itself is a backend like any other (backend/segment.c);
 * this file sits above both the context and that backend and calls down
 * into each, so that neither calls back (lint.callgraph).
 */
#include "ctx_internal.h"
#include "backend/segment_backend.h"
#include "rundir.h"
#include "segment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tries one file; 0 when it is a fresh live segment. */
static int try_file(vramz_ctx **out, const char *path)
{
	vramz_open_opts o = {.replay_path = path, .flags = BACKEND_OPEN_SEGMENT};
	return ctx_open_internal(out, &o);
}

int vramz_open_daemon(vramz_ctx **out, const char *dir, unsigned flags)
{
	(void)flags;
	char d[512], path[600], why[300] = "";
	int why_rc = VRAMZ_ENOTFOUND;
	*out = NULL;
	for (unsigned n = 0;; n++) {
		if (dir) {
			if (n > 0)
				break;
			snprintf(d, sizeof d, "%s", dir);
		} else if (vramz_runtime_dir_nth(n, d, sizeof d) < 0) {
			break;
		}
		/* root reads the unredacted file when the daemon made one */
		const char *names[] = {geteuid() == 0 ? VRAMZ_SEGMENT_FULL_NAME : NULL,
				       VRAMZ_SEGMENT_NAME};
		for (unsigned k = 0; k < 2; k++) {
			if (!names[k])
				continue;
			snprintf(path, sizeof path, "%s/%s", d, names[k]);
			vramz_ctx *ctx;
			int rc = try_file(&ctx, path);
			if (rc == 0) {
				*out = ctx;
				return 0;
			}
			if (!ctx)
				return rc;
			/* the first reason that is not "no file there" is the one to tell */
			if (rc != VRAMZ_ENOTFOUND && why_rc == VRAMZ_ENOTFOUND) {
				why_rc = rc;
				snprintf(why, sizeof why, "%s", vramz_last_error(ctx));
			}
			vramz_close(ctx);
		}
	}
	vramz_ctx *ctx = calloc(1, sizeof *ctx);
	*out = ctx;
	if (!ctx)
		return VRAMZ_ENOMEM;
	if (why_rc == VRAMZ_ENOTFOUND)
		return ctx_fail(ctx, why_rc, "no daemon segment in %s", dir ? dir : "the runtime directories");
	return ctx_fail(ctx, why_rc, "%s", why);
}

static struct backend *daemon_of(const vramz_ctx *ctx)
{
	return ctx && ctx->nbk == 1 && ctx->bk[0].ops == &backend_segment ? ctx->bk[0].be : NULL;
}

int vramz_daemon_info_get(const vramz_ctx *ctx, vramz_daemon_info *out)
{
	struct backend *b = daemon_of(ctx);
	if (!b || !out)
		return VRAMZ_EINVAL;
	segment_backend_info(b, out);
	return 0;
}

int vramz_daemon_covers(const vramz_ctx *ctx, unsigned index)
{
	struct backend *b = daemon_of(ctx);
	return b && segment_backend_covers(b, index);
}

unsigned vramz_daemon_findings(const vramz_ctx *ctx, const vramz_finding **out)
{
	struct backend *b = daemon_of(ctx);
	if (!b) {
		*out = NULL;
		return 0;
	}
	return segment_backend_findings(b, &ctx->procs, out);
}
