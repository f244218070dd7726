/* SPDX-License-Identifier: Apache-2.0 */
/* safekill.c - the only place vramz sends signals to processes it did not
 * start.  `vramz kill` lists GPU processes, shows them to a person, and
 * acts seconds later; by then a listed pid may belong to someone else.
 * Every refusal is decided here, from /proc, at the moment of signalling:
 *
 *   - the pid's start time must still be the one listed (a reused pid is a
 *     different process that happens to wear the same number);
 *   - never vramz itself, pid 1, or vramz's own ancestors (killing the
 *     shell that ran vramz would end the user's session);
 *   - another user's process only when the invoker is root, so a
 *     privileged helper that runs vramz for a user cannot be turned on
 *     other users' jobs by accident.
 *
 * The signal goes through a pidfd opened *before* the final check: a pidfd
 * names one process for its whole life, so if the start time checked after
 * opening it matches, the signal cannot reach a newcomer that reused the
 * pid.  Kernels before 5.3 lack pidfds; there kill(2) right after the check
 * is the best available, and the window is microseconds.
 */
#include "jobs/safekill.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "proc.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

const char *safekill_reason(enum safekill_verdict v)
{
	switch (v) {
	case SK_OK: return "ok";
	case SK_GONE: return "no such process";
	case SK_REUSED: return "pid reused by another process since it was listed";
	case SK_SELF: return "that is vramz itself";
	case SK_INIT: return "pid 1 (init) is never signalled";
	case SK_ANCESTOR: return "that is vramz's parent or an ancestor (your shell)";
	case SK_OTHER_USER: return "another user's process (only root may signal it)";
	case SK_NAMESPACE:
		return "not visible here: vramz runs in another PID namespace than the driver "
		       "(run it in the host's, e.g. docker run --pid=host)";
	case SK_KTHREAD: return "a kernel thread is never signalled";
	case SK_BADPID: return "not a process id (0 and negative pids name process groups)";
	}
	return "?";
}

/* Real uid (first field of Uid:) and ppid of pid from /proc/PID/status. */
static int sk_status(const char *root, pid_t pid, uid_t *uid, pid_t *ppid)
{
	char path[300], buf[4096];
	snprintf(path, sizeof path, "%s/%d/status", root, (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	int have = 0;
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!strncmp(line, "Uid:", 4)) {
			*uid = (uid_t)strtoul(line + 4, NULL, 10);
			have |= 1;
		} else if (!strncmp(line, "PPid:", 5)) {
			*ppid = (pid_t)strtol(line + 5, NULL, 10);
			have |= 2;
		}
	}
	return have == 3 ? 0 : -1;
}

/* Is pid vramz's parent or further up its chain? */
static int sk_is_ancestor(const char *root, pid_t pid)
{
	pid_t cur = getppid();
	for (int depth = 0; depth < 1024 && cur > 1; depth++) {
		if (cur == pid)
			return 1;
		uid_t uid;
		pid_t up;
		if (sk_status(root, cur, &uid, &up))
			return 0;
		cur = up;
	}
	return 0;
}

enum safekill_verdict safekill_check(const char *root,
				     const struct safekill_target *target,
				     uid_t invoker_uid)
{
	pid_t pid = target->pid;
	if (pid <= 0)
		return SK_BADPID;
	if (pid == 1)
		return SK_INIT;
	/* NVML names pids as the initial PID namespace numbers them: a pid
	 * read or signalled from any other namespace is another process */
	if (!proc_self_is_host() || !proc_root_is_host(root))
		return SK_NAMESPACE;
	if (pid == getpid())
		return SK_SELF;
	if (sk_is_ancestor(root, pid))
		return SK_ANCESTOR;
	uid_t uid;
	pid_t ppid;
	struct proc_stat_fields stf = { .start_ticks = 0 };
	if (proc_stat_read(root, (unsigned)pid, &stf) || !stf.start_ticks ||
	    sk_status(root, pid, &uid, &ppid))
		return SK_GONE;
	if (stf.start_ticks != target->start_ticks)
		return SK_REUSED;
	if (stf.flags & PROC_PF_KTHREAD)
		return SK_KTHREAD;
	if (invoker_uid != 0 && uid != invoker_uid)
		return SK_OTHER_USER;
	return SK_OK;
}

enum safekill_verdict safekill_signal(const char *root,
				      const struct safekill_target *target,
				      uid_t invoker_uid, int sig, int *pidfd)
{
	*pidfd = -1;
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)target->pid, 0);
	if (fd < 0 && errno == ESRCH)
		return SK_GONE;
	/* the check after the open: it vouches for the process behind fd */
	enum safekill_verdict v = safekill_check(root, target, invoker_uid);
	if (v != SK_OK) {
		if (fd >= 0)
			close(fd);
		return v;
	}
	int rc = fd >= 0 ? (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0)
			 : kill(target->pid, sig);
	if (rc < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return e == EPERM ? SK_OTHER_USER : SK_GONE;
	}
	*pidfd = fd;
	return SK_OK;
}

int safekill_resend(int pidfd, int sig)
{
	if (pidfd < 0)
		return -1;
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int safekill_wait(int pidfd, long timeout_ms)
{
	if (pidfd < 0)
		return 0;
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int64_t t0_ms = clock_mono_ms();
	for (;;) {
		long spent = (long)(clock_mono_ms() - t0_ms);
		long left = timeout_ms - spent;
		if (left < 0)
			left = 0;
		int rc = poll(&p, 1, (int)(left > 0x7fffffff ? 0x7fffffff : left));
		if (rc > 0)
			return 1; /* readable: the process has exited */
		if (rc == 0)
			return 0;
		if (errno != EINTR)
			return 0;
	}
}
