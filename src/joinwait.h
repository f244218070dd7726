/* SPDX-License-Identifier: Apache-2.0 */
/* joinwait.h - stopping a thread without waiting on the driver: join it
 * for at most a few milliseconds, else detach it, so a command's exit
 * (q in top, serve --once) is not held up by a thread inside a slow
 * library call (a tick of 100,000 processes, NVML's 1 s event wait).
 * The caller decides what the thread frees once it is detached. */
#ifndef VRAMZ_JOINWAIT_H
#define VRAMZ_JOINWAIT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* 0 when t ended within ms milliseconds (joined); -1 when it is still
 * running (then detached). */
static inline int join_within_ms(pthread_t t, int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	if (pthread_timedjoin_np(t, NULL, &ts) == 0)
		return 0;
	pthread_detach(t);
	return -1;
}

#endif
