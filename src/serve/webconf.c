/* SPDX-License-Identifier: Apache-2.0 */
/* webconf.c - the exporter-toolkit web configuration file (webconf.h).
 *
 * A line-by-line reader of the two-level YAML that file needs: a section
 * key at column 0, its keys indented under it, scalar values.  Anything
 * richer (lists, flow collections other than an empty {}, anchors, tags,
 * block scalars, a third level) is refused with the line it is on, so a
 * file either means exactly what vramz does or does not start the server.
 *
 * The keys of exporter-toolkit's format that vramz does not implement are
 * named in their own table and refused as "not supported by vramz", told
 * apart from typos.
 */
#include "serve/webconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cert and key files beyond this are not PEM files anyone meant */
#define PEM_MAX_BYTES (1024 * 1024)
/* the configuration file itself */
#define CONF_MAX_BYTES (1024 * 1024)

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

struct parser {
	const char *path;
	unsigned line;
	char *err;
	size_t errlen;
	enum section sec;
	int child_indent;       /* -1: no key of the section seen yet */
	unsigned sec_line[3];   /* where each section started; 0: absent */
	char *cert_file, *key_file;
	unsigned cert_line, key_line, min_line;
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

/* The keys of exporter-toolkit's format vramz does not implement. */
static const char *const unsupported[] = {
	"http_server_config", "client_auth_type", "client_ca_file", "client_ca",
	"client_allowed_sans", "max_version", "cipher_suites", "prefer_server_cipher_suites",
	"curve_preferences", "cert", "key", "rate_limit",
};

static int is_unsupported(const char *key)
{
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
		if (!strcmp(key, unsupported[i]))
			return 1;
	return 0;
}

/* Reads one scalar at *s into a malloc()ed string: 'single' ('' is a
 * quote), "double" (only \\ and \" escapes) or plain (up to stop, a " #"
 * comment or the end, trailing blanks dropped).  *s is left after it. */
static int scalar(struct parser *p, const char **s, const char *stop, char **out)
{
	const char *q = *s;
	size_t cap = strlen(q) + 1, n = 0;
	char *v = malloc(cap);
	if (!v)
		return conf_err(p, "out of memory");
	if (*q == '\'' || *q == '"') {
		char quote = *q++;
		for (;; q++) {
			if (!*q) {
				free(v);
				return conf_err(p, "unterminated %s-quoted string",
					    quote == '"' ? "double" : "single");
			}
			if (*q == quote && quote == '\'' && q[1] == '\'') {
				v[n++] = *q++;
				continue;
			}
			if (*q == quote)
				break;
			if (*q == '\\' && quote == '"') {
				if (q[1] != '\\' && q[1] != '"') {
					free(v);
					return conf_err(p, "escape '\\%c' is not supported (only \\\\ and \\\")",
						    q[1] ? q[1] : ' ');
				}
				q++;
			}
			v[n++] = *q;
		}
		q++;
	} else {
		if (strchr("{[]}&*!|>%@`", *q)) {
			free(v);
			return conf_err(p, "'%c': flow collections, anchors, tags and block scalars are "
				    "not supported here", *q);
		}
		while (*q && !strchr(stop, *q) && !(*q == '#' && q > *s && (q[-1] == ' ' || q[-1] == '\t')))
			v[n++] = *q++;
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
	}
	v[n] = 0;
	*s = q;
	*out = v;
	return 0;
}

/* What may follow a value: blanks, then a comment or the end. */
static int line_end(struct parser *p, const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s && *s != '#')
		return conf_err(p, "unexpected '%s' after the value", s);
	return 0;
}

/* bcrypt in crypt(3)'s modular format: $2a$, $2b$ or $2y$, a two-digit
 * cost from 04 to 31, $, then 22 characters of salt and 31 of hash. */
static int is_bcrypt(const char *h)
{
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return 0;
	int cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return 0;
	for (int i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", h[i]))
			return 0;
	return 1;
}

static int section_key(struct parser *p, char *key, char *value)
{
	enum section s = !strcmp(key, "tls_server_config") ? SEC_TLS
			 : !strcmp(key, "basic_auth_users") ? SEC_USERS : SEC_NONE;
	if (s == SEC_NONE && is_unsupported(key))
		return conf_err(p, "%s is not supported by vramz (it takes tls_server_config and "
			    "basic_auth_users)", key);
	if (s == SEC_NONE)
		return conf_err(p, "unknown key '%s' (expected tls_server_config or basic_auth_users)", key);
	if (p->sec_line[s])
		return conf_err(p, "duplicate key '%s' (first on line %u)", key, p->sec_line[s]);
	if (value && strcmp(value, "{}") && strcmp(value, "null") && strcmp(value, "~"))
		return conf_err(p, "%s must be a mapping of keys on the lines below it", key);
	p->sec = s;
	p->sec_line[s] = p->line;
	p->child_indent = -1;
	return 0;
}

static int tls_key(struct parser *p, char *key, char *value)
{
	char **slot = !strcmp(key, "cert_file") ? &p->cert_file
		      : !strcmp(key, "key_file") ? &p->key_file : NULL;
	if (!slot && strcmp(key, "min_version")) {
		if (is_unsupported(key))
			return conf_err(p, "%s is not supported by vramz (tls_server_config takes "
				    "cert_file, key_file, min_version)", key);
		return conf_err(p, "unknown key '%s' in tls_server_config (expected cert_file, "
			    "key_file, min_version)", key);
	}
	if (!value || !*value)
		return conf_err(p, "%s needs a value", key);
	unsigned *at = slot == &p->cert_file ? &p->cert_line
		       : slot == &p->key_file ? &p->key_line : &p->min_line;
	if (*at)
		return conf_err(p, "duplicate key '%s' (first on line %u)", key, *at);
	*at = p->line;
	if (slot) {
		*slot = strdup(value);
		return *slot ? 0 : conf_err(p, "out of memory");
	}
	if (!strcmp(value, "TLS13"))
		p->wc->min_tls13 = 1;
	else if (!strcmp(value, "TLS10") || !strcmp(value, "TLS11"))
		return conf_err(p, "min_version '%s': vramz serves TLS12 or TLS13 only", value);
	else if (strcmp(value, "TLS12"))
		return conf_err(p, "min_version '%s': expected TLS12 or TLS13", value);
	return 0;
}

static int user_key(struct parser *p, char *key, char *value)
{
	struct serve_webconf *wc = p->wc;
	/* user names are not repeated in errors: the line says which */
	if (!*key)
		return conf_err(p, "empty user name");
	if (strchr(key, ':'))
		return conf_err(p, "a user name cannot contain ':' (basic authentication splits on it)");
	for (unsigned i = 0; i < wc->nusers; i++)
		if (!strcmp(wc->users[i].name, key))
			return conf_err(p, "duplicate user");
	if (!value || !is_bcrypt(value))
		return conf_err(p, "the password must be a bcrypt hash ($2b$, $2a$ or $2y$, "
			    "60 characters: htpasswd -nBC 10 NAME)");
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

/* One line: "key:" or "key: value", at the indentation of its level. */
static int parse_line(struct parser *p, const char *line)
{
	const char *s = line;
	while (*s == ' ')
		s++;
	if (*s == '\t')
		return conf_err(p, "tab in indentation (YAML indents with spaces)");
	int indent = (int)(s - line);
	if (!*s || *s == '#')
		return 0;
	if (p->line == 1 && !strncmp(s, "---", 3) && line_end(p, s + 3) == 0)
		return 0;
	if (*s == '-' && (s[1] == ' ' || !s[1]))
		return conf_err(p, "lists are not supported here");
	char *key = NULL, *value = NULL;
	if (scalar(p, &s, ":", &key))
		return -1;
	int rc = -1;
	if (*s != ':' || (s[1] && s[1] != ' ' && s[1] != '\t')) {
		conf_err(p, "expected 'key: value'");
		goto out;
	}
	s++;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s && *s != '#') {
		if (*s == '{' && s[1] == '}') {
			value = strdup("{}");
			s += 2;
		} else if (scalar(p, &s, "", &value)) {
			goto out;
		}
		if (!value || line_end(p, s))
			goto out;
	}
	if (indent == 0) {
		rc = section_key(p, key, value);
		goto out;
	}
	if (p->sec == SEC_NONE) {
		conf_err(p, "unexpected indentation");
		goto out;
	}
	if (p->child_indent < 0)
		p->child_indent = indent;
	if (indent != p->child_indent) {
		conf_err(p, "indented %d spaces where the keys above have %d%s", indent,
		     p->child_indent, indent > p->child_indent ? " (the format has no third level)" : "");
		goto out;
	}
	rc = p->sec == SEC_TLS ? tls_key(p, key, value) : user_key(p, key, value);
out:
	free(key);
	free(value);
	return rc;
}

/* A PEM file named by the configuration, relative to its directory. */
static int read_pem(struct parser *p, const char *name, const char *file, unsigned line,
		    const char *kind, char **out)
{
	char full[4096];
	const char *slash = strrchr(p->path, '/');
	p->line = line;
	if (file[0] != '/' && slash)
		snprintf(full, sizeof full, "%.*s/%s", (int)(slash - p->path), p->path, file);
	else
		snprintf(full, sizeof full, "%s", file);
	FILE *f = fopen(full, "rb");
	if (!f)
		return conf_err(p, "%s '%s': %s", name, full, strerror(errno));
	char *buf = malloc(PEM_MAX_BYTES + 1);
	size_t n = buf ? fread(buf, 1, PEM_MAX_BYTES + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!buf)
		return conf_err(p, "out of memory");
	if (bad || n > PEM_MAX_BYTES || !n) {
		free(buf);
		return conf_err(p, "%s '%s': %s", name, full,
			    bad ? "cannot be read" : n ? "larger than 1 MiB" : "empty");
	}
	buf[n] = 0;
	if (!strstr(buf, "-----BEGIN ")) {
		free(buf);
		return conf_err(p, "%s '%s': not a PEM file (no -----BEGIN line)", name, full);
	}
	/* "CERTIFICATE", or "PRIVATE KEY" in any of its flavours (RSA, EC) */
	const char *b = strstr(buf, "-----BEGIN "), *e = b ? strstr(b + 11, "-----") : NULL;
	if (!e || !memmem(b, (size_t)(e - b), kind, strlen(kind))) {
		explicit_bzero(buf, n);
		free(buf);
		return conf_err(p, "%s '%s': its first PEM block is not a %s", name, full,
			    !strcmp(kind, "PRIVATE KEY") ? "private key" : "certificate");
	}
	*out = buf;
	return 0;
}

/* After the last line: what the sections say together. */
static int finish(struct parser *p)
{
	struct serve_webconf *wc = p->wc;
	if (!p->cert_file && !p->key_file) {
		/* exporter-toolkit serves plain HTTP then; a min_version alone
		 * is a TLS setting that would be silently unused */
		p->line = p->min_line;
		return p->min_line ? conf_err(p, "min_version without cert_file and key_file") : 0;
	}
	p->line = p->sec_line[SEC_TLS];
	if (!p->cert_file)
		return conf_err(p, "tls_server_config has key_file but no cert_file");
	if (!p->key_file)
		return conf_err(p, "tls_server_config has cert_file but no key_file");
	if (read_pem(p, "cert_file", p->cert_file, p->cert_line, "CERTIFICATE", &wc->cert_pem) ||
	    read_pem(p, "key_file", p->key_file, p->key_line, "PRIVATE KEY", &wc->key_pem))
		return -1;
	wc->tls = 1;
	return 0;
}

int serve_webconf_parse(struct serve_webconf *wc, const char *path, const char *text,
			char *err, size_t errlen)
{
	memset(wc, 0, sizeof *wc);
	struct parser p = {.path = path, .err = err, .errlen = errlen, .child_indent = -1, .wc = wc};
	int rc = 0;
	for (const char *s = text; *s && !rc;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		if (n && s[n - 1] == '\r')
			n--;
		char *line = strndup(s, n);
		p.line++;
		if (!line)
			rc = conf_err(&p, "out of memory");
		else if (strlen(line) != n)
			rc = conf_err(&p, "NUL byte in the file");
		else
			rc = parse_line(&p, line);
		free(line);
		s = nl ? nl + 1 : s + n;
	}
	if (!rc)
		rc = finish(&p);
	free(p.cert_file);
	free(p.key_file);
	if (rc)
		serve_webconf_free(wc);
	return rc;
}

int serve_webconf_load(struct serve_webconf *wc, const char *path, char *err, size_t errlen)
{
	memset(wc, 0, sizeof *wc);
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *text = malloc(CONF_MAX_BYTES + 1);
	size_t n = text ? fread(text, 1, CONF_MAX_BYTES + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!text || bad || n > CONF_MAX_BYTES) {
		snprintf(err, errlen, "%s: %s", path,
			 !text ? "out of memory" : bad ? "cannot be read" : "larger than 1 MiB");
		free(text);
		return -1;
	}
	text[n] = 0;
	int rc = serve_webconf_parse(wc, path, text, err, errlen);
	free(text);
	return rc;
}

void serve_webconf_free(struct serve_webconf *wc)
{
	free(wc->cert_pem);
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
