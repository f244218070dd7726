/* fmt.c - human formatting shared by the table views (see fmt.h). */
#include "fmt.h"

#include <string.h>
#include <time.h>

#include "cli.h"

/* b * scale / 2^shift rounded to nearest, ties to even: what printf's
 * %.Nf does with the exact binary value b / 2^shift * 10^N */
static uint64_t scaled_round(uint64_t b, unsigned scale, unsigned shift)
{
	unsigned __int128 n = (unsigned __int128)b * scale;
	unsigned __int128 q = n >> shift, r = n - (q << shift), half = (unsigned __int128)1 << (shift - 1);
	if (r > half || (r == half && (q & 1)))
		q++;
	return (uint64_t)q;
}

char *fmt_put_u64(char *p, uint64_t v)
{
	char t[24];
	int n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}

/* Sizes as "812 MiB", "1.50 GiB", "24.0 GiB": 3 significant figures from
 * GiB up.  The numbers are printf's (%.0f, %.2f, %.1f of the value in its
 * unit, rounded the same way) but made with integers: top draws dozens a
 * frame, and printf's floating-point path cost a tenth of a frame. */
const char *fmt_bytes(char *buf, size_t len, uint64_t b)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	unsigned u = 0;
	while (u < 5 && b >> (10 * u) >= 1024)
		u++;
	if (b >= (1ull << 53) || len < 16) { /* past a double's exact integers: printf itself */
		double v = (double)b;
		for (unsigned i = 0; i < u; i++)
			v /= 1024;
		if (u == 0)
			snprintf(buf, len, "%llu B", (unsigned long long)b);
		else if (u <= 2)
			snprintf(buf, len, "%.0f %s", v, units[u]);
		else
			snprintf(buf, len, v < 10 ? "%.2f %s" : "%.1f %s", v, units[u]);
		return buf;
	}
	char *p = buf;
	if (u == 0) {
		p = fmt_put_u64(p, b);
	} else if (u <= 2) {
		p = fmt_put_u64(p, scaled_round(b, 1, 10 * u));
	} else {
		int two = b < (10ull << (10 * u)); /* the value below 10 in its unit */
		uint64_t q = scaled_round(b, two ? 100 : 10, 10 * u);
		p = fmt_put_u64(p, q / (two ? 100 : 10));
		*p++ = '.';
		if (two)
			*p++ = (char)('0' + q % 100 / 10);
		*p++ = (char)('0' + q % 10);
	}
	*p++ = ' ';
	size_t n = strlen(units[u]);
	memcpy(p, units[u], n + 1);
	return buf;
}

const char *fmt_bytes_if(char *buf, size_t len, int valid, uint64_t bytes)
{
	if (!valid) {
		snprintf(buf, len, "-");
		return buf;
	}
	return fmt_bytes(buf, len, bytes);
}

const char *fmt_uint_if(char *buf, size_t len, int valid, unsigned v, const char *suffix)
{
	if (!valid)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%u%s", v, suffix ? suffix : "");
	return buf;
}

const char *fmt_iso_ms(char *buf, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	char s[32];
	strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", s, (int)(ms % 1000 + 1000) % 1000);
	return buf;
}

const char *fmt_duration(char *buf, size_t len, int64_t ms)
{
	int64_t s = ms / 1000;
	if (ms < 0)
		snprintf(buf, len, "-");
	else if (s < 60)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
	return buf;
}

const char *fmt_trunc(char *buf, size_t len, const char *s, size_t width)
{
	/* counts UTF-8 lead bytes as columns; good enough for commands/names */
	size_t cols = 0, i = 0, cut = 0;
	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (cols == (width ? width - 1 : 0))
			cut = i;
		cols++;
	}
	if (cols <= width || width == 0) {
		snprintf(buf, len, "%s", s);
	} else {
		snprintf(buf, len, "%.*s+", (int)cut, s);
	}
	return buf;
}

const struct colors *colors_for(FILE *f)
{
	static const struct colors on = {"\033[1m", "\033[2m", "\033[31m", "\033[33m",
					 "\033[32m", "\033[36m", "\033[0m"};
	static const struct colors off = {"", "", "", "", "", "", ""};
	return cli_color(f) ? &on : &off;
}

const char *fmt_job(char *buf, size_t len, const vramz_proc_sample *p)
{
	buf[0] = 0;
	if (!(p->valid & VRAMZ_P_VISIBLE))
		return buf;
	if (p->slurm_job[0])
		snprintf(buf, len, "slurm:%s", p->slurm_job);
	else if (p->pod_uid[0])
		snprintf(buf, len, "pod:%.8s", p->pod_uid);
	else if (p->container[0])
		snprintf(buf, len, "container:%.12s", p->container);
	return buf;
}

const char *fmt_drivers(char *buf, size_t len, vramz_ctx *ctx, const char *sep)
{
	const vramz_system_info *s = vramz_system(ctx);
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned k = 0; k < vramz_backend_count(ctx) && at < len; k++) {
		const vramz_backend_info *bi = vramz_backend(ctx, k);
		const char *drv = *bi->driver_version ? bi->driver_version : "-";
		int n;
		/* a daemon's segment carries NVML's facts on an NVIDIA machine */
		if (!strcmp(bi->name, "nvml") || !strcmp(bi->name, "daemon")) {
			char cuda[16] = "-";
			if (s->nvidia.cuda_driver_version)
				snprintf(cuda, sizeof cuda, "%d.%d", s->nvidia.cuda_driver_version / 1000,
					 s->nvidia.cuda_driver_version % 1000 / 10);
			n = snprintf(buf + at, len - at, "%sdriver %s%sCUDA %s", k ? sep : "", drv, sep, cuda);
		} else {
			n = snprintf(buf + at, len - at, "%s%s driver %s", k ? sep : "", bi->name, drv);
		}
		at += n > 0 ? (size_t)n : 0;
	}
	return buf;
}
