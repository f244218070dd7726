/* SPDX-License-Identifier: Apache-2.0 */
/* cli_harness.h - what the tests of the tool's input side share: catching
 * what a parser prints on stdout and stderr (struct capture), and running
 * cli_parse_flags over a table with one option of every type (parse,
 * parse_flags, expect_usage).  test_cli_options.c and test_cli_typos.c
 * parse; test_cli_config.c only captures.  Header-only, like tmpdir.h: each
 * test is one .c file, which includes src/cli.c itself before this.
 */
#ifndef VRAMZ_TEST_CLI_HARNESS_H
#define VRAMZ_TEST_CLI_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

/* ---- capturing what cli_parse prints ------------------------------------ */

struct capture {
	int saved_out, saved_err;
	FILE *out, *err;
	char outbuf[8192], errbuf[2048];
};

static inline void capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->out = tmpfile();
	c->err = tmpfile();
	assert_non_null(c->out);
	assert_non_null(c->err);
	c->saved_out = dup(1);
	c->saved_err = dup(2);
	dup2(fileno(c->out), 1);
	dup2(fileno(c->err), 2);
}

static inline void slurp(FILE *f, char *buf, size_t len)
{
	rewind(f);
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static inline void capture_end(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	dup2(c->saved_out, 1);
	dup2(c->saved_err, 2);
	close(c->saved_out);
	close(c->saved_err);
	slurp(c->out, c->outbuf, sizeof c->outbuf);
	slurp(c->err, c->errbuf, sizeof c->errbuf);
}

static inline int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* ---- cli_parse ----------------------------------------------------------- */

/* One option of every type, and where each one's value lands (cleared by
 * every parse).  Marked unused: test_cli_config.c only captures. */
static struct vals {
	int a, b, j;
	const char *g, *w;
	unsigned n;
	uint64_t m;
	int64_t i, iv;
	double p, d, f, pr, u, r;
	unsigned c;
} v __attribute__((unused));

static const struct opt opts[] __attribute__((unused)) = {
	{'a', "all", OPT_FLAG, &v.a, NULL, "flag a"},
	{'b', NULL, OPT_FLAG, &v.b, NULL, "flag b"},
	{0, "json", OPT_FLAG, &v.j, NULL, "json"},
	{'g', "gpus", OPT_STR, &v.g, "LIST", "gpus"},
	{'n', "count", OPT_UINT, &v.n, NULL, "count"},
	{'m', "min", OPT_SIZE, &v.m, NULL, "min size"},
	{'i', "interval", OPT_DURATION, &v.i, NULL, "interval"},
	{'p', "pct", OPT_PERCENT, &v.p, NULL, "percent"},
	{'d', "dbl", OPT_DOUBLE, &v.d, NULL, "double"},
	{0, "iv", OPT_INTERVAL, &v.iv, NULL, "a sampling interval"},
	{0, "speed", OPT_FACTOR, &v.f, NULL, "factor"},
	{0, "prob", OPT_PROB, &v.pr, NULL, "probability"},
	{0, "unit", OPT_UNIT, &v.u, NULL, "0..1"},
	{0, "ratio", OPT_RATIO, &v.r, NULL, ">= 1"},
	{0, "temp", OPT_CELSIUS, &v.c, NULL, "degrees"},
	{0, "when", OPT_CHOICE, &v.w, "WHEN", "a word", "auto always never"},
	OPT_END,
};

#define MAXARGS 16
struct run {
	int rc, nargs;
	char *argv[MAXARGS + 1];
	struct capture cap;
};

/* Runs cli_parse_flags on a NULL-terminated list of words after "cmd". */
static inline void vparse(struct run *r, unsigned flags, va_list ap)
{
	int argc = 0;
	memset(&v, 0, sizeof v);
	memset(r, 0, sizeof *r);
	r->argv[argc++] = "cmd";
	for (char *s; (s = va_arg(ap, char *)) != NULL && argc < MAXARGS;)
		r->argv[argc++] = s;
	r->nargs = -1;
	capture_start(&r->cap);
	r->rc = cli_parse_flags("cmd", "[OPTIONS]", "About cmd.", opts, flags, argc, r->argv, &r->nargs);
	capture_end(&r->cap);
}

static inline void parse(struct run *r, ...)
{
	va_list ap;
	va_start(ap, r);
	vparse(r, 0, ap);
	va_end(ap);
}

static inline void parse_flags(struct run *r, unsigned flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	vparse(r, flags, ap);
	va_end(ap);
}

/* A usage error: one line on stderr naming what, nothing on stdout. */
static inline void expect_usage(struct run *r, const char *names)
{
	if (r->rc != CLI_USAGE)
		fail_msg("rc %d, want CLI_USAGE; stderr '%s'", r->rc, r->cap.errbuf);
	if (!strstr(r->cap.errbuf, names))
		fail_msg("stderr '%s' does not name '%s'", r->cap.errbuf, names);
	assert_int_equal(lines(r->cap.errbuf), 1);
	assert_string_equal(r->cap.outbuf, "");
	assert_int_equal(cli_parse_exit(r->rc), EXIT_USAGE);
}

#endif
