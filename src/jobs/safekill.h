/* SPDX-License-Identifier: Apache-2.0 */
/* safekill.h - signalling a process named by pid without ever hitting the
 * wrong one: the refusals `vramz kill` makes, and a signal path that
 * cannot race with pid reuse. */
#ifndef VRAMZ_SAFEKILL_H
#define VRAMZ_SAFEKILL_H

#include <sys/types.h>

enum safekill_verdict {
	SK_OK = 0,
	SK_GONE,        /* no such process (any more) */
	SK_REUSED,      /* the pid now names another process (start time) */
	SK_SELF,        /* vramz itself */
	SK_INIT,        /* pid 1 */
	SK_ANCESTOR,    /* vramz's parent (the shell) or one of its ancestors */
	SK_OTHER_USER,  /* another user's process, and the invoker is not root */
	SK_NAMESPACE,   /* vramz or its /proc is not in the driver's PID namespace */
	SK_KTHREAD,     /* a kernel thread */
	SK_BADPID,      /* 0 or negative: a process group, never one process */
};

/* A short reason for a verdict: "another user's process (uid 65534)". */
const char *safekill_reason(enum safekill_verdict v);

/* What was listed about a process, to hold it to later. */
struct safekill_target {
	pid_t pid;
	unsigned long long start_ticks; /* /proc/PID/stat field 22 when listed */
};

/* Decides whether target may be signalled by a user whose real uid is
 * invoker_uid (0: root may signal anyone).  root is the /proc to read. */
enum safekill_verdict safekill_check(const char *root,
				     const struct safekill_target *target,
				     uid_t invoker_uid);

/* Checks again and sends sig through a pidfd opened before the check, so
 * the process checked is the process signalled even if the pid is reused
 * in between.  On success *pidfd holds the fd (to wait on with
 * safekill_wait; the caller closes it).  Returns the verdict, or SK_GONE
 * when the process ended meanwhile. */
enum safekill_verdict safekill_signal(const char *root,
				      const struct safekill_target *target,
				      uid_t invoker_uid, int sig, int *pidfd);

/* Waits up to timeout_ms for the process behind pidfd to end; 1 when it
 * has ended (or is a zombie), 0 on timeout. */
int safekill_wait(int pidfd, long timeout_ms);

/* The same signal again through the same pidfd (SIGKILL after a timeout). */
int safekill_resend(int pidfd, int sig);

#endif
