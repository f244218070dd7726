/* SPDX-License-Identifier: Apache-2.0 */
/* events.c - the driver's events through the public API (vramz.h,
 * "driver events"): the first backend that has events (NVML's) is
 * registered for the selected GPUs, and its events come back with global
 * GPU indices and the time they were received.  One backend only: a wait
 * blocks inside the driver, and no other backend has events today. */
#include "ctx_internal.h"

#include <stdlib.h>

#include "clock.h"

int vramz_events_open(vramz_ctx *ctx)
{
	if (!ctx)
		return VRAMZ_EINVAL;
	for (unsigned k = 0; k < ctx->nbk; k++) {
		const struct ctx_backend *c = &ctx->bk[k];
		if (!c->ops->events_open || !c->ops->events_wait)
			continue;
		unsigned char *sel = calloc(c->info.gpu_count ? c->info.gpu_count : 1, 1);
		if (!sel)
			return ctx_fail(ctx, VRAMZ_ENOMEM, "out of memory");
		for (unsigned i = 0; i < ctx->nsel; i++) {
			unsigned g = ctx->sel[i];
			if (g >= c->info.gpu_first && g - c->info.gpu_first < c->info.gpu_count)
				sel[g - c->info.gpu_first] = 1;
		}
		int n = c->ops->events_open(c->be, sel);
		free(sel);
		if (n < 0)
			return ctx_fail(ctx, n, "%s: cannot register for events", c->info.name);
		ctx->ev_on = 1;
		ctx->ev_bk = k;
		return n;
	}
	return ctx_fail(ctx, VRAMZ_EUNSUPPORTED, "no backend with driver events");
}

int vramz_events_wait(vramz_ctx *ctx, unsigned timeout_ms, vramz_event *ev)
{
	if (!ctx || !ev || !ctx->ev_on)
		return VRAMZ_EINVAL;
	const struct ctx_backend *c = &ctx->bk[ctx->ev_bk];
	unsigned idx = 0, type = 0;
	uint64_t data = 0;
	int rc = c->ops->events_wait(c->be, timeout_ms, &idx, &type, &data);
	if (rc <= 0)
		return rc < 0 ? ctx_fail(ctx, rc, "%s: waiting for events failed", c->info.name) : 0;
	ev->gpu = c->info.gpu_first + idx;
	ev->type = type;
	ev->data = data;
	ev->time_ms = (uint64_t)clock_real_ms();
	return 1;
}
