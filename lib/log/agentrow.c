/* SPDX-License-Identifier: Apache-2.0 */
/* agentrow.c - a PyTorch agent's records as rows of a log's events file
 * and back (lib/internal/agentrec.h; columns in docs/csv.md, "Events
 * file").  What is written is what the engine reads of an agent's file:
 * the end (how, status, exception, died of an OOM), the latest OOM (its
 * line, the bytes asked, the cap, the GPU's free memory, the allocator's
 * figures then, its count) and the lines that held the memory - so a
 * record read back is judged exactly as the file was.
 */
#include "agentrec.h"
#include "log/csvrow.h"
#include "text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- writing -------------------------------------------------------------- */

/* a number cell and its comma; empty when not known */
static int putn(struct logbuf *b, uint64_t v, int known)
{
	char t[32];
	int n = known ? snprintf(t, sizeof t, "%" PRIu64, v) : 0;
	return log_put_raw(b, t, (size_t)n) || log_put_raw(b, ",", 1) ? VRAMZ_ENOMEM : 0;
}

/* "FILE:LINE in FUNC()" with the file as recorded; "" unknown */
static void site_text(char *buf, size_t len, const struct agent_frame *at)
{
	if (!at || !at->file[0])
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s:%u in %s()", at->file, at->line, at->func);
}

static int put_text(struct logbuf *b, const char *s, int last)
{
	return log_put_str(b, s) || log_put_raw(b, last ? "\n" : ",", 1) ? VRAMZ_ENOMEM : 0;
}


/* the `meaning` cell: the row in words (a fixed text is returned as it
 * is: copied by snprintf, GCC would store it as immediates in the code,
 * where lintian's spelling check reads "errror" across two of them) */
static const char *meaning(char *buf, size_t len, const char *event, const struct agent_figures *fig)
{
	const struct agent_end *e = &fig->end;
	if (strcmp(event, AGENT_EV_END))
		return "out-of-memory error in PyTorch";
	if (!e->valid)
		return "ended, how unknown";
	if (e->how == AGENT_END_SIGNAL)
		return "ended by SIGTERM";
	if (e->how == AGENT_END_EXCEPTION)
		snprintf(buf, len, "died of an uncaught %s", e->exception[0] ? e->exception : "exception");
	else if (e->has_status)
		snprintf(buf, len, "exited with status %d", e->status);
	else
		return "exited";
	return buf;
}

int agentrow_format(struct logbuf *b, int64_t t_ms, const char *event, int gpu, const char *uuid,
		    uint32_t uid, const struct agent_figures *fig)
{
	char t[LOG_TIME_LEN + 1], text[400];
	const struct agent_end *e = &fig->end;
	const int oom = fig->oom_valid, ended = !strcmp(event, AGENT_EV_END) && e->valid;
	const char *how = !ended ? "" : agent_end_how_name(e->how) ? agent_end_how_name(e->how) : "unknown";
	log_fmt_time(t, t_ms);
	int rc = log_put_raw(b, t, LOG_TIME_LEN) || log_put_raw(b, ",", 1) || putn(b, (uint64_t)gpu, gpu >= 0) ||
		 put_text(b, uuid ? uuid : "", 0) || put_text(b, event, 0) || log_put_raw(b, ",", 1);
	rc = rc || put_text(b, meaning(text, sizeof text, event, fig), 0) || putn(b, fig->pid, 1) ||
	     putn(b, fig->start_time_ticks, 1) || putn(b, uid, 1) ||
	     put_text(b, how, 0);
	/* a negative status is written as such (a cell of its own format) */
	char st[24] = "";
	if (ended && e->has_status)
		snprintf(st, sizeof st, "%d", e->status);
	rc = rc || put_text(b, st, 0) || put_text(b, ended ? e->exception : "", 0) ||
	     putn(b, (uint64_t)(ended && e->oom), !strcmp(event, AGENT_EV_END));
	site_text(text, sizeof text, agent_oom_line(fig));
	rc = rc || put_text(b, text, 0) || putn(b, fig->oom_requested_bytes, oom) ||
	     putn(b, fig->oom_limit_bytes, oom && fig->oom_limit_bytes) ||
	     putn(b, fig->oom_free_bytes, oom && fig->oom_has_free) ||
	     putn(b, fig->oom_allocated_bytes, oom && fig->oom_allocated_bytes) ||
	     putn(b, fig->oom_reserved_bytes, oom && fig->oom_reserved_bytes) ||
	     putn(b, fig->oom_count, oom && fig->oom_count);
	/* the holders of the OOM's device (the engine keeps no other) */
	unsigned k = 0;
	for (unsigned i = 0; oom && i < fig->nholders && k < AGENT_MAX_HOLDERS; i++) {
		const struct agent_holder *h = &fig->holder[i];
		if (fig->oom_cuda >= 0 && h->cuda >= 0 && h->cuda != fig->oom_cuda)
			continue;
		site_text(text, sizeof text, &h->at);
		rc = rc || putn(b, h->bytes, 1) || put_text(b, text, 0);
		k++;
	}
	for (; k < AGENT_MAX_HOLDERS; k++)
		rc = rc || log_put_raw(b, ",,", 2);
	/* count: an agent row is one record, never merged */
	rc = rc || log_put_raw(b, "1\n", 2);
	return rc ? VRAMZ_ENOMEM : 0;
}

/* ---- reading -------------------------------------------------------------- */

enum ev_col {
	EC_TIME, EC_UUID, EC_EVENT, EC_PID, EC_START, EC_UID, EC_HOW, EC_STATUS, EC_EXCEPTION,
	EC_OOM, EC_SITE, EC_REQUESTED, EC_LIMIT, EC_FREE, EC_ALLOCATED, EC_RESERVED, EC_OOMS,
	EC_H1_BYTES, EC_H1_SITE, EC_H2_BYTES, EC_H2_SITE, EC_H3_BYTES, EC_H3_SITE,
	EC_GPU, EC_XID, EC_NUM, EC_COUNT
};
static const char *const ev_names[EC_COUNT] = {
	"time", "uuid", "event", "pid", "start_time_ticks", "uid", "how", "status", "exception",
	"oom", "site", "requested_bytes", "limit_bytes", "free_bytes", "allocated_bytes",
	"reserved_bytes", "ooms", "holder1_bytes", "holder1_site", "holder2_bytes",
	"holder2_site", "holder3_bytes", "holder3_site", "gpu", "xid", "count",
};

#define EV_MAX_CELLS 64
/* (GPU, event, code) sums kept; more kinds are counted in the last */
#define EV_MAX_SUMS 256

struct agentrow_reader {
	FILE *f;
	char *line;
	size_t cap;
	int col[EC_COUNT];             /* the cell of each, or -1 */
	struct cell cells[EV_MAX_CELLS + 1];
	int count_driver;              /* agentrow_count_driver was called */
	int64_t since_ms, until_ms;
	unsigned nsums;
	struct agentrow_driver *sums;  /* [EV_MAX_SUMS] once counting */
};

/* the header's cells to col[] */
static int map_header(struct agentrow_reader *r, char *line, size_t n)
{
	int nc = csv_split(line, n, r->cells, EV_MAX_CELLS);
	if (nc < 0)
		return -1;
	for (int i = 0; i < EC_COUNT; i++) {
		r->col[i] = -1;
		for (int c = 0; c < nc && c < EV_MAX_CELLS; c++)
			if (r->cells[c].n == strlen(ev_names[i]) &&
			    !memcmp(r->cells[c].s, ev_names[i], r->cells[c].n))
				r->col[i] = c;
	}
	return r->col[EC_TIME] < 0 || r->col[EC_EVENT] < 0 ? -1 : 0;
}

int agentrow_open(struct agentrow_reader **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	int fd = log_open_file(path, err, errlen);
	if (fd < 0)
		return fd;
	struct agentrow_reader *r = calloc(1, sizeof *r);
	FILE *f = r ? fdopen(fd, "r") : NULL;
	if (!f) {
		close(fd);
		free(r);
		return VRAMZ_ENOMEM;
	}
	r->f = f;
	ssize_t n = getline(&r->line, &r->cap, f);
	while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
		r->line[--n] = '\0';
	size_t bom = n >= 3 && !memcmp(r->line, "\xef\xbb\xbf", 3) ? 3 : 0;
	if (n <= 0 || map_header(r, r->line + bom, (size_t)n - bom)) {
		snprintf(err, errlen, "%s: not a vramz events file (its first line is no events header)", path);
		agentrow_close(r);
		return VRAMZ_EPARSE;
	}
	*out = r;
	return 0;
}

static const struct cell *cell_of(const struct agentrow_reader *r, int nc, enum ev_col c)
{
	static const struct cell none = {"", 0};
	return r->col[c] >= 0 && r->col[c] < nc ? &r->cells[r->col[c]] : &none;
}

/* "FILE:LINE in FUNC()" back to a frame; 0, or -1 when it is not one */
static int site_parse(const struct cell *c, struct agent_frame *at)
{
	char s[400];
	cell_copy(s, sizeof s, c);
	char *in = NULL;
	for (char *p = strstr(s, " in "); p; p = strstr(p + 1, " in "))
		in = p;
	if (!in)
		return -1;
	*in = '\0';
	char *func = in + 4, *colon = strrchr(s, ':');
	size_t fl = strlen(func);
	if (!colon || fl < 2 || strcmp(func + fl - 2, "()"))
		return -1;
	func[fl - 2] = '\0';
	*colon = '\0';
	char *endp;
	errno = 0;
	unsigned long line = strtoul(colon + 1, &endp, 10);
	if (*endp || errno || line > UINT32_MAX || colon == s)
		return -1;
	at->line = (unsigned)line;
	text_copy_n(at->file, sizeof at->file, s, strlen(s));
	text_copy_n(at->func, sizeof at->func, func, strlen(func));
	return 0;
}

static int u64_of(const struct agentrow_reader *r, int nc, enum ev_col c, uint64_t *v)
{
	return cell_u64(cell_of(r, nc, c), UINT64_MAX, v) == 0;
}

/* the end and the OOM of a row into fig (pid and start already in) */
static void row_record(const struct agentrow_reader *r, int nc, int end, struct agent_figures *fig)
{
	const struct cell *how = cell_of(r, nc, EC_HOW);
	uint64_t v;
	int64_t st;
	if (end && how->n) {
		struct agent_end *e = &fig->end;
		e->valid = 1;
		e->how = agent_end_how_of(how->s, how->n);
		e->has_status = cell_int(cell_of(r, nc, EC_STATUS), &st) == 0;
		e->status = e->has_status ? (int)st : 0;
		cell_copy(e->exception, sizeof e->exception, cell_of(r, nc, EC_EXCEPTION));
		e->oom = u64_of(r, nc, EC_OOM, &v) && v == 1;
	}
	fig->oom_cuda = -1;
	if (u64_of(r, nc, EC_REQUESTED, &fig->oom_requested_bytes)) {
		fig->oom_valid = 1;
		u64_of(r, nc, EC_LIMIT, &fig->oom_limit_bytes);
		fig->oom_has_free = u64_of(r, nc, EC_FREE, &fig->oom_free_bytes);
		u64_of(r, nc, EC_ALLOCATED, &fig->oom_allocated_bytes);
		u64_of(r, nc, EC_RESERVED, &fig->oom_reserved_bytes);
		u64_of(r, nc, EC_OOMS, &fig->oom_count);
		if (cell_copy(fig->dev[0].uuid, sizeof fig->dev[0].uuid, cell_of(r, nc, EC_UUID)) &&
		    fig->dev[0].uuid[0])
			fig->ndev = 1, fig->oom_cuda = fig->dev[0].cuda = 0;
	}
	site_parse(cell_of(r, nc, EC_SITE), fig->oom_valid ? &fig->oom_at : &fig->end.at);
	for (int i = 0; fig->oom_valid && i < AGENT_MAX_HOLDERS; i++) {
		struct agent_holder *h = &fig->holder[fig->nholders];
		h->cuda = -1;
		if (u64_of(r, nc, (enum ev_col)(EC_H1_BYTES + 2 * i), &h->bytes) &&
		    site_parse(cell_of(r, nc, (enum ev_col)(EC_H1_SITE + 2 * i)), &h->at) == 0)
			fig->nholders++;
	}
}

static int is_driver_event(const struct cell *ev)
{
	static const char *const kinds[] = {"xid", "ecc_sbe", "ecc_dbe"};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (ev->n == strlen(kinds[i]) && !memcmp(ev->s, kinds[i], ev->n))
			return 1;
	return 0;
}

/* a driver row into its (GPU, event, code) sum, when counting */
static void driver_row(struct agentrow_reader *r, int nc, const struct cell *ev, const struct cell *t)
{
	int64_t t_ms;
	uint64_t count = 1, gpu, xid = 0;
	if (!r->sums || !is_driver_event(ev) || log_parse_time(t->s, t->n, &t_ms) ||
	    t_ms < r->since_ms || t_ms > r->until_ms)
		return;
	/* an empty or missing count (a file from before the column) is one event */
	if (cell_of(r, nc, EC_NUM)->n && (!u64_of(r, nc, EC_NUM, &count) || !count))
		return;
	if (!u64_of(r, nc, EC_GPU, &gpu) || gpu > INT32_MAX)
		gpu = (uint64_t)-1;
	if (!u64_of(r, nc, EC_XID, &xid) || xid > UINT32_MAX)
		xid = 0;
	unsigned i = 0;
	for (; i < r->nsums; i++) {
		const struct agentrow_driver *s = &r->sums[i];
		if (s->gpu == (int)gpu && s->xid == (unsigned)xid && strlen(s->event) == ev->n &&
		    !memcmp(s->event, ev->s, ev->n))
			break;
	}
	if (i == r->nsums && r->nsums < EV_MAX_SUMS) {
		struct agentrow_driver *s = &r->sums[r->nsums++];
		memset(s, 0, sizeof *s);
		s->gpu = (int)gpu;
		s->xid = (unsigned)xid;
		memcpy(s->event, ev->s, ev->n);
		s->first_ms = t_ms;
	} else if (i == r->nsums) {
		return; /* 256 kinds in one file: the rest are not summed */
	}
	struct agentrow_driver *s = &r->sums[i];
	s->count = count > UINT64_MAX - s->count ? UINT64_MAX : s->count + count;
	s->last_ms = t_ms > s->last_ms ? t_ms : s->last_ms;
	s->first_ms = t_ms < s->first_ms ? t_ms : s->first_ms;
}

void agentrow_count_driver(struct agentrow_reader *r, int64_t since_ms, int64_t until_ms)
{
	if (!r->sums)
		r->sums = calloc(EV_MAX_SUMS, sizeof *r->sums);
	r->since_ms = since_ms;
	r->until_ms = until_ms;
}

unsigned agentrow_driver_sums(const struct agentrow_reader *r, const struct agentrow_driver **out)
{
	*out = r->sums;
	return r->sums ? r->nsums : 0;
}

int agentrow_next(struct agentrow_reader *r, int64_t *t_ms, uint32_t *uid, struct agent_figures *fig)
{
	ssize_t n;
	while ((n = getline(&r->line, &r->cap, r->f)) > 0) {
		if (r->line[n - 1] != '\n')
			break; /* a row not ended: torn by a crash, or being written */
		while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
			r->line[--n] = '\0';
		int nc = csv_split(r->line, (size_t)n, r->cells, EV_MAX_CELLS);
		if (nc <= 0)
			continue;
		nc = nc > EV_MAX_CELLS ? EV_MAX_CELLS : nc;
		const struct cell *ev = cell_of(r, nc, EC_EVENT), *t = cell_of(r, nc, EC_TIME);
		int end = ev->n == strlen(AGENT_EV_END) && !memcmp(ev->s, AGENT_EV_END, ev->n);
		int oom = ev->n == strlen(AGENT_EV_OOM) && !memcmp(ev->s, AGENT_EV_OOM, ev->n);
		if (!end && !oom) {
			driver_row(r, nc, ev, t);
			continue;
		}
		uint64_t pid, start, u;
		if ((!end && !oom) || log_parse_time(t->s, t->n, t_ms) ||
		    !u64_of(r, nc, EC_PID, &pid) || pid > UINT32_MAX || !u64_of(r, nc, EC_START, &start))
			continue;
		memset(fig, 0, sizeof *fig);
		fig->pid = (uint32_t)pid;
		fig->start_time_ticks = start;
		*uid = u64_of(r, nc, EC_UID, &u) && u <= UINT32_MAX ? (uint32_t)u : 0;
		row_record(r, nc, end, fig);
		return 1;
	}
	return 0;
}

void agentrow_close(struct agentrow_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->line);
	free(r->sums);
	free(r);
}
