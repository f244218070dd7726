/* SPDX-License-Identifier: Apache-2.0 */
/* api.c - the web side's state and routes: GET /api/v1/status, the
 * events' documents, and the dispatch of /, /api/v1/ paths (web.h).
 *
 * The sampler renders the `status --json` document on one line (as
 * `status --json --loop` does), with the same writer (format/jsondoc.c),
 * so the API cannot drift from the command: /api/v1/status serves it as it
 * is.  The event stream sends the page's document as the data line of a
 * "snapshot" event: the same writer keeping only the keys page.js draws
 * (page_keys), a third of the bytes.  Each is rendered only for someone:
 * the page's while a stream is open, the status document for
 * SERVE_API_WANT_S after each /api/v1/status request (a poller's requests
 * find the last tick's document ready); a request after a quiet spell
 * waits, suspended, for the next tick's (at most one --interval), so with
 * nobody looking the page's side costs the exporter only its ring.  The findings go out as a "findings" event only when
 * their set changes (a finding new, gone, or of another revision or
 * severity), each object as `watch --json` writes it (diagconf_json).
 * A new stream first gets a "hello" event (host, interval, the history
 * kept: the ring of history.c), then the latest snapshot and findings.
 */
#include "serve/web.h"

#include <pthread.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diagconf.h"
#include "clock.h"
#include "format/jsondoc.h"
#include "format/jsonw.h"

/* After an /api/v1/status request, the document is rendered every tick
 * for this long. */
#define SERVE_API_WANT_S 300

/* A /api/v1/status request waiting, suspended, for the next document. */
struct waiter {
	struct MHD_Connection *c;
	struct waiter *next;
};

/* What makes the findings' set differ for the page. */
struct fkey {
	uint64_t id;
	unsigned revision;
	int severity, ended;
};

struct serve_web {
	struct serve_web_opts o;
	char host[256];
	pthread_mutex_t lock;          /* everything below; taken before the hub's */
	struct serve_history *hist;
	struct sse_hub *sse;
	char *status;                  /* the last status document; NULL before one */
	size_t status_len;
	char *page;                    /* the last page document (the stream's) */
	size_t page_len;
	unsigned long page_tick;       /* the tick it is of */
	unsigned long ticks;           /* ticks seen */
	unsigned long status_tick;     /* the tick status is of (or, failed, stands for) */
	int64_t wanted_until_ns;       /* render every tick until (monotonic) */
	struct waiter *waiting;        /* /api/v1/status requests for the next document */
	int stopping;
	char *findings_ev;             /* the last "findings" event */
	size_t findings_len;
	struct fkey *keys;             /* the findings it describes */
	unsigned nkeys;
};

struct serve_web *serve_web_new(const struct serve_web_opts *o)
{
	struct serve_web *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->o = *o;
	snprintf(w->host, sizeof w->host, "%s", o->hostname ? o->hostname : "");
	pthread_mutex_init(&w->lock, NULL);
	w->hist = history_new(o->history_ms, o->interval_ms);
	w->sse = sse_new(o->max_streams, o->max_streams_per_ip);
	if (!w->hist || !w->sse || page_init() < 0) {
		serve_web_free(w);
		return NULL;
	}
	return w;
}

/* Lets the waiting requests go on (web locked): called again, each finds
 * the document it waited for (or none, or the exporter stopping). */
static void wake_waiters(struct serve_web *w)
{
	while (w->waiting) {
		struct waiter *x = w->waiting;
		w->waiting = x->next;
		MHD_resume_connection(x->c);
		free(x);
	}
}

void serve_web_shutdown(struct serve_web *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	wake_waiters(w); /* MHD must find none suspended when it stops */
	pthread_mutex_unlock(&w->lock);
	sse_shutdown(w->sse);
}

void serve_web_free(struct serve_web *w)
{
	if (!w)
		return;
	history_free(w->hist);
	sse_free(w->sse);
	free(w->status);
	free(w->page);
	free(w->findings_ev);
	free(w->keys);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Closes a memory stream: 0, or -1 (out of memory; *p freed). */
static int mem_close(FILE *f, char **p)
{
	if (fclose(f)) { /* *p is only final after fclose */
		free(*p);
		*p = NULL;
		return -1;
	}
	return 0;
}

/* "event: snapshot\ndata: DOC\n\n": DOC is on one line (a newline inside
 * a JSON string is written \n), ending with the writer's own newline. */
static char *snapshot_event(const char *doc, size_t len, size_t *out)
{
	static const char head[] = "event: snapshot\ndata: ";
	char *e = malloc(sizeof head + len + 1);
	if (!e)
		return NULL;
	memcpy(e, head, sizeof head - 1);
	memcpy(e + sizeof head - 1, doc, len);
	e[sizeof head - 1 + len] = '\n';
	*out = sizeof head + len;
	return e;
}

/* Whether the findings differ from the ones last sent (and remembers them). */
static int findings_changed(struct serve_web *w, const vramz_finding *f, unsigned n)
{
	int changed = !w->findings_ev || n != w->nkeys;
	for (unsigned i = 0; !changed && i < n; i++)
		changed = f[i].id != w->keys[i].id || f[i].revision != w->keys[i].revision ||
			  (int)f[i].severity != w->keys[i].severity || f[i].ended != w->keys[i].ended;
	if (!changed)
		return 0;
	struct fkey *k = realloc(w->keys, (n ? n : 1) * sizeof *k);
	if (!k)
		return 0; /* the page keeps the previous findings */
	w->keys = k;
	w->nkeys = n;
	for (unsigned i = 0; i < n; i++)
		k[i] = (struct fkey){f[i].id, f[i].revision, (int)f[i].severity, f[i].ended};
	return 1;
}

static char *findings_event(const vramz_finding *f, unsigned n, size_t *len)
{
	char *p = NULL;
	size_t sz = 0;
	FILE *m = open_memstream(&p, &sz);
	if (!m)
		return NULL;
	fputs("event: findings\ndata: ", m);
	struct jsonw jw;
	jw_init(&jw, m, 0);
	jw_obj(&jw, NULL);
	jw_arr(&jw, "findings");
	for (unsigned i = 0; i < n; i++)
		diagconf_json(&jw, NULL, &f[i]);
	jw_end_arr(&jw);
	jw_end_obj(&jw);
	jw_finish(&jw); /* ends the data line */
	fputc('\n', m);
	if (mem_close(m, &p))
		return NULL;
	*len = sz;
	return p;
}

/* The keys of the page's document: what page.js draws, no more (a
 * process of the full document is 3 times as long). */
static const char *const page_gpu_keys[] = {
	"name", "mem_total_bytes", "mem_reserved_bytes", "mem_used_bytes", "mem_free_bytes",
	"util_gpu_pct", "temp_c", "power_mw", "power_limit_mw", "pcie_gen", "pcie_width",
	/* the sensor rows (issue 40): what GPU-Z's sensor tab shows */
	"util_mem_pct", "temp_mem_c", "clock_sm_mhz", "clock_mem_mhz", "fan_pct",
	"pcie_tx_bytes_per_s", "pcie_rx_bytes_per_s",
	/* the card's VRAM health line: what `status`'s HEALTH column reads */
	"ecc_corrected_volatile", "ecc_uncorrected_volatile", "remap_pending", "remap_failure",
	"retired_pending", "xid_events", "xid_last", NULL};
static const char *const page_proc_keys[] = {
	"gpu", "pid", "user", "comm", "command", "container", "pod_uid", "slurm_job",
	"used_bytes", "sm_pct", "torch", "pod", "namespace", "container_name", NULL};
static const struct json_keys page_keys = {page_gpu_keys, page_proc_keys};

/* One document on one line into *doc: the whole status (keys NULL) or
 * the page's; -1 when it could not be written. */
static int render(char **doc, size_t *len, vramz_ctx *ctx, const vramz_snapshot *snap,
		  const struct json_keys *keys)
{
	FILE *m = open_memstream(doc, len);
	if (!m)
		return -1;
	/* this thread's alone: no lock per character written */
	__fsetlocking(m, FSETLOCKING_BYCALLER);
	if (keys)
		json_snapshot_keys(m, "page", ctx, snap, keys);
	else /* as `status --json --loop` writes it */
		json_snapshot(m, "status", ctx, snap, 1, 0);
	return mem_close(m, doc);
}

int serve_web_tick(struct serve_web *w, vramz_ctx *ctx, const vramz_snapshot *snap,
		   const vramz_finding *findings, unsigned n)
{
	char *doc = NULL, *pdoc = NULL, *fev = NULL;
	size_t dlen = 0, plen = 0, flen = 0;
	int rc = 0;
	pthread_mutex_lock(&w->lock);
	int wanted = w->waiting || clock_mono_ns() < w->wanted_until_ns;
	pthread_mutex_unlock(&w->lock);
	if (snap && wanted && render(&doc, &dlen, ctx, snap, NULL))
		rc = -1;
	/* the streams get the page's own, lighter document */
	if (snap && sse_count(w->sse) && render(&pdoc, &plen, ctx, snap, &page_keys))
		rc = -1;
	pthread_mutex_lock(&w->lock);
	history_add(w->hist, snap);
	w->ticks++;
	/* a sampling that failed has no document to wait for: waiters get
	 * the last one; one that arrived after this tick chose not to render
	 * waits for the next */
	if (doc || (!snap && w->waiting))
		w->status_tick = w->ticks;
	if (doc) {
		free(w->status);
		w->status = doc;
		w->status_len = dlen;
	}
	if (pdoc) {
		free(w->page);
		w->page = pdoc;
		w->page_len = plen;
		w->page_tick = w->ticks;
		size_t elen;
		char *ev = snapshot_event(pdoc, plen, &elen);
		if (ev)
			sse_push(w->sse, ev, elen);
		free(ev);
	}
	if (findings_changed(w, findings, n)) {
		if ((fev = findings_event(findings, n, &flen))) {
			free(w->findings_ev);
			w->findings_ev = fev;
			w->findings_len = flen;
			sse_push(w->sse, fev, flen);
		} else {
			free(w->keys); /* try again next tick */
			w->keys = NULL;
			w->nkeys = 0;
			rc = -1;
		}
	}
	if (w->status_tick == w->ticks)
		wake_waiters(w);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* A new stream's first message (web locked): hello with the history, the
 * last snapshot, the last findings. */
static char *first_message(struct serve_web *w, size_t *len)
{
	char *p = NULL;
	size_t sz = 0;
	FILE *m = open_memstream(&p, &sz);
	if (!m)
		return NULL;
	/* the browser's reconnection delay after a drop, in ms */
	fprintf(m, "retry: %lld\nevent: hello\ndata: ",
		(long long)(w->o.interval_ms < 1000 ? 1000 : w->o.interval_ms));
	struct jsonw jw;
	jw_init(&jw, m, 0);
	jw_obj(&jw, NULL);
	jw_str(&jw, "vramz_version", VRAMZ_VERSION_STRING);
	jw_str(&jw, "host", w->host);
	jw_i64(&jw, "interval_ms", w->o.interval_ms);
	jw_i64(&jw, "history_ms", (int64_t)history_capacity(w->hist) * w->o.interval_ms);
	history_json(w->hist, &jw);
	jw_end_obj(&jw);
	jw_finish(&jw);
	fputc('\n', m);
	if (w->page && w->page_tick == w->ticks) { /* a stale one would jump back */
		size_t elen;
		char *ev = snapshot_event(w->page, w->page_len, &elen);
		if (ev)
			fwrite(ev, 1, elen, m);
		free(ev);
	}
	if (w->findings_ev)
		fwrite(w->findings_ev, 1, w->findings_len, m);
	if (mem_close(m, &p))
		return NULL;
	*len = sz;
	return p;
}

static enum MHD_Result answer_events(struct serve_web *w, struct MHD_Connection *c, int head)
{
	if (head) /* the headers alone: no stream is opened */
		return serve_respond(c, MHD_HTTP_OK, "text/event-stream; charset=utf-8", "", 0,
				     SERVE_STATIC | SERVE_WEB);
	/* a client turned away costs no rendering (sse_open checks again) */
	unsigned why = sse_full(w->sse, c);
	if (why)
		return sse_refuse(c, why);
	pthread_mutex_lock(&w->lock);
	size_t len = 0;
	char *first = first_message(w, &len);
	enum MHD_Result rc = first ? sse_open(w->sse, c, first, len) : MHD_NO;
	pthread_mutex_unlock(&w->lock);
	free(first);
	return rc;
}

static enum MHD_Result answer_status(struct serve_web *w, struct MHD_Connection *c)
{
	pthread_mutex_lock(&w->lock);
	w->wanted_until_ns = clock_mono_ns() + SERVE_API_WANT_S * 1000000000LL;
	if (w->ticks && w->status_tick != w->ticks && !w->stopping) {
		/* not rendered lately: wait for the next tick's */
		struct waiter *x = malloc(sizeof *x);
		if (!x) {
			pthread_mutex_unlock(&w->lock);
			return MHD_NO;
		}
		*x = (struct waiter){c, w->waiting};
		w->waiting = x;
		MHD_suspend_connection(c);
		pthread_mutex_unlock(&w->lock);
		return MHD_YES;
	}
	/* copied out, so gzip runs without holding up the sampler's tick */
	size_t len = w->status_len;
	char *doc = w->status ? malloc(len ? len : 1) : NULL;
	if (doc)
		memcpy(doc, w->status, len);
	int none = !w->status;
	pthread_mutex_unlock(&w->lock);
	if (none)
		return serve_respond(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
				     "no sample yet\n", 14, SERVE_STATIC | SERVE_WEB);
	if (!doc)
		return MHD_NO;
	enum MHD_Result rc = serve_respond(c, MHD_HTTP_OK, "application/json", doc, len,
					   SERVE_GZIP | SERVE_WEB);
	free(doc);
	return rc;
}

int serve_web_route(void *cls, struct MHD_Connection *c, const char *url, int head)
{
	struct serve_web *w = cls;
	if (!strcmp(url, "/"))
		return page_answer(c);
	if (!strcmp(url, "/api/v1/status"))
		return answer_status(w, c);
	if (!strcmp(url, "/api/v1/events"))
		return answer_events(w, c, head);
	if (!strcmp(url, "/favicon.ico")) /* the page has no icon: say so quietly */
		return serve_respond(c, MHD_HTTP_NO_CONTENT, "image/x-icon", "", 0,
				    SERVE_STATIC | SERVE_WEB);
	return SERVE_ROUTE_NONE;
}
