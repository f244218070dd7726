/* SPDX-License-Identifier: Apache-2.0 */
/* par.c - see par.h.  Threads, not a pool: this runs at open and on the
 * first sample, a handful of times per process, so creating threads
 * (tens of microseconds) is noise against the millisecond waits it hides. */
#include "par.h"

#include <pthread.h>
#include <stdlib.h>

struct job {
	void (*fn)(void *arg, unsigned i);
	void *arg;
	unsigned i;
};

static void *run(void *p)
{
	struct job *j = p;
	j->fn(j->arg, j->i);
	return NULL;
}

void par_for(unsigned n, void (*fn)(void *arg, unsigned i), void *arg)
{
	if (n <= 1) {
		if (n)
			fn(arg, 0);
		return;
	}
	struct job *jobs = calloc(n, sizeof *jobs);
	pthread_t *tids = calloc(n, sizeof *tids);
	unsigned char *started = calloc(n, 1);
	if (!jobs || !tids || !started) {
		for (unsigned i = 0; i < n; i++)
			fn(arg, i);
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		jobs[i] = (struct job){fn, arg, i};
		started[i] = pthread_create(&tids[i], NULL, run, &jobs[i]) == 0;
		if (!started[i])
			fn(arg, i);
	}
	for (unsigned i = 0; i < n; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
out:
	free(jobs);
	free(tids);
	free(started);
}
