/* SPDX-License-Identifier: Apache-2.0 */
/* wakefloor.c - the floor under a reader's frame: a process that only
 * wakes once a second (poll on nothing, at the top of each second, like
 * `vramz top -i 1s`) and writes BYTES to stdout each time (0: nothing).
 * tests/gpu/daemon_check.sh runs ten of them in tmux, as it runs ten
 * `top`s, so what ten readers cost can be set beside what ten bare
 * wake-ups cost on the same machine in the same run.
 *   wakefloor [BYTES]
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	if (argc > 2 || n < 0 || n > (long)sizeof buf) {
		fprintf(stderr, "usage: wakefloor [BYTES <= %zu]\n", sizeof buf);
		return 2;
	}
	memset(buf, 'x', sizeof buf);
	buf[0] = '\r';
	for (;;) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		poll(NULL, 0, 1000 - (int)(ts.tv_nsec / 1000000));
		if (n && write(STDOUT_FILENO, buf, (size_t)n) < 0)
			return 1;
	}
}
