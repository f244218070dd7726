/* SPDX-License-Identifier: Apache-2.0 */
/* procself.c - process_* self-metrics from /proc/self (procself.h).
 *
 * The figures and their HELP texts are client_golang's (its process
 * collector, through the procfs package): CPU seconds are utime + stime
 * of /proc/self/stat over the clock tick; the start time is the boot time
 * (btime of /proc/stat) plus the stat's starttime; the virtual size is
 * the stat's vsize, the resident size its rss pages times the page size;
 * open fds are the entries of /proc/self/fd (the directory's own among
 * them, as procfs counts it) and the maximum the soft RLIMIT_NOFILE.
 */
#include "serve/procself.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct selfstat {
	double cpu_s;          /* user + system; <0 unknown */
	double start_unix_s;   /* <0 unknown */
	double vm_bytes, rss_bytes; /* <0 unknown */
	double open_fds, max_fds;   /* <0 unknown; max_fds +Inf: no limit */
};

/* The fields of /proc/PID/stat after the command name, which may hold
 * spaces and parentheses: what follows its last ')'. */
static int read_stat(const char *proc, struct selfstat *s)
{
	char path[256], buf[2048];
	snprintf(path, sizeof path, "%s/self/stat", proc);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* state is field 3; utime 14, stime 15, starttime 22, vsize 23, rss 24 */
	unsigned long long utime, stime, start, vsize;
	long long rss;
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
			  "%*d %*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return -1;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	if (hz <= 0 || page <= 0)
		return -1;
	s->cpu_s = (double)(utime + stime) / (double)hz;
	s->vm_bytes = (double)vsize;
	s->rss_bytes = (double)rss * (double)page;
	/* the boot time, for the start time */
	snprintf(path, sizeof path, "%s/stat", proc);
	f = fopen(path, "re");
	if (!f)
		return 0;
	char line[256];
	while (fgets(line, sizeof line, f)) {
		unsigned long long btime;
		if (sscanf(line, "btime %llu", &btime) == 1) {
			s->start_unix_s = (double)btime + (double)start / (double)hz;
			break;
		}
	}
	fclose(f);
	return 0;
}

static void read_fds(const char *proc, struct selfstat *s)
{
	char path[256];
	snprintf(path, sizeof path, "%s/self/fd", proc);
	DIR *d = opendir(path);
	if (d) {
		long n = 0;
		for (struct dirent *e; (e = readdir(d));)
			n += e->d_name[0] != '.';
		closedir(d);
		s->open_fds = (double)n;
	}
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		s->max_fds = rl.rlim_cur == RLIM_INFINITY ? -2 : (double)rl.rlim_cur;
}

static void self_series(struct prom_buf *b, const char *name, const char *help, const char *type,
			double v, int integer)
{
	char line[256];
	if (v < 0 && v != -2)
		return;
	snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	prom_buf_puts(b, line);
	if (v == -2)
		snprintf(line, sizeof line, "%s +Inf\n", name);
	else if (integer)
		snprintf(line, sizeof line, "%s %.0f\n", name, v);
	else
		snprintf(line, sizeof line, "%s %.15g\n", name, v);
	prom_buf_puts(b, line);
}

void serve_procself_render(struct prom_buf *b, const char *proc)
{
	struct selfstat s = {-1, -1, -1, -1, -1, -1};
	read_stat(proc, &s);
	read_fds(proc, &s);
	self_series(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
	       "counter", s.cpu_s, 0);
	self_series(b, "process_open_fds", "Number of open file descriptors.", "gauge", s.open_fds, 1);
	self_series(b, "process_max_fds", "Maximum number of open file descriptors.", "gauge", s.max_fds, 1);
	self_series(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", s.vm_bytes,
	       1);
	self_series(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
	       s.rss_bytes, 1);
	self_series(b, "process_start_time_seconds",
	       "Start time of the process since unix epoch in seconds.", "gauge", s.start_unix_s, 0);
}
