/* SPDX-License-Identifier: Apache-2.0 */
/* logfmt.c - how a tick becomes CSV text: the column lists of both files,
 * their headers, the rows, ISO 8601 times, and the names of siblings and
 * rotated files.  The GPU columns come from the field table (lib/fields.c)
 * so the log, JSON and metrics cannot disagree about a name or a unit; the
 * process columns are lib/procfields.c's table, which the reader, JSON and
 * the exporter walk too.
 *
 * Formatting runs on every tick of a logger that may run at 10 Hz for
 * months, so numbers are written by hand into one reused buffer rather
 * than through printf.
 */
#include "logfile.h"

#include <stdlib.h>
#include <string.h>

#include "fields.h"

int logbuf_reserve(struct logbuf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	size_t ncap = b->cap ? b->cap : 4096;
	while (ncap - b->len < more)
		ncap *= 2;
	char *np = realloc(b->p, ncap);
	if (!np)
		return VRAMZ_ENOMEM;
	b->p = np;
	b->cap = ncap;
	return 0;
}

void logbuf_free(struct logbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* ---- names ---- */

/* Where the extension starts: the last '.' of the base name, not its first
 * character; strlen when there is none. */
static size_t ext_pos(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	return dot && dot != base ? (size_t)(dot - path) : strlen(path);
}

static int insert_before_ext(const char *path, const char *mid, char *out, size_t outlen)
{
	size_t e = ext_pos(path), ml = strlen(mid), rest = strlen(path + e);
	if (e + ml + rest + 1 > outlen)
		return VRAMZ_ERANGE;
	memmove(out, path, e);
	memcpy(out + e, mid, ml);
	memcpy(out + e + ml, path + e, rest + 1);
	return 0;
}

int log_sibling_path(const char *path, char *out, size_t outlen)
{
	return insert_before_ext(path, ".procs", out, outlen);
}

int log_events_path(const char *path, char *out, size_t outlen)
{
	return insert_before_ext(path, ".events", out, outlen);
}

int log_rotated_path(const char *path, unsigned n, char *out, size_t outlen)
{
	char mid[16];
	size_t i = sizeof mid;
	mid[--i] = 0;
	do
		mid[--i] = (char)('0' + n % 10);
	while ((n /= 10) && i > 1);
	mid[--i] = '.';
	return insert_before_ext(path, mid + i, out, outlen);
}

/* ---- time (proleptic Gregorian, H. Hinnant's civil-day algorithms) ---- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

size_t log_fmt_time(char *out, int64_t unix_ms)
{
	int64_t days = unix_ms >= 0 ? unix_ms / 86400000 : -((-unix_ms + 86399999) / 86400000);
	int64_t ms = unix_ms - days * 86400000;
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	unsigned d = doy - (153 * mp + 2) / 5 + 1;
	unsigned m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
	if (y < 0)
		y = 0; /* before year 0: not a time a GPU was sampled */
	if (y > 9999)
		y = 9999;
	unsigned sec = (unsigned)(ms / 1000), msec = (unsigned)(ms % 1000);
	put2(out, (unsigned)(y / 100));
	put2(out + 2, (unsigned)(y % 100));
	out[4] = '-';
	put2(out + 5, m);
	out[7] = '-';
	put2(out + 8, d);
	out[10] = 'T';
	put2(out + 11, sec / 3600);
	out[13] = ':';
	put2(out + 14, sec / 60 % 60);
	out[16] = ':';
	put2(out + 17, sec % 60);
	out[19] = '.';
	out[20] = (char)('0' + msec / 100);
	put2(out + 21, msec % 100);
	out[23] = 'Z';
	out[24] = 0;
	return LOG_TIME_LEN;
}

static int iso_digits(const char *s, unsigned n, unsigned *v)
{
	unsigned x = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

int log_parse_time(const char *s, size_t n, int64_t *unix_ms)
{
	static const unsigned char mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	unsigned y, mo, d, h, mi, se, frac = 0;
	if (n < 20 || s[n - 1] != 'Z' || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
		return VRAMZ_EPARSE;
	if (iso_digits(s, 4, &y) || iso_digits(s + 5, 2, &mo) || iso_digits(s + 8, 2, &d) ||
	    iso_digits(s + 11, 2, &h) || iso_digits(s + 14, 2, &mi) || iso_digits(s + 17, 2, &se))
		return VRAMZ_EPARSE;
	if (n > 20) {
		/* ".f" to ".fffffffff": milliseconds, the rest cut */
		size_t nf = n - 21;
		if (s[19] != '.' || nf < 1 || nf > 9)
			return VRAMZ_EPARSE;
		unsigned f;
		if (iso_digits(s + 20, (unsigned)nf, &f))
			return VRAMZ_EPARSE;
		static const unsigned scale[] = {0, 100, 10, 1, 1, 1, 1, 1, 1, 1};
		static const unsigned div[] = {0, 1, 1, 1, 10, 100, 1000, 10000, 100000, 1000000};
		frac = f * scale[nf] / div[nf];
	}
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59)
		return VRAMZ_EPARSE;
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return VRAMZ_EPARSE;
	*unix_ms = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000 + frac;
	return 0;
}

/* ---- columns ---- */

int log_gpu_header(struct logbuf *b)
{
	size_t need = sizeof LOG_GPU_ID_COLUMNS + 2;
	for (size_t i = 0; i < gpu_field_count; i++)
		need += strlen(gpu_fields[i].name) + 1;
	if (logbuf_reserve(b, need))
		return VRAMZ_ENOMEM;
	memcpy(b->p + b->len, LOG_GPU_ID_COLUMNS, sizeof LOG_GPU_ID_COLUMNS - 1);
	b->len += sizeof LOG_GPU_ID_COLUMNS - 1;
	for (size_t i = 0; i < gpu_field_count; i++) {
		size_t l = strlen(gpu_fields[i].name);
		b->p[b->len++] = ',';
		memcpy(b->p + b->len, gpu_fields[i].name, l);
		b->len += l;
	}
	b->p[b->len++] = '\n';
	return 0;
}

int log_proc_header(struct logbuf *b)
{
	for (size_t i = 0; i < log_proc_column_count; i++) {
		size_t l = strlen(log_proc_columns[i].name);
		if (logbuf_reserve(b, l + 1))
			return VRAMZ_ENOMEM;
		memcpy(b->p + b->len, log_proc_columns[i].name, l);
		b->len += l;
		b->p[b->len++] = i + 1 < log_proc_column_count ? ',' : '\n';
	}
	return 0;
}

/* ---- rows ---- */

/* Callers reserve room first: a number is at most 20 digits and a sign. */
static void put_u64(struct logbuf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(b->p + b->len, tmp + i, sizeof tmp - (size_t)i);
	b->len += sizeof tmp - (size_t)i;
}

static void put_i64(struct logbuf *b, int64_t v)
{
	if (v < 0) {
		b->p[b->len++] = '-';
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

int log_put_raw(struct logbuf *b, const char *s, size_t n)
{
	if (logbuf_reserve(b, n))
		return VRAMZ_ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

int log_put_str(struct logbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (logbuf_reserve(b, 2 * n + 3))
		return VRAMZ_ENOMEM;
	int quote = n && (s[0] == ' ' || s[n - 1] == ' ');
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (quote)
		b->p[b->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		char c = s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
		if (c == '"')
			b->p[b->len++] = '"';
		b->p[b->len++] = c;
	}
	if (quote)
		b->p[b->len++] = '"';
	return 0;
}

static int put_ident(struct logbuf *b, const vramz_gpu_info *gi)
{
	/* name and UUID are the driver's strings: quote them if they need it */
	if (gi && (log_put_str(b, gi->uuid) || logbuf_reserve(b, 1)))
		return VRAMZ_ENOMEM;
	b->p[b->len++] = ',';
	if (gi && (log_put_str(b, gi->name) || logbuf_reserve(b, 1)))
		return VRAMZ_ENOMEM;
	b->p[b->len++] = ',';
	if (gi && (log_put_str(b, gi->pci_bus_id) || logbuf_reserve(b, 1)))
		return VRAMZ_ENOMEM;
	b->p[b->len++] = ',';
	return 0;
}

static void put_types(struct logbuf *b, unsigned type)
{
	static const char *const names[] = {"compute", "graphics", "mps"};
	int first = 1;
	for (unsigned i = 0; i < 3; i++) {
		if (!(type & (1u << i)))
			continue;
		if (!first)
			b->p[b->len++] = '+';
		memcpy(b->p + b->len, names[i], strlen(names[i]));
		b->len += strlen(names[i]);
		first = 0;
	}
}

static int format_procs(struct logbuf *b, const char *t, const vramz_snapshot *s,
			const vramz_gpu_sample *g, const vramz_gpu_info *gi)
{
	for (unsigned k = 0; k < g->proc_count; k++) {
		const vramz_proc_sample *p = &s->procs[g->proc_first + k];
		for (size_t c = 0; c < log_proc_column_count; c++) {
			const struct log_pcol *col = &log_proc_columns[c];
			const char *field = (const char *)p + col->offset;
			if (logbuf_reserve(b, 64))
				return VRAMZ_ENOMEM;
			if (c)
				b->p[b->len++] = ',';
			if (!proc_field_valid(col, p))
				continue;
			switch (col->kind) {
			case PC_TIME:
				memcpy(b->p + b->len, t, LOG_TIME_LEN);
				b->len += LOG_TIME_LEN;
				break;
			case PC_GPU: put_u64(b, g->index); break;
			case PC_UUID:
				if (gi && log_put_str(b, gi->uuid))
					return VRAMZ_ENOMEM;
				break;
			case PC_PID: put_u64(b, p->pid); break;
			case PC_TYPE: put_types(b, p->type); break;
			case PC_U32: put_u64(b, *(const uint32_t *)field); break;
			case PC_UINT: put_u64(b, *(const unsigned *)field); break;
			case PC_U64: put_u64(b, *(const uint64_t *)field); break;
			case PC_STR:
				if (log_put_str(b, field))
					return VRAMZ_ENOMEM;
				break;
			}
		}
		b->p[b->len++] = '\n';
	}
	return 0;
}

int log_format_tick(struct logbuf *gpu, struct logbuf *procs,
		    const vramz_snapshot *snap, log_info_fn info, void *arg)
{
	char t[LOG_TIME_LEN + 1];
	log_fmt_time(t, snap->time_ms);
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		const vramz_gpu_info *gi = info ? info(arg, g->index) : NULL;
		if (logbuf_reserve(gpu, LOG_TIME_LEN + 32))
			return VRAMZ_ENOMEM;
		memcpy(gpu->p + gpu->len, t, LOG_TIME_LEN);
		gpu->len += LOG_TIME_LEN;
		gpu->p[gpu->len++] = ',';
		put_u64(gpu, g->index);
		gpu->p[gpu->len++] = ',';
		if (put_ident(gpu, gi) || logbuf_reserve(gpu, 32 + 22 * gpu_field_count))
			return VRAMZ_ENOMEM;
		gpu->p[gpu->len++] = g->lost ? '1' : '0';
		gpu->p[gpu->len++] = ',';
		if (procs && !g->lost && (g->valid & VRAMZ_F_PROCS))
			put_u64(gpu, g->proc_count);
		for (size_t f = 0; f < gpu_field_count; f++) {
			gpu->p[gpu->len++] = ',';
			if (!field_valid(&gpu_fields[f], g))
				continue;
			if (gpu_fields[f].type == FT_U64) /* full unsigned range */
				put_u64(gpu, (uint64_t)field_get(&gpu_fields[f], g));
			else
				put_i64(gpu, field_get(&gpu_fields[f], g));
		}
		gpu->p[gpu->len++] = '\n';
		if (procs && !g->lost && format_procs(procs, t, snap, g, gi))
			return VRAMZ_ENOMEM;
	}
	return 0;
}
