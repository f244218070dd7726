/* SPDX-License-Identifier: Apache-2.0 */
/* source.c - a live daemon or the driver (source.h): the decision, and how
 * the views say which one they show. */
#include "source.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "format/fmt.h"
#include "vramz/daemon.h"

/* NULL when the daemon serves this command, else why not. */
static const char *unfit(vramz_ctx *ctx, unsigned need, int64_t interval_ms)
{
	vramz_daemon_info di;
	if (vramz_daemon_info_get(ctx, &di) < 0)
		return "not a daemon";
	if ((need & VRAMZ_SAMPLE_PROCS) && !di.procs)
		return "it publishes no processes (vramz daemon --procs)";
	if (interval_ms > 0 && di.interval_ms > interval_ms)
		return "it samples less often than asked";
	if (g_opts.gpus) {
		if (vramz_select(ctx, g_opts.gpus) < 0)
			return "it does not sample the GPUs asked for";
		for (unsigned i = 0; i < vramz_selected_count(ctx); i++)
			if (!vramz_daemon_covers(ctx, vramz_selected_index(ctx, i)))
				return "it does not sample the GPUs asked for";
	} else {
		for (unsigned i = 0; i < vramz_gpu_count(ctx); i++)
			if (!vramz_daemon_covers(ctx, i))
				return "it does not sample every GPU";
	}
	return NULL;
}

int source_open(vramz_ctx **out, unsigned need, int64_t interval_ms)
{
	static int warned;
	const char *off = getenv("VRAMZ_NO_DAEMON");
	*out = NULL;
	if (!g_opts.live && !g_opts.replay && !(off && *off && strcmp(off, "0"))) {
		vramz_ctx *ctx;
		int rc = vramz_open_daemon(&ctx, NULL, 0);
		if (rc == 0 && !unfit(ctx, need, interval_ms)) {
			*out = ctx;
			return 0;
		}
		if (rc < 0 && rc != VRAMZ_ENOTFOUND && ctx && !warned) {
			cli_err("ignoring %s; reading the driver", vramz_last_error(ctx));
			warned = 1;
		}
		vramz_close(ctx);
	}
	return cli_open(out);
}

int source_open_sample(vramz_ctx **ctx, unsigned flags, const vramz_snapshot **snap)
{
	int ex = source_open(ctx, flags, 0);
	if (ex)
		return ex;
	int rc = vramz_sample(*ctx, flags, snap);
	if (rc < 0 && rc != VRAMZ_ELOST && source_is_daemon(*ctx)) {
		/* the daemon stopped between open and now: the driver then */
		vramz_close(*ctx);
		if ((ex = cli_open(ctx)))
			return ex;
		rc = vramz_sample(*ctx, flags, snap);
	}
	if (rc < 0 && rc != VRAMZ_ELOST) {
		cli_err("sampling failed: %s%s%s", vramz_strerror(rc),
			*vramz_last_error(*ctx) ? ": " : "", vramz_last_error(*ctx));
		vramz_close(*ctx);
		*ctx = NULL;
		return EXIT_FAIL;
	}
	return 0;
}

int source_is_daemon(const vramz_ctx *ctx)
{
	vramz_daemon_info di;
	return vramz_daemon_info_get(ctx, &di) == 0;
}

const char *source_str(const vramz_ctx *ctx, char *buf, size_t len)
{
	vramz_daemon_info di;
	if (vramz_daemon_info_get(ctx, &di) < 0) {
		if (len)
			buf[0] = 0;
		return buf;
	}
	snprintf(buf, len, "vramz daemon pid %u, snapshot %.1f s old", (unsigned)di.pid,
		 (double)di.age_ms / 1000);
	return buf;
}

void source_line(FILE *f, const vramz_ctx *ctx)
{
	char s[128];
	if (*source_str(ctx, s, sizeof s))
		fprintf(f, "(from %s; --live reads the driver)\n", s);
}
