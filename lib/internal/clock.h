/* SPDX-License-Identifier: Apache-2.0 */
/* clock.h - the two clocks vramz reads, as plain integers: monotonic time
 * for intervals and deadlines (never jumps when the wall clock is set),
 * and real time for what is recorded or handed to NVML.  Internal to the
 * library and the tool; one definition so every caller counts the same way. */
#ifndef VRAMZ_CLOCK_H
#define VRAMZ_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t clock_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t clock_real_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t clock_real_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
