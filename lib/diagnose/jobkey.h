/* SPDX-License-Identifier: Apache-2.0 */
/* jobkey.h - which job a GPU process belongs to (jobkey.c): the engine
 * asks it while feeding; a leaf of lib/diagnose's graph. */
#ifndef VRAMZ_DIAG_JOBKEY_H
#define VRAMZ_DIAG_JOBKEY_H

#include <stddef.h>

#include "vramz/diagnose.h"

struct jobkey_cache;
/* proc_root: the /proc to read environments and parents from; NULL for a
 * log's processes (no reading). NULL on out of memory. */
struct jobkey_cache *jobkey_new(const char *proc_root);
void jobkey_free(struct jobkey_cache *c);
/* The job key of s ("" none), cached per (pid, start time, ppid); snap:
 * the snapshot s is in, where a log's parents are looked up. */
int jobkey_get(struct jobkey_cache *c, const vramz_snapshot *snap, const vramz_proc_sample *s,
	       char *out, size_t len);
/* Uncached (tests). */
void jobkey_compute(struct jobkey_cache *c, const vramz_snapshot *snap,
		    const vramz_proc_sample *s, char *out, size_t len);
/* once per fed snapshot: ages the cache */
void jobkey_tick(struct jobkey_cache *c);
unsigned jobkey_env_reads(const struct jobkey_cache *c);
/* Pure: the key an environment block (NUL-separated) gives, into out ("" none);
 * returns 1 when it names a rank (RANK, LOCAL_RANK, ...). */
int jobkey_from_environ(const char *env, size_t n, char *out, size_t len);
/* 1 launcher, -1 shell / init / server (its children are separate jobs), 0 other */
int jobkey_parent_kind(const char *comm);

#endif
