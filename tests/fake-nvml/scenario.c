/* SPDX-License-Identifier: Apache-2.0 */
/* scenario.c - parses a fake NVML scenario file into a struct fake_world.
 *
 * A scenario is the whole state of a pretend machine: driver versions, GPUs
 * and their sensor values, the processes NVML lists, and faults to inject
 * (errors, lost GPUs, slow calls).  The format is line-based so tests can
 * write one with printf and change it mid-run; tests/scenarios/README.md
 * documents it.  The parser is strict: an unknown keyword, a field it does
 * not know, or a reference to a GPU or process that does not exist fails
 * the whole file with its file:line, because a typo silently ignored would
 * make a test pass for the wrong reason.
 *
 * Nothing here touches the live state; state.c swaps a parsed world in.
 */
#include "fake.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TOKENS 96

struct parser {
	struct fake_world *w;
	const char *path;
	unsigned line;
	char *err;
	size_t errlen;
};

/* Keyed "grow" lines are applied after the whole file is read, so they may
 * come before the proc line they name. */
struct grow {
	unsigned gpu, pid, line;
	bool has_pid;
	double rate;
	unsigned long long step; /* bytes: growth in whole steps (0: smooth) */
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = p->line ? snprintf(p->err, p->errlen, "%s:%u: ", p->path, p->line) :
			  snprintf(p->err, p->errlen, "%s: ", p->path);

	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "4242", "self" (the loading process) or "env:NAME". */
static bool parse_pid(struct parser *p, const char *s, unsigned *out)
{
	unsigned long long v;

	if (!strcmp(s, "self")) {
		*out = (unsigned)getpid();
		return true;
	}
	if (!strncmp(s, "env:", 4)) {
		const char *e = getenv(s + 4);

		if (!e || !fake_parse_uint(e, 0xFFFFFFFFu, &v)) {
			fail(p, "pid=%s: environment variable %s is %s", s,
			     s + 4, e ? "not a pid" : "not set");
			return false;
		}
		*out = (unsigned)v;
		return true;
	}
	if (!fake_parse_uint(s, 0xFFFFFFFFu, &v)) {
		fail(p, "bad pid '%s'", s);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

static bool parse_gpu_index(struct parser *p, const char *s, unsigned *out)
{
	unsigned long long v;

	if (!fake_parse_uint(s, FAKE_MAX_GPUS - 1, &v)) {
		fail(p, "bad gpu index '%s' (0..%d)", s, FAKE_MAX_GPUS - 1);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

static bool set_str(struct parser *p, char *dst, size_t len, const char *key,
		    const char *val)
{
	if (strlen(val) >= len) {
		fail(p, "%s is longer than NVML's %zu-byte buffer", key, len);
		return false;
	}
	strcpy(dst, val);
	return true;
}

/* ---- gpu ----------------------------------------------------------------- */

static const char *const gf_keys[GF_COUNT] = {
#define FAKE_GF_KEY(key, id) #key,
	FAKE_GPU_FIELDS(FAKE_GF_KEY)
#undef FAKE_GF_KEY
};

static bool is_size_field(enum fake_gf f)
{
	return f == GF_MEM_TOTAL || f == GF_MEM_RESERVED || f == GF_MEM_USED ||
	       f == GF_MEM_ORPHAN || f == GF_MEM_FREE || f == GF_BAR1_TOTAL || f == GF_BAR1_USED;
}

/* "00000000:19:00.0" or "0000:19:00.0". */
static bool parse_pci(struct fake_gpu *g, const char *s)
{
	unsigned dom, bus, dev, fn;
	int used = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &used) != 4 ||
	    s[used] || bus > 0xFF || dev > 0x1F || fn > 7)
		return false;
	g->has_pci = true;
	g->pci_domain = dom;
	g->pci_bus = bus;
	g->pci_dev = dev;
	g->pci_fn = fn;
	return true;
}

static bool parse_cc(struct fake_gpu *g, const char *s)
{
	int used = 0;

	if (sscanf(s, "%d.%d%n", &g->cc_major, &g->cc_minor, &used) != 2 ||
	    s[used] || g->cc_major < 0 || g->cc_minor < 0)
		return false;
	g->has_cc = true;
	return true;
}

static int gpu_string(struct parser *p, struct fake_gpu *g, const char *key,
		      const char *val)
{
	if (!strcmp(key, "name"))
		return set_str(p, g->name, sizeof(g->name), key, val) ? 1 : -1;
	if (!strcmp(key, "uuid"))
		return set_str(p, g->uuid, sizeof(g->uuid), key, val) ? 1 : -1;
	if (!strcmp(key, "serial"))
		return set_str(p, g->serial, sizeof(g->serial), key, val) ? 1 : -1;
	if (!strcmp(key, "vbios"))
		return set_str(p, g->vbios, sizeof(g->vbios), key, val) ? 1 : -1;
	if (!strcmp(key, "pci"))
		return parse_pci(g, val) ? 1 : fail(p, "bad pci '%s'", val);
	if (!strcmp(key, "cc"))
		return parse_cc(g, val) ? 1 : fail(p, "bad cc '%s'", val);
	return 0;
}

static int gpu_field(struct parser *p, struct fake_gpu *g, const char *key,
		     const char *val)
{
	int r = gpu_string(p, g, key, val);
	bool ok;

	if (r)
		return r < 0 ? -1 : 0;
	for (unsigned f = 0; f < GF_COUNT; f++) {
		if (strcmp(gf_keys[f], key))
			continue;
		if (!strcmp(val, "na")) {
			g->has[f] = false;
			return 0;
		}
		if (f == GF_MEM_USED && !strcmp(val, "auto")) {
			g->mem_used_auto = true;
			return 0;
		}
		if (f == GF_TEMP_MEM && val[0] == '-') {
			/* a driver's signed sentinel, e.g. -1 */
			ok = fake_parse_uint(val + 1, 0x80000000u, &g->v[f]);
			g->v[f] = (unsigned long long)-(long long)g->v[f];
			g->temp_mem_signed = true;
		} else if (is_size_field((enum fake_gf)f))
			ok = fake_parse_size(val, &g->v[f]);
		else if (f == GF_ARCH)
			ok = fake_parse_arch(val, &g->v[f]);
		else
			ok = fake_parse_uint(val, f == GF_THROTTLE || f == GF_ENERGY ?
					~0ULL : 0xFFFFFFFFu, &g->v[f]);
		if (!ok)
			return fail(p, "bad value %s=%s", key, val);
		g->has[f] = true;
		if (f == GF_MEM_USED)
			g->mem_used_auto = false;
		return 0;
	}
	return fail(p, "unknown gpu field '%s'", key);
}

static int kw_gpu(struct parser *p, char **tok, int n)
{
	struct fake_gpu *g;
	unsigned idx;
	char *key, *val;

	if (n < 2 || !parse_gpu_index(p, tok[1], &idx))
		return n < 2 ? fail(p, "gpu: index missing") : -1;
	g = &p->w->gpus[idx];
	if (g->defined)
		return fail(p, "gpu %u defined twice", idx);
	g->defined = true;
	for (int i = 2; i < n; i++) {
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "gpu: expected key=value, got '%s'", tok[i]);
		if (gpu_field(p, g, key, val))
			return -1;
	}
	if (idx + 1 > p->w->ngpus)
		p->w->ngpus = idx + 1;
	return 0;
}

/* ---- proc ---------------------------------------------------------------- */

static bool parse_types(const char *s, unsigned *out)
{
	char buf[64], *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	*out = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "compute"))
			*out |= FAKE_PT_COMPUTE;
		else if (!strcmp(t, "graphics"))
			*out |= FAKE_PT_GRAPHICS;
		else if (!strcmp(t, "mps"))
			*out |= FAKE_PT_MPS;
		else
			return false;
	}
	return *out != 0;
}

static int percent(struct parser *p, const char *key, const char *val,
		   unsigned *out)
{
	unsigned long long v;

	/* 0-100, or in hex any 32-bit answer a driver might give (0xFFFFFFFF) */
	if (!fake_parse_uint(val, strncmp(val, "0x", 2) ? 100 : 0xFFFFFFFFu, &v))
		return fail(p, "bad percentage %s=%s", key, val);
	*out = (unsigned)v;
	return 0;
}

static int proc_field(struct parser *p, struct fake_proc *pr, char *key,
		      char *val)
{
	unsigned long long v;

	if (!strcmp(key, "gpu"))
		return parse_gpu_index(p, val, &pr->gpu) ? 0 : -1;
	if (!strcmp(key, "pid"))
		return parse_pid(p, val, &pr->pid) ? 0 : -1;
	if (!strcmp(key, "used")) {
		pr->used_na = !strcmp(val, "na");
		if (!pr->used_na && !fake_parse_size(val, &pr->used))
			return fail(p, "bad size used=%s", val);
		return 0;
	}
	if (!strcmp(key, "type"))
		return parse_types(val, &pr->types) ? 0 :
		       fail(p, "bad type '%s' (compute,graphics,mps)", val);
	if (!strcmp(key, "sm")) {
		pr->has_sm = true;
		return percent(p, key, val, &pr->sm);
	}
	if (!strcmp(key, "mem"))
		return percent(p, key, val, &pr->mem);
	if (!strcmp(key, "enc"))
		return percent(p, key, val, &pr->enc);
	if (!strcmp(key, "dec"))
		return percent(p, key, val, &pr->dec);
	if (!strcmp(key, "gi") || !strcmp(key, "ci")) {
		if (!fake_parse_uint(val, 0xFFFFFFFFu, &v))
			return fail(p, "bad %s=%s", key, val);
		*(key[0] == 'g' ? &pr->gi : &pr->ci) = (unsigned)v;
		return 0;
	}
	return fail(p, "unknown proc field '%s'", key);
}

static int kw_proc(struct parser *p, char **tok, int n)
{
	struct fake_world *w = p->w;
	struct fake_proc pr = {
		.types = FAKE_PT_COMPUTE,
		.gi = FAKE_NO_INSTANCE,
		.ci = FAKE_NO_INSTANCE,
	};
	bool has_gpu = false, has_pid = false;
	char *key, *val;

	for (int i = 1; i < n; i++) {
		if (!strcmp(tok[i], "follow")) {
			pr.follow = true;
			continue;
		}
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "proc: expected key=value, got '%s'", tok[i]);
		has_gpu |= !strcmp(key, "gpu");
		has_pid |= !strcmp(key, "pid");
		if (proc_field(p, &pr, key, val))
			return -1;
	}
	if (!has_gpu || !has_pid)
		return fail(p, "proc: gpu= and pid= are required");
	if (w->nprocs == w->cap_procs) {
		unsigned cap = w->cap_procs ? 2 * w->cap_procs : 64;
		struct fake_proc *v = realloc(w->procs, cap * sizeof(*v));

		if (!v)
			return fail(p, "out of memory");
		w->procs = v;
		w->cap_procs = cap;
	}
	w->procs[w->nprocs++] = pr;
	return 0;
}

/* ---- grow, mig, faults, topology ----------------------------------------- */

static int kw_grow(struct parser *p, char **tok, int n, struct grow *g)
{
	bool has_gpu = false, has_rate = false;
	char *key, *val;

	memset(g, 0, sizeof(*g));
	g->line = p->line;
	for (int i = 1; i < n; i++) {
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "grow: expected key=value, got '%s'", tok[i]);
		if (!strcmp(key, "gpu")) {
			if (!parse_gpu_index(p, val, &g->gpu))
				return -1;
			has_gpu = true;
		} else if (!strcmp(key, "pid")) {
			if (!parse_pid(p, val, &g->pid))
				return -1;
			g->has_pid = true;
		} else if (!strcmp(key, "rate")) {
			if (!fake_parse_rate(val, &g->rate))
				return fail(p, "bad rate '%s' (e.g. +64MiB/s)", val);
			has_rate = true;
		} else if (!strcmp(key, "step")) {
			if (!fake_parse_size(val, &g->step) || !g->step)
				return fail(p, "bad step '%s' (e.g. 512MiB)", val);
		} else {
			return fail(p, "unknown grow field '%s'", key);
		}
	}
	if (!has_gpu || !has_rate)
		return fail(p, "grow: gpu= and rate= are required");
	if (g->step && !g->has_pid)
		return fail(p, "grow: step= needs pid=");
	return 0;
}

static int mig_field(struct parser *p, struct fake_mig *m, const char *key,
		     const char *val)
{
	unsigned long long v;

	if (!strcmp(key, "gi") || !strcmp(key, "ci")) {
		if (!fake_parse_uint(val, 0xFFFFFFFEu, &v))
			return fail(p, "bad %s=%s", key, val);
		*(key[0] == 'g' ? &m->gi : &m->ci) = (unsigned)v;
		return 0;
	}
	if (!strcmp(key, "uuid"))
		return set_str(p, m->uuid, sizeof(m->uuid), key, val) ? 0 : -1;
	if (!strcmp(key, "name"))
		return set_str(p, m->name, sizeof(m->name), key, val) ? 0 : -1;
	if (!strcmp(key, "mem_used") && !strcmp(val, "auto")) {
		m->mem_used_auto = true;
		return 0;
	}
	if (!strcmp(key, "mem_total") || !strcmp(key, "mem_used") ||
	    !strcmp(key, "mem_reserved")) {
		if (!fake_parse_size(val, &v))
			return fail(p, "bad size %s=%s", key, val);
		if (key[4] == 't')
			m->mem_total = v;
		else if (key[4] == 'r')
			m->mem_reserved = v;
		else {
			m->mem_used = v;
			m->mem_used_auto = false;
		}
		return 0;
	}
	return fail(p, "unknown mig field '%s'", key);
}

/* mig lines are kept in file order; state.c finds a GPU's by parent. */
static int kw_mig(struct parser *p, char **tok, int n)
{
	struct fake_world *w = p->w;
	struct fake_mig m = {.mem_used_auto = true};
	bool has_parent = false;
	char *key, *val;

	if (w->nmigs == sizeof(w->migs) / sizeof(w->migs[0]))
		return fail(p, "too many mig lines");
	for (int i = 1; i < n; i++) {
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "mig: expected key=value, got '%s'", tok[i]);
		if (!strcmp(key, "parent")) {
			if (!parse_gpu_index(p, val, &m.parent))
				return -1;
			has_parent = true;
		} else if (mig_field(p, &m, key, val)) {
			return -1;
		}
	}
	if (!has_parent || !m.mem_total)
		return fail(p, "mig: parent= and mem_total= are required");
	w->migs[w->nmigs++] = m;
	return 0;
}

/* error FUNC [gpu=N] CODE [after=N] */
static int kw_error(struct parser *p, char **tok, int n)
{
	struct fake_error_rule *r;
	unsigned long long v;
	bool has_code = false;
	char *key, *val;

	if (p->w->nrules == FAKE_MAX_RULES)
		return fail(p, "too many error lines");
	r = &p->w->rules[p->w->nrules];
	memset(r, 0, sizeof(*r));
	r->gpu = -1;
	if (n < 3)
		return fail(p, "error: expected FUNCTION [gpu=N] CODE [after=N]");
	r->fn = fake_fn_lookup(tok[1]);
	if (r->fn == FN_COUNT)
		return fail(p, "error: unknown NVML function '%s'", tok[1]);
	if (r->fn == FN_nvmlInit_v2 || r->fn == FN_nvmlShutdown)
		return fail(p, "error: use init_error for %s", tok[1]);
	for (int i = 2; i < n; i++) {
		if (fake_split_kv(tok[i], &key, &val)) {
			unsigned idx;

			if (!strcmp(key, "gpu") && parse_gpu_index(p, val, &idx))
				r->gpu = (int)idx;
			else if (!strcmp(key, "after") && fake_parse_uint(val, ~0UL, &v))
				r->after = (unsigned long)v;
			else
				return fail(p, "error: bad %s=%s", key, val);
		} else {
			int code = fake_code_lookup(tok[i]);

			if (code < 0 || has_code)
				return fail(p, "error: bad code '%s'", tok[i]);
			r->code = (nvmlReturn_t)code;
			has_code = true;
		}
	}
	if (!has_code)
		return fail(p, "error: code missing");
	p->w->nrules++;
	return 0;
}

static int kw_lost(struct parser *p, char **tok, int n)
{
	unsigned long long after = 0;
	unsigned idx = 0;
	bool has_gpu = false;
	char *key, *val;

	for (int i = 1; i < n; i++) {
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "lost: expected key=value, got '%s'", tok[i]);
		if (!strcmp(key, "gpu")) {
			if (!parse_gpu_index(p, val, &idx))
				return -1;
			has_gpu = true;
		} else if (!strcmp(key, "after") && fake_parse_uint(val, 1UL << 30, &after)) {
			continue;
		} else {
			return fail(p, "lost: bad %s=%s", key, val);
		}
	}
	if (!has_gpu)
		return fail(p, "lost: gpu= is required");
	p->w->gpus[idx].lost_after = (long)after;
	return 0;
}

/* at TIME gpu=N (xid=CODE | ecc_sbe=+N | ecc_dbe=+N | FIELD=V | FIELD=+V | lost)
 *   [every=D times=N] (events) */
static int at_item(struct parser *p, struct fake_at *a, char *tok)
{
	char *key, *val;
	unsigned long long v;

	if (!strcmp(tok, "lost")) {
		a->kind = AT_LOST;
		return 0;
	}
	if (!fake_split_kv(tok, &key, &val))
		return fail(p, "at: expected key=value, got '%s'", tok);
	bool add = *val == '+';
	if (!fake_parse_uint(add ? val + 1 : val, 0xFFFFFFFFu, &v))
		return fail(p, "at: bad %s=%s", key, val);
	a->v = v;
	if (!strcmp(key, "xid")) {
		a->kind = AT_XID;
		return 0;
	}
	if (!strcmp(key, "ecc_sbe") || !strcmp(key, "ecc_dbe")) {
		a->kind = key[4] == 's' ? AT_SBE : AT_DBE;
		return add ? 0 : fail(p, "at: %s takes +N", key);
	}
	for (unsigned f = 0; f < GF_COUNT; f++)
		if (!strcmp(gf_keys[f], key)) {
			a->kind = add ? AT_ADD : AT_SET;
			a->f = (enum fake_gf)f;
			return 0;
		}
	return fail(p, "at: unknown '%s'", key);
}

static int kw_at(struct parser *p, char **tok, int n)
{
	struct fake_at *a;
	unsigned us;
	char *key, *val;

	if (p->w->nat == FAKE_MAX_AT)
		return fail(p, "at: more than %d lines", FAKE_MAX_AT);
	a = &p->w->at[p->w->nat];
	memset(a, 0, sizeof(*a));
	a->times = 1;
	if ((n != 4 && n != 6) || !fake_parse_duration(tok[1], &us))
		return fail(p, "at: expected 'at TIME gpu=N EVENT [every=D times=N]'");
	a->t_s = us / 1e6;
	if (!fake_split_kv(tok[2], &key, &val) || strcmp(key, "gpu") ||
	    !parse_gpu_index(p, val, &a->gpu))
		return fail(p, "at: gpu=N expected, got '%s'", tok[2]);
	if (at_item(p, a, tok[3]))
		return -1;
	/* a storm: the event repeated (an Xid storm in one line, not 800) */
	for (int i = 4; i < n; i++) {
		unsigned long long v;
		unsigned d;
		if (a->kind != AT_XID && a->kind != AT_SBE && a->kind != AT_DBE)
			return fail(p, "at: every= and times= repeat events only");
		if (!fake_split_kv(tok[i], &key, &val))
			return fail(p, "at: expected key=value, got '%s'", tok[i]);
		if (!strcmp(key, "every") && fake_parse_duration(val, &d) && d)
			a->every_s = d / 1e6;
		else if (!strcmp(key, "times") && fake_parse_uint(val, 10000000u, &v) && v)
			a->times = (unsigned)v;
		else
			return fail(p, "at: bad %s=%s (every=DURATION, times=N)", key, val);
	}
	if (n == 6 && !a->every_s)
		return fail(p, "at: times= needs every=");
	p->w->nat++;
	return 0;
}

static int kw_latency(struct parser *p, char **tok, int n)
{
	enum fake_fn fn;

	if (n != 3)
		return fail(p, "latency: expected FUNCTION DURATION");
	fn = fake_fn_lookup(tok[1]);
	if (fn == FN_COUNT)
		return fail(p, "latency: unknown NVML function '%s'", tok[1]);
	if (!fake_parse_duration(tok[2], &p->w->latency_us[fn]))
		return fail(p, "latency: bad duration '%s' (e.g. 20ms)", tok[2]);
	return 0;
}

/* procutil samples=N [quiet] */
static int kw_procutil(struct parser *p, char **tok, int n)
{
	for (int i = 1; i < n; i++) {
		char *end;
		if (!strcmp(tok[i], "quiet")) {
			p->w->util_quiet = 1;
		} else if (!strncmp(tok[i], "samples=", 8)) {
			unsigned long v = strtoul(tok[i] + 8, &end, 10);
			if (*end || !v || v > 100000)
				return fail(p, "procutil: bad samples=%s", tok[i] + 8);
			p->w->util_samples = (unsigned)v;
		} else {
			return fail(p, "procutil: unknown '%s' (samples=N, quiet)", tok[i]);
		}
	}
	return 0;
}

/* topo A B LEVEL | topo default LEVEL */
static int kw_topo(struct parser *p, char **tok, int n)
{
	nvmlGpuTopologyLevel_t level;
	unsigned a, b;

	if (n == 3 && !strcmp(tok[1], "default")) {
		if (!fake_parse_level(tok[2], &p->w->topo_default))
			return fail(p, "topo: bad level '%s'", tok[2]);
		return 0;
	}
	if (n != 4)
		return fail(p, "topo: expected A B LEVEL or default LEVEL");
	if (!parse_gpu_index(p, tok[1], &a) || !parse_gpu_index(p, tok[2], &b))
		return -1;
	if (!fake_parse_level(tok[3], &level))
		return fail(p, "topo: bad level '%s'", tok[3]);
	p->w->topo[a][b] = p->w->topo[b][a] = level;
	p->w->topo_set[a][b] = p->w->topo_set[b][a] = 1;
	return 0;
}

static int add_links(struct parser *p, unsigned a, unsigned b, unsigned count,
		     bool remote_none)
{
	struct fake_gpu *ga = &p->w->gpus[a], *gb = &p->w->gpus[b];

	if (a == b)
		return fail(p, "nvlink: a GPU cannot link to itself");
	if (ga->links_used + count > NVML_NVLINK_MAX_LINKS ||
	    gb->links_used + count > NVML_NVLINK_MAX_LINKS)
		return fail(p, "nvlink: more than %d links on a GPU",
			    NVML_NVLINK_MAX_LINKS);
	for (unsigned i = 0; i < count; i++) {
		ga->link_peer[ga->links_used] = (int)b;
		ga->link_remote_none[ga->links_used++] = remote_none;
		gb->link_peer[gb->links_used] = (int)a;
		gb->link_remote_none[gb->links_used++] = remote_none;
	}
	return 0;
}

/* nvlink A B COUNT [remote=none] */
static int kw_nvlink(struct parser *p, char **tok, int n)
{
	unsigned long long count;
	unsigned a, b;
	bool remote_none = false;

	if (n == 5 && !strcmp(tok[4], "remote=none"))
		remote_none = true;
	else if (n != 4)
		return fail(p, "nvlink: expected A B COUNT [remote=none]");
	if (!parse_gpu_index(p, tok[1], &a) || !parse_gpu_index(p, tok[2], &b))
		return -1;
	if (!fake_parse_uint(tok[3], NVML_NVLINK_MAX_LINKS, &count) || !count)
		return fail(p, "nvlink: bad link count '%s'", tok[3]);
	return add_links(p, a, b, (unsigned)count, remote_none);
}

static int kw_system(struct parser *p, char **tok, int n)
{
	struct fake_world *w = p->w;
	unsigned long long v;
	int code;

	if (n != 2)
		return fail(p, "%s: expected one value", tok[0]);
	if (!strcmp(tok[0], "driver"))
		return set_str(p, w->driver, sizeof(w->driver), "driver", tok[1]) ? 0 : -1;
	if (!strcmp(tok[0], "nvml"))
		return set_str(p, w->nvml, sizeof(w->nvml), "nvml", tok[1]) ? 0 : -1;
	if (!strcmp(tok[0], "cuda")) {
		if (!fake_parse_uint(tok[1], 0x7FFFFFFF, &v))
			return fail(p, "cuda: bad version '%s' (e.g. 13000)", tok[1]);
		w->has_cuda = true;
		w->cuda = (int)v;
		return 0;
	}
	code = fake_code_lookup(tok[1]);
	if (code < 0)
		return fail(p, "init_error: bad code '%s'", tok[1]);
	w->init_error = (nvmlReturn_t)code;
	return 0;
}

/* ---- whole file ---------------------------------------------------------- */

static int parse_line(struct parser *p, char *line, struct grow **grows,
		      unsigned *ngrows)
{
	char *tok[MAX_TOKENS];
	int n = fake_tokenize(line, tok, MAX_TOKENS);

	if (n < 0)
		return fail(p, "unterminated quote or too many tokens");
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "gpu"))
		return kw_gpu(p, tok, n);
	if (!strcmp(tok[0], "proc"))
		return kw_proc(p, tok, n);
	if (!strcmp(tok[0], "mig"))
		return kw_mig(p, tok, n);
	if (!strcmp(tok[0], "error"))
		return kw_error(p, tok, n);
	if (!strcmp(tok[0], "lost"))
		return kw_lost(p, tok, n);
	if (!strcmp(tok[0], "latency"))
		return kw_latency(p, tok, n);
	if (!strcmp(tok[0], "at"))
		return kw_at(p, tok, n);
	if (!strcmp(tok[0], "procutil"))
		return kw_procutil(p, tok, n);
	if (!strcmp(tok[0], "topo"))
		return kw_topo(p, tok, n);
	if (!strcmp(tok[0], "nvlink"))
		return kw_nvlink(p, tok, n);
	if (!strcmp(tok[0], "driver") || !strcmp(tok[0], "nvml") ||
	    !strcmp(tok[0], "cuda") || !strcmp(tok[0], "init_error"))
		return kw_system(p, tok, n);
	if (!strcmp(tok[0], "grow")) {
		struct grow *g = realloc(*grows, (*ngrows + 1) * sizeof(**grows));

		if (!g)
			return fail(p, "out of memory");
		*grows = g;
		return kw_grow(p, tok, n, &g[(*ngrows)++]);
	}
	return fail(p, "unknown keyword '%s'", tok[0]);
}

static int apply_grow(struct parser *p, const struct grow *g)
{
	struct fake_world *w = p->w;
	bool found = false;

	p->line = g->line;
	if (!g->has_pid) {
		w->gpus[g->gpu].mem_rate = g->rate;
		return w->gpus[g->gpu].defined ? 0 : fail(p, "grow: no gpu %u", g->gpu);
	}
	for (unsigned i = 0; i < w->nprocs; i++)
		if (w->procs[i].gpu == g->gpu && w->procs[i].pid == g->pid) {
			w->procs[i].rate = g->rate;
			w->procs[i].step = g->step;
			found = true;
		}
	return found ? 0 : fail(p, "grow: no proc gpu=%u pid=%u", g->gpu, g->pid);
}

/* Cross-line checks: GPUs numbered 0..n-1, references resolve. */
static int finish(struct parser *p, const struct grow *grows, unsigned ngrows)
{
	struct fake_world *w = p->w;

	for (unsigned i = 0; i < ngrows; i++)
		if (apply_grow(p, &grows[i]))
			return -1;
	p->line = 0;
	for (unsigned i = 0; i < FAKE_MAX_GPUS; i++) {
		struct fake_gpu *g = &w->gpus[i];

		if (i < w->ngpus && !g->defined)
			return fail(p, "gpu %u referenced or skipped but not defined", i);
		if (!g->defined)
			continue;
		if (!g->has[GF_NVLINKS] && g->links_used) {
			g->has[GF_NVLINKS] = true;
			g->v[GF_NVLINKS] = g->links_used;
		}
		if (g->v[GF_NVLINKS] > NVML_NVLINK_MAX_LINKS ||
		    g->v[GF_NVLINKS] < g->links_used)
			return fail(p, "gpu %u: nvlinks=%llu but %u links joined",
				    i, g->v[GF_NVLINKS], g->links_used);
	}
	for (unsigned i = 0; i < w->nprocs; i++)
		if (w->procs[i].gpu >= w->ngpus)
			return fail(p, "proc pid=%u on undefined gpu %u",
				    w->procs[i].pid, w->procs[i].gpu);
	for (unsigned i = w->ngpus; i < FAKE_MAX_GPUS; i++) {
		bool named = w->gpus[i].links_used || w->gpus[i].lost_after >= 0;

		for (unsigned j = 0; j < FAKE_MAX_GPUS; j++)
			named |= w->topo_set[i][j];
		if (named)
			return fail(p, "topo, nvlink or lost names undefined gpu %u", i);
	}
	for (unsigned i = 0; i < w->nat; i++)
		if (w->at[i].gpu >= w->ngpus)
			return fail(p, "at names undefined gpu %u", w->at[i].gpu);
	for (unsigned i = 0; i < w->nrules; i++)
		if (w->rules[i].gpu >= (int)w->ngpus)
			return fail(p, "error rule names undefined gpu %d", w->rules[i].gpu);
	for (unsigned i = 0; i < w->nmigs; i++) {
		struct fake_gpu *g = &w->gpus[w->migs[i].parent];

		if (w->migs[i].parent >= w->ngpus)
			return fail(p, "mig on undefined gpu %u", w->migs[i].parent);
		if (g->nmig == FAKE_MAX_MIG_PER_GPU)
			return fail(p, "more than %d mig lines on gpu %u",
				    FAKE_MAX_MIG_PER_GPU, w->migs[i].parent);
		if (!g->nmig)
			g->mig_first = i;
		else if (w->migs[i - 1].parent != w->migs[i].parent)
			return fail(p, "mig lines of gpu %u are not together",
				    w->migs[i].parent);
		g->nmig++;
	}
	return 0;
}

static struct fake_world *world_new(void)
{
	struct fake_world *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->topo_default = NVML_TOPOLOGY_NODE;
	for (unsigned i = 0; i < FAKE_MAX_GPUS; i++) {
		w->gpus[i].mem_used_auto = true;
		w->gpus[i].lost_after = -1;
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
			w->gpus[i].link_peer[l] = -1;
	}
	return w;
}

struct fake_world *fake_world_load(const char *path, bool *unreadable,
				   char *err, size_t errlen)
{
	struct parser p = {.path = path, .err = err, .errlen = errlen};
	struct grow *grows = NULL;
	unsigned ngrows = 0;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	FILE *f = fopen(path, "re");

	*unreadable = !f;
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	p.w = world_new();
	if (!p.w) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	while (!rc && getline(&line, &cap, f) >= 0) {
		p.line++;
		rc = parse_line(&p, line, &grows, &ngrows);
	}
	if (!rc && ferror(f))
		rc = fail(&p, "read error");
	if (!rc)
		rc = finish(&p, grows, ngrows);
	free(line);
	free(grows);
	fclose(f);
	if (rc) {
		fake_world_free(p.w);
		return NULL;
	}
	return p.w;
}

void fake_world_free(struct fake_world *w)
{
	if (!w)
		return;
	free(w->procs);
	free(w);
}
