/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the HTTP side of `vramz serve`: a libmicrohttpd daemon
 * that answers /metrics from the latest published body, /health, and a
 * landing page.  Scrapes never sample: the sampler publishes a body once
 * per tick and every request shares it.
 *
 * Adding a route (the hook for pages and APIs beside /metrics):
 *   1. Its `if (!strcmp(url, "/PATH"))` line in on_request() (http.c),
 *      after the "every route below is authenticated" mark.  By then the
 *      request is a GET or HEAD, has arrived whole, and its credentials
 *      (when the web configuration names basic_auth_users) are checked:
 *      a route cannot forget authentication, because nothing reaches it
 *      unauthenticated; TLS is the daemon's, for every route alike.
 *   2. Answer with serve_respond(): it sets Content-Type, gzips when the
 *      client accepts it and SERVE_GZIP is given (with Vary and
 *      Content-Encoding), and queues the answer.  A route that streams
 *      (MHD_create_response_from_callback) queues its own response; it
 *      is authenticated all the same, and must not ask for gzip.
 *   3. Its line in docs/exporter.md's endpoint list.
 * A family of routes with state of its own (the live page's / and /api/v1/ paths:
 * serve/web.h) comes in through serve_http_opts.route instead: the
 * dispatcher calls it at the same place, authenticated alike, for every
 * path but /metrics and /health.
 */
#ifndef VRAMZ_SERVE_HTTP_H
#define VRAMZ_SERVE_HTTP_H

#include <stddef.h>

#include "serve/mhd_dl.h"

struct serve_http;
struct serve_webconf;

struct serve_http_opts {
	const char *listen;       /* "ADDR:PORT" or "[ADDR]:PORT"; port 0 picks one */
	unsigned max_connections; /* in all */
	unsigned max_per_ip;      /* from one client address */
	unsigned timeout_s;       /* idle connection timeout */
	unsigned threads;         /* worker threads */
	/* --web-config (TLS, basic auth); NULL: plain HTTP, no auth.  Must
	 * outlive the daemon (serve_http_stop): libmicrohttpd keeps its
	 * first certificate and key. */
	const struct serve_webconf *web;
	/* More routes (serve/web.h); NULL: none, / is the landing page.
	 * route answers and returns an enum MHD_Result, or -1 when url is not
	 * its; route_stop ends whatever it holds suspended (streams), before
	 * the daemon stops; streams: it suspends connections. */
	int (*route)(void *cls, struct MHD_Connection *c, const char *url, int head);
	void (*route_stop)(void *cls);
	void *route_cls;
	int streams;
};

/* Binds and starts the daemon.  On failure returns -1 (a runtime
 * failure) or SERVE_HTTP_EUSAGE (a malformed --listen) with a one-line
 * reason in err that names the bad input. */
#define SERVE_HTTP_EUSAGE (-2)
int serve_http_start(struct serve_http **out, const struct serve_http_opts *o,
		     char *err, size_t errlen);
/* The bound address as "127.0.0.1:9963" / "[::1]:9963". */
const char *serve_http_address(const struct serve_http *h);
/* Makes body (copied) the /metrics answer from now on; healthy decides
 * /health's status.  Requests already being answered keep the old body. */
int serve_http_publish(struct serve_http *h, const char *body, size_t len, int healthy,
		       const char *reason);
void serve_http_stop(struct serve_http *h);
/* A web configuration read again (the daemon was started with one): its
 * certificate, key, client CAs and TLS settings for the connections that
 * open from now on, its users, headers and rate limit for the requests
 * that come.  wc need not outlive the call.  -1 with the reason in err
 * (TLS turned on or off, which needs a restart; a key that is not the
 * certificate's): then nothing changed. */
int serve_http_reload(struct serve_http *h, const struct serve_webconf *wc, char *err,
		      size_t errlen);

/* serve_respond() flags */
enum {
	SERVE_GZIP = 1u << 0,   /* gzip when the client accepts it (bodies of
				   SERVE_GZIP_MIN_BYTES and more) */
	SERVE_STATIC = 1u << 1, /* body outlives the daemon: not copied */
	SERVE_WEB = 1u << 2,    /* for browsers: serve_web_headers() and no-store */
};
/* Answers the request on c with status, Content-Type type and body
 * (copied unless SERVE_STATIC).  MHD_NO when out of memory (MHD then
 * closes the connection). */
enum MHD_Result serve_respond(struct MHD_Connection *c, unsigned status, const char *type,
			      const void *body, size_t len, unsigned flags);

/* What every answer for a browser carries: no type sniffing, no framing
 * by another origin, no referrer. */
void serve_web_headers(struct MHD_Response *r);
/* Adds the web configuration's http_server_config.headers to r (those it
 * does not set itself): every response a route makes calls it. */
void serve_conf_headers(struct MHD_Response *r);

#endif
