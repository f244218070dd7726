/* SPDX-License-Identifier: Apache-2.0 */
/* cli.c - option parsing from tables, value parsers and the shared way of
 * opening the library.  Every message is one line that names the bad
 * input, so a user (or a script reading stderr) knows what to fix. */
#include "cli.h"

#include "vramz/diagnose.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct gopts g_opts;

/* set and cleared on the UI thread while a sampler thread may be in
 * cli_err: the pair is published through one atomic pointer */
struct err_sink {
	void (*fn)(void *arg, const char *msg);
	void *arg;
};
static struct err_sink sink_store;
static struct err_sink *sink;

void cli_err_sink(void (*fn)(void *arg, const char *msg), void *arg)
{
	if (!fn) {
		__atomic_store_n(&sink, NULL, __ATOMIC_RELEASE);
		return;
	}
	sink_store.fn = fn;
	sink_store.arg = arg;
	__atomic_store_n(&sink, &sink_store, __ATOMIC_RELEASE);
}

void cli_err(const char *fmt, ...)
{
	va_list ap;
	const struct err_sink *to = __atomic_load_n(&sink, __ATOMIC_ACQUIRE);
	if (to) {
		char msg[512];
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		to->fn(to->arg, msg);
		return;
	}
	fflush(stdout);
	fputs("vramz: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Reads a plain decimal number at s ("12", "-1.5", "2e3", ".5"): digits, one
 * point, an exponent.  strtod alone would also take hex floats ("0x1p4"),
 * "inf" and "nan", which no option means.  *end: the first byte after it. */
static int scan_decimal(const char *s, int sign_ok, double *v, const char **end)
{
	const char *p = s;
	char buf[64];
	int digits = 0;
	if (sign_ok && (*p == '-' || *p == '+'))
		p++;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		if (*q == '-' || *q == '+')
			q++;
		if (isdigit((unsigned char)*q)) {
			while (isdigit((unsigned char)*q))
				q++;
			p = q;
		}
	}
	if ((size_t)(p - s) >= sizeof buf)
		return -1;
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = 0;
	errno = 0;
	*v = strtod(buf, NULL);
	if (errno || !isfinite(*v))
		return -1;
	*end = p;
	return 0;
}

/* Splits "1.5GiB" into a number and a unit suffix. */
static int split_num(const char *s, double *v, const char **unit)
{
	const char *end;
	if (!s || scan_decimal(s, 0, v, &end))
		return -1;
	while (*end == ' ')
		end++;
	*unit = end;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *u;
		double mul;
	} units[] = {
		{"", 1}, {"b", 1},
		{"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0},
		{"m", 1048576.0}, {"mb", 1048576.0}, {"mib", 1048576.0},
		{"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
		{"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tib", 1099511627776.0},
	};
	double v;
	const char *unit;
	if (split_num(s, &v, &unit))
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(unit, units[i].u))
			continue;
		double b = v * units[i].mul;
		if (b >= 18446744073709551615.0)
			return -1;
		*bytes = (uint64_t)b;
		return 0;
	}
	return -1;
}

int parse_duration_ms(const char *s, int64_t *ms)
{
	static const struct {
		const char *u;
		double mul;
	} units[] = {
		{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"min", 60000},
		{"h", 3600000}, {"d", 86400000},
	};
	double v;
	const char *unit;
	if (split_num(s, &v, &unit))
		return -1;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(unit, units[i].u))
			continue;
		double m = v * units[i].mul;
		if (m > 9.2e15)
			return -1;
		*ms = (int64_t)llround(m);
		return 0;
	}
	return -1;
}

int parse_percent(const char *s, double *frac)
{
	double v;
	const char *unit;
	if (split_num(s, &v, &unit))
		return -1;
	if (!strcmp(unit, "%"))
		v /= 100;
	else if (*unit)
		return -1;
	if (v > 1)
		return -1;
	*frac = v;
	return 0;
}

const char *cli_opt_arg(const struct opt *o)
{
	if (o->arg)
		return o->arg;
	switch (o->t) {
	case OPT_SIZE: return "SIZE";
	case OPT_DURATION: return "DURATION";
	case OPT_UINT: return "N";
	case OPT_PERCENT: return "PCT";
	case OPT_INTERVAL: return "DURATION";
	case OPT_CELSIUS: return "C";
	default: return "VALUE";
	}
}

void cli_usage(FILE *f, const char *cmd, const char *synopsis, const char *about,
	       const struct opt *opts)
{
	fprintf(f, "usage: vramz %s%s%s\n", cmd, synopsis && *synopsis ? " " : "",
		synopsis ? synopsis : "");
	if (about)
		fprintf(f, "\n%s\n", about);
	fprintf(f, "\noptions:\n");
	for (const struct opt *o = opts; o->s || o->l; o++) {
		char left[64];
		int n = 0;
		n += snprintf(left + n, sizeof left - (size_t)n, "  %c%c%s",
			      o->s ? '-' : ' ', o->s ? o->s : ' ', o->s && o->l ? "," : " ");
		if (o->l)
			n += snprintf(left + n, sizeof left - (size_t)n, " --%s", o->l);
		if (o->t != OPT_FLAG)
			snprintf(left + n, sizeof left - (size_t)n, " %s", cli_opt_arg(o));
		fprintf(f, "%-30s %s\n", left, o->help);
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

/* The ranged types: which plain type each parses as, and the values it
 * takes, in that type's unit (milliseconds, a number). */
static const struct {
	enum opt_type base;
	double min, max;
	unsigned char min_open, max_open; /* 1: the bound itself is refused */
	const char *want;                 /* for the error */
} ranged[] = {
	[OPT_INTERVAL] = {OPT_DURATION, CLI_MIN_INTERVAL_MS, CLI_MAX_INTERVAL_MS, 0, 0,
			  "want a duration from 10ms to 1h"},
	[OPT_FACTOR] = {OPT_DOUBLE, 0, 1e9, 1, 0, "want a factor above 0"},
	[OPT_PROB] = {OPT_DOUBLE, 0, 1, 1, 1, "want a number above 0 and below 1"},
	[OPT_UNIT] = {OPT_DOUBLE, 0, 1, 0, 0, "want a number from 0 to 1"},
	[OPT_RATIO] = {OPT_DOUBLE, 1, 1e9, 0, 0, "want a number of 1 or more"},
	[OPT_CELSIUS] = {OPT_UINT, 0, 200, 0, 0, "want a whole number from 0 to 200"},
};

int opt_value(const struct opt *o, const char *v, const char **why)
{
	double x = 0;
	const char *end;
	unsigned long long n = 0;
	uint64_t bytes = 0;
	int64_t ms = 0;
	enum opt_type t = o->t;
	int has_range = (size_t)t < sizeof ranged / sizeof ranged[0] && ranged[t].want;
	if (has_range)
		t = ranged[o->t].base;
	/* a ranged type's error says what fits whatever was wrong */
	*why = has_range ? ranged[o->t].want : NULL;
	switch (t) {
	case OPT_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case OPT_STR:
		*(const char **)o->dst = v;
		return 0;
	case OPT_UINT: {
		char *e;
		if (!isdigit((unsigned char)*v))
			return -1;
		errno = 0;
		n = strtoull(v, &e, 10);
		if (*e || errno || n > 0xffffffffULL)
			return -1;
		x = (double)n;
		break;
	}
	case OPT_DOUBLE:
		if (scan_decimal(v, 1, &x, &end) || *end)
			return -1;
		break;
	case OPT_SIZE:
		if (parse_size(v, &bytes))
			return -1;
		x = (double)bytes;
		break;
	case OPT_DURATION:
		if (parse_duration_ms(v, &ms))
			return -1;
		x = (double)ms;
		break;
	case OPT_PERCENT:
		if (parse_percent(v, &x))
			return -1;
		break;
	default:
		return -1;
	}
	if (has_range) {
		int lo = ranged[o->t].min_open ? x > ranged[o->t].min : x >= ranged[o->t].min;
		int hi = ranged[o->t].max_open ? x < ranged[o->t].max : x <= ranged[o->t].max;
		if (!lo || !hi)
			return -1;
	}
	switch (t) {
	case OPT_UINT: *(unsigned *)o->dst = (unsigned)n; break;
	case OPT_DOUBLE: *(double *)o->dst = x; break;
	case OPT_SIZE: *(uint64_t *)o->dst = bytes; break;
	case OPT_DURATION: *(int64_t *)o->dst = ms; break;
	case OPT_PERCENT: *(double *)o->dst = x; break;
	default: break;
	}
	return 0;
}

static int set_value(const char *cmd, const struct opt *o, const char *name, const char *v)
{
	const char *why;
	if (!opt_value(o, v, &why))
		return 0;
	if (why)
		cli_err("%s: bad value '%s' for %s: %s", cmd, v, name, why);
	else
		cli_err("%s: bad %s '%s' for %s", cmd, cli_opt_arg(o), v, name);
	return CLI_USAGE;
}

int cli_parse(const char *cmd, const char *synopsis, const char *about,
	      const struct opt *opts, int argc, char **argv, int *nargs)
{
	return cli_parse_flags(cmd, synopsis, about, opts, 0, argc, argv, nargs);
}

int cli_parse_flags(const char *cmd, const char *synopsis, const char *about,
		    const struct opt *opts, unsigned flags, int argc, char **argv, int *nargs)
{
	int np = 0;
	const char *hint = flags & CLI_STOP_AT_ARG ?
		"; options go before the command, or after -- for the command's own" : "";
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if ((flags & CLI_STOP_AT_ARG) && (a[0] != '-' || !a[1])) {
			while (i < argc)
				argv[np++] = argv[i++];
			break;
		}
		if (!strcmp(a, "--")) {
			while (++i < argc)
				argv[np++] = argv[i];
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			cli_usage(stdout, cmd, synopsis, about, opts);
			return CLI_HELP;
		}
		if (a[0] != '-' || !a[1]) {
			argv[np++] = a;
			continue;
		}
		const struct opt *o = NULL;
		const char *val = NULL;
		char name[64];
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			for (const struct opt *p = opts; p->s || p->l; p++)
				if (p->l && strlen(p->l) == len && !strncmp(p->l, a + 2, len))
					o = p;
			snprintf(name, sizeof name, "--%.*s", (int)(len < 40 ? len : 40), a + 2);
			if (!o) {
				cli_err("%s: unknown option '%s' (see vramz %s -h%s)", cmd, name, cmd, hint);
				return CLI_USAGE;
			}
			if (eq) {
				if (o->t == OPT_FLAG) {
					cli_err("%s: %s takes no value", cmd, name);
					return CLI_USAGE;
				}
				val = eq + 1;
			}
		} else {
			/* -abc: flags grouped; -g0 / -g 0: a value */
			for (const char *c = a + 1; *c; c++) {
				o = NULL;
				for (const struct opt *p = opts; p->s || p->l; p++)
					if (p->s == *c)
						o = p;
				snprintf(name, sizeof name, "-%c", *c);
				if (!o) {
					cli_err("%s: unknown option '%s' (see vramz %s -h%s)", cmd, name, cmd, hint);
					return CLI_USAGE;
				}
				if (o->t != OPT_FLAG) {
					if (c[1])
						val = c + 1;
					break;
				}
				*(int *)o->dst = 1;
			}
			if (o->t == OPT_FLAG)
				continue;
		}
		if (o->t != OPT_FLAG && !val) {
			if (i + 1 >= argc) {
				cli_err("%s: %s needs a value (%s)", cmd, name, cli_opt_arg(o));
				return CLI_USAGE;
			}
			val = argv[++i];
		}
		int rc = set_value(cmd, o, name, val);
		if (rc)
			return rc;
	}
	*nargs = np;
	return CLI_OK;
}

int cli_parse_exit(int rc)
{
	return rc == CLI_HELP ? EXIT_OK : rc == CLI_USAGE ? EXIT_USAGE : -1;
}

int cli_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	if (g_opts.no_color || (nc && *nc) || (term && !strcmp(term, "dumb")))
		return 0;
	return isatty(fileno(f));
}

int cli_open(vramz_ctx **ctx)
{
	/* every command's process ends soon after its context */
	vramz_open_opts o = {.size = sizeof o, .replay_path = g_opts.replay, .flags = VRAMZ_OPEN_EXITING};
	const char *prof = getenv("VRAMZ_PROFILE_NVML");
	if (prof && *prof && strcmp(prof, "0"))
		o.flags |= VRAMZ_OPEN_PROFILE;
	int rc = vramz_open(ctx, &o);
	if (rc < 0) {
		const char *detail = *ctx ? vramz_last_error(*ctx) : "";
		size_t rl = g_opts.replay ? strlen(g_opts.replay) : 0;
		if (g_opts.replay && !strncmp(detail, g_opts.replay, rl) && detail[rl] == ':')
			cli_err("%s", detail); /* the log reader's "FILE:LINE: reason" */
		else if (g_opts.replay)
			cli_err("%s: %s", g_opts.replay, *detail ? detail : vramz_strerror(rc));
		else if (*detail)
			cli_err("%s: %s", vramz_strerror(rc), detail);
		else
			cli_err("%s", vramz_strerror(rc));
		vramz_close(*ctx);
		*ctx = NULL;
		return EXIT_FAIL;
	}
	if (g_opts.gpus) {
		rc = vramz_select(*ctx, g_opts.gpus);
		if (rc < 0) {
			cli_err("-g: %s", vramz_last_error(*ctx));
			vramz_close(*ctx);
			*ctx = NULL;
			return EXIT_USAGE;
		}
	}
	return 0;
}

int cli_diag_create(const char *cmd, vramz_diag **d, const vramz_diag_config *cfg)
{
	int rc = vramz_diag_create(d, cfg);
	if (rc == 0)
		return 0;
	if (rc == VRAMZ_ENOMEM)
		cli_err("%s: out of memory", cmd);
	else /* a threshold the engine refuses */
		cli_err("%s: %s (see vramz %s -h)", cmd, vramz_diag_error(*d), cmd);
	vramz_diag_free(*d);
	*d = NULL;
	return rc == VRAMZ_ENOMEM ? EXIT_FAIL : EXIT_USAGE;
}

int cli_open_sample(vramz_ctx **ctx, unsigned flags, const vramz_snapshot **snap)
{
	int ex = cli_open(ctx);
	if (ex)
		return ex;
	int rc = vramz_sample(*ctx, flags, snap);
	/* every GPU lost: still a snapshot whose rows say so */
	if (rc < 0 && rc != VRAMZ_ELOST) {
		cli_err("sampling failed: %s%s%s", vramz_strerror(rc),
			*vramz_last_error(*ctx) ? ": " : "", vramz_last_error(*ctx));
		vramz_close(*ctx);
		*ctx = NULL;
		return EXIT_FAIL;
	}
	return 0;
}

void cli_close(vramz_ctx *ctx)
{
	unsigned n = vramz_call_stats(ctx, NULL, 0);
	vramz_call_stat *st = n ? calloc(n, sizeof *st) : NULL;
	if (st) {
		n = vramz_call_stats(ctx, st, n);
		double total_ms = 0;
		fprintf(stderr, "vramz: NVML calls (VRAMZ_PROFILE_NVML), all GPUs of one context:\n"
				"  %-48s %10s %12s %12s %10s\n",
			"call", "calls", "wall us/call", "cpu us/call", "cpu ms");
		for (unsigned i = 0; i < n; i++) {
			double c = (double)st[i].calls;
			total_ms += (double)st[i].cpu_ns / 1e6;
			fprintf(stderr, "  %-48s %10llu %12.2f %12.2f %10.3f\n", st[i].name,
				(unsigned long long)st[i].calls, (double)st[i].wall_ns / 1e3 / c,
				(double)st[i].cpu_ns / 1e3 / c, (double)st[i].cpu_ns / 1e6);
		}
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "  NVML calls %.3f ms of CPU; the whole process %.3f ms so far\n",
			total_ms, (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
		free(st);
	}
	vramz_close(ctx);
}
