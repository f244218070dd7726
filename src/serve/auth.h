/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h - HTTP basic authentication for the exporter, against the
 * bcrypt hashes of a web configuration file (serve/webconf.h).
 *
 * bcrypt is slow on purpose (tens of milliseconds at cost 10), and
 * libmicrohttpd answers many connections on each of a few threads, so a
 * password checked on those threads would let a flood of wrong passwords
 * stall every scrape behind it.  Instead:
 *   - credentials once verified (right or wrong) are remembered, keyed by
 *     a salted SHA-256 of user and password, so a scraper pays bcrypt
 *     once, not every scrape, and a repeated wrong password costs nothing;
 *   - new credentials are checked on one thread of their own while their
 *     connection is suspended (MHD_suspend_connection), so the HTTP
 *     threads never wait for bcrypt;
 *   - at most SERVE_AUTH_QUEUE of them wait, SERVE_AUTH_PER_IP from one
 *     address; beyond that a request is answered 503 at once.
 * A flood of wrong passwords therefore costs at most one core and delays
 * only other new credentials; scrapes with known credentials are answered
 * as fast as without authentication.
 */
#ifndef VRAMZ_SERVE_AUTH_H
#define VRAMZ_SERVE_AUTH_H

#include <stddef.h>

#include "serve/authparse.h"
#include "serve/mhd_dl.h"
#include "serve/webconf.h"

#define SERVE_AUTH_QUEUE 8   /* new credentials waiting for bcrypt, in all */
#define SERVE_AUTH_PER_IP 2  /* of them from one client address */
/* Each address (an IPv6 /64: serve_addr_key) may have SERVE_AUTH_BURST
 * new credentials checked at once, then one every SERVE_AUTH_REFILL_MS;
 * beyond that 503.  The queue checks first the address that has spent
 * least, and one that has spent less takes the place of one that has
 * spent more when it is full: a new scraper waits for one check at most,
 * however many addresses flood. */
#define SERVE_AUTH_BURST 4
#define SERVE_AUTH_REFILL_MS 5000
#define SERVE_AUTH_ADDRS 256 /* addresses whose budgets are remembered */

struct serve_auth;

/* What a request's credentials came to. */
enum serve_auth_verdict {
	SERVE_AUTH_OK,       /* known user, right password */
	SERVE_AUTH_DENIED,   /* none, malformed, unknown user or wrong password: 401 */
	SERVE_AUTH_PENDING,  /* being checked: the connection is suspended and
				the handler is called again once it is resumed */
	SERVE_AUTH_BUSY,     /* too many being checked: 503, retry */
};

/* Per-request state: zeroed when the request starts, kept until it ends. */
struct serve_auth_req {
	int state; /* written by the checking thread, read by the handler */
};

/* Starts the checking thread for these users (copied; none: every request
 * passes until some are set); checks first that libcrypt computes bcrypt.
 * NULL with a reason in err. */
struct serve_auth *serve_auth_new(const struct serve_user *users, unsigned n, char *err,
				  size_t errlen);
/* Replaces the users (copied) while serving: a web configuration read
 * again.  Every remembered verdict is forgotten (a password changed or a
 * user removed takes effect at once); a check under way against the old
 * users answers 503 (retry).  -1 when out of memory (the old users stay). */
int serve_auth_set_users(struct serve_auth *a, const struct serve_user *users, unsigned n);
/* Stops the thread and resumes every connection still waiting (each is
 * then denied): call before MHD_stop_daemon, which must find none
 * suspended. */
void serve_auth_stop(struct serve_auth *a);
void serve_auth_free(struct serve_auth *a);

/* Checks c's Authorization header; call from the access handler only
 * (it may suspend c). */
enum serve_auth_verdict serve_auth_check(struct serve_auth *a, struct MHD_Connection *c,
					 struct serve_auth_req *r);


#endif
