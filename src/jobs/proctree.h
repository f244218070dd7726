/* SPDX-License-Identifier: Apache-2.0 */
/* proctree.h - is this pid part of the command vramz started?  Membership
 * of a command's whole process tree (children of children), decided by
 * walking the ppid chain in /proc and cached per (pid, start time).
 *
 * `vramz run` makes itself a child subreaper, so a descendant whose parent
 * exits is re-parented to vramz instead of init and stays in the tree.
 */
#ifndef VRAMZ_PROCTREE_H
#define VRAMZ_PROCTREE_H

#include <stddef.h>

struct proctree;

/* root: the /proc to read ("/proc"; tests pass a fake tree).  top: the pid
 * whose descendants are members (vramz itself for `run`; top is not a
 * member).  NULL on out of memory. */
struct proctree *proctree_new(const char *root, unsigned top);
void proctree_free(struct proctree *t);

/* 1 when pid descends from top, 0 when not, negative VRAMZ_E* when pid
 * cannot be read (gone, or not visible from this /proc).  A cached answer
 * costs one read of /proc/PID/stat (the start time that tells a reused pid
 * from the one cached); a new pid walks its ancestors until one is cached. */
int proctree_member(struct proctree *t, unsigned pid);

/* Every live descendant of top, by a full scan of /proc, into pids (at
 * most cap); returns how many there are (may exceed cap) or a negative
 * code.  For end-of-run reports ("3 processes still running"). */
int proctree_list(struct proctree *t, unsigned *pids, size_t cap);

/* Counters for the bench and for `run --json`: stat reads done. */
unsigned long proctree_reads(const struct proctree *t);

/* Parses "/proc/PID/stat" text: ppid (field 4) and start time (field 22).
 * Exposed for tests.  0 or -1 on malformed text. */
int proctree_parse_stat(const char *text, unsigned *ppid,
			unsigned long long *start_ticks);

#endif
