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
	/* a bare number above 1 is a percentage (`--max-util 10`); 1 or
	 * less stays the fraction it always was (`0.5`, `1` = all) */
	if (!strcmp(unit, "%") || (!*unit && v > 1))
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

/* Whether v is one of the space-separated words of list. */
static int is_choice(const char *list, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, " ");
		if (len == n && n && !strncmp(p, v, n))
			return 1;
		p += len + (p[len] == ' ');
	}
	return 0;
}

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
	case OPT_CHOICE:
		if (!is_choice(o->values, v)) {
			*why = o->values;
			return -1;
		}
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
	if (o->t == OPT_CHOICE)
		cli_err("%s: bad value '%s' for %s: want one of %s", cmd, v, name, why);
	else if (why)
		cli_err("%s: bad value '%s' for %s: %s", cmd, v, name, why);
	else
		cli_err("%s: bad %s '%s' for %s", cmd, cli_opt_arg(o), v, name);
	return CLI_USAGE;
}

unsigned cli_distance(const char *a, size_t na, const char *b, unsigned limit)
{
	/* optimal string alignment: three rows of the matrix; names are short */
	enum { MAXW = 64 };
	size_t nb = strlen(b);
	unsigned rows[3][MAXW + 1];
	unsigned *pp = rows[0], *prev = rows[1], *cur = rows[2];
	if (na > MAXW || nb > MAXW)
		return limit + 1;
	if ((na > nb ? na - nb : nb - na) > limit)
		return limit + 1;
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		cur[0] = (unsigned)i;
		unsigned best = cur[0];
		for (size_t j = 1; j <= nb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1; /* two neighbours swapped */
			cur[j] = d;
			if (d < best)
				best = d;
		}
		if (best > limit)
			return limit + 1;
		unsigned *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[nb] > limit ? limit + 1 : prev[nb];
}

int cli_close_enough(unsigned d, size_t na)
{
	return d <= (na <= 4 ? 1u : 2u);
}

/* The last unknown option, for cli_unknown() */
static char unknown_name[64];
static const char *unknown_near;

const char *cli_unknown(const char **nearest)
{
	if (nearest)
		*nearest = unknown_near;
	return unknown_name;
}

/* The long option of opts nearest to name[0..len), if close enough. */
static const char *nearest_long(const struct opt *opts, const char *name, size_t len)
{
	const char *best = NULL;
	unsigned bd = 3;
	for (const struct opt *p = opts; p->s || p->l; p++) {
		if (!p->l)
			continue;
		unsigned d = cli_distance(name, len, p->l, 2);
		if (d < bd && cli_close_enough(d, len)) {
			bd = d;
			best = p->l;
		}
	}
	return best;
}

/* An option opts does not have: one line naming it (and the nearest one)
 * unless the caller says it (CLI_TOPLEVEL). */
static int unknown(const char *cmd, const struct opt *opts, unsigned flags, const char *name,
		   const char *hint)
{
	size_t len = strlen(name);
	snprintf(unknown_name, sizeof unknown_name, "%s", name);
	unknown_near = name[1] == '-' ? nearest_long(opts, name + 2, len - 2) : NULL;
	if (flags & CLI_TOPLEVEL)
		return CLI_UNKNOWN;
	if (unknown_near)
		cli_err("%s: unknown option '%s'; did you mean '--%s'?", cmd, name, unknown_near);
	else
		cli_err("%s: unknown option '%s' (see vramz %s -h%s)", cmd, name, cmd, hint);
	return CLI_USAGE;
}

int cli_parse(const char *cmd, const char *synopsis, const char *about,
	      const struct opt *opts, int argc, char **argv, int *nargs)
{
	return cli_parse_flags(cmd, synopsis, about, opts, 0, argc, argv, nargs);
}

/* nvidia-smi's long options spelled with one dash (`-lms 500`), taken as
 * its users type them wherever the table has the long one. */
static const struct {
	const char *word, *opt;
} one_dash[] = {
	{"-lms", "--loop-ms"},
};

static int has_long(const struct opt *opts, const char *name)
{
	for (const struct opt *p = opts; p->s || p->l; p++)
		if (p->l && !strcmp(p->l, name))
			return 1;
	return 0;
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
		for (size_t k = 0; k < sizeof one_dash / sizeof one_dash[0]; k++)
			if (!strcmp(a, one_dash[k].word) && has_long(opts, one_dash[k].opt + 2))
				a = (char *)one_dash[k].opt;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			for (const struct opt *p = opts; p->s || p->l; p++)
				if (p->l && strlen(p->l) == len && !strncmp(p->l, a + 2, len))
					o = p;
			snprintf(name, sizeof name, "--%.*s", (int)(len < 40 ? len : 40), a + 2);
			if (!o)
				return unknown(cmd, opts, flags, name, hint);
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
				if (!o)
					return unknown(cmd, opts, flags, name, hint);
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
	return rc == CLI_HELP ? EXIT_OK : rc == CLI_USAGE || rc == CLI_UNKNOWN ? EXIT_USAGE : -1;
}

enum cli_color_when cli_color_when(void)
{
	const char *nc = getenv("NO_COLOR");
	if (g_opts.no_color)
		return CLI_COLOR_NEVER;
	if (g_opts.color && !strcmp(g_opts.color, "always"))
		return CLI_COLOR_ALWAYS;
	if (g_opts.color && !strcmp(g_opts.color, "never"))
		return CLI_COLOR_NEVER;
	return nc && *nc ? CLI_COLOR_NEVER : CLI_COLOR_AUTO;
}

int cli_color(FILE *f)
{
	const char *term = getenv("TERM");
	switch (cli_color_when()) {
	case CLI_COLOR_ALWAYS: return 1;
	case CLI_COLOR_NEVER: return 0;
	case CLI_COLOR_AUTO: break;
	}
	return !(term && !strcmp(term, "dumb")) && isatty(fileno(f));
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
