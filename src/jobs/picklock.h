/* SPDX-License-Identifier: Apache-2.0 */
/* picklock.h - pick --lock's advisory GPU reservations (see picklock.c). */
#ifndef VRAMZ_PICKLOCK_H
#define VRAMZ_PICKLOCK_H

#include <stdint.h>

struct picklock {
	int fd; /* the held flock on DIR/pick.lock; -1 none */
};

/* Serialises picks: waits for the lock.  0, or the exit code after one line. */
int picklock_acquire(struct picklock *pl);
/* 1 when another pick's reservation of the GPU still holds. */
int picklock_reserved(const struct picklock *pl, const char *uuid);
/* Reserves the GPU for the calling job (vramz's parent) for hold_ms. */
int picklock_reserve(const struct picklock *pl, const char *uuid, int64_t hold_ms);
void picklock_release(struct picklock *pl);

#endif
