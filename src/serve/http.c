/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - the exporter's HTTP server on libmicrohttpd.
 *
 * The sampler thread hands over a rendered body once per tick; it becomes
 * one MHD response object, and every scrape until the next tick queues
 * that same object (MHD reference-counts responses and sends from the
 * shared buffer), so a scrape costs no NVML call, no rendering and no copy
 * of the body.  The swap happens under a mutex held only for a pointer
 * exchange, so a slow or stuck client can never hold up the sampler: a
 * client still reading an old body keeps its own reference to it.
 *
 * Hostile clients are bounded by MHD: a connection limit in all, an idle
 * timeout, and a per-connection memory pool that caps the size of request
 * headers (MHD answers 431 beyond it); and by serve/guard.c: a deadline
 * for each request to arrive whole, and the per-address limit.  Only GET
 * and HEAD exist here; anything else gets 405 with an Allow header.
 */
#include "serve/http.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "serve/mhd_dl.h"

#include "format/prom.h"
#include "serve/guard.h"

/* Request headers beyond this (in MHD's per-connection pool) are refused. */
#define CONN_MEMORY_BYTES (16 * 1024)

struct serve_http {
	struct MHD_Daemon *d;
	struct serve_guard *guard;
	pthread_mutex_t lock;
	struct MHD_Response *metrics;  /* latest body; NULL before the first */
	struct MHD_Response *health;   /* matches metrics' state */
	int health_ok;
	struct MHD_Response *landing, *not_found, *not_allowed, *no_sample;
	char address[80];
};

static const char landing_html[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vramz exporter</title></head>\n"
	"<body><h1>vramz exporter</h1>\n"
	"<p>Per-GPU memory, utilization and health for Prometheus.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a> (Prometheus text format 0.0.4)</li>\n"
	"<li><a href=\"/health\">/health</a> (200 when the last sample read a GPU)</li></ul>\n"
	"<p>vramz " VRAMZ_VERSION_STRING "</p></body></html>\n";

static struct MHD_Response *static_response(const char *text, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);
	if (r)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

static enum MHD_Result queue_shared(struct serve_http *h, struct MHD_Connection *c,
				    unsigned status, struct MHD_Response **slot)
{
	pthread_mutex_lock(&h->lock);
	/* MHD takes its own reference: the sampler may drop ours right after */
	enum MHD_Result rc = *slot ? MHD_queue_response(c, status, *slot)
				   : MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, h->no_sample);
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **req_cls)
{
	struct serve_http *h = cls;
	(void)version;
	(void)upload_data;
	static int seen;
	serve_guard_received(h->guard, c);
	/* Other methods are answered at once, before any body is read; MHD
	 * then closes the connection, which is what an unwanted upload earns. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, h->not_allowed);
	/* A response queued on the first call (headers only) makes MHD drop
	 * keep-alive; answering on the second, after the (empty) body, lets
	 * Prometheus reuse its connection scrape after scrape. */
	if (!*req_cls) {
		*req_cls = &seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* a GET with a body: ignore it */
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics"))
		return queue_shared(h, c, MHD_HTTP_OK, &h->metrics);
	if (!strcmp(url, "/health")) {
		/* 503 while the GPUs cannot be read, so a liveness probe sees it */
		pthread_mutex_lock(&h->lock);
		enum MHD_Result rc =
			h->health ? MHD_queue_response(c, h->health_ok ? MHD_HTTP_OK
								   : MHD_HTTP_SERVICE_UNAVAILABLE,
						       h->health)
				  : MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, h->no_sample);
		pthread_mutex_unlock(&h->lock);
		return rc;
	}
	if (!strcmp(url, "/"))
		return MHD_queue_response(c, MHD_HTTP_OK, h->landing);
	return MHD_queue_response(c, MHD_HTTP_NOT_FOUND, h->not_found);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve_http *h = cls;
	(void)req_cls;
	(void)toe;
	serve_guard_answered(h->guard, c);
}

/* "ADDR:PORT" or "[ADDR]:PORT" into a socket address. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
			char *err, size_t errlen)
{
	char host[64];
	const char *port;
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');
		if (!end || end[1] != ':' || (size_t)(end - spec - 1) >= sizeof host)
			goto bad;
		memcpy(host, spec + 1, (size_t)(end - spec - 1));
		host[end - spec - 1] = 0;
		port = end + 2;
	} else {
		const char *colon = strrchr(spec, ':');
		if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof host ||
		    memchr(spec, ':', (size_t)(colon - spec)))
			goto bad;
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
		port = colon + 1;
	}
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (!*port || *end || p > 65535 || port[0] == '-' || port[0] == '+')
		goto bad;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(host, port, &hints, &ai);
	if (rc || !ai) {
		snprintf(err, errlen, "--listen '%s': %s", spec, rc ? gai_strerror(rc) : "no address");
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
bad:
	snprintf(err, errlen, "--listen '%s': expected ADDR:PORT or [IPV6]:PORT", spec);
	return SERVE_HTTP_EUSAGE;
}

int serve_http_start(struct serve_http **out, const struct serve_http_opts *o,
		     char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	*out = NULL;
	int prc = parse_listen(o->listen, &ss, &sslen, err, errlen);
	if (prc)
		return prc;
	if (mhd_dl_load(err, errlen))
		return -1;
	struct serve_http *h = calloc(1, sizeof *h);
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->landing = static_response(landing_html, "text/html; charset=utf-8");
	h->not_found = static_response("not found: try /metrics\n", "text/plain; charset=utf-8");
	h->not_allowed = static_response("method not allowed: GET or HEAD only\n",
					 "text/plain; charset=utf-8");
	h->no_sample = static_response("no sample yet\n", "text/plain; charset=utf-8");
	if (h->not_allowed)
		MHD_add_response_header(h->not_allowed, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (!h->landing || !h->not_found || !h->not_allowed || !h->no_sample) {
		snprintf(err, errlen, "out of memory");
		serve_http_stop(h);
		return -1;
	}
	h->guard = serve_guard_new(o->max_connections, o->max_per_ip, o->timeout_s);
	if (!h->guard) {
		snprintf(err, errlen, "cannot start the connection watchdog");
		serve_http_stop(h);
		return -1;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(
		flags, 0, serve_guard_accept, h->guard, on_request, h,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(o->threads ? o->threads : 1),
		/* the guard admits at most max_connections; connections it shut
		 * down linger until MHD closes them, hence the margin */
		MHD_OPTION_CONNECTION_LIMIT,
		o->max_connections > UINT_MAX / 4 ? UINT_MAX : o->max_connections * 2 + 16,
		/* the per-address limit is the guard's (serve_guard_accept) */
		MHD_OPTION_NOTIFY_CONNECTION, serve_guard_notify, h->guard,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_BYTES,
		MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--listen '%s': cannot listen there (in use, or not an "
				      "address of this host)", o->listen);
		serve_http_stop(h);
		return -1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	unsigned port = di ? di->port : 0;
	char ip[INET6_ADDRSTRLEN] = "?";
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof ip);
		snprintf(h->address, sizeof h->address, "[%s]:%u", ip, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof ip);
		snprintf(h->address, sizeof h->address, "%s:%u", ip, port);
	}
	*out = h;
	return 0;
}

const char *serve_http_address(const struct serve_http *h)
{
	return h->address;
}

int serve_http_publish(struct serve_http *h, const char *body, size_t len, int healthy,
		       const char *reason)
{
	struct MHD_Response *m = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	char text[256];
	snprintf(text, sizeof text, "%s%s\n", healthy ? "ok" : "unhealthy: ",
		 healthy ? "" : (reason && *reason ? reason : "no GPU could be read"));
	struct MHD_Response *hl = MHD_create_response_from_buffer(strlen(text), text,
								  MHD_RESPMEM_MUST_COPY);
	if (!m || !hl) {
		if (m)
			MHD_destroy_response(m);
		if (hl)
			MHD_destroy_response(hl);
		return -1; /* the previous body stays in service */
	}
	MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
	MHD_add_response_header(hl, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	pthread_mutex_lock(&h->lock);
	struct MHD_Response *old_m = h->metrics, *old_h = h->health;
	h->metrics = m;
	h->health = hl;
	h->health_ok = healthy;
	pthread_mutex_unlock(&h->lock);
	/* drops our reference; connections still sending keep theirs */
	if (old_m)
		MHD_destroy_response(old_m);
	if (old_h)
		MHD_destroy_response(old_h);
	return 0;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	if (h->d)
		MHD_stop_daemon(h->d);
	serve_guard_free(h->guard); /* after the daemon: no callback is left */
	struct MHD_Response *rs[] = {h->metrics, h->health, h->landing, h->not_found,
				     h->not_allowed, h->no_sample};
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (rs[i])
			MHD_destroy_response(rs[i]);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
