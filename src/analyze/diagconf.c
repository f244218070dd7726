/* SPDX-License-Identifier: Apache-2.0 */
/* diagconf.c - thresholds of the diagnoses as options and config keys, and
 * the printed shape of a finding.
 *
 * One table lists every threshold once: its name (the long option and the
 * config file key are the same word), its type and unit, and where it
 * lives in vramz_diag_config.  So `vramz watch -h`, the config file and
 * docs/diagnoses.md cannot disagree about a name.  The config file is
 * `key = value` lines with # comments; values take the same units as on
 * the command line (1GiB, 30min, 20%), and the command line wins.  Both
 * go through opt_value() (src/cli.c), whose ranged types (OPT_PROB,
 * OPT_UNIT, ...) say what each key takes, so a value one of them refuses the other refuses too.  The file
 * is read only when it is a regular file of at most 64 KiB, lines of at
 * most 1023 bytes: anything else is one error naming the file (and line).
 */
#include "analyze/diagconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/fmt.h"

static const struct dkey {
	const char *name;
	enum opt_type t;
	size_t off;
	const char *help;
} keys[] = {
#define K(name, t, field, help) {name, t, offsetof(vramz_diag_config, field), help}
	K("window", OPT_DURATION, window_ms, "first window width of each series (1s)"),
	K("eval-interval", OPT_DURATION, eval_interval_ms, "evaluate at most this often in data time"),
	K("leak-warmup", OPT_DURATION, leak_warmup_ms, "ignore each process's first DURATION (30s)"),
	K("leak-min-span", OPT_DURATION, leak_min_span_ms, "data needed after warm-up (60s)"),
	K("leak-min-rate", OPT_SIZE, leak_min_rate_bytes_per_min, "smallest leak per minute reported (1MiB)"),
	K("leak-min-rise", OPT_SIZE, leak_min_rise_bytes, "smallest total rise reported (64MiB)"),
	K("leak-p", OPT_PROB, leak_p, "Mann-Kendall significance, above 0 and below 1 (0.001)"),
	K("leak-min-tau", OPT_UNIT, leak_min_tau, "Mann-Kendall strength, 0 to 1 (0.5)"),
	K("leak-critical-tto", OPT_DURATION, leak_critical_tto_ms, "critical when OOM is nearer (1h)"),
	K("imbalance-ratio", OPT_RATIO, imbalance_ratio, "max/median of a job's GPUs, 1 or more (1.5)"),
	K("imbalance-min", OPT_SIZE, imbalance_min_bytes, "and max - median at least (1GiB)"),
	K("stray-max", OPT_SIZE, stray_max_bytes, "a context below this is stray (1GiB)"),
	K("idle-min", OPT_SIZE, idle_min_bytes, "idle holders hold at least (1GiB)"),
	K("idle-time", OPT_DURATION, idle_ms, "at 0% SM for at least (30min)"),
	K("orphan-min", OPT_SIZE, orphan_min_bytes, "unattributed memory reported from (1GiB)"),
	K("orphan-time", OPT_DURATION, orphan_ms, "sustained for (60s)"),
	K("throttle-share", OPT_PERCENT, throttle_share, "share of busy time throttled (20%)"),
	K("throttle-min-busy", OPT_DURATION, throttle_min_busy_ms, "busy time needed (60s)"),
	K("pcie-share", OPT_PERCENT, pcie_share, "share of busy time below max link (50%)"),
	K("mem-temp-margin", OPT_CELSIUS, mem_temp_margin_c, "warn this many C below the limit (5)"),
	K("mem-temp-max", OPT_CELSIUS, mem_temp_max_c, "memory limit C when the GPU does not say (95)"),
	K("frag-time", OPT_DURATION, frag_ms, "low activity near peak for (10min)"),
	K("job-warmup", OPT_DURATION, job_warmup_ms, "judge a job's balance once its processes are this old (30s)"),
	K("report-after", OPT_DURATION, report_after_ms, "report a finding once it has held this long (watch 5s, analyze 0)"),
#undef K
};
#define NKEYS (sizeof keys / sizeof keys[0])

unsigned diagconf_opt_count(void)
{
	return NKEYS;
}

static struct opt key_opt(vramz_diag_config *cfg, const struct dkey *k)
{
	return (struct opt){0, k->name, k->t, (char *)cfg + k->off, NULL, k->help};
}

void diagconf_opts(vramz_diag_config *cfg, struct opt *out)
{
	for (size_t i = 0; i < NKEYS; i++)
		out[i] = key_opt(cfg, &keys[i]);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* Reads the whole file into a NUL-terminated buffer: only a regular file
 * of at most DIAGCONF_MAX_BYTES, opened without blocking, so a FIFO, a
 * device (/dev/zero) or a huge file is one clear error, never a hang or
 * unbounded memory.  NULL with *why set on failure; NULL with *why NULL
 * when there is no file to read. */
static char *read_whole(const char *path, size_t *len, const char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		/* a file that is there but unreadable is an error; no file, or
		 * a HOME this user cannot search (a command run as nobody), is
		 * no config */
		int e = errno;
		if (!stat(path, &st))
			*why = strerror(e);
		return NULL;
	}
	char *buf = NULL;
	if (fstat(fd, &st)) {
		*why = strerror(errno);
	} else if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
	} else if (st.st_size > DIAGCONF_MAX_BYTES) {
		*why = "larger than 64KiB";
	} else if (!(buf = malloc(DIAGCONF_MAX_BYTES + 2))) {
		*why = "out of memory";
	} else {
		size_t n = 0;
		for (;;) { /* one byte past the bound tells a file that grew */
			ssize_t r = read(fd, buf + n, DIAGCONF_MAX_BYTES + 1 - n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*why = strerror(errno);
				break;
			}
			if (!r)
				break;
			n += (size_t)r;
			if (n > DIAGCONF_MAX_BYTES) {
				*why = "larger than 64KiB";
				break;
			}
		}
		buf[n] = 0;
		*len = n;
		if (!*why && memchr(buf, 0, n))
			*why = "a NUL byte: not a text file";
		if (*why) {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	return buf;
}

int diagconf_parse(const char *path, const char *text, size_t len, vramz_diag_config *cfg,
		   struct diag_cmd_conf *cc)
{
	static char strs[2][16]; /* fail-on, min-severity outlive the file */
	char line[DIAGCONF_MAX_LINE + 1];
	unsigned ln = 0;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		ln++;
		if (n > DIAGCONF_MAX_LINE) {
			cli_err("%s:%u: line longer than %d bytes", path, ln, DIAGCONF_MAX_LINE);
			return EXIT_USAGE;
		}
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		if (memchr(line, 0, n)) {
			cli_err("%s:%u: a NUL byte: not a text file", path, ln);
			return EXIT_USAGE;
		}
		char *h = strchr(line, '#');
		if (h)
			*h = 0;
		char *s = trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			cli_err("%s:%u: expected 'key = value', got '%.60s'", path, ln, s);
			return EXIT_USAGE;
		}
		*eq = 0;
		char *k = trim(s), *v = trim(eq + 1);
		if (!strcmp(k, "fail-on") || !strcmp(k, "min-severity")) {
			enum vramz_severity sev;
			if (vramz_severity_parse(v, &sev)) {
				cli_err("%s:%u: bad %s '%.60s' (info, warning, critical)", path, ln, k, v);
				return EXIT_USAGE;
			}
			int i = !strcmp(k, "min-severity");
			snprintf(strs[i], sizeof strs[i], "%s", vramz_severity_str(sev));
			if (i)
				cc->min_severity = strs[i];
			else
				cc->fail_on = strs[i];
			continue;
		}
		if (!strcmp(k, "theme")) { /* top's colours (docs/top.md) */
			if (strcmp(v, "dark") && strcmp(v, "light")) {
				cli_err("%s:%u: bad theme '%.60s' (dark, light)", path, ln, v);
				return EXIT_USAGE;
			}
			cc->theme = !strcmp(v, "dark") ? "dark" : "light";
			continue;
		}
		const struct dkey *key = NULL;
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(keys[i].name, k))
				key = &keys[i];
		if (!key) {
			cli_err("%s:%u: unknown key '%.60s' (see docs/diagnoses.md)", path, ln, k);
			return EXIT_USAGE;
		}
		struct opt o = key_opt(cfg, key);
		const char *why;
		if (opt_value(&o, v, &why)) {
			if (why)
				cli_err("%s:%u: bad value '%.60s' for %s: %s", path, ln, v, k, why);
			else
				cli_err("%s:%u: bad value '%.60s' for %s", path, ln, v, k);
			return EXIT_USAGE;
		}
	}
	return 0;
}

int diagconf_load(vramz_diag_config *cfg, struct diag_cmd_conf *cc)
{
	char path[4096];
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		snprintf(path, sizeof path, "%s/vramz/config", xdg);
	else if (home && *home)
		snprintf(path, sizeof path, "%s/.config/vramz/config", home);
	else
		return 0;
	size_t len = 0;
	const char *why;
	char *text = read_whole(path, &len, &why);
	if (!text) {
		if (!why)
			return 0; /* no config file: the defaults */
		cli_err("%s: %s", path, why);
		return EXIT_USAGE;
	}
	int rc = diagconf_parse(path, text, len, cfg, cc);
	free(text);
	return rc;
}

void diagconf_json(struct jsonw *w, const char *key, const vramz_finding *f)
{
	char id[24], t[40], b[512];
	uint32_t fg = f->figures;
	snprintf(id, sizeof id, "%016llx", (unsigned long long)f->id);
	jw_obj(w, key);
	jw_str(w, "id", id);
	jw_str(w, "kind", vramz_finding_kind_str(f->kind));
	jw_str(w, "severity", vramz_severity_str(f->severity));
	jw_u64(w, "revision", f->revision);
	jw_i64_if(w, "gpu", f->gpu >= 0, f->gpu);
	jw_u64_if(w, "pid", f->pid != 0, f->pid);
	jw_u64_if(w, "start_time_ticks", f->start_time_ticks != 0, f->start_time_ticks);
	jw_str(w, "job", f->job[0] ? f->job : NULL);
	jw_str(w, "comm", f->comm[0] ? f->comm : NULL);
	jw_str(w, "user", f->user[0] ? f->user : NULL);
	jw_bool(w, "ended", f->ended);
	jw_dbl_if(w, "rate_bytes_per_s", fg & VRAMZ_FG_RATE, f->rate_bytes_per_s, 1);
	jw_dbl_if(w, "rate_ci_low_bytes_per_s", fg & VRAMZ_FG_RATE, f->rate_ci_low_bytes_per_s, 1);
	jw_dbl_if(w, "rate_ci_high_bytes_per_s", fg & VRAMZ_FG_RATE, f->rate_ci_high_bytes_per_s, 1);
	jw_dbl_if(w, "tau", fg & VRAMZ_FG_TREND, f->tau, 4);
	jw_dbl_if(w, "p_value", fg & VRAMZ_FG_TREND, f->p_value, 12);
	jw_i64_if(w, "duration_ms", fg & VRAMZ_FG_DURATION, f->duration_ms);
	jw_dbl_if(w, "time_to_oom_s", fg & VRAMZ_FG_TTO, f->time_to_oom_s, 0);
	jw_u64_if(w, "bytes", fg & VRAMZ_FG_BYTES, f->bytes);
	jw_u64_if(w, "ref_bytes", fg & VRAMZ_FG_REF, f->ref_bytes);
	jw_dbl_if(w, "share", fg & VRAMZ_FG_SHARE, f->share, 4);
	jw_dbl_if(w, "value", fg & VRAMZ_FG_VALUE, f->value, 2);
	jw_dbl_if(w, "ref_value", fg & VRAMZ_FG_VALUE, f->ref_value, 2);
	jw_u64_if(w, "count", fg & VRAMZ_FG_COUNT, f->count);
	jw_u64_if(w, "ref_count", (fg & VRAMZ_FG_COUNT) && f->ref_count, f->ref_count);
	if (fg & VRAMZ_FG_EVIDENCE) { /* oom: what made it look like one */
		jw_arr(w, "evidence");
		for (uint32_t bit = 1; bit; bit <<= 1)
			if ((f->evidence & bit) && vramz_oom_evidence_str(bit))
				jw_str(w, NULL, vramz_oom_evidence_str(bit));
		jw_end_arr(w);
	} else {
		jw_null(w, "evidence");
	}
	jw_str(w, "site", (fg & VRAMZ_FG_SITE) ? f->site : NULL);
	jw_dbl_if(w, "site_share", fg & VRAMZ_FG_SITE, f->site_share, 4);
	jw_str(w, "first_seen", fmt_iso_ms(t, sizeof t, f->first_seen_ms));
	jw_str(w, "last_update", fmt_iso_ms(t, sizeof t, f->last_update_ms));
	jw_str(w, "summary", vramz_finding_summary(f, b, sizeof b));
	jw_str(w, "advice", vramz_finding_advice(f, b, sizeof b));
	jw_end_obj(w);
}

const char *diagconf_sev_label(FILE *f, enum vramz_severity s, char *buf, size_t len)
{
	const struct colors *c = colors_for(f);
	const char *col = s == VRAMZ_SEV_CRITICAL ? c->red : s == VRAMZ_SEV_WARNING ? c->yellow : c->cyan;
	char up[16];
	const char *n = vramz_severity_str(s);
	size_t i = 0;
	for (; n[i] && i < sizeof up - 1; i++)
		up[i] = (char)toupper((unsigned char)n[i]);
	up[i] = 0;
	snprintf(buf, len, "%s%-8s%s", col, up, c->reset);
	return buf;
}
