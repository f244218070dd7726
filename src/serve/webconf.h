/* SPDX-License-Identifier: Apache-2.0 */
/* webconf.h - `vramz serve --web-config FILE`: TLS, client certificates,
 * basic authentication and response headers in the file format every
 * Prometheus exporter shares (exporter-toolkit's --web.config.file), so
 * an operator writes one file for node_exporter and vramz alike:
 *
 *     tls_server_config:
 *       cert_file: server.crt      # PEM; relative to the file's directory
 *       key_file: server.key       # (or cert: / key: with the PEM inline)
 *       min_version: TLS13         # TLS12 (the default) or TLS13; max_version too
 *       client_auth_type: RequireAndVerifyClientCert
 *       client_ca_file: clients-ca.pem
 *       client_allowed_sans: [prometheus.example]  # the client's certificate names one
 *       cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]  # Go's names
 *       curve_preferences: [X25519, CurveP256]
 *     rate_limit: {interval: 100ms, burst: 10}  # requests in all; beyond: 429
 *     http_server_config:
 *       headers: {Strict-Transport-Security: max-age=31536000}
 *     basic_auth_users:
 *       prometheus: $2b$10$...     # bcrypt hash (htpasswd -nBC 10 NAME)
 *
 * libyaml parses it (any YAML: block or flow style).  Unknown keys are
 * refused, as exporter-toolkit refuses them, and so is a setting that
 * would go unused (a client CA without a client_auth_type that asks for
 * a certificate): a setting silently ignored would be a security setting
 * the operator believes is in force.  Every error is one line naming
 * FILE:LINE.  `vramz serve` reads the file again when it or a file it
 * names changes (serve/tlsconf.h).
 */
#ifndef VRAMZ_SERVE_WEBCONF_H
#define VRAMZ_SERVE_WEBCONF_H

#include <stddef.h>

struct serve_user {
	char *name;
	char *hash;      /* "$2b$10$...": 60 characters */
};

struct serve_header {
	char *name, *value;
};

/* tls_server_config.client_auth_type, as Go's tls.ClientAuthType */
enum serve_client_auth {
	SERVE_CLIENT_NONE,            /* NoClientCert */
	SERVE_CLIENT_REQUEST,         /* RequestClientCert: asked, not checked */
	SERVE_CLIENT_REQUIRE_ANY,     /* RequireAnyClientCert: one needed, not checked */
	SERVE_CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	SERVE_CLIENT_REQUIRE_VERIFY,  /* RequireAndVerifyClientCert */
};

/* cipher_suites: Go's name of each suite vramz takes (crypto/tls's
 * CipherSuites(), the secure ones) and its GnuTLS priority names; kx NULL
 * for the TLS 1.3 suites, whose key exchange is not the suite's */
struct serve_cipher {
	const char *go, *kx, *cipher, *mac;
};
extern const struct serve_cipher serve_ciphers[];
extern const unsigned serve_nciphers;
/* curve_preferences: Go's name and GnuTLS's group */
struct serve_curve {
	const char *go, *group;
};
extern const struct serve_curve serve_curves[];
extern const unsigned serve_ncurves;

#define SERVE_WEBCONF_MAX_LIST 32 /* entries of cipher_suites, curve_preferences */

struct serve_webconf {
	const char *path;  /* the file, as given */
	int tls;         /* 1: serve HTTPS with the two PEMs below */
	char *cert_pem;  /* the cert_file's contents, NUL-terminated */
	char *key_pem;
	int min_tls13;   /* min_version TLS13; else TLS 1.2 and 1.3 */
	int max_tls12;   /* max_version TLS12 */
	int server_order; /* prefer_server_cipher_suites: true */
	enum serve_client_auth client_auth;
	char *client_ca_pem; /* client_ca_file's certificates; NULL: none */
	struct serve_user *users; /* none: no authentication */
	unsigned nusers;
	struct serve_header *headers; /* http_server_config.headers */
	unsigned nheaders;
	unsigned char ciphers[SERVE_WEBCONF_MAX_LIST]; /* indices in serve_ciphers[], as listed */
	unsigned nciphers;     /* 0: GnuTLS's defaults */
	unsigned char curves[SERVE_WEBCONF_MAX_LIST];  /* indices in serve_curves[], preferred first */
	unsigned ncurves;
	char **sans;           /* client_allowed_sans; none: any */
	unsigned nsans;
	long long rate_interval_ns; /* rate_limit.interval; 0: no limit */
	unsigned rate_burst;
	/* the files the configuration names (cert_file, key_file,
	 * client_ca_file: relative ones resolved), NULL where the PEM is
	 * inline: what is watched for changes */
	char *files[3];
	unsigned long long content; /* a hash of the file's text and its PEMs */
};

/* The configuration and each PEM it names: larger files are refused. */
#define SERVE_WEBCONF_MAX_BYTES (1024 * 1024)
/* bcrypt costs taken: below 4 libxcrypt refuses; above 14 one check of a
 * new password takes seconds of CPU (cost 16: 3.2 s measured) */
#define SERVE_BCRYPT_COST_MIN 4
#define SERVE_BCRYPT_COST_MAX 14

/* Reads and checks path, and the certificate and key it names.  0, or -1
 * with "PATH:LINE: reason" (or "PATH: reason") in err. */
int serve_webconf_load(struct serve_webconf *wc, const char *path, char *err, size_t errlen);
/* The same for the len bytes of text already read (NUL-terminated after
 * them); path names it in errors and anchors relative cert_file /
 * key_file paths.  A NUL byte within them is refused. */
int serve_webconf_parse(struct serve_webconf *wc, const char *path, const char *text,
			size_t len, char *err, size_t errlen);
/* Reads path whole into *out (NUL-terminated, *len bytes; free()), if it
 * is a regular file (links followed) of at most max_bytes: a FIFO or a
 * device would block or never end.  0, or -1 with why (no path) in why. */
int serve_webconf_read(const char *path, size_t max_bytes, char **out, size_t *len,
		       char *why, size_t whylen);
void serve_webconf_free(struct serve_webconf *wc);

/* What the configuration's files look like now (each one's device,
 * inode, size, modification and change times, the file's own and the
 * ones it names, links followed): a different stamp means one of them
 * changed, was replaced (a Kubernetes Secret's link swapped) or is gone. */
struct serve_webconf_stamp {
	unsigned long long h;
};
void serve_webconf_stamp(const char *path, const struct serve_webconf *wc,
			 struct serve_webconf_stamp *st);

#endif
