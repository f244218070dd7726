/* SPDX-License-Identifier: Apache-2.0 */
/* select.c - GPU selection specs: "0,2-3", UUID prefixes ("GPU-8f3a"),
 * PCI bus ids ("00000000:19:00.0", "0000:19:00.0", "19:00.0"), MIG
 * instance UUIDs (which select their parent GPU), "all".
 *
 * Users copy GPU names from nvidia-smi, CUDA (UUIDs, since CUDA's order can
 * differ from NVML's) and lspci (short bus ids), so every such spelling is
 * accepted.  A bad item is named in the error so the user sees which one.
 *
 * vramz_select() is here, not in ctx.c: the context never calls into
 * this file, this file only down into the context (ctx_fail, ctx_migs).
 */
#include "ctx_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Reads 1..maxdigits hex digits at *s (no sign, no 0x, no spaces, which
 * sscanf's %x would all let through) and moves *s past them. */
static int hex_field(const char **s, int maxdigits, unsigned *out)
{
	unsigned v = 0;
	int n = 0;
	while (isxdigit((unsigned char)**s) && n < maxdigits) {
		char c = (char)tolower((unsigned char)**s);
		v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
		(*s)++;
		n++;
	}
	*out = v;
	return n > 0 && !isxdigit((unsigned char)**s) ? 0 : -1;
}

/* Normalises a PCI bus id ("dddddddd:bb:dd.f", "dddd:bb:dd.f" or the
 * domain-less "bb:dd.f") to "dddddddd:bb:dd.f" lower case; 0 on success. */
static int busid_norm(const char *in, char *out, size_t len)
{
	unsigned dom = 0, bus, dev, fn;
	int colons = 0;
	for (const char *p = in; *p; p++)
		colons += *p == ':';
	const char *s = in;
	if (colons == 2) {
		if (hex_field(&s, 8, &dom) || *s++ != ':')
			return -1;
	} else if (colons != 1) {
		return -1;
	}
	if (hex_field(&s, 2, &bus) || *s++ != ':' || hex_field(&s, 2, &dev) ||
	    *s++ != '.' || hex_field(&s, 1, &fn) || *s)
		return -1;
	if (dev > 0x1f || fn > 7)
		return -1;
	snprintf(out, len, "%08x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

static int add_sel(unsigned *sel, int n, unsigned idx)
{
	for (int i = 0; i < n; i++)
		if (sel[i] == idx)
			return n;
	sel[n] = idx;
	return n + 1;
}

static int parse_index(const char *s, unsigned long *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return -1;
	*out = strtoul(s, &end, 10);
	return *end ? -1 : 0;
}

/* A MIG instance's UUID (what CUDA_VISIBLE_DEVICES holds under MIG)
 * selects its parent GPU.  The instances are read from the backend here,
 * only for such an item, since a GPU's info does not list them. */
static int select_mig(vramz_ctx *ctx, const char *item, unsigned *sel, int n)
{
	struct mig_vec mv = {0};
	int hit = -1, rc = 0;
	size_t len = strlen(item);
	for (unsigned i = 0; i < ctx->ngpus && rc == 0; i++) {
		const vramz_gpu_info *gi = &ctx->info[i];
		if (!(gi->valid & VRAMZ_I_MIG) || !gi->mig_current)
			continue;
		mv.n = 0;
		if (ctx_migs(ctx, i, &mv) == VRAMZ_ENOMEM) {
			rc = VRAMZ_ENOMEM;
			break;
		}
		for (unsigned k = 0; k < mv.n; k++) {
			if (strncasecmp(mv.v[k].uuid, item, len))
				continue;
			if (hit >= 0)
				rc = ctx_fail(ctx, VRAMZ_EINVAL,
					      "UUID prefix '%s' matches more than one MIG instance",
					      item);
			hit = (int)i;
		}
	}
	free(mv.v);
	if (rc < 0)
		return rc;
	if (hit < 0)
		return ctx_fail(ctx, VRAMZ_ENOTFOUND, "no MIG instance with UUID '%s'", item);
	return add_sel(sel, n, (unsigned)hit);
}

/* A recorded log may lack some indices (logged with -g 0,5): those answer
 * ENOTFOUND (backend.h, tick) and are not GPUs to select. */
static int present(vramz_ctx *ctx, unsigned i)
{
	/* a recorded log may lack some indices (backend.h, tick) */
	return i < ctx->ngpus && ctx->present[i];
}

/* "0, 5": the indices there are, for a message about one that is not. */
static const char *present_list(vramz_ctx *ctx, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < ctx->ngpus && at + 16 < len; i++)
		if (present(ctx, i))
			at += (size_t)snprintf(buf + at, len - at, "%s%u", at ? ", " : "", i);
	return buf;
}

static int select_item(vramz_ctx *ctx, const char *item, unsigned *sel, int n)
{
	char have[160];
	unsigned long a, b;
	const char *dash = strchr(item, '-');
	char norm[32], gnorm[32];

	if (parse_index(item, &a) == 0) {
		/* the item as typed: strtoul saturates a huge number */
		if (ctx->recorded && (a >= ctx->ngpus || !present(ctx, (unsigned)a)))
			return ctx_fail(ctx, VRAMZ_ENOTFOUND,
					"no GPU with index '%s' in the log (it has GPUs %s)", item,
					present_list(ctx, have, sizeof have));
		if (a >= ctx->ngpus)
			return ctx_fail(ctx, VRAMZ_ENOTFOUND,
					"no GPU with index '%s' (found %u)", item, ctx->ngpus);
		return add_sel(sel, n, (unsigned)a);
	}
	if (dash && isdigit((unsigned char)item[0])) {
		char first[24];
		size_t flen = (size_t)(dash - item);
		if (flen >= sizeof first)
			return ctx_fail(ctx, VRAMZ_EINVAL, "bad GPU range '%s'", item);
		memcpy(first, item, flen);
		first[flen] = 0;
		if (parse_index(first, &a) || parse_index(dash + 1, &b) || b < a)
			return ctx_fail(ctx, VRAMZ_EINVAL, "bad GPU range '%s'", item);
		if (b >= ctx->ngpus)
			return ctx_fail(ctx, VRAMZ_ENOTFOUND,
					"GPU range '%s' goes past the last GPU (%u)",
					item, ctx->ngpus ? ctx->ngpus - 1 : 0);
		int found = 0;
		for (unsigned long i = a; i <= b; i++)
			if (present(ctx, (unsigned)i)) {
				n = add_sel(sel, n, (unsigned)i);
				found = 1;
			}
		if (!found) /* not one of them was recorded */
			return ctx_fail(ctx, VRAMZ_ENOTFOUND,
					"no GPU in range '%s' in the log (it has GPUs %s)", item,
					present_list(ctx, have, sizeof have));
		return n;
	}
	if (!strncasecmp(item, "MIG-", 4))
		return select_mig(ctx, item, sel, n);
	/* NVIDIA's UUIDs are GPU-..., amdgpu's unique_id is shown as AMD-... */
	if (!strncasecmp(item, "GPU-", 4) || !strncasecmp(item, "AMD-", 4)) {
		int hit = -1;
		size_t len = strlen(item);
		for (unsigned i = 0; i < ctx->ngpus; i++) {
			if (strncasecmp(ctx->info[i].uuid, item, len))
				continue;
			if (hit >= 0)
				return ctx_fail(ctx, VRAMZ_EINVAL,
						"UUID prefix '%s' matches more than one GPU", item);
			hit = (int)i;
		}
		if (hit < 0)
			return ctx_fail(ctx, VRAMZ_ENOTFOUND, "no GPU with UUID '%s'", item);
		return add_sel(sel, n, (unsigned)hit);
	}
	if (strchr(item, ':')) {
		if (busid_norm(item, norm, sizeof norm))
			return ctx_fail(ctx, VRAMZ_EINVAL, "bad PCI bus id '%s'", item);
		for (unsigned i = 0; i < ctx->ngpus; i++) {
			if (busid_norm(ctx->info[i].pci_bus_id, gnorm, sizeof gnorm))
				continue;
			/* a short id (no domain) matches any domain */
			int short_id = !strchr(strchr(item, ':') + 1, ':');
			if (!strcmp(norm, gnorm) || (short_id && !strcmp(norm + 9, gnorm + 9)))
				return add_sel(sel, n, i);
		}
		return ctx_fail(ctx, VRAMZ_ENOTFOUND, "no GPU at PCI bus id '%s'", item);
	}
	return ctx_fail(ctx, VRAMZ_EINVAL,
			"bad GPU '%s' (want an index, a range like 0-3, a UUID or a PCI bus id)",
			item);
}

/* Parses a -g spec against ctx->info into sel; returns count or a negative
 * code with ctx->err naming the bad item. */
static int select_parse(vramz_ctx *ctx, const char *spec, unsigned *sel)
{
	if (!spec || !strcmp(spec, "all")) {
		unsigned n = 0;
		for (unsigned i = 0; i < ctx->ngpus; i++)
			if (present(ctx, i))
				sel[n++] = i;
		return (int)n;
	}
	if (!*spec)
		return ctx_fail(ctx, VRAMZ_EINVAL, "empty GPU list");
	char *copy = strdup(spec);
	if (!copy)
		return VRAMZ_ENOMEM;
	int n = 0;
	char *save = NULL;
	/* "0,,1" and a trailing comma are typos worth naming */
	if (spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,")) {
		free(copy);
		return ctx_fail(ctx, VRAMZ_EINVAL, "empty item in GPU list '%s'", spec);
	}
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		char *e = tok + strlen(tok);
		while (e > tok && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*tok) {
			free(copy);
			return ctx_fail(ctx, VRAMZ_EINVAL, "empty item in GPU list '%s'", spec);
		}
		n = select_item(ctx, tok, sel, n);
		if (n < 0)
			break;
	}
	free(copy);
	return n;
}

int vramz_select(vramz_ctx *ctx, const char *spec)
{
	unsigned *sel = calloc(ctx->ngpus ? ctx->ngpus : 1, sizeof *sel);
	if (!sel)
		return VRAMZ_ENOMEM;
	int n = select_parse(ctx, spec, sel);
	if (n < 0) {
		free(sel);
		return n;
	}
	free(ctx->sel);
	ctx->sel = sel;
	ctx->nsel = (unsigned)n;
	return 0;
}
