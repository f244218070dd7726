/* SPDX-License-Identifier: Apache-2.0 */
/* fmt.c - human formatting shared by the table views (see fmt.h). */
#include "format/fmt.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
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

/* ---- fmt_snprintf ---------------------------------------------------------- */

struct sink {
	char *buf;
	size_t len, n; /* n: bytes the whole output takes */
};

static void sink_put(struct sink *o, const char *s, size_t n)
{
	if (o->n < o->len) {
		size_t room = o->len - 1 - o->n;
		memcpy(o->buf + o->n, s, n < room ? n : room);
	}
	o->n += n;
}

static void sink_pad(struct sink *o, char c, int n)
{
	char t[32];
	memset(t, c, sizeof t);
	for (; n > 0; n -= (int)sizeof t)
		sink_put(o, t, n < (int)sizeof t ? (size_t)n : sizeof t);
}

/* sign (may be empty) and digits, padded to width as printf pads a number */
static void sink_num(struct sink *o, const char *sign, const char *d, size_t nd, int width,
		     int left, int zero)
{
	size_t ns = strlen(sign);
	int pad = width - (int)(ns + nd);
	if (!left && !zero)
		sink_pad(o, ' ', pad);
	sink_put(o, sign, ns);
	if (!left && zero)
		sink_pad(o, '0', pad);
	sink_put(o, d, nd);
	if (left)
		sink_pad(o, ' ', pad);
}

/* v's digits with prec decimals as %.{prec}f writes them (no sign): the
 * exact binary value rounded to nearest, ties to even.  0: not done here
 * (not finite, or 2^63 or more). */
static size_t fixed_digits(char *t, double v, int prec)
{
	if (!(v < 9.2e18) || prec > 9) /* also NaN */
		return 0;
	int e;
	double m = frexp(v, &e);
	uint64_t mant = (uint64_t)ldexp(m, 53); /* v = mant * 2^(e - 53), exactly */
	e -= 53;
	uint64_t p10 = 1;
	for (int i = 0; i < prec; i++)
		p10 *= 10;
	unsigned __int128 n = (unsigned __int128)mant * p10, q;
	if (e >= 0) {
		q = n << e; /* e <= 10 here: mant * 2^e < 2^63 */
	} else if (-e >= 100) {
		q = 0; /* n < 2^83: below half of 2^-e */
	} else {
		unsigned sh = (unsigned)-e;
		q = n >> sh;
		unsigned __int128 r = n - (q << sh), half = (unsigned __int128)1 << (sh - 1);
		if (r > half || (r == half && (q & 1)))
			q++;
	}
	char *p = fmt_put_u64(t, (uint64_t)(q / p10));
	if (prec > 0) {
		*p++ = '.';
		uint64_t f = (uint64_t)(q % p10);
		for (int i = prec - 1; i >= 0; i--, f /= 10)
			p[i] = (char)('0' + f % 10);
		p += prec;
	}
	return (size_t)(p - t);
}

/* A run of digits at *p into *v (0 when none), *p past it; -1 past 4096,
 * more than any width or precision here takes */
static int spec_digits(const char **p, int *v)
{
	for (; **p >= '0' && **p <= '9'; (*p)++)
		if ((*v = *v * 10 + (**p - '0')) > 4096)
			return -1;
	return 0;
}

int fmt_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	va_list whole;
	va_copy(whole, ap);
	struct sink o = {buf, len, 0};
	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			const char *e = strchr(p, '%');
			size_t n = e ? (size_t)(e - p) : strlen(p);
			sink_put(&o, p, n);
			p += n - 1;
			continue;
		}
		p++;
		int left = 0, zero = 0, width = 0, prec = -1, lmod = 0;
		for (;; p++) {
			if (*p == '-')
				left = 1;
			else if (*p == '0')
				zero = 1;
			else
				break;
		}
		if (*p == '*') {
			width = va_arg(ap, int);
			if (width < 0) {
				left = 1;
				width = -width;
			}
			p++;
		} else if (spec_digits(&p, &width)) {
			goto glibc;
		}
		if (*p == '.') {
			p++;
			prec = 0;
			if (*p == '*') {
				prec = va_arg(ap, int);
				p++;
			} else if (spec_digits(&p, &prec)) {
				goto glibc;
			}
		}
		if (*p == 'z') {
			lmod = 1; /* size_t: unsigned long here */
			p++;
		} else {
			for (; *p == 'l' && lmod < 2; p++)
				lmod++;
		}
		if (left)
			zero = 0;
		char t[48];
		switch (*p) {
		case '%':
			if (width || prec >= 0 || lmod || left || zero)
				goto glibc;
			sink_put(&o, "%", 1);
			break;
		case 'c':
			if (prec >= 0 || lmod || zero)
				goto glibc;
			t[0] = (char)va_arg(ap, int);
			sink_num(&o, "", t, 1, width, left, 0);
			break;
		case 's': {
			if (lmod || zero)
				goto glibc;
			const char *s = va_arg(ap, const char *);
			if (!s)
				goto glibc;
			size_t n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
			sink_num(&o, "", s, n, width, left, 0);
			break;
		}
		case 'd':
		case 'i': {
			if (prec >= 0)
				goto glibc;
			long long v = lmod == 2 ? va_arg(ap, long long) : lmod ? va_arg(ap, long) : va_arg(ap, int);
			uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
			sink_num(&o, v < 0 ? "-" : "", t, (size_t)(fmt_put_u64(t, u) - t), width, left, zero);
			break;
		}
		case 'u': {
			if (prec >= 0)
				goto glibc;
			unsigned long long v = lmod == 2 ? va_arg(ap, unsigned long long)
				: lmod ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
			sink_num(&o, "", t, (size_t)(fmt_put_u64(t, v) - t), width, left, zero);
			break;
		}
		case 'f': {
			if (lmod)
				goto glibc;
			double v = va_arg(ap, double);
			size_t n = fixed_digits(t, signbit(v) ? -v : v, prec < 0 ? 6 : prec);
			if (!n)
				goto glibc;
			sink_num(&o, signbit(v) ? "-" : "", t, n, width, left, zero);
			break;
		}
		default:
			goto glibc;
		}
	}
	if (len)
		buf[o.n < len ? o.n : len - 1] = 0;
	va_end(whole);
	return o.n > INT_MAX ? -1 : (int)o.n;
glibc:;
	int r = vsnprintf(buf, len, fmt, whole);
	va_end(whole);
	return r;
}

int fmt_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = fmt_vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return r;
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
			fmt_snprintf(buf, len, "%llu B", (unsigned long long)b);
		else if (u <= 2)
			fmt_snprintf(buf, len, "%.0f %s", v, units[u]);
		else
			fmt_snprintf(buf, len, v < 10 ? "%.2f %s" : "%.1f %s", v, units[u]);
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
		fmt_snprintf(buf, len, "-");
		return buf;
	}
	return fmt_bytes(buf, len, bytes);
}

const char *fmt_uint_if(char *buf, size_t len, int valid, unsigned v, const char *suffix)
{
	if (!valid)
		fmt_snprintf(buf, len, "-");
	else
		fmt_snprintf(buf, len, "%u%s", v, suffix ? suffix : "");
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
		fmt_snprintf(buf, len, "-");
	else if (s < 60)
		fmt_snprintf(buf, len, "%llds", (long long)s);
	else if (s < 3600)
		fmt_snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		fmt_snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		fmt_snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
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
		fmt_snprintf(buf, len, "%s", s);
	} else {
		fmt_snprintf(buf, len, "%.*s+", (int)cut, s);
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
		fmt_snprintf(buf, len, "slurm:%s", p->slurm_job);
	else if (p->pod[0] && p->pod_namespace[0])
		fmt_snprintf(buf, len, "%s/%s", p->pod_namespace, p->pod);
	else if (p->pod_uid[0])
		fmt_snprintf(buf, len, "pod:%.8s", p->pod_uid);
	else if (p->container[0])
		fmt_snprintf(buf, len, "container:%.12s", p->container);
	return buf;
}

/* Display columns of s, as fmt_trunc counts them (UTF-8 lead bytes). */
static size_t fmt_cols(const char *s)
{
	size_t cols = 0;
	for (; *s; s++)
		cols += ((unsigned char)*s & 0xc0) != 0x80;
	return cols;
}

const char *fmt_job_width(char *buf, size_t len, const vramz_proc_sample *p, size_t width)
{
	char job[VRAMZ_POD_LEN + VRAMZ_KUBE_NAME_LEN + 2];

	fmt_job(job, sizeof job, p);
	if (!(p->valid & VRAMZ_P_VISIBLE) || !p->pod[0] || !p->pod_namespace[0])
		return fmt_trunc(buf, len, job, width);
	/* a named pod: its container too when that fits, else the pod cut */
	if (p->container_name[0]) {
		int n = fmt_snprintf(buf, len, "%s (%s)", job, p->container_name);
		if (n > 0 && (size_t)n < len && (!width || fmt_cols(buf) <= width))
			return buf;
	}
	return fmt_trunc(buf, len, job, width);
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
