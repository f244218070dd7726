/* SPDX-License-Identifier: Apache-2.0 */
/* webconf.h - `vramz serve --web-config FILE`: TLS and basic
 * authentication in the file format every Prometheus exporter shares
 * (exporter-toolkit's --web.config.file), so an operator writes one file
 * for node_exporter and vramz alike:
 *
 *     tls_server_config:
 *       cert_file: server.crt      # PEM; relative to the file's directory
 *       key_file: server.key
 *       min_version: TLS13         # TLS12 (the default) or TLS13
 *     basic_auth_users:
 *       prometheus: $2b$10$...     # bcrypt hash (htpasswd -nBC 10 NAME)
 *
 * The parser reads that YAML subset and nothing else: block mappings of
 * plain, 'single' or "double" quoted scalars, comments, spaces for
 * indentation.  Unknown keys are refused, and so are the format's keys
 * vramz does not implement (client certificates, cipher lists, HTTP
 * headers): a setting silently ignored would be a security setting the
 * operator believes is in force.  Every error is one line naming
 * FILE:LINE.
 */
#ifndef VRAMZ_SERVE_WEBCONF_H
#define VRAMZ_SERVE_WEBCONF_H

#include <stddef.h>

struct serve_user {
	char *name;
	char *hash;      /* "$2b$10$...": 60 characters */
};

struct serve_webconf {
	int tls;         /* 1: serve HTTPS with the two PEMs below */
	char *cert_pem;  /* the cert_file's contents, NUL-terminated */
	char *key_pem;
	int min_tls13;   /* min_version TLS13; else TLS 1.2 and 1.3 */
	struct serve_user *users; /* none: no authentication */
	unsigned nusers;
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

#endif
