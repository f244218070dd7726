/* SPDX-License-Identifier: Apache-2.0 */
/* amdgpu_parse.c - the amdgpu backend's parsers: sysfs counts, the
 * pp_dpm_* clock tables, PCIe link speeds, uevent, and the DRM core's
 * per-client fdinfo; plus the table of facts by PCI device id.
 *
 * Formats are those of the kernel's documentation: "amdgpu sysfs"
 * (Documentation/gpu/amdgpu/driver-misc.rst, thermal.rst) and "DRM client
 * usage stats" (Documentation/gpu/drm-usage-stats.rst).  Input is whatever
 * a file held: garbage, a truncated line or a number too large for its
 * field is "unknown" (-1), never a wrapped or guessed value.  The fuzz
 * target tests/fuzz/fuzz_amdgpu.c runs every parser here.
 */
#include "amdgpu_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Decimal digits at *p into *out; advances p.  -1 on none or overflow. */
static int dec_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int amd_parse_u64(const char *text, uint64_t *out)
{
	const char *p = skip_blank(text);
	uint64_t v;

	if (dec_u64(&p, &v))
		return -1;
	p = skip_blank(p);
	if (*p == '\n')
		p++;
	if (*p)
		return -1;
	*out = v;
	return 0;
}

/* One pp_dpm line "N: 1200Mhz[ *]": its MHz and whether it is starred. */
static int dpm_line(const char *line, const char *end, unsigned *mhz, int *star)
{
	const char *p = skip_blank(line);
	uint64_t lvl, v;

	if (dec_u64(&p, &lvl) || *p++ != ':')
		return -1;
	p = skip_blank(p);
	if (dec_u64(&p, &v) || v == 0 || v > 100000 || strncasecmp(p, "mhz", 3))
		return -1;
	p = skip_blank(p + 3);
	*star = p < end && *p == '*';
	*mhz = (unsigned)v;
	return 0;
}

static int dpm_walk(const char *text, unsigned *mhz, int want_star)
{
	int found = 0;

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l);
		unsigned v;
		int star;
		if (!dpm_line(l, end, &v, &star)) {
			if (want_star && star) {
				*mhz = v;
				return 0;
			}
			if (!want_star && (!found || v > *mhz)) {
				*mhz = v;
				found = 1;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	return found ? 0 : -1;
}

int amd_parse_dpm_current(const char *text, unsigned *mhz)
{
	return dpm_walk(text, mhz, 1);
}

int amd_parse_dpm_max(const char *text, unsigned *mhz)
{
	return dpm_walk(text, mhz, 0);
}

int amd_parse_link_gen(const char *text, unsigned *gen)
{
	static const struct { const char *rate; unsigned gen; } rates[] = {
		{"2.5 ", 1}, {"5.0 ", 2}, {"5 ", 2}, {"8.0 ", 3}, {"8 ", 3},
		{"16.0 ", 4}, {"16 ", 4}, {"32.0 ", 5}, {"32 ", 5}, {"64.0 ", 6}, {"64 ", 6},
	};
	const char *p = skip_blank(text);

	for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
		size_t n = strlen(rates[i].rate);
		if (!strncmp(p, rates[i].rate, n) && !strncmp(skip_blank(p + n), "GT/s", 4)) {
			*gen = rates[i].gen;
			return 0;
		}
	}
	return -1;
}

static void copy_lower(char *dst, size_t cap, const char *src, size_t n)
{
	size_t i;

	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

/* The value of "KEY=" / "key:" lines: start and length, to the line end. */
static const char *line_value(const char *line, const char *end, const char *key, size_t *len)
{
	size_t k = strlen(key);

	if ((size_t)(end - line) < k || strncmp(line, key, k))
		return NULL;
	const char *v = skip_blank(line + k);
	const char *e = end;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*len = (size_t)(e - v);
	return v;
}

static int hex_pair(const char *v, size_t len, unsigned *a, unsigned *b)
{
	char buf[16], *e1, *e2;

	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	unsigned long x = strtoul(buf, &e1, 16);
	if (e1 == buf || *e1 != ':' || x > 0xffff)
		return -1;
	unsigned long y = strtoul(e1 + 1, &e2, 16);
	if (e2 == e1 + 1 || *e2 || y > 0xffff)
		return -1;
	*a = (unsigned)x;
	*b = (unsigned)y;
	return 0;
}

int amd_parse_uevent(const char *text, struct amd_uevent *out)
{
	memset(out, 0, sizeof *out);
	int have_id = 0;
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l), *v;
		size_t len;
		if ((v = line_value(l, end, "DRIVER=", &len)))
			copy_lower(out->driver, sizeof out->driver, v, len);
		else if ((v = line_value(l, end, "PCI_SLOT_NAME=", &len)))
			copy_lower(out->slot, sizeof out->slot, v, len);
		else if ((v = line_value(l, end, "PCI_ID=", &len)))
			have_id = !hex_pair(v, len, &out->vendor_id, &out->device_id);
		l = nl ? nl + 1 : NULL;
	}
	return out->driver[0] && out->slot[0] && have_id ? 0 : -1;
}

/* "<uint> [KiB|MiB|GiB]" or a bare count of bytes. */
static int mem_value(const char *v, size_t len, uint64_t *bytes)
{
	const char *p = v, *end = v + len;
	uint64_t n, mul = 1;

	if (dec_u64(&p, &n) || p > end)
		return -1;
	p = skip_blank(p);
	size_t rest = (size_t)(end - p);
	if (rest == 3 && !strncmp(p, "KiB", 3))
		mul = 1024;
	else if (rest == 3 && !strncmp(p, "MiB", 3))
		mul = 1024 * 1024;
	else if (rest == 3 && !strncmp(p, "GiB", 3))
		mul = 1024ull * 1024 * 1024;
	else if (rest != 0 && !(rest == 1 && *p == 'B'))
		return -1;
	if (n > UINT64_MAX / mul)
		return -1;
	*bytes = n * mul;
	return 0;
}

static int ns_value(const char *v, size_t len, uint64_t *ns)
{
	const char *p = v, *end = v + len;

	if (dec_u64(&p, ns) || p > end)
		return -1;
	p = skip_blank(p);
	return (size_t)(end - p) == 2 && !strncmp(p, "ns", 2) ? 0 : -1;
}

int amd_parse_fdinfo(const char *text, struct amd_fdinfo *out)
{
	uint64_t resident = 0;
	int have_resident = 0;

	memset(out, 0, sizeof *out);
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n'), *end = nl ? nl : l + strlen(l), *v;
		size_t len;
		uint64_t x;
		if ((v = line_value(l, end, "drm-driver:", &len)))
			out->is_amdgpu = len == 6 && !strncmp(v, "amdgpu", 6);
		else if ((v = line_value(l, end, "drm-pdev:", &len)))
			copy_lower(out->pdev, sizeof out->pdev, v, len);
		else if ((v = line_value(l, end, "drm-client-id:", &len))) {
			const char *p = v;
			out->have_client_id = !dec_u64(&p, &out->client_id) && p == v + len;
		} else if ((v = line_value(l, end, "drm-memory-vram:", &len))) {
			if (!mem_value(v, len, &x))
				out->vram_bytes = x, out->have_vram = 1;
		} else if ((v = line_value(l, end, "drm-resident-vram:", &len))) {
			if (!mem_value(v, len, &x))
				resident = x, have_resident = 1;
		} else if ((v = line_value(l, end, "drm-engine-gfx:", &len))) {
			if (!ns_value(v, len, &x))
				out->gfx_ns = x, out->have_engine = 1;
		} else if ((v = line_value(l, end, "drm-engine-compute:", &len))) {
			if (!ns_value(v, len, &x))
				out->compute_ns = x, out->have_engine = 1;
		}
		l = nl ? nl + 1 : NULL;
	}
	if (!out->have_vram && have_resident)
		out->vram_bytes = resident, out->have_vram = 1;
	return out->is_amdgpu && out->pdev[0] && out->have_client_id ? 0 : -1;
}

/* Device ids from the public PCI id lists; memory type and bus width from
 * AMD's product pages.  An MI250X's two dies are two devices of 4096 bits
 * each.  docs/amd.md lists them, and what was checked. */
static const struct amd_model models[] = {
	{0x74a1, "AMD Instinct MI300X", "CDNA 3", "HBM3", 8192},
	{0x74a5, "AMD Instinct MI325X", "CDNA 3", "HBM3E", 8192},
	{0x740c, "AMD Instinct MI250X / MI250", "CDNA 2", "HBM2e", 4096},
	{0x740f, "AMD Instinct MI210", "CDNA 2", "HBM2e", 4096},
	{0x738c, "AMD Instinct MI100", "CDNA", "HBM2", 4096},
	{0x744c, "AMD Radeon RX 7900 XTX / XT", "RDNA 3", "GDDR6", 384},
	{0x7448, "AMD Radeon PRO W7900", "RDNA 3", "GDDR6", 384},
	{0x73bf, "AMD Radeon RX 6800 / 6900 XT", "RDNA 2", "GDDR6", 256},
};

const struct amd_model *amd_model_for(unsigned device_id)
{
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
		if (models[i].device_id == device_id)
			return &models[i];
	return NULL;
}
