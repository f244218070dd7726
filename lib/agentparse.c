/* SPDX-License-Identifier: Apache-2.0 */
/* agentparse.c - the parsers of the PyTorch agent's files (format in
 * docs/python.md): the figures file (agent_parse: the process, device,
 * oom, holder, end and outside records) and the leak-sites answer
 * (agent_parse_sites).  Text in, a struct out, nothing else: whether a
 * file is believed, and where it is found, is agent.c's.  A record or key
 * this reader does not know is skipped, so a newer agent stays readable.
 */
#include "agent.h"
#include "fields.h"
#include "text.h"

#include <stdint.h>
#include <string.h>

const char *const agent_stat_keys[AS_COUNT] = {
	"allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes",
	"peak_allocated_bytes", "peak_reserved_bytes", "alloc_retries", "ooms",
	"allocations", "allocations_total",
};

const char *const agent_part_names[AGENT_PART_COUNT] = {"context", "libraries", "nccl", "other"};

/* ---- parsing ------------------------------------------------------------ */

struct line {
	const char *p, *end;
};

/* The next line, without its '\n'.  Only a line that ends in '\n' is one:
 * the agent writes its files whole and renames them, so a complete file
 * always ends in '\n' and text after the last '\n' is a line still being
 * written (a torn read), whose figures may be cut short (1111 read as 1):
 * it is ignored. */
static int next_line(const char **cur, const char *end, struct line *l)
{
	if (*cur >= end)
		return 0;
	const char *nl = memchr(*cur, '\n', (size_t)(end - *cur));
	if (!nl) {
		*cur = end;
		return 0;
	}
	l->p = *cur;
	l->end = nl;
	*cur = nl + 1;
	return 1;
}

/* The next key=value token of a line: key and value bounds.  A key in
 * `tails` takes the rest of the line as its value. */
static int next_pair(struct line *l, const char **k, size_t *kl, const char **v, size_t *vl)
{
	while (l->p < l->end && *l->p == ' ')
		l->p++;
	if (l->p >= l->end)
		return 0;
	const char *eq = memchr(l->p, '=', (size_t)(l->end - l->p));
	const char *sp = memchr(l->p, ' ', (size_t)(l->end - l->p));
	if (!eq || (sp && sp < eq)) { /* a token without '=': skip it */
		l->p = sp ? sp + 1 : l->end;
		return next_pair(l, k, kl, v, vl);
	}
	*k = l->p;
	*kl = (size_t)(eq - l->p);
	*v = eq + 1;
	if ((*kl == 4 && !memcmp(*k, "file", 4)) || (*kl == 3 && !memcmp(*k, "why", 3))) {
		*vl = (size_t)(l->end - *v);
		l->p = l->end;
		return 1;
	}
	const char *e = memchr(*v, ' ', (size_t)(l->end - *v));
	if (!e)
		e = l->end;
	*vl = (size_t)(e - *v);
	l->p = e;
	return 1;
}

static int keyis(const char *k, size_t kl, const char *want)
{
	return strlen(want) == kl && !memcmp(k, want, kl);
}

static const char *const how_names[] = {
	[AGENT_END_EXIT] = "exit", [AGENT_END_EXCEPTION] = "exception", [AGENT_END_SIGNAL] = "signal",
};

const char *agent_end_how_name(enum agent_end_how how)
{
	return (size_t)how < sizeof how_names / sizeof how_names[0] ? how_names[how] : NULL;
}

enum agent_end_how agent_end_how_of(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof how_names / sizeof how_names[0]; i++)
		if (how_names[i] && keyis(s, n, how_names[i]))
			return (enum agent_end_how)i;
	return AGENT_END_UNKNOWN;
}

/* Decimal into *out; 0, or -1 when not all digits (or overflow). */
static int to_u64(const char *v, size_t vl, uint64_t *out)
{
	uint64_t x = 0;
	if (!vl || vl > 20)
		return -1;
	for (size_t i = 0; i < vl; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		uint64_t d = (uint64_t)(v[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

/* A value as text, through the one sanitizer (a file name may be UTF-8,
 * never a terminal's control) */
static void to_str(char *dst, size_t cap, const char *v, size_t vl)
{
	text_copy_n(dst, cap, v, vl);
}

/* The record type of a line (before the first blank). */
static int rectype(struct line *l, const char *want)
{
	size_t n = strlen(want);
	if ((size_t)(l->end - l->p) < n || memcmp(l->p, want, n))
		return 0;
	if (l->p + n < l->end && l->p[n] != ' ')
		return 0;
	l->p += n;
	return 1;
}

static int check_magic(const char **cur, const char *end, const char *magic)
{
	struct line l;
	if (!next_line(cur, end, &l))
		return VRAMZ_EPARSE;
	size_t n = strlen(magic);
	/* the major version must be exactly 1 */
	if ((size_t)(l.end - l.p) != n + 2 || memcmp(l.p, magic, n) || l.p[n] != ' ' || l.p[n + 1] != '1')
		return VRAMZ_EPARSE;
	return 0;
}

/* line, func and file (free text, last): a frame of the program's code;
 * 1 when k was one of them */
static int frame_key(struct agent_frame *fr, const char *k, size_t kl, const char *v, size_t vl)
{
	uint64_t x;
	if (keyis(k, kl, "file"))
		to_str(fr->file, sizeof fr->file, v, vl);
	else if (keyis(k, kl, "func"))
		to_str(fr->func, sizeof fr->func, v, vl);
	else if (keyis(k, kl, "line"))
		fr->line = to_u64(v, vl, &x) == 0 && x <= UINT32_MAX ? (unsigned)x : 0;
	else
		return 0;
	return 1;
}

static void parse_process(struct line *l, struct agent_figures *out, int *have_pid, int *have_start)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (to_u64(v, vl, &x))
			continue;
		if (keyis(k, kl, "pid") && x <= UINT32_MAX)
			out->pid = (uint32_t)x, *have_pid = 1;
		else if (keyis(k, kl, "start_time_ticks"))
			out->start_time_ticks = x, *have_start = 1;
		else if (keyis(k, kl, "time_ms") && x <= INT64_MAX)
			out->time_ms = (int64_t)x;
		else if (keyis(k, kl, "interval_ms") && x <= UINT32_MAX)
			out->interval_ms = (unsigned)x;
		else if (keyis(k, kl, "history"))
			out->history = x != 0;
		else if (keyis(k, kl, "outside"))
			out->outside_on = x != 0;
	}
}

static void parse_device(struct line *l, struct agent_figures *out)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	if (out->ndev == AGENT_MAX_DEVICES)
		return;
	struct agent_device *d = &out->dev[out->ndev++];
	d->cuda = -1;
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (keyis(k, kl, "uuid")) {
			to_str(d->uuid, sizeof d->uuid, v, vl);
			continue;
		}
		if (to_u64(v, vl, &x))
			continue;
		if (keyis(k, kl, "cuda") && x < 1024) {
			d->cuda = (int)x;
			continue;
		}
		if (x > FIELD_MAX_BYTES)
			continue; /* 2^64-1 is a sentinel, not 16 EiB: unknown */
		for (int s = 0; s < AS_COUNT; s++)
			if (keyis(k, kl, agent_stat_keys[s])) {
				d->v[s] = x;
				d->valid |= 1u << s;
			}
	}
}

/* The index of uuid among f's outside GPUs, added when new; -1 full. */
static int outside_uuid(struct agent_figures *out, const char *v, size_t vl)
{
	char u[VRAMZ_UUID_LEN];
	to_str(u, sizeof u, v, vl);
	for (unsigned i = 0; i < out->noutside_uuid; i++)
		if (!strcmp(out->outside_uuid[i], u))
			return (int)i;
	if (out->noutside_uuid == AGENT_MAX_DEVICES)
		return -1;
	memcpy(out->outside_uuid[out->noutside_uuid], u, sizeof u);
	return (int)out->noutside_uuid++;
}

/* An outside record (issue 37); one of an unknown part, or without its
 * bytes, is skipped: a newer agent's part is not this reader's other. */
static void parse_outside(struct line *l, struct agent_figures *out)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	if (out->noutside == AGENT_MAX_OUTSIDE)
		return;
	struct agent_outside o = {.part = AGENT_PART_COUNT, .cuda = -1, .uuid = -1, .comm = -1,
				  .comms = 1};
	int have_bytes = 0;
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (keyis(k, kl, "part")) {
			for (int i = 0; i < AGENT_PART_COUNT; i++)
				if (keyis(v, vl, agent_part_names[i]))
					o.part = (enum agent_part)i;
		} else if (keyis(k, kl, "how"))
			o.how = keyis(v, vl, "process") ? 1 : keyis(v, vl, "device") ? 2 : 0;
		else if (keyis(k, kl, "uuid"))
			o.uuid = outside_uuid(out, v, vl);
		else if (keyis(k, kl, "group"))
			to_str(o.group, sizeof o.group, v, vl);
		else if (to_u64(v, vl, &x))
			continue;
		else if (keyis(k, kl, "bytes") && x <= FIELD_MAX_BYTES)
			o.bytes = x, have_bytes = 1;
		else if (keyis(k, kl, "cuda") && x < 1024)
			o.cuda = (int)x;
		else if (keyis(k, kl, "comm") && x < INT32_MAX)
			o.comm = (int)x;
		else if (keyis(k, kl, "comms") && x >= 1 && x < 1u << 20)
			o.comms = (unsigned)x;
	}
	if (o.part != AGENT_PART_COUNT && have_bytes)
		out->outside[out->noutside++] = o;
}

/* the last oom record wins (an agent writes one, the latest) */
static void parse_oom(struct line *l, struct agent_figures *out)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	out->oom_valid = 1;
	out->oom_cuda = -1;
	memset(&out->oom_at, 0, sizeof out->oom_at);
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (frame_key(&out->oom_at, k, kl, v, vl) || to_u64(v, vl, &x))
			continue;
		if (keyis(k, kl, "time_ms") && x <= INT64_MAX)
			out->oom_time_ms = (int64_t)x;
		else if (keyis(k, kl, "cuda") && x < 1024)
			out->oom_cuda = (int)x;
		else if (keyis(k, kl, "requested_bytes"))
			out->oom_requested_bytes = x;
		else if (keyis(k, kl, "limit_bytes") || keyis(k, kl, "device_allocated_bytes"))
			out->oom_limit_bytes = x; /* the second: agents before issue 27 */
		else if (keyis(k, kl, "device_free_bytes"))
			out->oom_free_bytes = x, out->oom_has_free = 1;
		else if (keyis(k, kl, "allocated_bytes"))
			out->oom_allocated_bytes = x;
		else if (keyis(k, kl, "reserved_bytes"))
			out->oom_reserved_bytes = x;
		else if (keyis(k, kl, "ooms"))
			out->oom_count = x;
	}
}

static void parse_holder(struct line *l, struct agent_figures *out)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	if (out->nholders == AGENT_MAX_HOLDERS)
		return;
	struct agent_holder *h = &out->holder[out->nholders++];
	h->cuda = -1;
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (frame_key(&h->at, k, kl, v, vl))
			continue;
		if (keyis(k, kl, "uuid"))
			to_str(h->uuid, sizeof h->uuid, v, vl);
		else if (to_u64(v, vl, &x))
			continue;
		else if (keyis(k, kl, "cuda") && x < 1024)
			h->cuda = (int)x;
		else if (keyis(k, kl, "bytes"))
			h->bytes = x;
		else if (keyis(k, kl, "blocks") && x <= UINT32_MAX)
			h->blocks = (unsigned)x;
	}
}

static void parse_end(struct line *l, struct agent_figures *out)
{
	const char *k, *v;
	size_t kl, vl;
	uint64_t x;
	struct agent_end *e = &out->end;
	memset(e, 0, sizeof *e);
	e->valid = 1;
	while (next_pair(l, &k, &kl, &v, &vl)) {
		if (frame_key(&e->at, k, kl, v, vl))
			continue;
		if (keyis(k, kl, "how")) {
			/* a file's end is never a signal: that is the .sig file
			 * (agent_read_end), as python/vramz/_agentjoin.py reads it */
			e->how = agent_end_how_of(v, vl);
			if (e->how == AGENT_END_SIGNAL)
				e->how = AGENT_END_UNKNOWN;
		}
		else if (keyis(k, kl, "exception"))
			to_str(e->exception, sizeof e->exception, v, vl);
		else if (to_u64(v, vl, &x))
			continue;
		else if (keyis(k, kl, "time_ms") && x <= INT64_MAX)
			e->time_ms = (int64_t)x;
		else if (keyis(k, kl, "status") && x <= 255)
			e->status = (int)x, e->has_status = 1;
		else if (keyis(k, kl, "oom"))
			e->oom = x != 0;
	}
	/* the exception's name says it too (an agent that wrote no oom key) */
	const char *n = strrchr(e->exception, '.');
	if (!strcmp(n ? n + 1 : e->exception, "OutOfMemoryError"))
		e->oom = 1;
}

int agent_parse(const char *text, size_t len, struct agent_figures *out)
{
	memset(out, 0, sizeof *out);
	const char *cur = text, *end = text + len;
	int rc = check_magic(&cur, end, "vramz-torch");
	if (rc)
		return rc;
	int have_pid = 0, have_start = 0;
	struct line l;
	while (next_line(&cur, end, &l)) {
		/* records a reader does not know are skipped (docs/python.md) */
		if (rectype(&l, "process"))
			parse_process(&l, out, &have_pid, &have_start);
		else if (rectype(&l, "device"))
			parse_device(&l, out);
		else if (rectype(&l, "oom"))
			parse_oom(&l, out);
		else if (rectype(&l, "holder"))
			parse_holder(&l, out);
		else if (rectype(&l, "end"))
			parse_end(&l, out);
		else if (rectype(&l, "outside"))
			parse_outside(&l, out);
	}
	return have_pid && have_start ? 0 : VRAMZ_EPARSE;
}

int agent_parse_sites(const char *text, size_t len, struct agent_sites *out)
{
	memset(out, 0, sizeof *out);
	const char *cur = text, *end = text + len;
	int rc = check_magic(&cur, end, "vramz-torch-sites");
	if (rc)
		return rc;
	struct line l;
	while (next_line(&cur, end, &l)) {
		const char *k, *v;
		size_t kl, vl;
		uint64_t x;
		if (rectype(&l, "process")) {
			while (next_pair(&l, &k, &kl, &v, &vl)) {
				if (to_u64(v, vl, &x) || x > INT64_MAX)
					continue;
				if (keyis(k, kl, "time_ms"))
					out->time_ms = (int64_t)x;
				else if (keyis(k, kl, "since_ms"))
					out->since_ms = (int64_t)x;
				else if (keyis(k, kl, "growth_bytes"))
					out->growth_bytes = x, out->has_growth = 1;
			}
		} else if (rectype(&l, "error")) {
			while (next_pair(&l, &k, &kl, &v, &vl))
				if (keyis(k, kl, "why"))
					to_str(out->error, sizeof out->error, v, vl);
		} else if (rectype(&l, "site")) {
			if (out->n == AGENT_MAX_SITES)
				continue;
			struct agent_site *s = &out->site[out->n++];
			while (next_pair(&l, &k, &kl, &v, &vl)) {
				if (keyis(k, kl, "file"))
					to_str(s->file, sizeof s->file, v, vl);
				else if (keyis(k, kl, "func"))
					to_str(s->func, sizeof s->func, v, vl);
				else if (keyis(k, kl, "uuid"))
					to_str(s->uuid, sizeof s->uuid, v, vl);
				else if (to_u64(v, vl, &x))
					continue;
				else if (keyis(k, kl, "bytes"))
					s->bytes = x;
				else if (keyis(k, kl, "growth_bytes"))
					s->growth_bytes = x, s->has_growth = 1;
				else if (keyis(k, kl, "line") && x <= UINT32_MAX)
					s->line = (unsigned)x;
			}
		}
	}
	return 0;
}

