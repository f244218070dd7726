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
 *
 * With --web-config (serve/webconf.h) the daemon speaks TLS through
 * libmicrohttpd's GnuTLS, each connection with the settings of the moment
 * (serve/tlsconf.c sets its session's credentials and priorities when it
 * opens), and every route checks rate_limit, the client certificate and
 * basic authentication first (serve/auth.c, which keeps bcrypt off these
 * threads).  serve_http_reload() puts a configuration read again in
 * force: the TLS generation for new connections; users, headers (the
 * small fixed answers are made per request to carry them) and the rate
 * limit for new requests.  A scraper that accepts gzip gets the
 * body gzipped, compressed once per sample like the body itself is
 * rendered once: the first such scrape compresses the current body (kept
 * for that: one copy per sample), and from then on every published body
 * is compressed as it is published.
 */
#include "serve/http.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "serve/mhd_dl.h"

#include "format/prom.h"
#include "serve/auth.h"
#include "serve/guard.h"
#include "serve/gzip.h"
#include "serve/tlsconf.h"
#include "serve/webconf.h"
#include "clock.h"

/* Request headers beyond this (in MHD's per-connection pool) are refused. */
#define CONN_MEMORY_BYTES (16 * 1024)

/* http_server_config.headers, on every response (serve_conf_headers): a
 * copy, replaced whole when the web configuration is read again */
static struct serve_header *conf_headers;
static unsigned nconf_headers;
static pthread_rwlock_t conf_lock = PTHREAD_RWLOCK_INITIALIZER;

/* The small fixed answers, made per request (a few hundred bytes, no
 * copy of the text), so each carries the headers of the moment. */
enum canned {
	C_LANDING, C_NOT_FOUND, C_NOT_ALLOWED, C_NO_SAMPLE, C_UNAUTHORIZED, C_BUSY, C_NO_CERT,
	C_RATE, C_COUNT
};
static const struct {
	unsigned status;
	const char *text, *type, *header, *value; /* header: one more, or NULL */
} canned[C_COUNT] = {
	[C_LANDING] = {MHD_HTTP_OK, NULL, "text/html; charset=utf-8", NULL, NULL},
	[C_NOT_FOUND] = {MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL, NULL, NULL},
	[C_NOT_ALLOWED] = {MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET or HEAD only\n",
			   NULL, MHD_HTTP_HEADER_ALLOW, "GET, HEAD"},
	[C_NO_SAMPLE] = {MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n", NULL, NULL, NULL},
	[C_UNAUTHORIZED] = {MHD_HTTP_UNAUTHORIZED, "unauthorized\n", NULL,
			    MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"vramz\", charset=\"UTF-8\""},
	[C_BUSY] = {MHD_HTTP_SERVICE_UNAVAILABLE,
		    "too many new logins being checked: retry in a second\n", NULL,
		    MHD_HTTP_HEADER_RETRY_AFTER, "1"},
	[C_NO_CERT] = {MHD_HTTP_FORBIDDEN, "a client certificate this server trusts is required\n",
		       NULL, NULL, NULL},
	[C_RATE] = {MHD_HTTP_TOO_MANY_REQUESTS, "Too Many Requests\n", NULL, NULL, NULL},
};

struct serve_http {
	struct MHD_Daemon *d;
	struct serve_guard *guard;
	struct serve_auth *auth;       /* NULL: no basic_auth_users */
	pthread_mutex_t lock;
	struct MHD_Response *metrics;  /* latest body; NULL before the first */
	struct MHD_Response *metrics_gz; /* the same gzipped; NULL: not yet */
	char *body;                    /* the latest body, to gzip on demand */
	size_t body_len;
	int gzip_wanted;               /* a scraper asked: gzip every new body */
	struct MHD_Response *health;   /* matches metrics' state */
	int health_ok;
	/* serve_http_opts.route and its state */
	int (*route)(void *cls, struct MHD_Connection *c, const char *url, int head);
	void (*route_stop)(void *cls);
	void *route_cls;
	struct serve_tls *tls;         /* NULL: plain HTTP */
	/* rate_limit: requests in all, as a virtual clock (GCRA) */
	pthread_mutex_t rate_lock;
	int64_t rate_interval_ns;      /* 0: no limit */
	unsigned rate_burst;
	int64_t rate_tat_ns;
	/* libmicrohttpd's last message while starting: why a start failed */
	pthread_mutex_t log_lock;
	int starting;
	char start_err[200];
	char address[80];
};

/* What the handler keeps for one request, from its first call to
 * on_completed. */
struct serve_req {
	struct serve_auth_req auth;
	int counted;     /* by rate_limit already */
};

static const char landing_html[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vramz exporter</title></head>\n"
	"<body><h1>vramz exporter</h1>\n"
	"<p>Per-GPU memory, utilization and health for Prometheus.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a> (Prometheus text format 0.0.4)</li>\n"
	"<li><a href=\"/health\">/health</a> (200 when the last sample read a GPU)</li></ul>\n"
	"<p>vramz " VRAMZ_VERSION_STRING "</p></body></html>\n";

static enum MHD_Result answer_canned(struct MHD_Connection *c, enum canned which)
{
	const char *text = canned[which].text ? canned[which].text : landing_html;
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				canned[which].type ? canned[which].type : "text/plain; charset=utf-8");
	if (canned[which].header)
		MHD_add_response_header(r, canned[which].header, canned[which].value);
	serve_conf_headers(r);
	enum MHD_Result rc = MHD_queue_response(c, canned[which].status, r);
	MHD_destroy_response(r);
	return rc;
}

void serve_conf_headers(struct MHD_Response *r)
{
	pthread_rwlock_rdlock(&conf_lock);
	/* a header the response sets itself (the page's own CSP) stays */
	for (unsigned i = 0; i < nconf_headers; i++)
		if (!MHD_get_response_header(r, conf_headers[i].name))
			MHD_add_response_header(r, conf_headers[i].name, conf_headers[i].value);
	pthread_rwlock_unlock(&conf_lock);
}

static void free_headers(struct serve_header *hs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(hs[i].name);
		free(hs[i].value);
	}
	free(hs);
}

/* Makes a copy of hs the headers of every answer from now on; -1 when
 * out of memory (the old ones stay). */
static int set_conf_headers(const struct serve_header *hs, unsigned n)
{
	struct serve_header *copy = n ? calloc(n, sizeof *copy) : NULL;
	if (n && !copy)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		copy[i].name = strdup(hs[i].name);
		copy[i].value = strdup(hs[i].value);
		if (!copy[i].name || !copy[i].value) {
			free_headers(copy, i + 1);
			return -1;
		}
	}
	pthread_rwlock_wrlock(&conf_lock);
	struct serve_header *old = conf_headers;
	unsigned oldn = nconf_headers;
	conf_headers = copy;
	nconf_headers = n;
	pthread_rwlock_unlock(&conf_lock);
	free_headers(old, oldn);
	return 0;
}

static enum MHD_Result queue_shared(struct serve_http *h, struct MHD_Connection *c,
				    unsigned status, struct MHD_Response **slot)
{
	pthread_mutex_lock(&h->lock);
	/* MHD takes its own reference: the sampler may drop ours right after */
	if (*slot) {
		enum MHD_Result rc = MHD_queue_response(c, status, *slot);
		pthread_mutex_unlock(&h->lock);
		return rc;
	}
	pthread_mutex_unlock(&h->lock);
	return answer_canned(c, C_NO_SAMPLE);
}

/* A response of body (len bytes, copied when copy) with the /metrics
 * headers; gzipped says whether body is the gzipped one. */
static struct MHD_Response *metrics_response(const char *body, size_t len, int gzipped)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, (void *)(uintptr_t)body, gzipped ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	if (!r)
		return NULL;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
	/* caches must not give a gzipped body to a client that did not ask */
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzipped)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	serve_conf_headers(r);
	return r;
}

static struct MHD_Response *gzip_response(const char *body, size_t len)
{
	char *gz;
	size_t gzlen;
	if (serve_gzip(body, len, &gz, &gzlen))
		return NULL;
	struct MHD_Response *r = metrics_response(gz, gzlen, 1);
	if (!r)
		free(gz);
	return r;
}

/* /metrics, gzipped when the scraper accepts it (Prometheus always does) */
static enum MHD_Result answer_metrics(struct serve_http *h, struct MHD_Connection *c)
{
	if (!serve_accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							    MHD_HTTP_HEADER_ACCEPT_ENCODING)))
		return queue_shared(h, c, MHD_HTTP_OK, &h->metrics);
	pthread_mutex_lock(&h->lock);
	if (!h->gzip_wanted)
		__atomic_store_n(&h->gzip_wanted, 1, __ATOMIC_RELAXED);
	/* the first gzip scrape of this body compresses it (once); a body
	 * that cannot be compressed goes out as it is */
	if (!h->metrics_gz && h->metrics && h->body)
		h->metrics_gz = gzip_response(h->body, h->body_len);
	struct MHD_Response *r = h->metrics_gz ? h->metrics_gz : h->metrics;
	if (!r) {
		pthread_mutex_unlock(&h->lock);
		return answer_canned(c, C_NO_SAMPLE);
	}
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	pthread_mutex_unlock(&h->lock);
	return rc;
}

enum MHD_Result serve_respond(struct MHD_Connection *c, unsigned status, const char *type,
			      const void *body, size_t len, unsigned flags)
{
	char *gz = NULL;
	size_t gzlen = 0;
	int zip = (flags & SERVE_GZIP) && len >= SERVE_GZIP_MIN_BYTES &&
		  serve_accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
								 MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
		  !serve_gzip(body, len, &gz, &gzlen);
	struct MHD_Response *r =
		zip ? MHD_create_response_from_buffer(gzlen, gz, MHD_RESPMEM_MUST_FREE)
		    : MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
						      (flags & SERVE_STATIC) ? MHD_RESPMEM_PERSISTENT
									     : MHD_RESPMEM_MUST_COPY);
	if (!r) {
		free(gz);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (flags & SERVE_GZIP)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (flags & SERVE_WEB) {
		serve_web_headers(r);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	}
	if (zip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	serve_conf_headers(r);
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r); /* the queued answer holds its own reference */
	return rc;
}

void serve_web_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

/* rate_limit, as golang.org/x/time/rate's limiter exporter-toolkit
 * uses: one request every interval, burst at once; 1 when this one may
 * go on. */
static int rate_ok(struct serve_http *h)
{
	pthread_mutex_lock(&h->rate_lock);
	int ok = 1;
	if (h->rate_interval_ns) {
		int64_t now = clock_mono_ns(), tat = h->rate_tat_ns > now ? h->rate_tat_ns : now;
		ok = tat + h->rate_interval_ns - now <= (int64_t)h->rate_burst * h->rate_interval_ns;
		if (ok)
			h->rate_tat_ns = tat + h->rate_interval_ns;
	}
	pthread_mutex_unlock(&h->rate_lock);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **req_cls)
{
	struct serve_http *h = cls;
	(void)version;
	(void)upload_data;
	serve_guard_received(h->guard, c);
	/* Other methods are answered at once, before any body is read; MHD
	 * then closes the connection, which is what an unwanted upload earns.
	 * The answer is the same for everyone, so it needs no credentials. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_canned(c, C_NOT_ALLOWED);
	/* A response queued on the first call (headers only) makes MHD drop
	 * keep-alive; answering on the second, after the (empty) body, lets
	 * Prometheus reuse its connection scrape after scrape. */
	if (!*req_cls) {
		*req_cls = calloc(1, sizeof(struct serve_req));
		return *req_cls ? MHD_YES : MHD_NO;
	}
	if (*upload_size) {
		*upload_size = 0; /* a GET with a body: ignore it */
		return MHD_YES;
	}
	struct serve_req *rq = *req_cls;
	/* a request back from a password check was counted already */
	if (!rq->counted) {
		rq->counted = 1;
		if (!rate_ok(h))
			return answer_canned(c, C_RATE);
	}
	if (h->tls && !serve_tls_client_ok(h->tls, c))
		return answer_canned(c, C_NO_CERT);
	if (h->auth) {
		switch (serve_auth_check(h->auth, c, &rq->auth)) {
		case SERVE_AUTH_OK:
			break;
		case SERVE_AUTH_PENDING: /* suspended; called again when checked */
			return MHD_YES;
		case SERVE_AUTH_BUSY:
			return answer_canned(c, C_BUSY);
		case SERVE_AUTH_DENIED:
		default:
			return answer_canned(c, C_UNAUTHORIZED);
		}
	}
	/* ---- every route below is authenticated (http.h: adding a route) ---- */
	if (!strcmp(url, "/metrics"))
		return answer_metrics(h, c);
	if (!strcmp(url, "/health")) {
		/* 503 while the GPUs cannot be read, so a liveness probe sees it */
		pthread_mutex_lock(&h->lock);
		if (!h->health) {
			pthread_mutex_unlock(&h->lock);
			return answer_canned(c, C_NO_SAMPLE);
		}
		enum MHD_Result rc = MHD_queue_response(
			c, h->health_ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, h->health);
		pthread_mutex_unlock(&h->lock);
		return rc;
	}
	if (h->route) {
		int rc = h->route(h->route_cls, c, url, !strcmp(method, MHD_HTTP_METHOD_HEAD));
		if (rc != -1)
			return (enum MHD_Result)rc;
	}
	if (!strcmp(url, "/"))
		return answer_canned(c, C_LANDING);
	return answer_canned(c, C_NOT_FOUND);
}

/* libmicrohttpd's connection notification: the TLS generation first (a
 * session must have it before its handshake), then the guard's limits. */
static void on_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code)
{
	struct serve_http *h = cls;
	if (h->tls && code == MHD_CONNECTION_NOTIFY_STARTED)
		serve_tls_attach(h->tls, c);
	else if (h->tls && code == MHD_CONNECTION_NOTIFY_CLOSED)
		serve_tls_detach(h->tls, c);
	serve_guard_notify(h->guard, c, socket_ctx, code);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve_http *h = cls;
	(void)toe;
	serve_guard_answered(h->guard, c);
	free(*req_cls);
	*req_cls = NULL;
}

/* libmicrohttpd's messages: kept while starting (the reason a bad key or
 * certificate is refused), dropped once serving (a client's failed
 * handshake is no news worth a log line each). */
static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct serve_http *h = cls;
	pthread_mutex_lock(&h->log_lock);
	if (h->starting) {
		vsnprintf(h->start_err, sizeof h->start_err, fmt, ap);
		size_t n = strlen(h->start_err);
		while (n && (h->start_err[n - 1] == '\n' || h->start_err[n - 1] == '.'))
			h->start_err[--n] = 0;
	}
	pthread_mutex_unlock(&h->log_lock);
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

/* The options TLS adds, ending with MHD_OPTION_END (prio, 64 bytes,
 * holds the GnuTLS priorities); -1 when this libmicrohttpd cannot serve
 * TLS. */
static int tls_options(const struct serve_webconf *w, struct MHD_OptionItem *o, unsigned *flags,
		       char *prio, size_t priolen)
{
	size_t n = 0;
	if (w && w->tls) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			return -1;
		*flags |= MHD_USE_TLS;
		/* min_version and max_version as GnuTLS versions; the cipher
		 * order is the client's unless prefer_server_cipher_suites */
		snprintf(prio, priolen, "NORMAL:-VERS-ALL%s%s%s", w->max_tls12 ? "" : ":+VERS-TLS1.3",
			 w->min_tls13 ? "" : ":+VERS-TLS1.2", w->server_order ? ":%SERVER_PRECEDENCE" : "");
		o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, w->key_pem};
		o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert_pem};
		o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, prio};
		/* the client CAs, the certificate request and the rest are
		 * each session's (serve/tlsconf.c): they can change */
	}
	o[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	return 0;
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
	pthread_mutex_init(&h->log_lock, NULL);
	pthread_mutex_init(&h->rate_lock, NULL);
	if (o->web) {
		h->rate_interval_ns = o->web->rate_interval_ns;
		h->rate_burst = o->web->rate_burst;
		if (set_conf_headers(o->web->headers, o->web->nheaders)) {
			snprintf(err, errlen, "out of memory");
			serve_http_stop(h);
			return -1;
		}
		if (o->web->tls && !(h->tls = serve_tls_new(o->web, err, errlen))) {
			serve_http_stop(h);
			return -1;
		}
	}
	h->guard = serve_guard_new(o->max_connections, o->max_per_ip, o->timeout_s);
	if (!h->guard) {
		snprintf(err, errlen, "cannot start the connection watchdog");
		serve_http_stop(h);
		return -1;
	}
	/* with a web configuration always: users may come when it is read again */
	if (o->web && !(h->auth = serve_auth_new(o->web->users, o->web->nusers, err, errlen))) {
		serve_http_stop(h);
		return -1;
	}
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* connections wait, suspended, while bcrypt runs, and event streams
	 * between two events */
	if (h->auth || o->streams)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	h->route = o->route;
	h->route_stop = o->route_stop;
	h->route_cls = o->route_cls;
	struct MHD_OptionItem tls[5];
	char prio[96];
	if (tls_options(o->web, tls, &flags, prio, sizeof prio)) {
		snprintf(err, errlen, "--web-config: %s was built without TLS support", VRAMZ_MHD_SONAME);
		serve_http_stop(h);
		return -1;
	}
	h->starting = 1;
	h->d = MHD_start_daemon(
		flags, 0, serve_guard_accept, h->guard, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, on_log, h, /* first, to hear the start */
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(o->threads ? o->threads : 1),
		/* the guard admits at most max_connections; connections it shut
		 * down linger until MHD closes them, hence the margin */
		MHD_OPTION_CONNECTION_LIMIT,
		o->max_connections > UINT_MAX / 4 ? UINT_MAX : o->max_connections * 2 + 16,
		/* the per-address limit is the guard's (serve_guard_accept) */
		MHD_OPTION_NOTIFY_CONNECTION, on_notify, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_BYTES,
		MHD_OPTION_ARRAY, tls,
		MHD_OPTION_END);
	pthread_mutex_lock(&h->log_lock);
	h->starting = 0;
	pthread_mutex_unlock(&h->log_lock);
	if (!h->d) {
		if (o->web && o->web->tls && h->start_err[0])
			/* the files are PEM of the right kinds (webconf.c): what
			 * is left is a key that is not the certificate's */
			snprintf(err, errlen, "--web-config: cannot serve TLS with its cert_file and "
				 "key_file (libmicrohttpd: %s): is the key the certificate's?",
				 h->start_err);
		else
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
	struct MHD_Response *m = metrics_response(body, len, 0), *gz = NULL;
	char *copy = malloc(len ? len : 1);
	char text[256];
	snprintf(text, sizeof text, "%s%s\n", healthy ? "ok" : "unhealthy: ",
		 healthy ? "" : (reason && *reason ? reason : "no GPU could be read"));
	struct MHD_Response *hl = MHD_create_response_from_buffer(strlen(text), text,
								  MHD_RESPMEM_MUST_COPY);
	/* compressed here, on the sampler's thread, once a scraper has asked
	 * for gzip; a failure only means that body goes out uncompressed */
	if (m && __atomic_load_n(&h->gzip_wanted, __ATOMIC_RELAXED))
		gz = gzip_response(body, len);
	if (!m || !hl || !copy) {
		struct MHD_Response *rs[] = {m, hl, gz};
		for (size_t i = 0; i < 3; i++)
			if (rs[i])
				MHD_destroy_response(rs[i]);
		free(copy);
		return -1; /* the previous body stays in service */
	}
	memcpy(copy, body, len);
	MHD_add_response_header(hl, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	serve_conf_headers(hl);
	pthread_mutex_lock(&h->lock);
	struct MHD_Response *old_m = h->metrics, *old_gz = h->metrics_gz, *old_h = h->health;
	char *old_body = h->body;
	h->metrics = m;
	h->metrics_gz = gz;
	h->body = copy;
	h->body_len = len;
	h->health = hl;
	h->health_ok = healthy;
	pthread_mutex_unlock(&h->lock);
	/* drops our reference; connections still sending keep theirs */
	struct MHD_Response *olds[] = {old_m, old_gz, old_h};
	for (size_t i = 0; i < 3; i++)
		if (olds[i])
			MHD_destroy_response(olds[i]);
	free(old_body);
	return 0;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	/* connections suspended for a password check are resumed (and denied)
	 * first: MHD must find none suspended when it stops */
	serve_auth_stop(h->auth);
	if (h->route_stop)
		h->route_stop(h->route_cls);
	if (h->d)
		MHD_stop_daemon(h->d);
	serve_auth_free(h->auth);
	serve_guard_free(h->guard); /* after the daemon: no callback is left */
	serve_tls_free(h->tls);
	set_conf_headers(NULL, 0);
	struct MHD_Response *rs[] = {h->metrics, h->metrics_gz, h->health};
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (rs[i])
			MHD_destroy_response(rs[i]);
	free(h->body);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->log_lock);
	pthread_mutex_destroy(&h->rate_lock);
	free(h);
}

int serve_http_reload(struct serve_http *h, const struct serve_webconf *wc, char *err,
		      size_t errlen)
{
	const char *path = wc->path ? wc->path : "--web-config";
	/* the daemon speaks TLS or not from its start */
	if (!wc->tls != !h->tls) {
		snprintf(err, errlen, "%s: turning TLS %s needs a restart", path,
			 wc->tls ? "on" : "off");
		return -1;
	}
	if (wc->tls && serve_tls_update(h->tls, wc, err, errlen))
		return -1;
	if (set_conf_headers(wc->headers, wc->nheaders) ||
	    serve_auth_set_users(h->auth, wc->users, wc->nusers)) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	pthread_mutex_lock(&h->rate_lock);
	if (h->rate_interval_ns != wc->rate_interval_ns || h->rate_burst != wc->rate_burst)
		h->rate_tat_ns = 0; /* a new limit starts with its whole burst */
	h->rate_interval_ns = wc->rate_interval_ns;
	h->rate_burst = wc->rate_burst;
	pthread_mutex_unlock(&h->rate_lock);
	return 0;
}
