/* SPDX-License-Identifier: Apache-2.0 */
/* peakrss.c - peak RSS of one command, as the kernel counts it for that
 * command alone.
 *
 *   peakrss N CMD ARGS...   runs CMD N times; prints the median peak RSS in KiB
 *
 * Why not wait4() from Python (bench/oneshot.py did): posix_spawn is a
 * vfork, and exec records the old address space's high-water mark into
 * the child's peak, so every child "peaked" at Python's own 16 MiB, /bin/true
 * included.  Here the parent is this small C program and the child calls
 * exec at once, so the baseline is this program's footprint (about 1 MiB;
 * print /bin/true's beside a figure to show it).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peakrss N CMD [ARGS...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	if (n < 1 || n > 1000) {
		fprintf(stderr, "peakrss: N must be 1-1000, not '%s'\n", argv[1]);
		return 2;
	}
	long *kib = calloc((size_t)n, sizeof *kib);
	if (!kib)
		return 1;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("peakrss: fork");
			return 1;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 1);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		int st;
		struct rusage ru;
		if (wait4(pid, &st, 0, &ru) < 0) {
			perror("peakrss: wait4");
			return 1;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
			fprintf(stderr, "peakrss: %s did not run to its end\n", argv[2]);
			return 1;
		}
		kib[i] = ru.ru_maxrss;
	}
	qsort(kib, (size_t)n, sizeof *kib, cmp);
	printf("%ld\n", kib[n / 2]);
	free(kib);
	return 0;
}
