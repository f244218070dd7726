/* SPDX-License-Identifier: Apache-2.0 */
/* guard.h - bounds on slow clients for the exporter's HTTP side.
 *
 * libmicrohttpd's idle timeout restarts at every byte, so a client that
 * drips one byte a second holds its connection for ever.  The guard gives
 * every request a deadline for arriving whole and shuts down connections
 * that miss it, and it enforces the connection limits itself so that a
 * newcomer can displace a slow connection instead of being refused. */
#ifndef VRAMZ_SERVE_GUARD_H
#define VRAMZ_SERVE_GUARD_H

#include <sys/socket.h>

#include "serve/mhd_dl.h"

/* Seconds a request has to arrive whole (request line and headers) from
 * the moment its connection opens; after an answer on a kept-alive
 * connection, the next request has the idle timeout plus this. */
#define SERVE_REQUEST_S 5
/* A request still arriving after this long is slow: a newcomer from the
 * same address, over the per-address limit, takes its place. */
#define SERVE_SLOW_MS 1000
/* Of the global limit, a quarter is a reserve for requests that arrive
 * whole at once: a newcomer that finds the rest full takes a reserve
 * place, at most SERVE_RESERVE_PER_IP of them per address, and must send
 * its whole request within SERVE_RESERVE_MS or is cut.  With the reserve
 * full, a newcomer from an address that holds none of it takes the place
 * of the oldest reserve connection whose request has been arriving for
 * SERVE_RESERVE_YIELD_MS: however many addresses the slow clients come
 * from, each holds a reserve place for at most that long once others
 * want one. */
#define SERVE_RESERVE_PER_IP 1
#define SERVE_RESERVE_MS 1000
#define SERVE_RESERVE_YIELD_MS 500

struct serve_guard;

/* A client's address as the per-address limits count it (here and in
 * serve/auth.c): the family, then an IPv4 address, or the /64 of an IPv6
 * one (one site's hosts, one party: it has 2^64 addresses for the asking);
 * an IPv4-mapped IPv6 address is its IPv4 address.  Unknown families are
 * all zeros. */
#define SERVE_ADDR_KEY_LEN 9
void serve_addr_key(const struct sockaddr *sa, unsigned char key[SERVE_ADDR_KEY_LEN]);

/* Starts the watchdog thread; NULL when out of memory or threads. */
struct serve_guard *serve_guard_new(unsigned max_conns, unsigned max_per_ip, unsigned idle_s);
void serve_guard_free(struct serve_guard *g);

/* libmicrohttpd callbacks (cls is the guard). */
enum MHD_Result serve_guard_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
			enum MHD_ConnectionNotificationCode code);
/* The request has arrived whole: no receive deadline while it is answered. */
void serve_guard_received(struct serve_guard *g, struct MHD_Connection *c);
/* The answer is done: the next request on this connection gets a deadline. */
void serve_guard_answered(struct serve_guard *g, struct MHD_Connection *c);

#endif
