/* SPDX-License-Identifier: Apache-2.0 */
/* picklock.c - `vramz pick --lock`: an advisory reservation so two jobs
 * picking at the same moment do not both take the freest GPU.
 *
 * A GPU picked by one job shows no sign of it until that job allocates
 * memory, seconds later; a second pick in between would choose it again.
 * So a pick with --lock serialises on an flock() of DIR/pick.lock, skips
 * GPUs another pick reserved, and reserves what it chose: a file
 * DIR/gpu-UUID holding "PID EXPIRES_MS", PID being the process that ran
 * vramz (the job's shell).  A reservation ends when it expires (--lock-for,
 * default 2 minutes: time for the job to allocate) or when that process is
 * gone.  DIR is $VRAMZ_LOCK_DIR, else /tmp/vramz-locks (mode 1777 as /tmp,
 * so every user's picks see each other's).  Advisory: only picks with
 * --lock honour it.
 *
 * Every file here is reached by the link rule (safefile.h): a shared
 * directory is one where another user may have planted a link or a FIFO
 * at any of these names.  The lock file is opened read-only (a flock
 * needs no more), so one made by another user serves everyone; the
 * reservations are written under a temporary name of ours and renamed
 * over a name that must be absent or ours.
 */
#include "jobs/picklock.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "safefile.h"

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *lock_dir(void)
{
	const char *d = getenv("VRAMZ_LOCK_DIR");
	return d && *d ? d : "/tmp/vramz-locks";
}

int picklock_acquire(struct picklock *pl)
{
	char path[4096];
	const char *dir = lock_dir();
	char err[4200];
	if (mkdir(dir, 01777) == 0) {
		/* past the umask: every user's picks share it; by descriptor, as
		 * the name could be another's link by now */
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd >= 0) {
			fchmod(dfd, 01777);
			close(dfd);
		}
	} else if (errno != EEXIST) {
		cli_err("pick: --lock: %s: %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	snprintf(path, sizeof path, "%s/pick.lock", dir);
	pl->fd = safefile_open(-1, path, SAFEFILE_LOCK, 0644, err, sizeof err);
	if (pl->fd < 0) {
		cli_err("pick: --lock: %s", err);
		pl->fd = -1;
		return EXIT_FAIL;
	}
	while (flock(pl->fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			cli_err("pick: --lock: %s: %s", path, strerror(errno));
			close(pl->fd);
			pl->fd = -1;
			return EXIT_FAIL;
		}
	return 0;
}

int picklock_reserved(const struct picklock *pl, const char *uuid)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/gpu-%s", lock_dir(), uuid);
	/* never through a link, never blocked by a FIFO at the name */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	long long pid = 0, expires = 0;
	int n = fscanf(f, "%lld %lld", &pid, &expires);
	fclose(f);
	if (n != 2 || expires <= now_ms())
		return 0;
	/* the job that reserved it is gone: so is the reservation */
	if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	(void)pl;
	return 1;
}

int picklock_reserve(const struct picklock *pl, const char *uuid, int64_t hold_ms)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/gpu-%s", lock_dir(), uuid);
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	char err[8400];
	int fd = safefile_open(-1, tmp, SAFEFILE_TEMP, 0644, err, sizeof err);
	if (fd < 0) {
		cli_err("pick: --lock: %s", err);
		return EXIT_FAIL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f)
		close(fd);
	if (!f || fprintf(f, "%ld %lld\n", (long)getppid(), (long long)(now_ms() + hold_ms)) < 0 ||
	    fclose(f)) {
		cli_err("pick: --lock: %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return EXIT_FAIL;
	}
	/* the reservation replaced must be none or ours (an expired one) */
	int rc = safefile_open(-1, path, SAFEFILE_CHECK, 0, err, sizeof err);
	if (!rc && rename(tmp, path)) {
		snprintf(err, sizeof err, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	if (rc) {
		cli_err("pick: --lock: %s", err);
		unlink(tmp);
		return EXIT_FAIL;
	}
	(void)pl;
	return 0;
}

void picklock_release(struct picklock *pl)
{
	if (pl->fd >= 0)
		close(pl->fd); /* drops the flock */
	pl->fd = -1;
}
