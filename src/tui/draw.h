/* SPDX-License-Identifier: Apache-2.0 */
/* draw.h - the drawing primitives of `vramz top`'s frame (draw.c), below
 * the layout (render.c) and every panel.  Internal to src/tui/. */
#ifndef VRAMZ_TUI_DRAW_H
#define VRAMZ_TUI_DRAW_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tui/fb.h"

/* fb_put */
static inline int put(int y, int x, int w, int role, const char *s, int pad)
{
	return fb_put(y, x, w, role, s, pad);
}
/* fb_put of fmt_snprintf's text, unpadded */
int putf(int y, int x, int w, int role, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* "12.3G", "812M", "140G": sizes in five columns; "-" unknown */
const char *short_bytes(char *buf, size_t len, int valid, uint64_t b);
/* "H200" of "NVIDIA H200"; "?" unknown */
const char *gpu_short_name(const char *name);
/* ok, then warn from 80 % of total and crit from 95 % */
int used_role(uint64_t used, uint64_t total);
/* The colour of what a finding of severity sev names; base when none. */
int finding_role(int sev, int base);
/* The local time of ms since the epoch, cheaply (no zone lookup a call). */
int local_tm(int64_t ms, struct tm *out);

#endif
