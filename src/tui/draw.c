/* SPDX-License-Identifier: Apache-2.0 */
/* draw.c - the drawing primitives every part of a `vramz top` frame
 * uses (draw.h): formatted text into the frame buffer, sizes in five
 * columns, a GPU's short name, the colour of a fill level or of a
 * finding's severity, and the local time of day, cheaply.
 *
 * Below the frame's layout (render.c) and its panels (gpus.c, table.c,
 * procpage.c), which all call down into it: render.c calls the panels,
 * and the panels never call back into render.c (lint.callgraph).
 */
#include "tui/draw.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "format/fmt.h"
#include "tui/term.h"
#include "vramz/diagnose.h"

int putf(int y, int x, int w, int role, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	fmt_vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return put(y, x, w, role, buf, 0);
}

const char *short_bytes(char *buf, size_t len, int valid, uint64_t b)
{
	static const char units[] = "BKMGTP";
	double v = (double)b;
	int u = 0;
	if (!valid)
		return fmt_snprintf(buf, len, "-"), buf;
	while (v >= 1000 && u < 5) {
		v /= 1024;
		u++;
	}
	fmt_snprintf(buf, len, v < 10 && u ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

const char *gpu_short_name(const char *name)
{
	if (!strncmp(name, "NVIDIA ", 7))
		return name + 7;
	return *name ? name : "?";
}

int used_role(uint64_t used, uint64_t total)
{
	if (!total)
		return ROLE_OK;
	double f = (double)used / (double)total;
	return f >= 0.95 ? ROLE_CRIT : f >= 0.80 ? ROLE_WARN : ROLE_OK;
}

int finding_role(int sev, int base)
{
	return sev >= VRAMZ_SEV_CRITICAL ? ROLE_CRIT : sev >= VRAMZ_SEV_WARNING ? ROLE_WARN : base;
}

/* The local time of ms since the epoch.  localtime_r looks the zone up
 * each call, a good part of a frame of a `top` reading a daemon; the
 * broken-down start of the minute is kept instead, since zones change
 * their offset on whole minutes. */
int local_tm(int64_t ms, struct tm *out)
{
	static time_t minute = -1;
	static struct tm at_minute;
	time_t t = (time_t)(ms / 1000), m = t - t % 60;
	if (ms < 0)
		return 0;
	if (m != minute) {
		if (!localtime_r(&m, &at_minute))
			return minute = -1, 0;
		minute = m;
	}
	if (at_minute.tm_sec) /* an offset with seconds (a zone's old LMT) */
		return localtime_r(&t, out) != NULL;
	*out = at_minute;
	out->tm_sec = (int)(t - m);
	return 1;
}
