/* SPDX-License-Identifier: Apache-2.0 */
/* bench_proc.c - what /proc attribution costs a sampling tick.
 *
 * Forks N sleeping children (stand-ins for GPU processes) and times
 * proc_attribute on them: cached (the steady tick: one stat read per pid),
 * uncached (entries swept away, user names still cached: a new or reused
 * pid), and cold (a new cache, so getpwuid_r runs too).  Prints microseconds
 * per call.  Usage: bench_proc [N=100] [ROUNDS=200]
 */
#include "proc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, rounds = argc > 2 ? atoi(argv[2]) : 200;
	pid_t *kids = calloc((size_t)n, sizeof *kids);
	vramz_proc_sample p = { 0 };
	struct proc_cache *pc;
	double t, cached, uncached, cold;
	int i, r;

	if (!kids || n < 1 || rounds < 1)
		return 2;
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			execl("/bin/sleep", "sleep", "600", (char *)NULL);
			_exit(127);
		}
	}
	usleep(200000); /* let every child exec */

	pc = proc_cache_new("/proc");
	for (i = 0; i < n; i++) {
		p.pid = (uint32_t)kids[i];
		proc_attribute(pc, &p);
	}
	t = now_us();
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {
			p.pid = (uint32_t)kids[i];
			proc_attribute(pc, &p);
		}
		proc_cache_sweep(pc);
	}
	cached = (now_us() - t) / rounds / n;

	t = now_us();
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {
			p.pid = (uint32_t)kids[i];
			proc_attribute(pc, &p);
		}
		proc_cache_sweep(pc);
		proc_cache_sweep(pc); /* drops them all */
	}
	uncached = (now_us() - t) / rounds / n;
	proc_cache_free(pc);

	t = now_us();
	for (r = 0; r < rounds; r++) {
		pc = proc_cache_new("/proc");
		p.pid = (uint32_t)kids[r % n];
		proc_attribute(pc, &p);
		proc_cache_free(pc);
	}
	cold = (now_us() - t) / rounds;

	printf("pids %d  cached %.2f us  uncached %.2f us  cold %.2f us  "
	       "tick of %d cached pids %.1f us\n", n, cached, uncached, cold, n,
	       cached * n);
	printf("last: pid %u user %s cmd '%s' container '%s'\n", (unsigned)p.pid,
	       p.user, p.cmdline, p.container);
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	return 0;
}
