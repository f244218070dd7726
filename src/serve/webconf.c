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
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	int cost = value ? bcrypt_cost(value) : -1;
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
	char *buf, why[128] = "";
	size_t n;
	if (serve_webconf_read(full, SERVE_WEBCONF_MAX_BYTES, &buf, &n, why, sizeof why))
		return conf_err(p, "%s '%s': %s", name, full, why);
	if (!n || memchr(buf, 0, n)) {
		free(buf);
		return conf_err(p, "%s '%s': %s", name, full, n ? "not a PEM file (a NUL byte)" : "empty");
	}
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
			size_t len, char *err, size_t errlen)
{
	memset(wc, 0, sizeof *wc);
	struct parser p = {.path = path, .err = err, .errlen = errlen, .child_indent = -1, .wc = wc};
	/* a NUL would end the text for every string function below, and
	 * with it the rest of the file (basic_auth_users: issue 35) */
	const char *nul = memchr(text, 0, len);
	if (nul)
		return conf_err(&p, "a NUL byte at offset %zu: not a text file", (size_t)(nul - text));
	int rc = 0;
	for (const char *s = text, *end = text + len; s < end && !rc;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		/* the next line starts after the break, whatever is cut off
		 * this one (a final "\r" without "\n" included) */
		const char *next = nl ? nl + 1 : end;
		if (n && s[n - 1] == '\r')
			n--;
		char *line = strndup(s, n);
		p.line++;
		rc = line ? parse_line(&p, line) : conf_err(&p, "out of memory");
		free(line);
		s = next;
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
	char *text, why[128] = "";
	size_t n;
	if (serve_webconf_read(path, SERVE_WEBCONF_MAX_BYTES, &text, &n, why, sizeof why)) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	int rc = serve_webconf_parse(wc, path, text, n, err, errlen);
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
