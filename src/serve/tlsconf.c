/* SPDX-License-Identifier: Apache-2.0 */
/* tlsconf.c - generations of TLS settings given to each new connection
 * (tlsconf.h says why).
 *
 * A generation holds GnuTLS certificate credentials (the key, the
 * certificate chain, the client CAs as its trust list) and a priority
 * cache.  The priority string is libmicrohttpd's "NORMAL" narrowed:
 * versions by min/max_version; with cipher_suites, the ciphers and MACs
 * of the suites listed and the one key exchange that fits the
 * certificate's key (GnuTLS takes lists of key exchanges, ciphers and
 * MACs, not of suites; for one key the lists give exactly the suites
 * listed); with curve_preferences, those groups in that order, and
 * ECDHE key exchanges only (GnuTLS's NORMAL also has static RSA, which
 * uses no group: Go's defaults do not).
 *
 * Connections find their generation again by their session's
 * credentials pointer (gnutls_credentials_get), so nothing per connection
 * is stored here.
 */
#include "serve/tlsconf.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct gen {
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	enum serve_client_auth client_auth;
	char **sans;
	unsigned nsans;
	unsigned refs;         /* connections that use it */
	struct gen *next;
};

struct serve_tls {
	pthread_mutex_t lock;
	struct gen *cur;       /* new connections get it */
	struct gen *all;       /* cur and the old ones still in use */
};

static void gen_free(struct gen *g)
{
	if (!g)
		return;
	if (g->cred)
		gnutls_certificate_free_credentials(g->cred);
	if (g->prio)
		gnutls_priority_deinit(g->prio);
	for (unsigned i = 0; i < g->nsans; i++)
		free(g->sans[i]);
	free(g->sans);
	free(g);
}

/* The algorithm of the first certificate's key, or -1. */
static int cert_pk(const char *pem)
{
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) < 0)
		return -1;
	gnutls_datum_t d = {(unsigned char *)(uintptr_t)pem, (unsigned)strlen(pem)};
	int pk = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) < 0
			 ? -1 : gnutls_x509_crt_get_pk_algorithm(crt, NULL);
	gnutls_x509_crt_deinit(crt);
	return pk;
}

static void add_name(char *s, size_t len, const char *name)
{
	char item[48];
	snprintf(item, sizeof item, ":+%s", name);
	if (!strstr(s, item)) /* each once; the first place keeps its rank */
		snprintf(s + strlen(s), len - strlen(s), "%s", item);
}

/* The priority string of wc into s; -1 with why when cipher_suites has
 * nothing for the certificate's key. */
static int priorities(const struct serve_webconf *wc, char *s, size_t len, char *why,
		      size_t whylen)
{
	snprintf(s, len, "NORMAL:-VERS-ALL%s%s%s", wc->max_tls12 ? "" : ":+VERS-TLS1.3",
		 wc->min_tls13 ? "" : ":+VERS-TLS1.2", wc->server_order ? ":%SERVER_PRECEDENCE" : "");
	if (wc->nciphers) {
		int pk = cert_pk(wc->cert_pem);
		const char *kx = pk == GNUTLS_PK_RSA || pk == GNUTLS_PK_RSA_PSS ? "ECDHE-RSA"
										 : "ECDHE-ECDSA";
		char ciphers[256] = "", macs[64] = "";
		int tls12 = 0;
		for (unsigned i = 0; i < wc->nciphers; i++) {
			const struct serve_cipher *c = &serve_ciphers[wc->ciphers[i]];
			if (c->kx && strcmp(c->kx, kx))
				continue; /* another kind of key's suite: not for this one */
			tls12 |= c->kx != NULL;
			add_name(ciphers, sizeof ciphers, c->cipher);
			add_name(macs, sizeof macs, c->mac);
		}
		if (!tls12 && !wc->min_tls13) {
			snprintf(why, whylen, "cipher_suites: none of its TLS 1.2 suites fits the "
				 "certificate's %s key (%s ones would)", strcmp(kx, "ECDHE-RSA") ? "ECDSA"
				 : "RSA", strcmp(kx, "ECDHE-RSA") ? "TLS_ECDHE_ECDSA_*" : "TLS_ECDHE_RSA_*");
			return -1;
		}
		snprintf(s + strlen(s), len - strlen(s), ":-CIPHER-ALL%s:-MAC-ALL%s:-KX-ALL:+%s",
			 ciphers, macs, kx);
	}
	if (wc->ncurves) {
		/* the groups are those of (EC)DHE: a static-RSA key exchange
		 * (in NORMAL, not in Go) would go round them */
		if (!wc->nciphers)
			snprintf(s + strlen(s), len - strlen(s), ":-KX-ALL:+ECDHE-RSA:+ECDHE-ECDSA");
		snprintf(s + strlen(s), len - strlen(s), ":-GROUP-ALL");
		for (unsigned i = 0; i < wc->ncurves; i++)
			add_name(s, len, serve_curves[wc->curves[i]].group);
	}
	return 0;
}

/* path names the configuration in errors */
static struct gen *gen_new(const struct serve_webconf *wc, const char *path, char *err,
			   size_t errlen)
{
	char prio[1024], why[200] = "";
	struct gen *g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	g->client_auth = wc->client_auth;
	if (wc->nsans && !(g->sans = calloc(wc->nsans, sizeof *g->sans)))
		goto oom;
	for (; g->nsans < wc->nsans; g->nsans++)
		if (!(g->sans[g->nsans] = strdup(wc->sans[g->nsans])))
			goto oom;
	if (priorities(wc, prio, sizeof prio, why, sizeof why)) {
		snprintf(err, errlen, "%s: %s", path, why);
		gen_free(g);
		return NULL;
	}
	const char *at = NULL;
	int rc = gnutls_priority_init(&g->prio, prio, &at);
	if (rc < 0) {
		g->prio = NULL;
		snprintf(err, errlen, "%s: GnuTLS refuses the TLS settings (%s at '%.40s')", path,
			 gnutls_strerror(rc), at ? at : "");
		gen_free(g);
		return NULL;
	}
	if (gnutls_certificate_allocate_credentials(&g->cred) < 0)
		goto oom;
	gnutls_datum_t cert = {(unsigned char *)wc->cert_pem, (unsigned)strlen(wc->cert_pem)};
	gnutls_datum_t key = {(unsigned char *)wc->key_pem, (unsigned)strlen(wc->key_pem)};
	rc = gnutls_certificate_set_x509_key_mem(g->cred, &cert, &key, GNUTLS_X509_FMT_PEM);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot serve TLS with its cert_file and key_file (GnuTLS: "
			 "%s)", path, gnutls_strerror(rc));
		gen_free(g);
		return NULL;
	}
	if (wc->client_ca_pem) {
		gnutls_datum_t ca = {(unsigned char *)wc->client_ca_pem,
				     (unsigned)strlen(wc->client_ca_pem)};
		rc = gnutls_certificate_set_x509_trust_mem(g->cred, &ca, GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			snprintf(err, errlen, "%s: client_ca_file: %s", path,
				 rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
			gen_free(g);
			return NULL;
		}
	}
	return g;
oom:
	snprintf(err, errlen, "%s: out of memory", path);
	gen_free(g);
	return NULL;
}

struct serve_tls *serve_tls_new(const struct serve_webconf *wc, char *err, size_t errlen)
{
	struct serve_tls *t = calloc(1, sizeof *t);
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* at the start, as the other errors of the option are said */
	if (!(t->cur = t->all = gen_new(wc, "--web-config", err, errlen))) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

/* Unlinks and frees the old generations no connection uses (t locked). */
static void free_unused_generations(struct serve_tls *t)
{
	for (struct gen **pp = &t->all; *pp;) {
		struct gen *g = *pp;
		if (g != t->cur && !g->refs) {
			*pp = g->next;
			gen_free(g);
		} else {
			pp = &g->next;
		}
	}
}

int serve_tls_update(struct serve_tls *t, const struct serve_webconf *wc, char *err,
		     size_t errlen)
{
	struct gen *g = gen_new(wc, wc->path ? wc->path : "--web-config", err, errlen);
	if (!g)
		return -1;
	pthread_mutex_lock(&t->lock);
	g->next = t->all;
	t->all = g;
	t->cur = g;
	free_unused_generations(t);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void serve_tls_free(struct serve_tls *t)
{
	if (!t)
		return;
	while (t->all) {
		struct gen *g = t->all;
		t->all = g->next;
		gen_free(g);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static gnutls_session_t session_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	return ci ? (gnutls_session_t)ci->tls_session : NULL;
}

/* The generation whose credentials s has (t locked), or NULL. */
static struct gen *gen_of(struct serve_tls *t, gnutls_session_t s)
{
	void *cred = NULL;
	if (!s || gnutls_credentials_get(s, GNUTLS_CRD_CERTIFICATE, &cred) < 0)
		return NULL;
	for (struct gen *g = t->all; g; g = g->next)
		if ((void *)g->cred == cred)
			return g;
	return NULL;
}

void serve_tls_attach(struct serve_tls *t, struct MHD_Connection *c)
{
	gnutls_session_t s = session_of(c);
	if (!s)
		return;
	pthread_mutex_lock(&t->lock);
	struct gen *g = t->cur;
	g->refs++;
	pthread_mutex_unlock(&t->lock);
	/* before the handshake: libmicrohttpd has set the daemon's own,
	 * these replace them for this session */
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, g->cred);
	gnutls_priority_set(s, g->prio);
	gnutls_certificate_server_set_request(s, g->client_auth == SERVE_CLIENT_NONE
							 ? GNUTLS_CERT_IGNORE : GNUTLS_CERT_REQUEST);
}

void serve_tls_detach(struct serve_tls *t, struct MHD_Connection *c)
{
	gnutls_session_t s = session_of(c);
	pthread_mutex_lock(&t->lock);
	struct gen *g = gen_of(t, s);
	if (g && g->refs) {
		g->refs--;
		free_unused_generations(t);
	}
	pthread_mutex_unlock(&t->lock);
}

/* 1 when the certificate der names one of the SANs (exporter-toolkit's
 * VerifyPeerCertificate: DNS names, e-mail addresses, IP addresses as Go
 * prints them, URIs; exact matches). */
static int san_allowed(const gnutls_datum_t *der, char *const *sans, unsigned n)
{
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt) < 0)
		return 0;
	int ok = 0;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) >= 0) {
		for (unsigned seq = 0; !ok; seq++) {
			char buf[1024], ip[INET6_ADDRSTRLEN];
			size_t len = sizeof buf - 1;
			unsigned critical = 0;
			int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf, &len, &critical);
			if (type == GNUTLS_E_SHORT_MEMORY_BUFFER)
				continue; /* a name longer than any worth allowing */
			if (type < 0)
				break;
			buf[len] = 0;
			const char *name = buf;
			if (type == GNUTLS_SAN_IPADDRESS)
				name = inet_ntop(len == 4 ? AF_INET : AF_INET6, buf, ip, sizeof ip);
			else if (type != GNUTLS_SAN_DNSNAME && type != GNUTLS_SAN_RFC822NAME &&
				 type != GNUTLS_SAN_URI)
				continue;
			/* a name with a NUL inside matches nothing */
			if (type != GNUTLS_SAN_IPADDRESS && strlen(name) != len)
				continue;
			for (unsigned i = 0; name && i < n && !ok; i++)
				ok = !strcmp(name, sans[i]);
		}
	}
	gnutls_x509_crt_deinit(crt);
	return ok;
}

int serve_tls_client_ok(struct serve_tls *t, struct MHD_Connection *c)
{
	gnutls_session_t s = session_of(c);
	pthread_mutex_lock(&t->lock);
	struct gen *g = gen_of(t, s);
	/* the generation stays while its connection is open: this is one */
	pthread_mutex_unlock(&t->lock);
	if (!g)
		return 0;
	if (g->client_auth <= SERVE_CLIENT_REQUEST && !g->nsans)
		return 1;
	unsigned n = 0;
	const gnutls_datum_t *peers = gnutls_certificate_get_peers(s, &n);
	if (!peers || !n) /* allowed SANs need a certificate to name one */
		return g->client_auth <= SERVE_CLIENT_REQUEST && !g->nsans ? 1
		       : g->client_auth == SERVE_CLIENT_VERIFY_IF_GIVEN && !g->nsans;
	if (g->client_auth >= SERVE_CLIENT_VERIFY_IF_GIVEN) {
		/* against client_ca_file (this generation's trust list): chain, dates */
		unsigned status = 0;
		if (gnutls_certificate_verify_peers2(s, &status) != 0 || status != 0)
			return 0;
	}
	return !g->nsans || san_allowed(&peers[0], g->sans, g->nsans);
}

static void utc(time_t t, char *s, size_t len)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(s, len, "%Y-%m-%d %H:%M UTC", &tm);
}

unsigned serve_tls_warnings(const struct serve_webconf *wc, time_t now, char (*out)[256],
			    unsigned max)
{
	unsigned n = 0;
	const char *path = wc->path ? wc->path : "--web-config";
	const char *cert = wc->files[0] ? wc->files[0] : "(inline)";
	gnutls_x509_crt_t crt;
	if (wc->cert_pem && n < max && gnutls_x509_crt_init(&crt) >= 0) {
		gnutls_datum_t d = {(unsigned char *)wc->cert_pem, (unsigned)strlen(wc->cert_pem)};
		if (gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM) >= 0) {
			time_t from = gnutls_x509_crt_get_activation_time(crt),
			       until = gnutls_x509_crt_get_expiration_time(crt);
			char when[40];
			if (until != (time_t)-1 && until < now) {
				utc(until, when, sizeof when);
				snprintf(out[n++], 256, "%s: cert_file '%s' expired on %s: clients "
					 "will refuse it", path, cert, when);
			} else if (from != (time_t)-1 && from > now) {
				utc(from, when, sizeof when);
				snprintf(out[n++], 256, "%s: cert_file '%s' is not valid before %s: "
					 "clients will refuse it until then", path, cert, when);
			} else if (until != (time_t)-1 &&
				   until - now < SERVE_TLS_EXPIRY_WARN_DAYS * 86400LL) {
				utc(until, when, sizeof when);
				snprintf(out[n++], 256, "%s: cert_file '%s' expires on %s, in %lld "
					 "day%s", path, cert, when, (long long)(until - now) / 86400,
					 (until - now) / 86400 == 1 ? "" : "s");
			}
		}
		gnutls_x509_crt_deinit(crt);
	}
	/* the key's file, or the configuration when the key is inline in it */
	const char *kfile = wc->files[1] ? wc->files[1] : wc->key_pem ? wc->path : NULL;
	struct stat st;
	if (kfile && n < max && !stat(kfile, &st) && (st.st_mode & (S_IRGRP | S_IROTH)))
		snprintf(out[n++], 256, "%s: %s '%s' can be read by %s (mode %04o): chmod 600 it",
			 path, wc->files[1] ? "key_file" : "the configuration holding the key,",
			 kfile, (st.st_mode & S_IROTH) ? "every user" : "its group",
			 (unsigned)(st.st_mode & 07777));
	return n;
}
