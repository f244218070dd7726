/* SPDX-License-Identifier: Apache-2.0 */
/* proctree.c - N real processes for bench/bench_top_tree.sh, each with a
 * parent of its own that no GPU list names: the shape that made top's tree
 * view (`t`) cubic in processes (issue 35, item 9).  Fake pids, as
 * bench_top_100k.sh lists, have no /proc entry and so no parent at all;
 * these are real, so top reads each one's parent, command and state.
 *
 *   proctree N      prints the N leaf pids, one a line, then holds them
 *                   until its stdin closes, and kills them all (its own
 *                   process group) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

static char *args;     /* argv's strings, one block: /proc/PID/cmdline */
static size_t args_len;

/* pauses for ever as NAME: its command and its command line, which top
 * shows, so the leaves and their parents tell apart on its screen */
static void hold(const char *name)
{
	memset(args, 0, args_len);
	strncpy(args, name, args_len - 1);
	prctl(PR_SET_NAME, name);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
	int fd[2];

	args = argv[0];
	args_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	if (n <= 0) {
		fprintf(stderr, "usage: proctree N\n");
		return 2;
	}
	/* one group, so that one kill takes down every process made here */
	setpgid(0, 0);
	if (pipe(fd) < 0) {
		perror("proctree: pipe");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		pid_t mid = fork(), leaf;

		if (mid < 0) {
			fprintf(stderr, "proctree: fork after %ld of %ld: %s\n", i, n, strerror(errno));
			kill(0, SIGKILL);
			return 1;
		}
		if (mid == 0) {
			leaf = fork();
			if (leaf == 0)
				hold("gpujob");
			/* the leaf's pid, or -1: 4 bytes, one atomic pipe write */
			if (write(fd[1], &leaf, sizeof leaf) != sizeof leaf)
				_exit(1);
			if (leaf < 0)
				_exit(1);
			hold("launcher");
		}
		/* read as it comes, so the pipe never fills */
		if (read(fd[0], &leaf, sizeof leaf) != sizeof leaf || leaf < 0) {
			fprintf(stderr, "proctree: no leaf after %ld of %ld\n", i, n);
			kill(0, SIGKILL);
			return 1;
		}
		printf("%d\n", (int)leaf);
	}
	fflush(stdout);
	while (getchar() != EOF)
		;
	kill(0, SIGKILL);
	return 0;
}
