/* SPDX-License-Identifier: Apache-2.0 */
/* host.c - the host columns of `vramz top` (host.h): CPU %, RSS, TIME and
 * the state of each GPU process, as nvtop and nvitop show them.
 *
 * The cost is what matters here: a `top` is meant to cost next to
 * nothing, and a machine may run a hundred GPU processes.  So only the
 * rows on screen (and the process page's) are read each tick, each with
 * one pread() of its /proc/PID/stat, kept open from the first read: the
 * open file stays the process's, so a pid reused meanwhile reads as gone
 * (ESRCH), never as another process's figures.  The text is parsed by
 * lib/proc.c's one parser, by hand (no sscanf).  Rows that scroll out
 * keep their last reading; their files are closed when they leave the
 * GPU list.  The elapsed time needs no read: the row has the start time.
 *
 * Sorting by a host column reads every row (top.c asks for them all),
 * since an order of rows known and rows unknown would say nothing.
 *
 * The host line of the header (issue 40: nvtop and nvitop show one) is
 * three more preads a tick of files kept open: /proc/stat's first line
 * (CPU busy since the last tick, over all CPUs), /proc/meminfo (used =
 * MemTotal - MemAvailable) and /proc/loadavg.
 */
#include "tui/host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "format/fmt.h"
#include "proc.h"
#include "text.h"

struct host_entry {
	uint32_t pid;
	uint64_t start_ticks;
	unsigned gen;                     /* the refresh that last saw its row */
	int fd;                           /* its stat, open; -1 not opened */
	int gone;                         /* it cannot be read: unknown from now */
	int have;                         /* a reading is below */
	uint64_t cpu_ticks;               /* utime + stime then */
	int64_t read_ms;                  /* CLOCK_MONOTONIC of that reading */
	int cpu_valid;
	unsigned cpu_tenths;
	uint64_t rss_bytes;
	int rss_valid;
	char state;
};

struct host {
	int live;
	int rootfd;
	long hz, page;
	unsigned gen;
	struct host_entry *e;
	unsigned n, cap, hint;
	unsigned char *want;              /* by row: on screen */
	unsigned want_cap;
	/* the host line: stat, meminfo, loadavg kept open (-1: not yet, -2 none) */
	int sysfd[3];
	uint64_t busy_ticks, all_ticks;   /* /proc/stat's cpu line, last tick */
	char line[96];                    /* "cpu 23%  mem 41.2/503.5G  load 3.21" */
};

struct host *host_new(int live)
{
	struct host *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->live = live;
	h->sysfd[0] = h->sysfd[1] = h->sysfd[2] = -1;
	h->rootfd = live ? open(proc_root(), O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	h->hz = sysconf(_SC_CLK_TCK);
	h->page = sysconf(_SC_PAGESIZE);
	if (h->hz <= 0)
		h->hz = 100;
	if (h->page <= 0)
		h->page = 4096;
	return h;
}

void host_free(struct host *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < h->n; i++)
		if (h->e[i].fd >= 0)
			close(h->e[i].fd);
	if (h->rootfd >= 0)
		close(h->rootfd);
	for (int i = 0; i < 3; i++)
		if (h->sysfd[i] >= 0)
			close(h->sysfd[i]);
	free(h->e);
	free(h->want);
	free(h);
}

/* The entry of a row, created on first sight; rows come in much the same
 * order each tick, so the search starts after the last one found. */
static struct host_entry *entry_of(struct host *h, const struct model_row *r)
{
	for (unsigned k = 0, i = h->hint; k < h->n; k++, i++) {
		if (i >= h->n)
			i = 0;
		if (h->e[i].pid == r->pid && h->e[i].start_ticks == r->start_ticks) {
			h->hint = i + 1;
			return &h->e[i];
		}
	}
	if (h->n == h->cap) {
		unsigned cap = h->cap ? h->cap * 2 : 64;
		struct host_entry *e = realloc(h->e, cap * sizeof *e);
		if (!e)
			return NULL;
		h->e = e;
		h->cap = cap;
	}
	struct host_entry *e = &h->e[h->n++];
	memset(e, 0, sizeof *e);
	e->pid = r->pid;
	e->start_ticks = r->start_ticks;
	e->fd = -1;
	return e;
}

static void entry_read(struct host *h, struct host_entry *e, int64_t now_ms, int64_t interval_ms)
{
	if (e->gone || h->rootfd < 0)
		return;
	if (e->fd < 0) {
		char name[32];
		char *p = fmt_put_u64(name, e->pid);
		memcpy(p, "/stat", 6);
		e->fd = openat(h->rootfd, name, O_RDONLY | O_CLOEXEC);
		if (e->fd < 0) {
			e->gone = 1;
			return;
		}
	}
	char buf[1024];
	ssize_t n;
	do
		n = pread(e->fd, buf, sizeof buf - 1, 0);
	while (n < 0 && errno == EINTR);
	struct proc_stat_fields st;
	if (n > 0)
		buf[n] = 0;
	/* gone (ESRCH), or another process now (a pid reused before the open) */
	if (n <= 0 || proc_parse_stat(buf, &st) || st.start_ticks != e->start_ticks) {
		close(e->fd);
		e->fd = -1;
		e->gone = 1;
		e->have = e->cpu_valid = e->rss_valid = 0;
		e->state = 0;
		return;
	}
	uint64_t ticks = st.utime_ticks + st.stime_ticks;
	int64_t dt = now_ms - e->read_ms;
	int64_t stale = 3 * (interval_ms > 1000 ? interval_ms : 1000);
	e->cpu_valid = e->have && dt > 0 && dt <= stale && ticks >= e->cpu_ticks;
	if (e->cpu_valid)
		e->cpu_tenths = (unsigned)((ticks - e->cpu_ticks) * 1000000ull /
					   ((uint64_t)h->hz * (uint64_t)dt));
	e->cpu_ticks = ticks;
	e->read_ms = now_ms;
	e->have = 1;
	e->state = st.state;
	e->rss_valid = st.has_rss;
	e->rss_bytes = st.rss_pages * (uint64_t)h->page;
}

void host_refresh(struct host *h, struct model *m, unsigned lo, unsigned hi, uint32_t pid_also,
		  int64_t interval_ms)
{
	if (!h || !h->live)
		return;
	h->gen++;
	int64_t now_ms = clock_mono_ms();
	struct timespec bt;
	int64_t boot_ms = clock_gettime(CLOCK_BOOTTIME, &bt) ? -1
				: (int64_t)bt.tv_sec * 1000 + bt.tv_nsec / 1000000;
	/* the rows on screen: to read now */
	if (m->nrows > h->want_cap) {
		unsigned char *w = realloc(h->want, m->nrows);
		if (!w)
			return;
		h->want = w;
		h->want_cap = m->nrows;
	}
	memset(h->want, 0, m->nrows);
	for (unsigned i = lo; i < hi && i < m->norder; i++)
		if (m->order[i] < m->nrows) /* not a tree's group row */
			h->want[m->order[i]] = 1;
	for (unsigned i = 0; i < m->nrows; i++) {
		struct model_row *r = &m->rows[i];
		if (!r->visible || !r->start_ticks)
			continue; /* another namespace's pid, or unknown: nothing to read */
		if (boot_ms >= 0) {
			r->age_ms = boot_ms - (int64_t)(r->start_ticks * 1000 / (uint64_t)h->hz);
			r->age_valid = r->age_ms >= 0;
		}
		struct host_entry *e = entry_of(h, r);
		if (!e)
			continue;
		e->gen = h->gen;
		if (h->want[i] || r->pid == pid_also)
			entry_read(h, e, now_ms, interval_ms);
		r->cpu_valid = e->cpu_valid;
		r->cpu_tenths = e->cpu_tenths;
		r->rss_valid = e->rss_valid;
		r->rss_bytes = e->rss_bytes;
		r->state = e->state;
	}
	/* the processes that left the table: their files closed */
	unsigned w = 0;
	for (unsigned i = 0; i < h->n; i++) {
		if (h->e[i].gen == h->gen) {
			h->e[w++] = h->e[i];
		} else if (h->e[i].fd >= 0) {
			close(h->e[i].fd);
		}
	}
	h->n = w;
}

int host_cmdline(const struct host *h, uint32_t pid, uint64_t start_ticks, char *buf, size_t len)
{
	if (!h || !h->live || h->rootfd < 0 || len < 2)
		return -1;
	char name[32];
	char *p = fmt_put_u64(name, pid);
	*p = 0;
	int dfd = openat(h->rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	/* both files through one directory: the same process's */
	char st[1024];
	struct proc_stat_fields f;
	int fd = openat(dfd, "stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, st, sizeof st - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0)
		st[n] = 0;
	if (n <= 0 || proc_parse_stat(st, &f) || f.start_ticks != start_ticks) {
		close(dfd);
		return -1;
	}
	fd = openat(dfd, "cmdline", O_RDONLY | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -1;
	size_t have = 0;
	while (have < len - 1 && (n = read(fd, buf + have, len - 1 - have)) > 0)
		have += (size_t)n;
	close(fd);
	while (have && buf[have - 1] == 0)
		have--; /* the last argument's terminator */
	for (size_t i = 0; i < have; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[have] = 0;
	text_sanitize(buf);
	return have ? 0 : -1;
}

/* The text of /proc/NAME (slot i of sysfd) into buf; 0 when it cannot be
 * read (then never tried again). */
static ssize_t sys_read(struct host *h, int i, const char *name, char *buf, size_t len)
{
	if (h->sysfd[i] == -1)
		h->sysfd[i] = h->rootfd >= 0 ? openat(h->rootfd, name, O_RDONLY | O_CLOEXEC) : -2;
	if (h->sysfd[i] < 0) {
		h->sysfd[i] = -2;
		return 0;
	}
	ssize_t n;
	do
		n = pread(h->sysfd[i], buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? n : 0;
}

/* The number after key in text (a line "Key:   123 kB"); 0 when absent. */
static uint64_t field_u64(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	if (!p)
		return 0;
	p += strlen(key);
	while (*p == ' ' || *p == ':')
		p++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

void host_system(struct host *h)
{
	if (!h || !h->live)
		return;
	char buf[4096], cpu[16] = "", mem[40] = "", load[24] = "";
	if (sys_read(h, 0, "stat", buf, 512) && !strncmp(buf, "cpu ", 4)) {
		uint64_t v[10] = {0}, all = 0;
		const char *p = buf + 4;
		for (int k = 0; k < 10; k++) {
			while (*p == ' ')
				p++;
			for (; *p >= '0' && *p <= '9'; p++)
				v[k] = v[k] * 10 + (uint64_t)(*p - '0');
		}
		for (int k = 0; k < 8; k++) /* guest time is inside user already */
			all += v[k];
		uint64_t busy = all - v[3] - v[4]; /* less idle and iowait */
		if (h->all_ticks && all > h->all_ticks && busy >= h->busy_ticks)
			fmt_snprintf(cpu, sizeof cpu, "cpu %u%%  ",
				     (unsigned)((busy - h->busy_ticks) * 100 / (all - h->all_ticks)));
		h->busy_ticks = busy;
		h->all_ticks = all;
	}
	if (sys_read(h, 1, "meminfo", buf, sizeof buf)) {
		uint64_t tot = field_u64(buf, "MemTotal"), av = field_u64(buf, "MemAvailable");
		if (tot && av <= tot)
			fmt_snprintf(mem, sizeof mem, "mem %.1f/%.1fG  ", (double)(tot - av) / 1048576.0,
				     (double)tot / 1048576.0);
	}
	if (sys_read(h, 2, "loadavg", buf, 64)) {
		char *sp = strchr(buf, ' ');
		if (sp && sp - buf < 12)
			fmt_snprintf(load, sizeof load, "load %.*s", (int)(sp - buf), buf);
	}
	fmt_snprintf(h->line, sizeof h->line, "%s%s%s", cpu, mem, load);
}

const char *host_summary(const struct host *h)
{
	return h ? h->line : "";
}
