/* SPDX-License-Identifier: Apache-2.0 */
/* web.h - the live page of `vramz serve` and the data behind it (issue 31):
 * GET / (livepage.c: one self-contained page compiled into the binary),
 * GET /api/v1/status (api.c: the `status --json` document of the last
 * sample) and GET /api/v1/events (sse.c: Server-Sent Events, one snapshot
 * a tick and the findings when they change, to at most --max-streams
 * clients), over a ring of recent ticks kept for the page's charts
 * (history.c, --history).
 *
 * The sampler thread hands each tick to serve_web_tick(); requests are
 * answered from what it left, so an open page costs the exporter one
 * rendered document a tick and a copy of it per stream, never a driver
 * call, and with nobody looking only the ring is kept (api.c).  Everything here is read-only: no route changes anything.
 * The routes go through http.c's dispatcher (serve_web_route is its
 * route hook), so TLS and basic authentication are the same as /metrics'.
 */
#ifndef VRAMZ_SERVE_WEB_H
#define VRAMZ_SERVE_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "serve/http.h"
#include "serve/mhd_dl.h"
#include "vramz/diagnose.h"
#include "vramz/vramz.h"

struct serve_web;

struct serve_web_opts {
	unsigned max_streams;   /* open /api/v1/events at once; the next gets 503 */
	unsigned max_streams_per_ip; /* of them from one address; the next gets 429 */
	int64_t history_ms;     /* how much the ring keeps (SERVE_HISTORY_MAX_MS at most) */
	int64_t interval_ms;    /* the sampling interval, for the page's stale rule */
	const char *hostname;   /* shown on the page */
};

/* --history: at most an hour, and at most this many ticks whatever the
 * interval (8 GPUs x 3600 ticks x 16 bytes, plus 8 a tick: under 1 MiB). */
#define SERVE_HISTORY_MAX_MS (3600 * 1000LL)
#define SERVE_HISTORY_MAX_TICKS 3600u
/* Bytes a stream may have waiting beyond its first message (the
 * history): a client that reads slower than that is disconnected. */
#define SSE_BACKLOG_BYTES (256 * 1024)

/* NULL when out of memory. */
struct serve_web *serve_web_new(const struct serve_web_opts *o);
/* Ends every stream (before the HTTP daemon stops) */
void serve_web_shutdown(struct serve_web *w);
void serve_web_free(struct serve_web *w);

/* One tick, from the sampler thread: snap may be NULL (nothing could be
 * read); findings are the engine's current ones (n may be 0).  -1 when
 * out of memory (the last documents stay in service). */
int serve_web_tick(struct serve_web *w, vramz_ctx *ctx, const vramz_snapshot *snap,
		   const vramz_finding *findings, unsigned n);

/* http.c's route hook: answers url and returns MHD_YES / MHD_NO, or
 * SERVE_ROUTE_NONE when the path is not one of these. */
#define SERVE_ROUTE_NONE (-1)
int serve_web_route(void *cls, struct MHD_Connection *c, const char *url, int head);

/* ---- between the files of the web side ---- */

/* history.c: the ring of recent ticks (every sensor the page charts, per GPU) */
struct serve_history;
struct serve_history *history_new(int64_t history_ms, int64_t interval_ms);
void history_free(struct serve_history *h);
void history_add(struct serve_history *h, const vramz_snapshot *snap);
/* Writes the ring as the members "t" and "gpus" of the open object. */
struct jsonw;
void history_json(const struct serve_history *h, struct jsonw *w);
/* The ticks it keeps at most. */
unsigned history_capacity(const struct serve_history *h);

/* sse.c: the streams */
struct sse_hub;
struct sse_hub *sse_new(unsigned max_streams, unsigned per_addr);
void sse_free(struct sse_hub *s);
/* Ends every stream: after it, each answers end-of-stream. */
void sse_shutdown(struct sse_hub *s);
unsigned sse_count(struct sse_hub *s);
/* 0 when c may open a stream now, else the status its refusal has: 503
 * (max_streams open) or 429 (per_addr open from its address). */
unsigned sse_full(struct sse_hub *s, struct MHD_Connection *c);
/* Queues an event (complete, "event: ...\ndata: ...\n\n") to every stream. */
void sse_push(struct sse_hub *s, const char *ev, size_t len);
/* Opens a stream on c whose first bytes are first (copied); 503 or 429
 * when full (sse_full() says so beforehand, to spare the rendering of a
 * first message nobody will get). */
enum MHD_Result sse_open(struct sse_hub *s, struct MHD_Connection *c, const char *first,
			 size_t len);
/* The refusal (with Retry-After) of status why, as sse_full gave it. */
enum MHD_Result sse_refuse(struct MHD_Connection *c, unsigned why);

/* livepage.c: GET / */
int page_init(void); /* the CSP header's hashes; -1 when out of memory */
enum MHD_Result page_answer(struct MHD_Connection *c);

#endif
