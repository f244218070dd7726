/* SPDX-License-Identifier: Apache-2.0 */
/* diagconf.c - thresholds of the diagnoses as options and config keys, and
 * the printed shape of a finding.
 *
 * The library's kinds table (lib/diagnose/kinds.c) lists every threshold
 * once, with the kind it belongs to: its name (the long option and the
 * config file key are the same word), its unit, its default and where it
 * lives in vramz_diag_config.  So `vramz watch -h`, the config file and
 * docs/diagnoses.md cannot disagree about a name, and a new kind's
 * thresholds become options here by themselves.  The config file is
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

#include "kinds.h"
#include "format/fmt.h"

/* The option type that parses a threshold of each unit (its range). */
static const enum opt_type unit_opt[] = {
	[KC_DURATION] = OPT_DURATION, [KC_SIZE] = OPT_SIZE,       [KC_COUNT] = OPT_UINT,
	[KC_CELSIUS] = OPT_CELSIUS,   [KC_PERCENT] = OPT_PERCENT, [KC_PROB] = OPT_PROB,
	[KC_UNIT] = OPT_UNIT,         [KC_RATIO] = OPT_RATIO,     [KC_NUMBER] = OPT_DOUBLE,
};

/* The i-th threshold that is an option (a key), in table order; NULL past the last. */
static const struct kind_conf *key_at(unsigned i)
{
	for (unsigned k = 0, n = kind_conf_count(); k < n; k++) {
		const struct kind_conf *c = kind_conf_at(k);
		if (c->key && !i--)
			return c;
	}
	return NULL;
}

unsigned diagconf_opt_count(void)
{
	unsigned n = 0;
	while (key_at(n))
		n++;
	return n;
}

static struct opt key_opt(vramz_diag_config *cfg, const struct kind_conf *k)
{
	return (struct opt){0, k->key, unit_opt[k->unit], (char *)cfg + k->off, NULL, k->help};
}

void diagconf_opts(vramz_diag_config *cfg, struct opt *out)
{
	const struct kind_conf *k;
	for (unsigned i = 0; (k = key_at(i)); i++)
		out[i] = key_opt(cfg, k);
}

static char *conf_trim(char *s)
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
		char *s = conf_trim(line);
		if (!*s)
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			cli_err("%s:%u: expected 'key = value', got '%.60s'", path, ln, s);
			return EXIT_USAGE;
		}
		*eq = 0;
		char *k = conf_trim(s), *v = conf_trim(eq + 1);
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
		const struct kind_conf *key = NULL, *c;
		for (unsigned i = 0; !key && (c = key_at(i)); i++)
			if (!strcmp(c->key, k))
				key = c;
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

int diagconf_thresholds_load(struct cmd_thresholds *t)
{
	vramz_diag_config_defaults(&t->cfg);
	if (t->preset)
		t->preset(&t->cfg);
	return diagconf_load(&t->cfg, &t->cc);
}

void diagconf_preset_log(vramz_diag_config *cfg)
{
	cfg->keep_ended = 1;
	cfg->eval_interval_ms = 60000; /* first-seen times to the minute; cheap on long logs */
	/* evaluated once a minute, a finding is already one that held at a
	 * minute's mark; and one raised at the log's last evaluation counts */
	cfg->report_after_ms = 0;
	/* cfg->proc_root stays NULL: a log's pids belong to another time */
}

void diagconf_live_interval(vramz_diag_config *cfg, int64_t interval_ms)
{
	if (cfg->window_ms < 2 * interval_ms)
		cfg->window_ms = 2 * interval_ms;
	if (cfg->eval_interval_ms > interval_ms)
		cfg->eval_interval_ms = interval_ms;
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
	jw_str(w, "container_name", f->container_name[0] ? f->container_name : NULL);
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
	jw_dbl_if(w, "value", fg & (VRAMZ_FG_VALUE | VRAMZ_FG_STEPS), f->value, 2);
	jw_dbl_if(w, "ref_value", fg & (VRAMZ_FG_VALUE | VRAMZ_FG_STEPS), f->ref_value, 2);
	jw_u64_if(w, "count", fg & (VRAMZ_FG_COUNT | VRAMZ_FG_STEPS), f->count);
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
	jw_dbl_if(w, "site_share", (fg & VRAMZ_FG_SITE) && f->kind != VRAMZ_FK_OOM, f->site_share, 4);
	/* oom: the error its PyTorch agent saw, and what held the memory */
	jw_u64_if(w, "requested_bytes", (fg & VRAMZ_FG_OOM) && f->requested_bytes, f->requested_bytes);
	jw_u64_if(w, "limit_bytes", (fg & VRAMZ_FG_OOM) && f->limit_bytes, f->limit_bytes);
	if (fg & VRAMZ_FG_OOM) {
		jw_arr(w, "holders");
		for (unsigned i = 0; i < f->nholders && i < VRAMZ_OOM_HOLDERS; i++) {
			jw_obj(w, NULL);
			jw_str(w, "site", f->holders[i].site);
			jw_u64(w, "bytes", f->holders[i].bytes);
			jw_dbl_if(w, "share", 1, f->holders[i].share, 4);
			jw_end_obj(w);
		}
		jw_end_arr(w);
	} else {
		jw_null(w, "holders");
	}
	/* where the memory outside the allocator is (issue 37) */
	if (fg & VRAMZ_FG_PARTS) {
		jw_obj(w, "outside_parts");
		jw_u64(w, "context", f->outside_context_bytes);
		jw_u64(w, "libraries", f->outside_libraries_bytes);
		jw_u64(w, "nccl", f->outside_nccl_bytes);
		jw_u64(w, "other", f->outside_other_bytes);
		jw_u64(w, "nccl_communicators", f->nccl_comms);
		jw_end_obj(w);
	} else {
		jw_null(w, "outside_parts");
	}
	/* a leak's or rise's onset, and the series a leak was judged on (issue 36) */
	jw_str(w, "onset", f->onset_ms ? fmt_iso_ms(t, sizeof t, f->onset_ms) : NULL);
	jw_str(w, "series", f->kind != VRAMZ_FK_LEAK ? NULL
			    : (fg & VRAMZ_FG_ALLOCATOR) ? "allocator" : "nvml");
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
