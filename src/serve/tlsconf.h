/* SPDX-License-Identifier: Apache-2.0 */
/* tlsconf.h - the TLS side of the web configuration, per connection and
 * replaceable while serving.
 *
 * libmicrohttpd takes one certificate, key, trust list and priority
 * string when the daemon starts.  exporter-toolkit re-reads its file on
 * each handshake, so a certificate cert-manager renewed, a new client CA
 * or a stricter cipher list takes effect without a restart; vramz does
 * the same: each configuration read becomes a generation of GnuTLS
 * credentials and priorities, and every new connection is given the
 * current one before its handshake starts (libmicrohttpd's connection
 * notification comes after it creates the session and before it reads a
 * byte).  A connection keeps its generation to its end; an old generation
 * is freed when its last connection closes.
 *
 * GnuTLS gives what libmicrohttpd does not: per-session credentials,
 * priorities (min/max_version, cipher_suites, curve_preferences,
 * prefer_server_cipher_suites) and the certificate request; the client's
 * certificate is judged per request (client_auth_type, client_allowed_sans)
 * against the generation its handshake used.
 */
#ifndef VRAMZ_SERVE_TLSCONF_H
#define VRAMZ_SERVE_TLSCONF_H

#include <stddef.h>
#include <time.h>

#include "serve/mhd_dl.h"
#include "serve/webconf.h"

struct serve_tls;

/* The first generation, from wc (wc->tls): NULL with "PATH: reason" in
 * err (a key that is not the certificate's, a cipher list that fits no
 * suite of the key). */
struct serve_tls *serve_tls_new(const struct serve_webconf *wc, char *err, size_t errlen);
/* Builds a generation from wc and makes it the one new connections get;
 * 0, or -1 with the reason (the current one stays). */
int serve_tls_update(struct serve_tls *t, const struct serve_webconf *wc, char *err,
		     size_t errlen);
/* Frees every generation: after the daemon has stopped. */
void serve_tls_free(struct serve_tls *t);

/* libmicrohttpd's connection notification: STARTED gives c's session the
 * current generation, CLOSED lets it go. */
void serve_tls_attach(struct serve_tls *t, struct MHD_Connection *c);
void serve_tls_detach(struct serve_tls *t, struct MHD_Connection *c);

/* 1 when c's client certificate passes its generation's client_auth_type
 * and client_allowed_sans, as Go's TLS server and exporter-toolkit judge
 * them. */
int serve_tls_client_ok(struct serve_tls *t, struct MHD_Connection *c);

/* What an operator should know of wc's files at now, one line each (no
 * newline) into out: a certificate expired or not yet valid, one that
 * expires within SERVE_TLS_EXPIRY_WARN_DAYS, a private key (its file, or
 * the configuration holding it inline) that group or others can read.
 * Returns how many, at most max. */
#define SERVE_TLS_EXPIRY_WARN_DAYS 14
unsigned serve_tls_warnings(const struct serve_webconf *wc, time_t now, char (*out)[256],
			    unsigned max);

#endif
