/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the HTTP side of `vramz serve`: a libmicrohttpd daemon
 * that answers /metrics from the latest published body, /health, and a
 * landing page.  Scrapes never sample: the sampler publishes a body once
 * per tick and every request shares it. */
#ifndef VRAMZ_SERVE_HTTP_H
#define VRAMZ_SERVE_HTTP_H

#include <stddef.h>

struct serve_http;

struct serve_http_opts {
	const char *listen;       /* "ADDR:PORT" or "[ADDR]:PORT"; port 0 picks one */
	unsigned max_connections; /* in all */
	unsigned max_per_ip;      /* from one client address */
	unsigned timeout_s;       /* idle connection timeout */
	unsigned threads;         /* worker threads */
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

#endif
