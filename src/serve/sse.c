/* SPDX-License-Identifier: Apache-2.0 */
/* sse.c - GET /api/v1/events: Server-Sent Events to the live page.
 *
 * Each stream is a libmicrohttpd response whose content comes from a
 * buffer of its own: the sampler thread appends every event to every
 * stream's buffer (sse_push), and MHD's thread drains it as the socket
 * takes it.  A stream with nothing to send suspends its connection, and
 * the next push resumes it, so an idle stream costs no thread and no
 * polling; a tick costs one memcpy of the event per stream.
 *
 * Bounds: at most max_streams (--max-streams) at once, the next client
 * gets 503 with Retry-After, so tabs cannot multiply the exporter's work;
 * at most per_addr (--max-streams-per-ip) of them from one client address
 * (serve_addr_key: an IPv6 /64 is one), the next from it 429, so one
 * address cannot take every stream and lock the page for everyone (issue
 * 35);
 * and a stream whose buffer holds more than SSE_BACKLOG_BYTES beyond its
 * first message (a client that stopped reading: the kernel's socket
 * buffer is full, and the events pile up here) is dropped: its buffer is
 * freed at once and the connection ends, so such a client cannot make
 * the exporter grow.  EventSource reconnects by itself and gets a fresh
 * history.
 *
 * Locks: the hub's mutex guards the list and every buffer; MHD's reader
 * callback takes it, and calls MHD_suspend_connection under it, which is
 * what makes a push's resume never miss a suspension.
 */
#include "serve/web.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "serve/guard.h"

/* MHD asks for content in blocks of this */
#define SSE_BLOCK_BYTES (16 * 1024)

struct sse_stream {
	struct sse_hub *hub;
	struct MHD_Connection *c;
	unsigned char addr[SERVE_ADDR_KEY_LEN]; /* the client's, as the cap counts */
	char *buf;             /* pending bytes are buf[off, len) */
	size_t off, len, alloc;
	size_t limit;          /* pending bytes beyond this: dropped */
	int suspended;         /* waiting for a push */
	int dead;              /* dropped or shut down: end at the next read */
	struct sse_stream *prev, *next;
};

struct sse_hub {
	pthread_mutex_t lock;
	unsigned n, max, per_addr;
	int stopping;
	struct sse_stream *head;
};

struct sse_hub *sse_new(unsigned max_streams, unsigned per_addr)
{
	struct sse_hub *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->max = max_streams;
	s->per_addr = per_addr;
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

/* Wakes a suspended stream (hub locked). */
static void wake(struct sse_stream *st)
{
	if (st->suspended) {
		st->suspended = 0;
		MHD_resume_connection(st->c);
	}
}

/* Frees a stream's buffer and marks it to end (hub locked). */
static void drop(struct sse_stream *st)
{
	st->dead = 1;
	free(st->buf);
	st->buf = NULL;
	st->off = st->len = st->alloc = 0;
	wake(st);
}

void sse_shutdown(struct sse_hub *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	for (struct sse_stream *st = s->head; st; st = st->next)
		drop(st);
	pthread_mutex_unlock(&s->lock);
}

void sse_free(struct sse_hub *s)
{
	if (!s)
		return;
	/* the daemon is stopped: every stream's free callback has run */
	pthread_mutex_destroy(&s->lock);
	free(s);
}

unsigned sse_count(struct sse_hub *s)
{
	pthread_mutex_lock(&s->lock);
	unsigned n = s->n;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void addr_of(struct MHD_Connection *c, unsigned char key[SERVE_ADDR_KEY_LEN])
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr)
		serve_addr_key(ci->client_addr, key);
	else
		memset(key, 0, SERVE_ADDR_KEY_LEN);
}

/* Why a stream from addr cannot open now (hub locked): 0 it can,
 * MHD_HTTP_SERVICE_UNAVAILABLE all are taken, MHD_HTTP_TOO_MANY_REQUESTS
 * its address holds its share. */
static unsigned full(const struct sse_hub *s, const unsigned char addr[SERVE_ADDR_KEY_LEN])
{
	if (s->n >= s->max || s->stopping)
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	unsigned mine = 0;
	for (const struct sse_stream *st = s->head; st; st = st->next)
		mine += !st->dead && !memcmp(st->addr, addr, SERVE_ADDR_KEY_LEN);
	return mine >= s->per_addr ? MHD_HTTP_TOO_MANY_REQUESTS : 0;
}

unsigned sse_full(struct sse_hub *s, struct MHD_Connection *c)
{
	unsigned char addr[SERVE_ADDR_KEY_LEN];
	addr_of(c, addr);
	pthread_mutex_lock(&s->lock);
	unsigned why = full(s, addr);
	pthread_mutex_unlock(&s->lock);
	return why;
}

/* Appends len bytes to st's buffer (hub locked); -1 when over its limit
 * or out of memory. */
static int append(struct sse_stream *st, const char *p, size_t len)
{
	if (st->off) { /* what was sent leaves room at the front */
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
	}
	if (st->len + len > st->limit)
		return -1;
	if (st->len + len > st->alloc) {
		size_t a = st->alloc ? st->alloc : 4096;
		while (a < st->len + len)
			a *= 2;
		char *nb = realloc(st->buf, a);
		if (!nb)
			return -1;
		st->buf = nb;
		st->alloc = a;
	}
	memcpy(st->buf + st->len, p, len);
	st->len += len;
	return 0;
}

void sse_push(struct sse_hub *s, const char *ev, size_t len)
{
	pthread_mutex_lock(&s->lock);
	for (struct sse_stream *st = s->head; st; st = st->next) {
		if (st->dead)
			continue;
		if (append(st, ev, len) < 0)
			drop(st); /* fell behind: SSE_BACKLOG_BYTES waiting */
		else
			wake(st);
	}
	pthread_mutex_unlock(&s->lock);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_stream *st = cls;
	struct sse_hub *s = st->hub;
	(void)pos;
	pthread_mutex_lock(&s->lock);
	if (st->dead) {
		pthread_mutex_unlock(&s->lock);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	if (st->off < st->len) {
		size_t n = st->len - st->off < max ? st->len - st->off : max;
		memcpy(buf, st->buf + st->off, n);
		st->off += n;
		if (st->off == st->len)
			st->off = st->len = 0;
		pthread_mutex_unlock(&s->lock);
		return (ssize_t)n;
	}
	/* nothing to send: sleep until the next push (not a busy loop) */
	st->suspended = 1;
	MHD_suspend_connection(st->c);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void sse_closed(void *cls)
{
	struct sse_stream *st = cls;
	struct sse_hub *s = st->hub;
	pthread_mutex_lock(&s->lock);
	if (st->prev)
		st->prev->next = st->next;
	else
		s->head = st->next;
	if (st->next)
		st->next->prev = st->prev;
	s->n--;
	pthread_mutex_unlock(&s->lock);
	free(st->buf);
	free(st);
}

enum MHD_Result sse_refuse(struct MHD_Connection *c, unsigned why)
{
	static const char busy[] = "too many event streams open: retry later\n",
			  mine[] = "too many event streams open from your address: close one (a tab) "
				   "or retry later\n";
	int addr = why == MHD_HTTP_TOO_MANY_REQUESTS;
	struct MHD_Response *r = MHD_create_response_from_buffer(
		addr ? sizeof mine - 1 : sizeof busy - 1, (void *)(uintptr_t)(addr ? mine : busy),
		MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	serve_conf_headers(r); /* the web configuration's of now: made per refusal */
	enum MHD_Result rc = MHD_queue_response(c, addr ? MHD_HTTP_TOO_MANY_REQUESTS
						    : MHD_HTTP_SERVICE_UNAVAILABLE, r);
	MHD_destroy_response(r);
	return rc;
}

enum MHD_Result sse_open(struct sse_hub *s, struct MHD_Connection *c, const char *first,
			 size_t len)
{
	struct sse_stream *st = calloc(1, sizeof *st);
	if (!st)
		return MHD_NO;
	st->hub = s;
	st->c = c;
	st->limit = len + SSE_BACKLOG_BYTES;
	addr_of(c, st->addr);
	pthread_mutex_lock(&s->lock);
	unsigned why = full(s, st->addr);
	if (why || append(st, first, len) < 0) {
		pthread_mutex_unlock(&s->lock);
		free(st->buf);
		free(st);
		return sse_refuse(c, why ? why : MHD_HTTP_SERVICE_UNAVAILABLE);
	}
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK_BYTES,
								   sse_read, st, sse_closed);
	if (!r) {
		pthread_mutex_unlock(&s->lock);
		free(st->buf);
		free(st);
		return MHD_NO;
	}
	st->next = s->head;
	if (s->head)
		s->head->prev = st;
	s->head = st;
	s->n++;
	pthread_mutex_unlock(&s->lock);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	serve_web_headers(r);
	serve_conf_headers(r);
	/* a proxy in front must not sit on the events */
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	/* on failure MHD never calls sse_read: the free callback ends it */
	MHD_destroy_response(r);
	return rc;
}
