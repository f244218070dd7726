/* SPDX-License-Identifier: Apache-2.0 */
/* guard.c - deadlines for requests, and a per-address limit that
 * lets a newcomer displace a slow connection.
 *
 * The audit of issue 12 held 32 connections from one address, each
 * sending a byte a second: libmicrohttpd's idle timeout restarts at every
 * byte, so they never timed out, the per-address limit locked every other
 * client of that address out, and 300 of them over ten addresses filled
 * the global limit.  The guard keeps a list of open connections (from
 * MHD's connection notifications) with a deadline each: SERVE_REQUEST_S
 * after the connection opens, or after the previous answer plus the idle
 * timeout on a kept-alive connection; none while an answer is being sent
 * (that phase is the idle timeout's).  A watchdog thread shuts down, four
 * times a second, every connection past its deadline; shutdown() only
 * wakes MHD, which then closes and forgets the connection itself, and the
 * list entry (under the same lock) lives until MHD reports it closed, so
 * the descriptor cannot have been reused by then.
 *
 * Both connection limits are enforced here too (MHD's per-address limit
 * is left off, its global one set above ours): a newcomer over the
 * per-address limit displaces the oldest connection of its address whose
 * request has been arriving for SERVE_SLOW_MS or more, over the global
 * limit the oldest such connection of any address, and is refused when
 * none is that slow.  A Prometheus scrape sends its request in
 * microseconds, so it is never the slow one; and a newcomer is admitted at
 * once instead of waiting in the listen queue behind slow connections
 * that MHD would accept first.  Two workers admitting at the same instant
 * may each see one fewer connection than there is: the limits hold to
 * within the number of worker threads.
 *
 * Slow clients that reconnect at once when cut (issue 25: 300 of them over
 * ten addresses) kept every place young, so no place was slow enough to
 * give to a scraper, and 45 % of scrapes were refused.  So a quarter of
 * the global limit is a reserve: a newcomer that finds the other places
 * taken gets a reserve place when its address holds fewer than
 * SERVE_RESERVE_PER_IP of them, and SERVE_RESERVE_MS to send its whole
 * request (a scrape needs microseconds), then is cut.
 *
 * From 16 addresses on that was not enough (issue 35: 85 % of scrapes
 * refused from 32): the reconnecting clients took every place that came
 * free, the scraper's connection being one newcomer among thousands a
 * second.  What tells it apart is its address's share: a newcomer whose
 * address holds at least two fewer connections than another's takes the
 * place of that address's oldest connection still waiting for its
 * request (struct addr_ent counts them).  A scraper from an address of
 * its own holds none, so it gets in while any address holds two waiting
 * connections; once its request is in, nothing displaces it.  Addresses
 * are counted as serve_addr_key says: IPv6 by /64.
 */
#include "serve/guard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

#define WATCH_MS 250
#define NO_DEADLINE INT64_MAX

/* The connections of one client address (serve_addr_key), shared by them */
struct addr_ent {
	struct addr_ent *next;
	unsigned char key[SERVE_ADDR_KEY_LEN];
	unsigned live;           /* its connections not shut down */
	unsigned refs;           /* its connections MHD has not closed yet */
};

struct conn {
	struct conn *prev, *next;
	struct addr_ent *ae;     /* NULL: no address known */
	int fd;
	int has_addr;
	unsigned char addr[SERVE_ADDR_KEY_LEN]; /* the client's (serve_addr_key) */
	int64_t phase_ns;        /* when the current request began to arrive */
	int64_t deadline_ns;     /* NO_DEADLINE while an answer is sent */
	int shut;                /* shut down by us; MHD is closing it */
	int reserve;             /* admitted into the reserve (file comment) */
};

struct serve_guard {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t th;
	int stop;
	struct conn *head;
	struct addr_ent *addrs;
	unsigned max_conns, max_per_ip;
	unsigned reserve;        /* places of max_conns kept for whole requests */
	int64_t idle_ns;
};

void serve_addr_key(const struct sockaddr *sa, unsigned char key[SERVE_ADDR_KEY_LEN])
{
	memset(key, 0, SERVE_ADDR_KEY_LEN);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6)) { /* an IPv4 client of [::] */
			key[0] = 4;
			memcpy(key + 1, a6->s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, a6->s6_addr, 8); /* its /64 */
		}
	}
}

static int addr_key(const struct sockaddr *sa, unsigned char key[SERVE_ADDR_KEY_LEN])
{
	serve_addr_key(sa, key);
	return key[0] ? 0 : -1;
}

static void shut(struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR); /* MHD sees the end and closes it */
	if (!c->shut && c->ae)
		c->ae->live--;
	c->shut = 1;
}

static void *watch_main(void *arg)
{
	struct serve_guard *g = arg;
	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		int64_t now = clock_mono_ns();
		for (struct conn *c = g->head; c; c = c->next)
			if (!c->shut && now >= c->deadline_ns)
				shut(c);
		int64_t wake = now + (int64_t)WATCH_MS * 1000000;
		struct timespec ts = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000};
		pthread_cond_timedwait(&g->cond, &g->lock, &ts);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

struct serve_guard *serve_guard_new(unsigned max_conns, unsigned max_per_ip, unsigned idle_s)
{
	struct serve_guard *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->max_conns = max_conns;
	g->max_per_ip = max_per_ip;
	g->reserve = max_conns / 4;
	g->idle_ns = (int64_t)idle_s * 1000000000;
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&g->th, NULL, watch_main, g)) {
		pthread_mutex_destroy(&g->lock);
		pthread_cond_destroy(&g->cond);
		free(g);
		return NULL;
	}
	return g;
}

/* After MHD_stop_daemon: every connection has been reported closed. */
void serve_guard_free(struct serve_guard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = 1;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->th, NULL);
	while (g->head) {
		struct conn *c = g->head;
		g->head = c->next;
		free(c);
	}
	while (g->addrs) {
		struct addr_ent *e = g->addrs;
		g->addrs = e->next;
		free(e);
	}
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}

static int is_slow(const struct conn *c, int64_t now)
{
	return !c->shut && c->deadline_ns != NO_DEADLINE &&
	       now - c->phase_ns >= (int64_t)SERVE_SLOW_MS * 1000000;
}

/* Admits a newcomer under both limits: over its address's, in place of
 * the slowest connection of its address that has been arriving for
 * SERVE_SLOW_MS; with the places outside the reserve taken, into the
 * reserve (SERVE_RESERVE_PER_IP an address), else in place of the slowest
 * connection of all; refused when none is that slow. */
enum MHD_Result serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct serve_guard *g = cls;
	unsigned char key[SERVE_ADDR_KEY_LEN];
	(void)len;
	int has_addr = !addr_key(addr, key);
	int64_t now = clock_mono_ns();
	unsigned n_all = 0, n_addr = 0, n_res = 0, n_res_addr = 0;
	struct conn *slow_all = NULL, *slow_addr = NULL, *res_old = NULL, *heavy = NULL;
	pthread_mutex_lock(&g->lock);
	for (struct conn *c = g->head; c; c = c->next) {
		if (c->shut)
			continue;
		int same = has_addr && c->has_addr && !memcmp(c->addr, key, SERVE_ADDR_KEY_LEN);
		n_all++;
		n_addr += same;
		n_res += c->reserve;
		n_res_addr += c->reserve && same;
		/* of the address with the most connections, its oldest whose
		 * request is not in yet */
		if (c->ae && c->deadline_ns != NO_DEADLINE &&
		    (!heavy || c->ae->live > heavy->ae->live ||
		     (c->ae->live == heavy->ae->live && c->phase_ns < heavy->phase_ns)))
			heavy = c;
		if (c->reserve && c->deadline_ns != NO_DEADLINE &&
		    now - c->phase_ns >= (int64_t)SERVE_RESERVE_YIELD_MS * 1000000 &&
		    (!res_old || c->phase_ns < res_old->phase_ns))
			res_old = c;
		if (!is_slow(c, now))
			continue;
		if (!slow_all || c->phase_ns < slow_all->phase_ns)
			slow_all = c;
		if (same && (!slow_addr || c->phase_ns < slow_addr->phase_ns))
			slow_addr = c;
	}
	enum MHD_Result rc = MHD_YES;
	if (has_addr && n_addr >= g->max_per_ip) {
		if (slow_addr)
			shut(slow_addr); /* it also frees a place in all */
		else
			rc = MHD_NO;
	} else if (n_all - n_res >= g->max_conns - g->reserve) {
		if (n_res < g->reserve && n_res_addr < SERVE_RESERVE_PER_IP)
			; /* a reserve place: serve_guard_notify marks it */
		else if (slow_all)
			shut(slow_all);
		else if (n_res_addr < SERVE_RESERVE_PER_IP && res_old)
			shut(res_old); /* its reserve place, to an address without one */
		else if (has_addr && heavy && heavy->ae->live >= n_addr + 2)
			shut(heavy); /* a place of an address that holds more */
		else
			rc = MHD_NO;
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

void serve_guard_notify(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			enum MHD_ConnectionNotificationCode code)
{
	struct serve_guard *g = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		struct conn *c = calloc(1, sizeof *c);
		if (!c || !fi) {
			free(c); /* unguarded: the idle timeout still applies */
			return;
		}
		c->fd = fi->connect_fd;
		c->has_addr = ai && !addr_key(ai->client_addr, c->addr);
		struct addr_ent *e = NULL;
		c->phase_ns = clock_mono_ns();
		c->deadline_ns = c->phase_ns + (int64_t)SERVE_REQUEST_S * 1000000000;
		pthread_mutex_lock(&g->lock);
		/* admitted with the other places taken: a reserve place, if
		 * its address may have one more (else it displaced a slow one,
		 * serve_guard_accept) */
		unsigned n_main = 0, n_res = 0, n_res_addr = 0;
		for (struct conn *o = g->head; o; o = o->next) {
			if (o->shut)
				continue;
			n_main += !o->reserve;
			n_res += o->reserve;
			n_res_addr += o->reserve && c->has_addr && o->has_addr &&
				      !memcmp(o->addr, c->addr, SERVE_ADDR_KEY_LEN);
		}
		if (n_main >= g->max_conns - g->reserve && n_res < g->reserve &&
		    n_res_addr < SERVE_RESERVE_PER_IP) {
			c->reserve = 1;
			c->deadline_ns = c->phase_ns + (int64_t)SERVE_RESERVE_MS * 1000000;
		}
		for (e = c->has_addr ? g->addrs : NULL; e; e = e->next)
			if (!memcmp(e->key, c->addr, SERVE_ADDR_KEY_LEN))
				break;
		if (c->has_addr && !e && (e = calloc(1, sizeof *e))) {
			memcpy(e->key, c->addr, SERVE_ADDR_KEY_LEN);
			e->next = g->addrs;
			g->addrs = e;
		}
		if (e) { /* else only the address's counts miss it */
			e->live++;
			e->refs++;
			c->ae = e;
		}
		c->next = g->head;
		if (g->head)
			g->head->prev = c;
		g->head = c;
		pthread_mutex_unlock(&g->lock);
		*socket_ctx = c;
		return;
	}
	struct conn *c = *socket_ctx;
	if (code != MHD_CONNECTION_NOTIFY_CLOSED || !c)
		return;
	/* MHD closes the descriptor after this call returns */
	pthread_mutex_lock(&g->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	struct addr_ent *e = c->ae;
	if (e && !c->shut)
		e->live--;
	if (e && !--e->refs) {
		struct addr_ent **pp = &g->addrs;
		while (*pp != e)
			pp = &(*pp)->next;
		*pp = e->next;
		free(e);
	}
	pthread_mutex_unlock(&g->lock);
	free(c);
	*socket_ctx = NULL;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void serve_guard_received(struct serve_guard *g, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	c->deadline_ns = NO_DEADLINE;
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_answered(struct serve_guard *g, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	/* the next request may begin any time within the idle timeout, and
	 * then has SERVE_REQUEST_S to arrive; we cannot see its first byte */
	c->phase_ns = clock_mono_ns() + g->idle_ns;
	c->deadline_ns = c->phase_ns + (int64_t)SERVE_REQUEST_S * 1000000000;
	pthread_mutex_unlock(&g->lock);
}
