/* SPDX-License-Identifier: Apache-2.0 */
/* test_webconf.c - the parsers of the exporter's network layer, without a
 * network: `--web-config` files (serve/webconf.c) as an operator writes
 * them and as they go wrong (each refused with its line), the
 * Accept-Encoding header (serve/gzip.c) and the Authorization header
 * (serve/auth.c) as clients send them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#if __has_include(<microhttpd.h>) && __has_include(<zlib.h>) && __has_include(<crypt.h>) && \
	__has_include(<yaml.h>)
#include "serve/auth.c"
#include "serve/authparse.c"
#include "serve/gzip.c"
#include "serve/guard.c"
#include "serve/webconf.c"
#include "report/sha256.c"

/* vramz_mhd is mhd_dl.c's: the parser loads libyaml through it */

#include "tmpdir.h"

#define HASH "$2b$04$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"

static char dir[TMPDIR_LEN];

static void put(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **st)
{
	(void)st;
	assert_int_equal(tmpdir_make(dir, "webconf"), 0);
	put("tls.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
	put("tls.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
	put("rsa.key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n");
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	tmpdir_remove(dir);
	return 0;
}

/* Parses text as DIR/web.yml; returns the error ("" when it parsed). */
static const char *parse(struct serve_webconf *wc, const char *text)
{
	static char err[512];
	char path[512];
	snprintf(path, sizeof path, "%s/web.yml", dir);
	err[0] = 0;
	if (serve_webconf_parse(wc, path, text, strlen(text), err, sizeof err) == 0)
		return "";
	/* without the directory, so the tests read as the messages do */
	const char *base = strstr(err, "web.yml");
	return base ? base : err;
}

static void test_full_file(void **st)
{
	(void)st;
	struct serve_webconf wc;
	const char *e = parse(&wc,
			      "---\n# the node's exporter\n"
			      "tls_server_config:   # TLS for every route\n"
			      "    cert_file: tls.pem\n"
			      "    key_file: 'rsa.key'\n"
			      "    min_version: \"TLS13\"\n"
			      "\n"
			      "basic_auth_users:\n"
			      "  prom: " HASH "   # Prometheus\n"
			      "  \"ops team\": '" HASH "'\r\n"
			      "  'it''s': \"" HASH "\"\n");
	assert_string_equal(e, "");
	assert_int_equal(wc.tls, 1);
	assert_int_equal(wc.min_tls13, 1);
	assert_non_null(strstr(wc.cert_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(wc.key_pem, "RSA PRIVATE KEY"));
	assert_int_equal(wc.nusers, 3);
	assert_string_equal(wc.users[0].name, "prom");
	assert_string_equal(wc.users[0].hash, HASH);
	assert_string_equal(wc.users[1].name, "ops team");
	assert_string_equal(wc.users[2].name, "it's");
	serve_webconf_free(&wc);
}

/* exporter-toolkit's whole format, in flow style too (libyaml) */
static void test_full_format(void **st)
{
	(void)st;
	struct serve_webconf wc;
	assert_string_equal(parse(&wc, "{tls_server_config: {cert_file: tls.pem, key: \"-----BEGIN "
				   "PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n\", "
				   "max_version: TLS12, client_auth_type: VerifyClientCertIfGiven, "
				   "client_ca_file: tls.pem, prefer_server_cipher_suites: true}, "
				   "http_server_config: {http2: false, headers: "
				   "{x-frame-options: deny, Strict-Transport-Security: max-age=60}}, "
				   "basic_auth_users: {prom: '" HASH "'}}\n"),
			    "");
	assert_int_equal(wc.tls, 1);
	assert_int_equal(wc.max_tls12, 1);
	assert_int_equal(wc.server_order, 1);
	assert_int_equal(wc.client_auth, SERVE_CLIENT_VERIFY_IF_GIVEN);
	assert_non_null(strstr(wc.client_ca_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(wc.key_pem, "BEGIN PRIVATE KEY"));
	assert_int_equal(wc.nheaders, 2);
	assert_string_equal(wc.headers[0].name, "X-Frame-Options");
	assert_string_equal(wc.headers[0].value, "deny");
	assert_int_equal(wc.nusers, 1);
	serve_webconf_free(&wc);
	/* anchors and aliases, block scalars: YAML, so taken */
	assert_string_equal(parse(&wc, "basic_auth_users:\n  a: &h " HASH "\n  b: *h\n"), "");
	assert_int_equal(wc.nusers, 2);
	assert_string_equal(wc.users[1].hash, HASH);
	serve_webconf_free(&wc);
}

/* the keys vramz refused until issue 38: parsed into what tlsconf.c and
 * http.c use; the files named are recorded for watching */
static void test_tls_keys(void **st)
{
	(void)st;
	struct serve_webconf wc;
	assert_string_equal(parse(&wc, "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n"
				   "  client_auth_type: RequireAnyClientCert\n"
				   "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "
				   "TLS_AES_128_GCM_SHA256]\n"
				   "  curve_preferences: [X25519, CurveP384]\n"
				   "  client_allowed_sans: [prom.example, 10.0.0.7]\n"
				   "rate_limit: {interval: 1m30.5s, burst: 7}\n"),
			    "");
	assert_int_equal(wc.nciphers, 2);
	assert_string_equal(serve_ciphers[wc.ciphers[0]].go, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");
	assert_string_equal(serve_ciphers[wc.ciphers[0]].cipher, "AES-256-GCM");
	assert_null(serve_ciphers[wc.ciphers[1]].kx);
	assert_int_equal(wc.ncurves, 2);
	assert_string_equal(serve_curves[wc.curves[0]].group, "GROUP-X25519");
	assert_string_equal(serve_curves[wc.curves[1]].group, "GROUP-SECP384R1");
	assert_int_equal(wc.nsans, 2);
	assert_string_equal(wc.sans[1], "10.0.0.7");
	assert_true(wc.rate_interval_ns == 90500000000LL);
	assert_int_equal(wc.rate_burst, 7);
	assert_non_null(wc.files[0]);
	assert_non_null(strstr(wc.files[0], "/tls.pem"));
	assert_non_null(strstr(wc.files[1], "/tls.key"));
	assert_null(wc.files[2]);
	serve_webconf_free(&wc);
	/* Go's durations */
	assert_true(go_duration("100ms") == 100000000LL);
	assert_true(go_duration("2h") == 7200000000000LL);
	assert_true(go_duration("1.5us") == 1500);
	assert_true(go_duration("0") == 0);
	assert_true(go_duration("") < 0 && go_duration("5") < 0 && go_duration("1x") < 0 &&
		    go_duration("-1s") < 0);
}

/* The stamp: the same files, the same stamp; a file rewritten, replaced
 * or gone, another */
static void test_stamp(void **st)
{
	(void)st;
	struct serve_webconf wc;
	char path[512];
	snprintf(path, sizeof path, "%s/web.yml", dir);
	put("web.yml", "tls_server_config: {cert_file: tls.pem, key_file: tls.key}\n");
	char err[512] = "";
	assert_int_equal(serve_webconf_load(&wc, path, err, sizeof err), 0);
	struct serve_webconf_stamp a, b;
	serve_webconf_stamp(path, &wc, &a);
	serve_webconf_stamp(path, &wc, &b);
	assert_true(a.h == b.h);
	unsigned long long content = wc.content;
	put("tls.key", "-----BEGIN PRIVATE KEY-----\nMIIF\n-----END PRIVATE KEY-----\n");
	serve_webconf_stamp(path, &wc, &b);
	assert_true(a.h != b.h);
	serve_webconf_free(&wc);
	assert_int_equal(serve_webconf_load(&wc, path, err, sizeof err), 0);
	assert_true(wc.content != content); /* the key's text changed */
	serve_webconf_stamp(path, &wc, &a);
	char key[512];
	snprintf(key, sizeof key, "%s/tls.key", dir);
	unlink(key);
	serve_webconf_stamp(path, &wc, &b);
	assert_true(a.h != b.h);
	put("tls.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
	serve_webconf_free(&wc);
	unlink(path);
}

static void test_empty_and_partial(void **st)
{
	(void)st;
	struct serve_webconf wc;
	assert_string_equal(parse(&wc, ""), "");
	assert_int_equal(wc.tls + (int)wc.nusers, 0);
	assert_string_equal(parse(&wc, "# nothing\n\n"), "");
	assert_string_equal(parse(&wc, "tls_server_config:\nbasic_auth_users: {}\n"), "");
	assert_int_equal(wc.tls + (int)wc.nusers, 0);
	/* users without TLS; TLS 1.2 by default */
	assert_string_equal(parse(&wc, "basic_auth_users:\n  a: " HASH "\n"), "");
	assert_int_equal(wc.nusers, 1);
	serve_webconf_free(&wc);
	assert_string_equal(parse(&wc, "tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n"), "");
	assert_int_equal(wc.tls, 1);
	assert_int_equal(wc.min_tls13, 0);
	serve_webconf_free(&wc);
}

static void test_errors_name_the_line(void **st)
{
	(void)st;
	static const struct {
		const char *text, *err;
	} cases[] = {
		{"foo: 1\n", "web.yml:1: unknown key 'foo' (expected tls_server_config, "
			     "http_server_config, basic_auth_users or rate_limit)"},
		{"\n\ntls_server_config:\n  certfile: x\n",
		 "web.yml:4: unknown key 'certfile' in tls_server_config (expected cert_file, key_file, "
		 "client_auth_type, client_ca_file, min_version, max_version, ...)"},
		{"ip_socket_config:\n  dscp: 8\n",
		 "web.yml:1: ip_socket_config is not supported by vramz: libmicrohttpd creates the "
		 "server socket itself"},
		{"tls_server_config:\n  cipher_suites: TLS_AES_128_GCM_SHA256\n",
		 "web.yml:2: cipher_suites must be a list"},
		{"tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]\n",
		 "web.yml:2: cipher_suites: TLS_AES_128_GCM_SHA256 listed twice"},
		{"tls_server_config:\n  curve_preferences: [X448]\n",
		 "web.yml:2: curve_preferences 'X448': expected CurveP256, CurveP384, CurveP521 or X25519"},
		{"tls_server_config:\n  client_allowed_sans: [a, '']\n",
		 "web.yml:2: client_allowed_sans: an empty name"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n"
		 "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA]\n  max_version: TLS13\n",
		 "web.yml:4: cipher_suites: none serves TLS 1.3"},
		{"tls_server_config:\n  client_allowed_sans: [a]\n",
		 "web.yml:1: tls_server_config without cert_file and key_file: its other settings"},
		{"rate_limit:\n  interval: 1 s\n  burst: 1\n",
		 "web.yml:2: interval '1 s': expected a duration (100ms, 1s, 1m)"},
		{"rate_limit:\n  interval: 1s\n  burst: -1\n",
		 "web.yml:3: burst '-1': expected a count (0 to 1000000)"},
		{"rate_limit:\n  interval: 1s\n", "web.yml:1: rate_limit with burst 0 would refuse every request"},
		{"rate_limit:\n  rate: 1\n", "web.yml:2: unknown key 'rate' in rate_limit (expected interval, burst)"},
		{"http_server_config:\n  http3: true\n",
		 "web.yml:2: unknown key 'http3' in http_server_config (expected headers, http2)"},
		{"http_server_config:\n  headers:\n    Server: vramz\n",
		 "web.yml:3: header 'Server' cannot be set (exporter-toolkit allows"},
		{"tls_server_config: x\n", "web.yml:1: tls_server_config must be a mapping of keys"},
		{"basic_auth_users:\n  a: " HASH "\nbasic_auth_users:\n",
		 "web.yml:3: duplicate key 'basic_auth_users' in the file (first on line 1)"},
		{"basic_auth_users:\n  a: " HASH "\n  a: " HASH "\n",
		 "web.yml:3: duplicate key 'a' in basic_auth_users (first on line 2)"},
		{"basic_auth_users:\n  a: $2b$04$short\n",
		 "web.yml:2: the password must be a bcrypt hash ($2b$, $2a$ or $2y$, 60 characters: "
		 "htpasswd -nBC 10 NAME)"},
		{"basic_auth_users:\n  a: $1$abcdefgh$0123456789012345678901\n",
		 "web.yml:2: the password must be a bcrypt hash"},
		{"basic_auth_users:\n  a: [x]\n", "web.yml:2: a password must be a single value, not a list"},
		{"basic_auth_users:\n  'a:b': " HASH "\n",
		 "web.yml:2: a user name cannot contain ':' (basic authentication splits on it)"},
		{"basic_auth_users:\n  '': " HASH "\n", "web.yml:2: empty user name"},
		{"basic_auth_users:\n\ta: x\n", "web.yml:2: not YAML: found character that cannot start any token"},
		{"basic_auth_users:\n  a: " HASH "\n   b: " HASH "\n", "web.yml:3: not YAML:"},
		{"basic_auth_users:\n  - a\n", "web.yml:2: basic_auth_users must be a mapping of keys"},
		{"- a\n", "web.yml:1: expected a mapping of tls_server_config, http_server_config and "
			  "basic_auth_users"},
		{"tls_server_config:\n  cert_file: \"x\n", "web.yml:3: not YAML: found unexpected end of stream"},
		{"tls_server_config:\n  cert_file: \"a\\0b\"\n", "web.yml:2: cert_file holds a NUL character"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n---\nfoo: 1\n",
		 "web.yml:5: a second YAML document (the file must hold one)"},
		{"tls_server_config:\n  cert_file:\n", "web.yml:2: cert_file needs a value"},
		{"tls_server_config:\n  min_version: TLS10\n",
		 "web.yml:2: min_version 'TLS10': vramz serves TLS12 or TLS13 only"},
		{"tls_server_config:\n  min_version: tls13\n",
		 "web.yml:2: min_version 'tls13': expected TLS12 or TLS13"},
		{"tls_server_config:\n  min_version: TLS13\n",
		 "web.yml:1: tls_server_config without cert_file and key_file: its other settings would "
		 "not be used"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  min_version: TLS13\n"
		 "  max_version: TLS12\n", "web.yml:1: min_version TLS13 is above max_version TLS12"},
		{"tls_server_config:\n  cert_file: tls.pem\n  cert_file: tls.pem\n",
		 "web.yml:3: duplicate key 'cert_file' in tls_server_config (first on line 2)"},
		{"tls_server_config:\n  cert_file: tls.pem\n  cert: x\n",
		 "web.yml:3: cert and cert_file both given (line 2): one of the two"},
		{"tls_server_config:\n  key_file: tls.key\n",
		 "web.yml:1: tls_server_config has key_file but no cert_file"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_auth_type: Maybe\n",
		 "web.yml:4: client_auth_type 'Maybe': expected NoClientCert, RequestClientCert, "
		 "RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n"
		 "  client_auth_type: RequireAndVerifyClientCert\n",
		 "web.yml:4: client_auth_type RequireAndVerifyClientCert needs client_ca_file"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.key\n  client_ca_file: tls.pem\n",
		 "web.yml:4: client_ca_file without a client_auth_type that asks for a certificate"},
		{"tls_server_config:\n  cert_file: tls.key\n  key_file: tls.key\n",
		 "its first PEM block is not a certificate"},
		{"tls_server_config:\n  cert_file: tls.pem\n  key_file: tls.pem\n",
		 "its first PEM block is not a private key"},
		{"tls_server_config:\n  cert_file: web.yml\n  key_file: tls.key\n",
		 "not a PEM file (no -----BEGIN line)"},
		{"tls_server_config:\n  cert_file: missing.pem\n  key_file: tls.key\n",
		 "missing.pem': No such file or directory"},
	};
	put("web.yml", "not pem\n"); /* named as a cert_file below */
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct serve_webconf wc;
		const char *e = parse(&wc, cases[i].text);
		if (!strstr(e, cases[i].err))
			fail_msg("case %zu: got \"%s\", expected \"%s\"", i, e, cases[i].err);
		/* a refused file leaves nothing to free */
		assert_null(wc.users);
		assert_null(wc.cert_pem);
		assert_null(wc.key_pem);
	}
}

/* Issue 35, items 2-5: what made serve drop auth, spin, block or hang. */
static void test_hostile_files(void **st)
{
	(void)st;
	struct serve_webconf wc;
	char path[512], err[512];
	snprintf(path, sizeof path, "%s/web.yml", dir);
	/* a NUL byte ended the text, and basic_auth_users after it with it */
	static const char nul[] = "# c\0\nbasic_auth_users:\n  prom: " HASH "\n";
	assert_int_equal(serve_webconf_parse(&wc, path, nul, sizeof nul - 1, err, sizeof err), -1);
	assert_non_null(strstr(err, "web.yml: a NUL byte at offset 3: not a text file"));
	/* a final CR without LF: the parser's pointer stood still */
	assert_string_equal(parse(&wc, "# comment\r"), "");
	assert_string_equal(parse(&wc, "\r"), "");
	assert_string_equal(parse(&wc, "basic_auth_users:\r\n  prom: " HASH "\r\n  ops: " HASH "\r"), "");
	assert_int_equal(wc.nusers, 2);
	assert_string_equal(wc.users[1].hash, HASH);
	serve_webconf_free(&wc);
	/* a bcrypt cost beyond 14 is refused with the user's name */
	assert_string_equal(parse(&wc, "basic_auth_users:\n  prom: $2b$31$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O\n"),
			    "web.yml:2: user 'prom': bcrypt cost 31 is out of range (vramz takes 4 to 14: "
			    "htpasswd -nBC 10 NAME)");
	/* a FIFO (or any file that is not regular) is refused, not opened
	 * to wait for a writer that never comes */
	char fifo[600];
	snprintf(fifo, sizeof fifo, "%s/fifo.pem", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_non_null(strstr(parse(&wc, "tls_server_config:\n  cert_file: fifo.pem\n  key_file: tls.key\n"),
			       "fifo.pem': not a regular file (a FIFO)"));
	assert_int_equal(serve_webconf_load(&wc, fifo, err, sizeof err), -1);
	assert_non_null(strstr(err, "fifo.pem: not a regular file (a FIFO)"));
	assert_int_equal(serve_webconf_load(&wc, dir, err, sizeof err), -1);
	assert_non_null(strstr(err, ": not a regular file (a directory)"));
	unlink(fifo);
	/* a link to a file is followed (Kubernetes mounts secrets as links) */
	char link[600], target[600];
	snprintf(link, sizeof link, "%s/link.yml", dir);
	snprintf(target, sizeof target, "%s/real.yml", dir);
	put("real.yml", "basic_auth_users:\n  prom: " HASH "\n");
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(serve_webconf_load(&wc, link, err, sizeof err), 0);
	assert_int_equal(wc.nusers, 1);
	serve_webconf_free(&wc);
	/* larger than 1 MiB: refused before it is read */
	FILE *f = fopen(target, "w");
	assert_non_null(f);
	for (int i = 0; i < 70000; i++)
		fputs("# padding padding\n", f);
	fclose(f);
	assert_int_equal(serve_webconf_load(&wc, link, err, sizeof err), -1);
	assert_non_null(strstr(err, "link.yml: larger than 1024 KiB"));
	unlink(link);
	unlink(target);
}

static void test_accept_encoding(void **st)
{
	(void)st;
	assert_false(serve_accepts_gzip(NULL));
	assert_false(serve_accepts_gzip(""));
	assert_true(serve_accepts_gzip("gzip"));
	assert_true(serve_accepts_gzip("GZIP"));
	assert_true(serve_accepts_gzip("x-gzip"));
	assert_true(serve_accepts_gzip("deflate, gzip;q=0.5, br"));
	assert_true(serve_accepts_gzip("br,gzip"));
	assert_true(serve_accepts_gzip("gzip ; q=1.0"));
	assert_true(serve_accepts_gzip("*"));
	assert_false(serve_accepts_gzip("gzip;q=0"));
	assert_false(serve_accepts_gzip("gzip;q=0.0, identity"));
	assert_false(serve_accepts_gzip("*, gzip;q=0"));
	assert_false(serve_accepts_gzip("*;q=0"));
	assert_false(serve_accepts_gzip("br, deflate"));
	assert_false(serve_accepts_gzip("identity"));
	assert_false(serve_accepts_gzip("gzipped"));
	assert_false(serve_accepts_gzip("gzip;q=nope"));
	assert_false(serve_accepts_gzip("gzip;q=2"));
}

static void test_authorization(void **st)
{
	(void)st;
	char buf[600];
	const char *u, *p;
	/* "prom:s3cret" */
	assert_int_equal(serve_auth_parse("Basic cHJvbTpzM2NyZXQ=", buf, sizeof buf, &u, &p), 0);
	assert_string_equal(u, "prom");
	assert_string_equal(p, "s3cret");
	assert_int_equal(serve_auth_parse("basic   cHJvbTpzM2NyZXQ= ", buf, sizeof buf, &u, &p), 0);
	assert_string_equal(p, "s3cret");
	/* "a:b:c": the password may hold colons; ":": both empty */
	assert_int_equal(serve_auth_parse("Basic YTpiOmM=", buf, sizeof buf, &u, &p), 0);
	assert_string_equal(u, "a");
	assert_string_equal(p, "b:c");
	assert_int_equal(serve_auth_parse("Basic Og==", buf, sizeof buf, &u, &p), 0);
	assert_string_equal(u, "");
	assert_string_equal(p, "");
	assert_int_equal(serve_auth_parse(NULL, buf, sizeof buf, &u, &p), -1);
	assert_int_equal(serve_auth_parse("Bearer cHJvbTpzM2NyZXQ=", buf, sizeof buf, &u, &p), -1);
	assert_int_equal(serve_auth_parse("Basic", buf, sizeof buf, &u, &p), -1);
	assert_int_equal(serve_auth_parse("Basic !!!!", buf, sizeof buf, &u, &p), -1);
	assert_int_equal(serve_auth_parse("Basic cHJvbQ==", buf, sizeof buf, &u, &p), -1); /* no colon */
	assert_int_equal(serve_auth_parse("Basic cHJvbTpzM2NyZXQ", buf, sizeof buf, &u, &p), -1);
	assert_int_equal(serve_auth_parse("Basic YQBiOmM=", buf, sizeof buf, &u, &p), -1); /* NUL */
	/* longer than CRED_MAX: refused unread */
	char big[2000] = "Basic ";
	memset(big + 6, 'Q', 1200);
	assert_int_equal(serve_auth_parse(big, buf, sizeof buf, &u, &p), -1);
}

/* Issue 35, item 7: one IPv6 /64 is one client for the per-address
 * limits (its owner has 2^64 addresses), an IPv4 client of [::] is its
 * IPv4 address (not the /64 of every IPv4 client). */
static void test_addr_key(void **st)
{
	(void)st;
	struct sockaddr_in6 a = {.sin6_family = AF_INET6}, b = a;
	inet_pton(AF_INET6, "2001:db8:1:2::1", &a.sin6_addr);
	inet_pton(AF_INET6, "2001:db8:1:2:ffff:eeee:dddd:cccc", &b.sin6_addr);
	unsigned char ka[SERVE_ADDR_KEY_LEN], kb[SERVE_ADDR_KEY_LEN];
	serve_addr_key((struct sockaddr *)&a, ka);
	serve_addr_key((struct sockaddr *)&b, kb);
	assert_memory_equal(ka, kb, SERVE_ADDR_KEY_LEN);
	inet_pton(AF_INET6, "2001:db8:1:3::1", &b.sin6_addr);
	serve_addr_key((struct sockaddr *)&b, kb);
	assert_memory_not_equal(ka, kb, SERVE_ADDR_KEY_LEN);
	/* v4-mapped: 10.0.0.1 and 10.0.0.2 are two clients, and the first
	 * the same as over IPv4 */
	struct sockaddr_in v4 = {.sin_family = AF_INET};
	inet_pton(AF_INET, "10.0.0.1", &v4.sin_addr);
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &a.sin6_addr);
	inet_pton(AF_INET6, "::ffff:10.0.0.2", &b.sin6_addr);
	unsigned char k4[SERVE_ADDR_KEY_LEN];
	serve_addr_key((struct sockaddr *)&v4, k4);
	serve_addr_key((struct sockaddr *)&a, ka);
	serve_addr_key((struct sockaddr *)&b, kb);
	assert_memory_equal(k4, ka, SERVE_ADDR_KEY_LEN);
	assert_memory_not_equal(ka, kb, SERVE_ADDR_KEY_LEN);
}

static void test_bcrypt_shape(void **st)
{
	(void)st;
	char h[] = HASH;
	assert_true(is_bcrypt(h));
	h[2] = 'y'; /* htpasswd's */
	assert_true(is_bcrypt(h));
	h[2] = 'a';
	assert_true(is_bcrypt(h));
	h[2] = 'x';
	assert_false(is_bcrypt(h));
	assert_false(is_bcrypt("$2b$03$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"));
	assert_false(is_bcrypt("$2b$32$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"));
	/* issue 35: cost 31 is weeks of CPU a check, 16 seconds */
	assert_false(is_bcrypt("$2b$31$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"));
	assert_false(is_bcrypt("$2b$15$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"));
	assert_true(is_bcrypt("$2b$14$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.O"));
	assert_false(is_bcrypt("$2b$04$pmJ1vLFOlZxnnT6FvqM8YuwKz3iEF3GhbMojcJO4iNA4elZWBdT.!"));
	assert_false(is_bcrypt(HASH "x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_full_format),
		cmocka_unit_test(test_tls_keys),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_empty_and_partial),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_accept_encoding),
		cmocka_unit_test(test_authorization),
		cmocka_unit_test(test_bcrypt_shape),
		cmocka_unit_test(test_addr_key),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
#else
int main(void)
{
	puts("libmicrohttpd, zlib or libcrypt headers missing: serve is not built, nothing to test");
	return 0;
}
#endif
