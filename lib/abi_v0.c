/* SPDX-License-Identifier: Apache-2.0 */
/* abi_v0.c - the 0.1 entry points, kept for programs built against 0.1's
 * headers (tests/abi/v0 holds them, and tests/abi builds a caller).
 *
 * 0.1's caller-filled structs had no `size`; 0.2's are the same fields
 * behind a size_t, so the 0.1 fields are copied as one span (their
 * offsets relative to the first keep the same alignment either way).
 * Objects made here carry &abi_v0, so their snapshots and findings come
 * at 0.1's record sizes.  New code calls the _abi functions through
 * vramz.h's macros and never reaches this file.
 */
#include "abi.h"
#include "vramz/diagnose.h"
#include "vramz/log.h"

#include <string.h>

#undef vramz_open
#undef vramz_log_open
#undef vramz_diag_new
#undef vramz_diag_config_defaults

/* 0.1's vramz_open_opts: replay_path .. proc_util_interval_ms */
#define OPTS_V0_SPAN ABI_SPAN(vramz_open_opts, replay_path, proc_util_interval_ms)
/* 0.1's vramz_diag_config: window_ms .. proc_root */
#define CFG_V0_SPAN ABI_SPAN(vramz_diag_config, window_ms, proc_root)

VRAMZ_EXPORT int vramz_open(vramz_ctx **out, const void *opts_v0);
VRAMZ_EXPORT int vramz_log_open(vramz_log_reader **out, const char *path);
VRAMZ_EXPORT void vramz_diag_config_defaults(void *cfg_v0);
VRAMZ_EXPORT vramz_diag *vramz_diag_new(const void *cfg_v0);

int vramz_open(vramz_ctx **out, const void *opts_v0)
{
	vramz_open_opts o = VRAMZ_OPEN_OPTS_INIT;
	if (opts_v0)
		memcpy(&o.replay_path, opts_v0, OPTS_V0_SPAN);
	return vramz_open_abi(out, &o, &abi_v0);
}

int vramz_log_open(vramz_log_reader **out, const char *path)
{
	return vramz_log_open_abi(out, path, &abi_v0);
}

void vramz_diag_config_defaults(void *cfg_v0)
{
	vramz_diag_config c;
	vramz_diag_config_init(&c, sizeof c);
	memcpy(cfg_v0, &c.window_ms, CFG_V0_SPAN);
}

vramz_diag *vramz_diag_new(const void *cfg_v0)
{
	vramz_diag_config c;
	vramz_diag_config_init(&c, sizeof c);
	if (cfg_v0)
		memcpy(&c.window_ms, cfg_v0, CFG_V0_SPAN);
	return vramz_diag_new_abi(&c, &abi_v0);
}
