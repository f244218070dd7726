/* SPDX-License-Identifier: Apache-2.0 */
/* webconf.c - the exporter-toolkit web configuration file (webconf.h).
 *
 * libyaml reads the file (the whole YAML language: block and flow style,
 * quoting, anchors, comments, CRLF) into a document, and this walks its
 * nodes: each key is checked against exporter-toolkit's, and every error
 * names the line of the node it is about.  As exporter-toolkit does (its
 * strict unmarshalling), an unknown key is an error; the keys of its
 * format that vramz cannot implement are named in their own table with
 * the reason, and refused, since a security setting silently ignored is
 * one the operator believes is in force.
 */
#include "serve/webconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/mhd_dl.h"

struct parser {
	const char *path;
	unsigned line;          /* of the node an error is about; 0: none */
	char *err;
	size_t errlen;
	yaml_document_t *doc;
	/* files and texts named, read after the walk */
	const char *cert_file, *key_file, *ca_file, *cert, *key, *ca;
	unsigned cert_line, key_line, ca_line, tls_line, min_line, client_line, sans_line,
		cipher_line, rate_line;
	int rate_interval_given, rate_burst_given;
	int min_ver, max_ver;   /* 12 or 13; 0: not given */
	struct serve_webconf *wc;
};

static int conf_err(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int conf_err(struct parser *p, const char *fmt, ...)
{
	int n = p->line ? snprintf(p->err, p->errlen, "%s:%u: ", p->path, p->line)
			: snprintf(p->err, p->errlen, "%s: ", p->path);
	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static unsigned line_of(const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1;
}

/* The keys of exporter-toolkit's format vramz cannot implement, and why. */
static const struct {
	const char *key, *why;
} unsupported[] = {
	/* libmicrohttpd creates and binds the listening socket itself */
	{"ip_socket_config", "libmicrohttpd creates the server socket itself: no TTL, hop limit or DSCP "
			     "can be set on it"},
};

static const char *unsupported_why(const char *key)
{
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
		if (!strcmp(key, unsupported[i].key))
			return unsupported[i].why;
	return NULL;
}

/* Go's secure suites (crypto/tls CipherSuites()); GnuTLS names. */
const struct serve_cipher serve_ciphers[] = {
	{"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD"},
	{"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD"},
	{"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
};
const unsigned serve_nciphers = sizeof serve_ciphers / sizeof serve_ciphers[0];

const struct serve_curve serve_curves[] = {
	{"CurveP256", "GROUP-SECP256R1"},
	{"CurveP384", "GROUP-SECP384R1"},
	{"CurveP521", "GROUP-SECP521R1"},
	{"X25519", "GROUP-X25519"},
};
const unsigned serve_ncurves = sizeof serve_curves / sizeof serve_curves[0];

/* bcrypt in crypt(3)'s modular format: $2a$, $2b$ or $2y$, a two-digit
 * cost, $, then 22 characters of salt and 31 of hash.  The cost is
 * returned (checked against the bounds by the caller), or -1. */
static int bcrypt_cost(const char *h)
{
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return -1;
	for (int i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", h[i]))
			return -1;
	return (h[4] - '0') * 10 + (h[5] - '0');
}

static int is_bcrypt(const char *h)
{
	int cost = bcrypt_cost(h);
	return cost >= SERVE_BCRYPT_COST_MIN && cost <= SERVE_BCRYPT_COST_MAX;
}

/* A plain empty, ~ or null scalar: YAML's null (a section left empty). */
static int is_null(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	const char *v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

/* The text of a scalar node, or NULL after an error naming what. */
static const char *text_of(struct parser *p, const yaml_node_t *n, const char *what)
{
	p->line = line_of(n);
	if (n->type != YAML_SCALAR_NODE) {
		conf_err(p, "%s must be a single value, not a %s", what,
			 n->type == YAML_MAPPING_NODE ? "mapping" : "list");
		return NULL;
	}
	const char *v = (const char *)n->data.scalar.value;
	if (strlen(v) != n->data.scalar.length) { /* a "\0" escape */
		conf_err(p, "%s holds a NUL character", what);
		return NULL;
	}
	return v;
}

/* Calls each(p, key, key node, value node) for every pair of the mapping
 * n (a null is an empty mapping); refuses a key given twice. */
typedef int (*pair_fn)(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v);
static int each_pair(struct parser *p, yaml_node_t *n, const char *what, pair_fn each)
{
	if (is_null(n))
		return 0;
	p->line = line_of(n);
	if (n->type != YAML_MAPPING_NODE)
		return conf_err(p, "%s must be a mapping of keys", what);
	for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(p->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(p->doc, pr->value);
		const char *key = k && v ? text_of(p, k, "a key") : NULL;
		if (!key)
			return -1;
		for (yaml_node_pair_t *o = n->data.mapping.pairs.start; o < pr; o++) {
			yaml_node_t *ok = yaml_document_get_node(p->doc, o->key);
			if (ok && ok->type == YAML_SCALAR_NODE &&
			    !strcmp((const char *)ok->data.scalar.value, key))
				return conf_err(p, "duplicate key '%s' in %s (first on line %u)", key,
						what, line_of(ok));
		}
		p->line = line_of(k);
		if (each(p, key, k, v))
			return -1;
	}
	return 0;
}

/* Calls each(p, text, item node) for every item of the list n (a null
 * is an empty list). */
typedef int (*item_fn)(struct parser *p, const char *what, const char *s);
static int each_item(struct parser *p, yaml_node_t *n, const char *what, item_fn each)
{
	if (is_null(n))
		return 0;
	p->line = line_of(n);
	if (n->type != YAML_SEQUENCE_NODE)
		return conf_err(p, "%s must be a list", what);
	for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		yaml_node_t *v = yaml_document_get_node(p->doc, *it);
		const char *s = v ? text_of(p, v, what) : NULL;
		if (!s || each(p, what, s))
			return -1;
	}
	return 0;
}

static int cipher_item(struct parser *p, const char *what, const char *s)
{
	struct serve_webconf *wc = p->wc;
	for (unsigned i = 0; i < serve_nciphers; i++) {
		if (strcmp(s, serve_ciphers[i].go))
			continue;
		for (unsigned j = 0; j < wc->nciphers; j++)
			if (wc->ciphers[j] == i)
				return conf_err(p, "%s: %s listed twice", what, s);
		if (wc->nciphers == SERVE_WEBCONF_MAX_LIST)
			return conf_err(p, "%s: more than %d", what, SERVE_WEBCONF_MAX_LIST);
		wc->ciphers[wc->nciphers++] = (unsigned char)i;
		return 0;
	}
	return conf_err(p, "%s '%s': not one of Go's secure suites vramz serves (TLS_ECDHE_RSA_WITH_"
		    "AES_128_GCM_SHA256, ...: docs/exporter.md)", what, s);
}

static int curve_item(struct parser *p, const char *what, const char *s)
{
	struct serve_webconf *wc = p->wc;
	for (unsigned i = 0; i < serve_ncurves; i++) {
		if (strcmp(s, serve_curves[i].go))
			continue;
		for (unsigned j = 0; j < wc->ncurves; j++)
			if (wc->curves[j] == i)
				return conf_err(p, "%s: %s listed twice", what, s);
		wc->curves[wc->ncurves++] = (unsigned char)i; /* 4 names: fits */
		return 0;
	}
	return conf_err(p, "%s '%s': expected CurveP256, CurveP384, CurveP521 or X25519", what, s);
}

static int san_item(struct parser *p, const char *what, const char *s)
{
	struct serve_webconf *wc = p->wc;
	if (!*s)
		return conf_err(p, "%s: an empty name", what);
	char **n = realloc(wc->sans, (wc->nsans + 1) * sizeof *n);
	if (!n)
		return conf_err(p, "out of memory");
	wc->sans = n;
	if (!(n[wc->nsans] = strdup(s)))
		return conf_err(p, "out of memory");
	wc->nsans++;
	return 0;
}

static int tls_version(struct parser *p, const char *key, yaml_node_t *v, int *out)
{
	const char *s = text_of(p, v, key);
	if (!s)
		return -1;
	if (!strcmp(s, "TLS13"))
		*out = 13;
	else if (!strcmp(s, "TLS12"))
		*out = 12;
	else if (!strcmp(s, "TLS10") || !strcmp(s, "TLS11"))
		return conf_err(p, "%s '%s': vramz serves TLS12 or TLS13 only", key, s);
	else
		return conf_err(p, "%s '%s': expected TLS12 or TLS13", key, s);
	return 0;
}

/* exporter-toolkit's names, in its order */
static const char *const client_auths[] = {
	[SERVE_CLIENT_NONE] = "NoClientCert",
	[SERVE_CLIENT_REQUEST] = "RequestClientCert",
	[SERVE_CLIENT_REQUIRE_ANY] = "RequireAnyClientCert",
	[SERVE_CLIENT_VERIFY_IF_GIVEN] = "VerifyClientCertIfGiven",
	[SERVE_CLIENT_REQUIRE_VERIFY] = "RequireAndVerifyClientCert",
};

static int tls_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	static const struct {
		const char *name;
		size_t text, line; /* offsets in struct parser */
	} strs[] = {
		{"cert_file", offsetof(struct parser, cert_file), offsetof(struct parser, cert_line)},
		{"key_file", offsetof(struct parser, key_file), offsetof(struct parser, key_line)},
		{"client_ca_file", offsetof(struct parser, ca_file), offsetof(struct parser, ca_line)},
		{"cert", offsetof(struct parser, cert), offsetof(struct parser, cert_line)},
		{"key", offsetof(struct parser, key), offsetof(struct parser, key_line)},
		{"client_ca", offsetof(struct parser, ca), offsetof(struct parser, ca_line)},
	};
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		if (strcmp(key, strs[i].name))
			continue;
		const char *s = text_of(p, v, key);
		if (!s)
			return -1;
		unsigned *line = (unsigned *)((char *)p + strs[i].line);
		if (*line) /* cert_file and cert, ...: one of the two */
			return conf_err(p, "%s and %s both given (line %u): one of the two", key,
					i < 3 ? strs[i + 3].name : strs[i - 3].name, *line);
		if (!*s)
			return conf_err(p, "%s needs a value", key);
		*(const char **)((char *)p + strs[i].text) = s;
		*line = line_of(k);
		return 0;
	}
	if (!strcmp(key, "min_version")) {
		p->min_line = line_of(k);
		return tls_version(p, key, v, &p->min_ver);
	}
	if (!strcmp(key, "max_version"))
		return tls_version(p, key, v, &p->max_ver);
	if (!strcmp(key, "client_auth_type")) {
		const char *s = text_of(p, v, key);
		if (!s)
			return -1;
		for (size_t i = 0; i < sizeof client_auths / sizeof client_auths[0]; i++)
			if (!strcmp(s, client_auths[i])) {
				p->wc->client_auth = (enum serve_client_auth)i;
				p->client_line = line_of(k);
				return 0;
			}
		return conf_err(p, "client_auth_type '%s': expected NoClientCert, RequestClientCert, "
			    "RequireAnyClientCert, VerifyClientCertIfGiven or "
			    "RequireAndVerifyClientCert", s);
	}
	if (!strcmp(key, "prefer_server_cipher_suites")) {
		const char *s = text_of(p, v, key);
		if (!s)
			return -1;
		if (strcmp(s, "true") && strcmp(s, "false"))
			return conf_err(p, "%s '%s': expected true or false", key, s);
		p->wc->server_order = !strcmp(s, "true");
		return 0;
	}
	if (!strcmp(key, "cipher_suites")) {
		p->cipher_line = line_of(k);
		return each_item(p, v, key, cipher_item);
	}
	if (!strcmp(key, "curve_preferences"))
		return each_item(p, v, key, curve_item);
	if (!strcmp(key, "client_allowed_sans")) {
		p->sans_line = line_of(k);
		return each_item(p, v, key, san_item);
	}
	return conf_err(p, "unknown key '%s' in tls_server_config (expected cert_file, key_file, "
		    "client_auth_type, client_ca_file, min_version, max_version, ...)", key);
}

/* the headers exporter-toolkit lets http_server_config set */
static const char *const allowed_headers[] = {
	"Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options",
	"X-XSS-Protection", "Content-Security-Policy",
};

static int header_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	(void)k;
	size_t i = 0;
	while (i < sizeof allowed_headers / sizeof allowed_headers[0] &&
	       strcasecmp(key, allowed_headers[i]))
		i++;
	if (i == sizeof allowed_headers / sizeof allowed_headers[0])
		return conf_err(p, "header '%s' cannot be set (exporter-toolkit allows "
			    "Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, "
			    "X-XSS-Protection, Content-Security-Policy)", key);
	const char *s = text_of(p, v, key);
	if (!s)
		return -1;
	if (strpbrk(s, "\r\n"))
		return conf_err(p, "header '%s': a line break in its value", key);
	struct serve_webconf *wc = p->wc;
	struct serve_header *h = realloc(wc->headers, (wc->nheaders + 1) * sizeof *h);
	if (!h)
		return conf_err(p, "out of memory");
	wc->headers = h;
	h[wc->nheaders].name = strdup(allowed_headers[i]);
	h[wc->nheaders].value = strdup(s);
	if (!h[wc->nheaders].name || !h[wc->nheaders].value) {
		free(h[wc->nheaders].name);
		free(h[wc->nheaders].value);
		return conf_err(p, "out of memory");
	}
	wc->nheaders++;
	return 0;
}

static int http_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	(void)k;
	if (!strcmp(key, "headers"))
		return each_pair(p, v, "headers", header_key);
	if (!strcmp(key, "http2")) { /* libmicrohttpd speaks HTTP/1.1: either is served so */
		const char *s = text_of(p, v, key);
		if (!s)
			return -1;
		return strcmp(s, "true") && strcmp(s, "false")
			       ? conf_err(p, "http2 '%s': expected true or false", s)
			       : 0;
	}
	return conf_err(p, "unknown key '%s' in http_server_config (expected headers, http2)", key);
}

static int user_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	(void)k;
	struct serve_webconf *wc = p->wc;
	if (!*key)
		return conf_err(p, "empty user name");
	if (strchr(key, ':'))
		return conf_err(p, "a user name cannot contain ':' (basic authentication splits on it)");
	const char *value = text_of(p, v, "a password");
	if (!value)
		return -1;
	int cost = bcrypt_cost(value);
	if (cost < 0)
		return conf_err(p, "the password must be a bcrypt hash ($2b$, $2a$ or $2y$, "
			    "60 characters: htpasswd -nBC 10 NAME)");
	/* each check of a new password costs 2^cost rounds on the one
	 * checking thread: at 31 days of CPU, at 16 seconds (issue 35) */
	if (!is_bcrypt(value))
		return conf_err(p, "user '%s': bcrypt cost %d is out of range (vramz takes %d to %d: "
			    "htpasswd -nBC 10 NAME)", key, cost, SERVE_BCRYPT_COST_MIN,
			    SERVE_BCRYPT_COST_MAX);
	struct serve_user *u = realloc(wc->users, (wc->nusers + 1) * sizeof *u);
	if (!u)
		return conf_err(p, "out of memory");
	wc->users = u;
	u[wc->nusers].name = strdup(key);
	u[wc->nusers].hash = strdup(value);
	if (!u[wc->nusers].name || !u[wc->nusers].hash) {
		free(u[wc->nusers].name);
		free(u[wc->nusers].hash);
		return conf_err(p, "out of memory");
	}
	wc->nusers++;
	return 0;
}

/* A Go duration ("100ms", "1m30s", "1.5s"): nanoseconds, or -1. */
static long long go_duration(const char *s)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3}, {"ms", 1e6},
		     {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
	if (!strcmp(s, "0"))
		return 0;
	double total = 0;
	if (!*s)
		return -1;
	while (*s) {
		char *end;
		if (!((*s >= '0' && *s <= '9') || *s == '.'))
			return -1;
		double v = strtod(s, &end);
		if (end == s)
			return -1;
		s = end;
		size_t best = 0, blen = 0;
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
			size_t l = strlen(units[i].unit);
			if (!strncmp(s, units[i].unit, l) && l > blen)
				best = i, blen = l;
		}
		if (!blen)
			return -1;
		total += v * units[best].ns;
		s += blen;
	}
	return total > 9e18 ? -1 : (long long)total;
}

static int rate_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	(void)k;
	const char *s = text_of(p, v, key);
	if (!s)
		return -1;
	if (!strcmp(key, "interval")) {
		long long ns = go_duration(s);
		if (ns < 0)
			return conf_err(p, "interval '%s': expected a duration (100ms, 1s, 1m)", s);
		p->wc->rate_interval_ns = ns;
		p->rate_interval_given = 1;
		return 0;
	}
	if (!strcmp(key, "burst")) {
		char *end;
		unsigned long b = strtoul(s, &end, 10);
		if (!*s || *end || *s == '-' || b > 1000000)
			return conf_err(p, "burst '%s': expected a count (0 to 1000000)", s);
		p->wc->rate_burst = (unsigned)b;
		p->rate_burst_given = 1;
		return 0;
	}
	return conf_err(p, "unknown key '%s' in rate_limit (expected interval, burst)", key);
}

static int top_key(struct parser *p, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config")) {
		p->tls_line = line_of(k);
		return each_pair(p, v, key, tls_key);
	}
	if (!strcmp(key, "http_server_config"))
		return each_pair(p, v, key, http_key);
	if (!strcmp(key, "basic_auth_users"))
		return each_pair(p, v, key, user_key);
	if (!strcmp(key, "rate_limit")) {
		p->rate_line = line_of(k);
		return each_pair(p, v, key, rate_key);
	}
	const char *why = unsupported_why(key);
	if (why)
		return conf_err(p, "%s is not supported by vramz: %s", key, why);
	return conf_err(p, "unknown key '%s' (expected tls_server_config, http_server_config, "
		    "basic_auth_users or rate_limit)", key);
}

int serve_webconf_read(const char *path, size_t max_bytes, char **out, size_t *len,
		       char *why, size_t whylen)
{
	*out = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer,
	 * and is then refused by fstat; links are followed (Kubernetes mounts
	 * a Secret's files as links), what they end at must be a file */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st)) {
		snprintf(why, whylen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file (%s)",
			 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory"
			 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
			 : S_ISSOCK(st.st_mode) ? "a socket" : "a special file");
		close(fd);
		return -1;
	}
	if ((uintmax_t)st.st_size > max_bytes) {
		snprintf(why, whylen, "larger than %zu KiB", max_bytes / 1024);
		close(fd);
		return -1;
	}
	char *buf = malloc(max_bytes + 1);
	if (!buf) {
		snprintf(why, whylen, "out of memory");
		close(fd);
		return -1;
	}
	/* read to the end, not to st_size: a file that grows while read is
	 * still bounded, and one that shrinks is not read past its end */
	size_t n = 0;
	int bad = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, max_bytes + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			bad = r < 0 ? errno : 0;
			break;
		}
		n += (size_t)r;
		if (n > max_bytes)
			break;
	}
	close(fd);
	if (bad || n > max_bytes) {
		if (bad)
			snprintf(why, whylen, "%s", strerror(bad));
		else
			snprintf(why, whylen, "larger than %zu KiB", max_bytes / 1024);
		explicit_bzero(buf, n);
		free(buf);
		return -1;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* A PEM of the configuration: the file it names (relative to its
 * directory), or the text given inline (text non-NULL). */
static int read_pem(struct parser *p, const char *name, const char *file, const char *text,
		    unsigned line, const char *kind, char **out, char **watched)
{
	char full[4096], *buf, why[128] = "";
	size_t n;
	p->line = line;
	if (text) {
		snprintf(full, sizeof full, "(inline)");
		buf = strdup(text);
		n = buf ? strlen(buf) : 0;
		if (!buf)
			return conf_err(p, "out of memory");
	} else {
		const char *slash = strrchr(p->path, '/');
		if (file[0] != '/' && slash)
			snprintf(full, sizeof full, "%.*s/%s", (int)(slash - p->path), p->path, file);
		else
			snprintf(full, sizeof full, "%s", file);
		if (serve_webconf_read(full, SERVE_WEBCONF_MAX_BYTES, &buf, &n, why, sizeof why))
			return conf_err(p, "%s '%s': %s", name, full, why);
		if (!(*watched = strdup(full))) {
			explicit_bzero(buf, n);
			free(buf);
			return conf_err(p, "out of memory");
		}
	}
	const char *bad = !n ? "empty" : memchr(buf, 0, n) ? "not a PEM file (a NUL byte)"
			  : !strstr(buf, "-----BEGIN ") ? "not a PEM file (no -----BEGIN line)" : NULL;
	/* "CERTIFICATE", or "PRIVATE KEY" in any of its flavours (RSA, EC) */
	const char *b = bad ? NULL : strstr(buf, "-----BEGIN "), *e = b ? strstr(b + 11, "-----") : NULL;
	if (!bad && (!e || !memmem(b, (size_t)(e - b), kind, strlen(kind))))
		bad = !strcmp(kind, "PRIVATE KEY") ? "its first PEM block is not a private key"
						   : "its first PEM block is not a certificate";
	if (bad) {
		explicit_bzero(buf, n);
		free(buf);
		return conf_err(p, "%s '%s': %s", name, full, bad);
	}
	*out = buf;
	return 0;
}

/* rate_limit, client_allowed_sans and cipher_suites against the rest. */
static int finish_rate(struct parser *p)
{
	struct serve_webconf *wc = p->wc;
	p->line = p->rate_line;
	if (p->rate_burst_given && !p->rate_interval_given)
		return conf_err(p, "rate_limit has burst but no interval: no limit would apply");
	if (wc->rate_interval_ns && !wc->rate_burst)
		return conf_err(p, "rate_limit with burst 0 would refuse every request");
	return 0;
}

static int finish_lists(struct parser *p)
{
	struct serve_webconf *wc = p->wc;
	if (wc->nsans && wc->client_auth == SERVE_CLIENT_NONE) {
		p->line = p->sans_line;
		return conf_err(p, "client_allowed_sans without a client_auth_type that asks for a "
			    "certificate: it would not be used");
	}
	if (!wc->nciphers)
		return 0;
	int tls13 = 0, tls12 = 0;
	for (unsigned i = 0; i < wc->nciphers; i++) {
		const struct serve_cipher *c = &serve_ciphers[wc->ciphers[i]];
		tls13 |= !strcmp(c->mac, "AEAD");
		tls12 |= c->kx != NULL;
	}
	p->line = p->cipher_line;
	/* GnuTLS has one list of ciphers for both versions, where Go leaves
	 * TLS 1.3's alone: a list with nothing for TLS 1.3 would end it */
	if (!tls13 && p->max_ver != 12)
		return conf_err(p, "cipher_suites: none serves TLS 1.3 (GnuTLS keeps one cipher list for "
			    "TLS 1.2 and 1.3): add TLS_AES_128_GCM_SHA256 or set max_version TLS12");
	if (!tls12 && p->min_ver != 13)
		return conf_err(p, "cipher_suites lists TLS 1.3 suites only: add TLS 1.2 ones or set "
			    "min_version TLS13");
	return 0;
}

/* After the walk: what the keys say together, and the PEMs they name. */
static int finish(struct parser *p)
{
	struct serve_webconf *wc = p->wc;
	int cert = p->cert_file || p->cert, key = p->key_file || p->key, ca = p->ca_file || p->ca;
	if (finish_rate(p))
		return -1;
	p->line = p->tls_line;
	if (!cert && !key) {
		/* exporter-toolkit serves plain HTTP then; a TLS setting alone
		 * would be silently unused */
		if (p->min_ver || p->max_ver || ca || wc->client_auth || wc->nsans || wc->nciphers ||
		    wc->ncurves)
			return conf_err(p, "tls_server_config without cert_file and key_file: its "
				    "other settings would not be used");
		return 0;
	}
	if (!cert)
		return conf_err(p, "tls_server_config has key_file but no cert_file");
	if (!key)
		return conf_err(p, "tls_server_config has cert_file but no key_file");
	if (p->min_ver && p->max_ver && p->min_ver > p->max_ver)
		return conf_err(p, "min_version TLS%d is above max_version TLS%d", p->min_ver, p->max_ver);
	/* as exporter-toolkit: verifying needs the authorities to verify with */
	if ((wc->client_auth == SERVE_CLIENT_VERIFY_IF_GIVEN ||
	     wc->client_auth == SERVE_CLIENT_REQUIRE_VERIFY) && !ca) {
		p->line = p->client_line;
		return conf_err(p, "client_auth_type %s needs client_ca_file",
			    client_auths[wc->client_auth]);
	}
	if (ca && wc->client_auth == SERVE_CLIENT_NONE) {
		p->line = p->ca_line;
		return conf_err(p, "client_ca_file without a client_auth_type that asks for a "
			    "certificate: it would not be used");
	}
	wc->min_tls13 = p->min_ver == 13;
	wc->max_tls12 = p->max_ver == 12;
	if (finish_lists(p))
		return -1;
	if (read_pem(p, p->cert ? "cert" : "cert_file", p->cert_file, p->cert, p->cert_line,
		     "CERTIFICATE", &wc->cert_pem, &wc->files[0]) ||
	    read_pem(p, p->key ? "key" : "key_file", p->key_file, p->key, p->key_line,
		     "PRIVATE KEY", &wc->key_pem, &wc->files[1]) ||
	    (ca && read_pem(p, p->ca ? "client_ca" : "client_ca_file", p->ca_file, p->ca,
			    p->ca_line, "CERTIFICATE", &wc->client_ca_pem, &wc->files[2])))
		return -1;
	wc->tls = 1;
	return 0;
}

int serve_webconf_parse(struct serve_webconf *wc, const char *path, const char *text,
			size_t len, char *err, size_t errlen)
{
	memset(wc, 0, sizeof *wc);
	struct parser p = {.path = path, .err = err, .errlen = errlen, .wc = wc};
	/* a NUL would end the text for the string functions below, and with
	 * it the rest of the file (basic_auth_users: issue 35) */
	const char *nul = memchr(text, 0, len);
	if (nul)
		return conf_err(&p, "a NUL byte at offset %zu: not a text file", (size_t)(nul - text));
	if (yaml_dl_load(err, errlen))
		return -1;
	yaml_parser_t yp;
	yaml_document_t doc, more;
	if (!yaml_parser_initialize(&yp))
		return conf_err(&p, "out of memory");
	yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
	int rc = -1;
	if (!yaml_parser_load(&yp, &doc)) {
		p.line = (unsigned)yp.problem_mark.line + 1;
		conf_err(&p, "not YAML: %s%s%s", yp.problem ? yp.problem : "cannot be parsed",
			 yp.context ? " " : "", yp.context ? yp.context : "");
		yaml_parser_delete(&yp);
		return -1;
	}
	p.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root) && root->type != YAML_MAPPING_NODE) {
		p.line = line_of(root);
		conf_err(&p, "expected a mapping of tls_server_config, http_server_config and "
			 "basic_auth_users");
	} else if (root && each_pair(&p, root, "the file", top_key) == 0) {
		rc = 0;
	} else if (!root) {
		rc = 0; /* an empty file: plain HTTP, as exporter-toolkit */
	}
	if (rc == 0) {
		/* a second document would be read by nobody */
		if (!yaml_parser_load(&yp, &more)) {
			p.line = (unsigned)yp.problem_mark.line + 1;
			rc = conf_err(&p, "not YAML: %s", yp.problem ? yp.problem : "cannot be parsed");
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&more);
			if (r2) {
				p.line = line_of(r2);
				rc = conf_err(&p, "a second YAML document (the file must hold one)");
			}
			yaml_document_delete(&more);
		}
	}
	if (rc == 0)
		rc = finish(&p); /* the strings it reads are the document's */
	if (rc == 0) {
		/* what was read, to tell a file touched from one changed */
		unsigned long long h = 0xcbf29ce484222325ULL;
		const char *parts[] = {text, wc->cert_pem, wc->key_pem, wc->client_ca_pem};
		for (size_t i = 0; i < 4; i++)
			for (const char *c = parts[i]; c && *c; c++)
				h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
		wc->content = h;
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&yp);
	if (rc)
		serve_webconf_free(wc);
	return rc;
}

int serve_webconf_load(struct serve_webconf *wc, const char *path, char *err, size_t errlen)
{
	memset(wc, 0, sizeof *wc);
	char *text, why[128] = "";
	size_t n;
	if (serve_webconf_read(path, SERVE_WEBCONF_MAX_BYTES, &text, &n, why, sizeof why)) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	int rc = serve_webconf_parse(wc, path, text, n, err, errlen);
	free(text);
	if (!rc)
		wc->path = path;
	return rc;
}

static unsigned long long mix(unsigned long long h, unsigned long long v)
{
	/* FNV-1a over the 8 bytes: a change of any field changes the stamp */
	for (int i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ULL;
	return h;
}

static unsigned long long stamp_file(unsigned long long h, const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return mix(h, (unsigned long long)errno + 1);
	h = mix(h, (unsigned long long)st.st_dev);
	h = mix(h, (unsigned long long)st.st_ino);
	h = mix(h, (unsigned long long)st.st_size);
	h = mix(h, (unsigned long long)st.st_mtim.tv_sec * 1000000000ULL +
			   (unsigned long long)st.st_mtim.tv_nsec);
	return mix(h, (unsigned long long)st.st_ctim.tv_sec * 1000000000ULL +
			      (unsigned long long)st.st_ctim.tv_nsec);
}

void serve_webconf_stamp(const char *path, const struct serve_webconf *wc,
			 struct serve_webconf_stamp *st)
{
	unsigned long long h = stamp_file(0xcbf29ce484222325ULL, path);
	for (unsigned i = 0; i < 3; i++)
		h = wc->files[i] ? stamp_file(mix(h, i), wc->files[i]) : mix(h, 0xff);
	st->h = h;
}

void serve_webconf_free(struct serve_webconf *wc)
{
	for (unsigned i = 0; i < wc->nsans; i++)
		free(wc->sans[i]);
	free(wc->sans);
	for (unsigned i = 0; i < 3; i++)
		free(wc->files[i]);
	free(wc->cert_pem);
	free(wc->client_ca_pem);
	for (unsigned i = 0; i < wc->nheaders; i++) {
		free(wc->headers[i].name);
		free(wc->headers[i].value);
	}
	free(wc->headers);
	if (wc->key_pem) /* a private key: not left in freed memory */
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
	free(wc->key_pem);
	for (unsigned i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	memset(wc, 0, sizeof *wc);
}
