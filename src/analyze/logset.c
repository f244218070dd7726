/* SPDX-License-Identifier: Apache-2.0 */
/* logset.c - several CSV logs read as one stream of ticks, for `analyze`
 * and `report`.  A night's recording is often a rotated set (`vramz log
 * --rotate` keeps FILE.N .. FILE.1 beside FILE, oldest the highest
 * number) or a few files from restarts; a user names one or all of them
 * and wants one timeline.
 *
 * Each file is read with the library's own reader (vramz_log_next, what
 * the replay backend uses), one file at a time, so memory stays that of
 * one reader.  At open every file is checked (a foreign or empty file
 * fails before any output is written) and its first and last tick times
 * are peeked from its first and last complete lines: the files are put
 * in time order, files wholly outside --since / --until are skipped
 * unread, and a one-pass consumer knows the time axis up front.  Ticks
 * that go back in time (overlapping files) are skipped and counted.
 */
#include "analyze/logset.h"
#include "analyze/agentrecs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "logfile.h"
#include "vramz/log.h"

#define MAX_ROTATED 1000u
#define PEEK_BYTES 65536

struct lfile {
	char *path;
	int64_t first_ms, last_ms; /* from the first and last complete lines */
	unsigned order;            /* as given, to break ties */
};

struct logset {
	struct lfile *files;
	unsigned nfiles, fcap;
	unsigned cur;              /* file being read */
	vramz_log_reader *r;
	int64_t since_ms, until_ms;
	int64_t span_first_ms, span_last_ms;
	int64_t last_ms;           /* last tick handed out */
	int have_last, done;
	unsigned long skipped;
	int keep_steps;            /* logset_keep_clock_steps */
	unsigned last_file;        /* file of the last tick handed out */
	unsigned long tick_line;   /* and its line */
	vramz_gpu_info *info;      /* merged over the files, by log index */
	unsigned char *known;
	unsigned ninfo;
	unsigned ngpu_fed;         /* GPUs whose identity logset_feed gave the engine */
	struct agentrecs *agents;  /* the agents' records beside the logs */
	char err[600];
};

/* ---- time values ---- */

static int parse_rel(const char *s, int64_t *ms)
{
	int64_t total = 0;
	if (!*s)
		return -1;
	while (*s) {
		char *end;
		errno = 0;
		double v = strtod(s, &end);
		if (end == s || errno || v < 0)
			return -1;
		s = end;
		double mul;
		if (!strncmp(s, "ms", 2)) {
			mul = 1, s += 2;
		} else if (*s == 's') {
			mul = 1000, s++;
		} else if (!strncmp(s, "min", 3)) {
			mul = 60000, s += 3;
		} else if (*s == 'm') {
			mul = 60000, s++;
		} else if (*s == 'h') {
			mul = 3600000, s++;
		} else if (*s == 'd') {
			mul = 86400000, s++;
		} else if (!*s) {
			mul = 1000; /* bare number: seconds */
		} else {
			return -1;
		}
		if (v * mul > 9e15)
			return -1;
		total += (int64_t)(v * mul + 0.5);
	}
	*ms = total;
	return 0;
}

int logset_parse_time(const char *s, int *rel, int64_t *abs_ms, int64_t *rel_ms)
{
	if (!s || !*s)
		return -1;
	if (*s == '-' || *s == '+') {
		*rel = *s == '-' ? -1 : 1;
		return parse_rel(s + 1, rel_ms);
	}
	*rel = 0;
	/* ISO 8601 UTC; seconds optional ("2026-11-30T02:00Z"), Z required */
	char b[64];
	size_t n = strlen(s);
	if (n >= sizeof b - 4)
		return -1;
	memcpy(b, s, n + 1);
	if (n == 17 && b[16] == 'Z') { /* YYYY-MM-DDTHH:MMZ */
		memcpy(b + 16, ":00Z", 5);
		n = 20;
	} else if (n == 10) { /* a date alone: its midnight */
		memcpy(b + 10, "T00:00:00Z", 11);
		n = 20;
	}
	return log_parse_time(b, n, abs_ms) ? -1 : 0;
}

/* ---- peeking a file's first and last tick ---- */

static int line_time(const char *line, size_t n, int64_t *ms)
{
	const char *comma = memchr(line, ',', n);
	return comma ? log_parse_time(line, (size_t)(comma - line), ms) : -1;
}

/* 0 with both times, 1 for a file with a header and no complete row,
 * -1 when a line's time does not parse (the reader then says where). */
static int peek(const char *path, int64_t *first, int64_t *last)
{
	char why[8]; /* the reader says it again, in full */
	int fd = log_open_file(path, why, sizeof why);
	if (fd < 0)
		return -1;
	char *b = malloc(PEEK_BYTES + 1);
	int rc = -1;
	struct stat st;
	if (!b || fstat(fd, &st))
		goto out;
	ssize_t n = pread(fd, b, PEEK_BYTES, 0);
	if (n <= 0)
		goto out;
	char *nl = memchr(b, '\n', (size_t)n);
	char *nl2 = nl ? memchr(nl + 1, '\n', (size_t)(b + n - nl - 1)) : NULL;
	if (!nl2) {
		rc = 1;
		goto out;
	}
	if (line_time(nl + 1, (size_t)(nl2 - nl - 1), first))
		goto out;
	off_t off = st.st_size > PEEK_BYTES ? st.st_size - PEEK_BYTES : 0;
	n = pread(fd, b, PEEK_BYTES, off);
	if (n <= 0)
		goto out;
	char *end = b + n;
	while (end > b && end[-1] != '\n') /* a torn last line is not a tick */
		end--;
	if (end == b)
		goto out;
	char *start = end - 1;
	while (start > b && start[-1] != '\n')
		start--;
	if (start == b && off == 0) /* the header line: no rows */
		rc = 1;
	else
		rc = line_time(start, (size_t)(end - 1 - start), last) ? -1 : 0;
out:
	free(b);
	close(fd);
	return rc;
}

/* ---- opening ---- */

static int set_fail(struct logset *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_fail(struct logset *s, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	return rc;
}

static int add_file(struct logset *s, const char *path)
{
	for (unsigned i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return 0; /* named twice, or FILE.1 and FILE both given */
	if (s->nfiles == s->fcap) {
		struct lfile *nf = grow_array(s->files, &s->fcap, 8, sizeof *nf);
		if (!nf)
			return VRAMZ_ENOMEM;
		s->files = nf;
	}
	struct lfile *f = &s->files[s->nfiles];
	memset(f, 0, sizeof *f);
	f->order = s->nfiles;
	f->path = strdup(path);
	if (!f->path)
		return VRAMZ_ENOMEM;
	s->nfiles++;
	return 0;
}

/* "run.procs.csv" when run.csv exists: read with run.csv, not as a log of
 * its own (so a shell glob over a folder of logs works) */
static int is_sibling(const char *path)
{
	size_t n = strlen(path);
	static const char *const tails[] = {".procs.csv", ".procs"};
	for (size_t i = 0; i < 2; i++) {
		size_t t = strlen(tails[i]);
		if (n <= t || strcmp(path + n - t, tails[i]))
			continue;
		char *base = malloc(n + 1);
		if (!base)
			return 0;
		snprintf(base, n + 1, "%.*s%s", (int)(n - t), path, i == 0 ? ".csv" : "");
		int hit = !access(base, F_OK);
		free(base);
		return hit;
	}
	return 0;
}

/* FILE, and FILE.N .. FILE.1 when they exist beside it */
static int add_set(struct logset *s, const char *path)
{
	size_t len = strlen(path) + 32;
	char *rot = malloc(len);
	if (!rot)
		return VRAMZ_ENOMEM;
	unsigned n = 0;
	while (n < MAX_ROTATED && !log_rotated_path(path, n + 1, rot, len) && !access(rot, F_OK))
		n++;
	int rc = 0;
	for (unsigned k = n; k >= 1 && !rc; k--) {
		log_rotated_path(path, k, rot, len);
		rc = add_file(s, rot);
	}
	free(rot);
	return rc ? rc : add_file(s, path);
}

/* The reader's own verdict on a file: its header, and where the row that
 * the peek could not read goes wrong. */
static int check_file(struct logset *s, struct lfile *f, int scan)
{
	vramz_log_reader *r = NULL;
	int rc = vramz_log_open(&r, f->path);
	const vramz_snapshot *snap;
	int have = 0;
	while (rc == 0 && scan && (rc = vramz_log_next(r, &snap)) == 1) {
		if (!have)
			f->first_ms = snap->time_ms;
		f->last_ms = snap->time_ms;
		have = 1;
		rc = 0;
	}
	if (rc < 0)
		set_fail(s, rc, "%s", r ? vramz_log_error(r) : vramz_strerror(rc));
	vramz_log_close(r);
	if (rc >= 0 && scan && !have)
		return 1;
	return rc < 0 ? rc : 0;
}

static int by_time(const void *a, const void *b)
{
	const struct lfile *x = a, *y = b;
	if (x->first_ms != y->first_ms)
		return x->first_ms < y->first_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int resolve_time(const char *v, const char *what, int64_t first, int64_t last,
		   int64_t *out, struct logset *s)
{
	int rel;
	int64_t abs_ms = 0, rel_ms = 0;
	if (!v)
		return 0;
	if (logset_parse_time(v, &rel, &abs_ms, &rel_ms))
		return set_fail(s, VRAMZ_EINVAL, "bad %s '%s' (want 2026-11-30T02:00:00Z, -2h or +30m)",
			    what, v);
	*out = rel < 0 ? last - rel_ms : rel > 0 ? first + rel_ms : abs_ms;
	return 0;
}

int logset_open(struct logset **out, char *const *paths, unsigned n,
		const struct logset_window *win, char *err, size_t errlen)
{
	struct logset *s = calloc(1, sizeof *s);
	*out = s;
	if (!s)
		return VRAMZ_ENOMEM;
	int rc = 0;
	s->since_ms = INT64_MIN;
	s->until_ms = INT64_MAX;
	if (n == 1 && !strcmp(paths[0], "-")) {
		/* standard input: read once, so no peeking, no ordering, and a
		 * time axis known only at the end */
		if (win && ((win->since && (*win->since == '-' || *win->since == '+')) ||
			    (win->until && (*win->until == '-' || *win->until == '+')))) {
			snprintf(err, errlen, "a relative --since / --until needs a log file, not standard input");
			return VRAMZ_EINVAL;
		}
		if ((rc = add_file(s, "-")))
			return rc;
		s->files[0].first_ms = INT64_MIN;
		s->files[0].last_ms = INT64_MAX;
		rc = resolve_time(win ? win->since : NULL, "--since", 0, 0, &s->since_ms, s);
		if (!rc)
			rc = resolve_time(win ? win->until : NULL, "--until", 0, 0, &s->until_ms, s);
		s->span_first_ms = s->since_ms;
		s->span_last_ms = s->until_ms;
		if (rc)
			snprintf(err, errlen, "%s", s->err);
		return rc;
	}
	for (unsigned i = 0; i < n && !rc; i++)
		rc = !strcmp(paths[i], "-") ? set_fail(s, VRAMZ_EINVAL, "standard input ('-') only alone")
		   : is_sibling(paths[i])   ? 0
					    : add_set(s, paths[i]);
	/* check every file now, so a bad one fails before anything is written */
	unsigned keep = 0;
	for (unsigned i = 0; i < s->nfiles && !rc; i++) {
		struct lfile *f = &s->files[i];
		int pk = peek(f->path, &f->first_ms, &f->last_ms);
		rc = check_file(s, f, pk < 0);
		if (rc == 0 && pk == 1)
			rc = 1; /* header only: nothing to read */
		if (rc == 1) {
			free(f->path);
			rc = 0;
			continue;
		}
		s->files[keep++] = *f;
	}
	if (!rc)
		s->nfiles = keep;
	if (!rc && !s->nfiles)
		rc = set_fail(s, VRAMZ_EEOF, "%s: the log holds no samples", n ? paths[0] : "-");
	if (rc) {
		snprintf(err, errlen, "%s", s->err);
		return rc;
	}
	qsort(s->files, s->nfiles, sizeof *s->files, by_time);
	int64_t first = s->files[0].first_ms, last = s->files[0].last_ms;
	for (unsigned i = 1; i < s->nfiles; i++)
		if (s->files[i].last_ms > last)
			last = s->files[i].last_ms;
	if (win && (rc = resolve_time(win->since, "--since", first, last, &s->since_ms, s)) == 0)
		rc = resolve_time(win->until, "--until", first, last, &s->until_ms, s);
	if (!rc && s->since_ms > s->until_ms)
		rc = set_fail(s, VRAMZ_EINVAL, "--since %s is after --until %s", win->since, win->until);
	if (!rc && (s->since_ms > last || s->until_ms < first)) {
		char a[LOG_TIME_LEN + 1], b[LOG_TIME_LEN + 1];
		log_fmt_time(a, first);
		log_fmt_time(b, last);
		rc = set_fail(s, VRAMZ_EEOF, "no samples between --since and --until (the log covers %s to %s)",
			  a, b);
	}
	if (rc) {
		snprintf(err, errlen, "%s", s->err);
		return rc;
	}
	s->span_first_ms = first > s->since_ms ? first : s->since_ms;
	s->span_last_ms = last < s->until_ms ? last : s->until_ms;
	s->cur = 0;
	/* the events file beside each file of the set: a rotated set's
	 * events files rotate with it (gpu.1.csv, gpu.1.events.csv) */
	char **fp = malloc((s->nfiles ? s->nfiles : 1) * sizeof *fp);
	for (unsigned i = 0; fp && i < s->nfiles; i++)
		fp[i] = s->files[i].path;
	s->agents = fp ? agentrecs_open(fp, s->nfiles, s->since_ms, s->until_ms) : NULL;
	free(fp);
	if (!s->agents) {
		snprintf(err, errlen, "out of memory");
		return VRAMZ_ENOMEM;
	}
	return 0;
}

/* ---- reading ---- */

static int merge_info(struct logset *s)
{
	unsigned ng = vramz_log_gpu_count(s->r);
	if (ng > s->ninfo) {
		vramz_gpu_info *ni = realloc(s->info, ng * sizeof *ni);
		if (!ni)
			return VRAMZ_ENOMEM;
		s->info = ni;
		unsigned char *nk = realloc(s->known, ng);
		if (!nk)
			return VRAMZ_ENOMEM;
		s->known = nk;
		memset(s->known + s->ninfo, 0, ng - s->ninfo);
		s->ninfo = ng;
	}
	for (unsigned i = 0; i < ng; i++) {
		const vramz_gpu_info *gi = vramz_log_gpu(s->r, i);
		if (gi && !s->known[i]) {
			s->info[i] = *gi;
			s->known[i] = 1;
		}
	}
	return 0;
}

int logset_next(struct logset *s, const vramz_snapshot **snap)
{
	while (!s->done) {
		if (!s->r) {
			/* skip the files wholly outside the window */
			while (s->cur < s->nfiles && (s->files[s->cur].last_ms < s->since_ms ||
						      s->files[s->cur].first_ms > s->until_ms))
				s->cur++;
			if (s->cur >= s->nfiles) {
				s->done = 1;
				break;
			}
			int rc = vramz_log_open(&s->r, s->files[s->cur].path);
			if (rc < 0)
				return set_fail(s, rc, "%s", vramz_log_error(s->r));
		}
		int rc = vramz_log_next(s->r, snap);
		if (rc < 0)
			return set_fail(s, rc, "%s", vramz_log_error(s->r));
		if (rc == 0) {
			vramz_log_close(s->r);
			s->r = NULL;
			s->cur++;
			continue;
		}
		int64_t t = (*snap)->time_ms;
		if (t < s->since_ms)
			continue;
		if (t > s->until_ms) { /* the files are in time order: nothing later fits */
			if (s->cur + 1 >= s->nfiles)
				s->done = 1;
			vramz_log_close(s->r);
			s->r = NULL;
			s->cur++;
			continue;
		}
		/* back in time: another file overlapping (skipped), or - asked
		 * for - the clock stepped back within one file (kept) */
		if (s->have_last && t < s->last_ms && !(s->keep_steps && s->last_file == s->cur)) {
			s->skipped++;
			continue;
		}
		if ((rc = merge_info(s)) < 0)
			return set_fail(s, rc, "%s", vramz_strerror(rc));
		s->last_ms = t;
		s->have_last = 1;
		s->last_file = s->cur;
		s->tick_line = vramz_log_tick_line(s->r);
		return 1;
	}
	return 0;
}

void logset_keep_clock_steps(struct logset *s)
{
	s->keep_steps = 1;
}

const char *logset_tick_file(const struct logset *s)
{
	return s->have_last ? s->files[s->last_file].path : NULL;
}

unsigned long logset_tick_line(const struct logset *s)
{
	return s->have_last ? s->tick_line : 0;
}

const char *logset_error(const struct logset *s)
{
	return s ? s->err : "out of memory";
}

void logset_span(const struct logset *s, int64_t *first_ms, int64_t *last_ms)
{
	*first_ms = s->span_first_ms;
	*last_ms = s->span_last_ms;
}

unsigned logset_gpu_count(const struct logset *s)
{
	return s->ninfo;
}

const vramz_gpu_info *logset_gpu(const struct logset *s, unsigned index)
{
	return index < s->ninfo && s->known[index] ? &s->info[index] : NULL;
}

unsigned logset_file_count(const struct logset *s)
{
	return s->nfiles;
}

const char *logset_file(const struct logset *s, unsigned i)
{
	return i < s->nfiles ? s->files[i].path : NULL;
}

unsigned long logset_skipped(const struct logset *s)
{
	return s->skipped;
}

int logset_feed(struct logset *s, vramz_diag *d, const vramz_snapshot *snap)
{
	for (unsigned ng = logset_gpu_count(s); s->ngpu_fed < ng; s->ngpu_fed++) {
		const vramz_gpu_info *gi = logset_gpu(s, s->ngpu_fed);
		if (gi)
			vramz_diag_set_gpu_info(d, gi, 1);
	}
	int rc = agentrecs_note(s->agents, d, snap->time_ms);
	return rc ? rc : vramz_diag_feed(d, snap);
}

unsigned logset_driver_events(struct logset *s, struct agentrow_driver *out, unsigned max)
{
	return agentrecs_driver(s->agents, out, max);
}

void logset_close(struct logset *s)
{
	if (!s)
		return;
	agentrecs_close(s->agents);
	vramz_log_close(s->r);
	for (unsigned i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	free(s->info);
	free(s->known);
	free(s);
}
