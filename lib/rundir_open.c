/* SPDX-License-Identifier: Apache-2.0 */
/* rundir_open.c - the one rule for trusting a runtime directory once
 * lib/rundir.c has named it (docs/daemon.md, "Trusting the runtime
 * directory"; python/vramz/_rundir.py implements the same rule and
 * tests/rundir-cases.txt holds the cases both are tested on).
 *
 * Why: a root process was given a directory inside a world-writable one,
 * another user replaced it by a symbolic link to a root-only directory,
 * and root's agent wrote there and its sweep deleted files it had not
 * written.  So the directory is opened once, by descriptor, never through
 * a link of someone else's, and judged by what the descriptor is: a
 * directory owned by the effective user or root (or, for a reader, the
 * user whose directory it is), writable by nobody else - unless it is
 * sticky (as /tmp), where others can add names but never replace or
 * remove ours, and only our own files are ever touched.  Every later
 * create, rename, unlink and stat is relative to that descriptor.
 *
 * The parents are walked one component at a time (O_PATH|O_NOFOLLOW): a
 * symbolic link among them is followed only when it is owned by root or
 * by the effective user (as /var/run -> /run is), since only then could
 * nobody else have planted it; the last component is never followed.
 */
#include "rundir.h"
#include "vramz/vramz.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40

int rundir_say(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int rundir_errno_rc(int e)
{
	return e == ENOENT ? VRAMZ_ENOTFOUND : e == EACCES || e == EPERM ? VRAMZ_EPERM : VRAMZ_EIO;
}

static int trusted_uid(uint32_t uid, uint32_t also_uid)
{
	return uid == 0 || uid == (uint32_t)geteuid() || (also_uid != RUNDIR_NO_UID && uid == also_uid);
}

int rundir_check(const char *path, const struct stat *st, uint32_t also_uid, int *shared,
		 char *err, size_t errlen)
{
	if (!S_ISDIR(st->st_mode))
		return rundir_say(err, errlen, VRAMZ_EINVAL, "%s: not a directory", path);
	if (!trusted_uid((uint32_t)st->st_uid, also_uid))
		return rundir_say(err, errlen, VRAMZ_EPERM,
			   "%s: not trusted: owned by uid %u, neither root nor you", path,
			   (unsigned)st->st_uid);
	int sh = 0;
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		if (!(st->st_mode & S_ISVTX))
			return rundir_say(err, errlen, VRAMZ_EPERM,
				   "%s: not trusted: writable by %s and not sticky", path,
				   st->st_mode & S_IWOTH ? "everyone" : "its group");
		sh = 1; /* others add names, never replace ours */
	}
	if (shared)
		*shared = sh;
	return 0;
}

/* The next component of *p (skipping slashes) into comp; 0 at the end. */
static int next_comp(const char **p, char *comp, size_t len)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	size_t n = strcspn(s, "/");
	if (!n)
		return 0;
	if (n >= len)
		n = len - 1; /* longer than NAME_MAX: openat says ENAMETOOLONG */
	memcpy(comp, s, n);
	comp[n] = 0;
	*p = s + strcspn(s, "/");
	return 1;
}

static int is_last(const char *p)
{
	while (*p == '/')
		p++;
	return !*p;
}

int rundir_walk(const char *path, int *pfd, char *last, size_t lastlen, char *err,
			size_t errlen)
{
	char rest[2 * PATH_MAX], comp[NAME_MAX + 2];
	if (snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest)
		return rundir_say(err, errlen, VRAMZ_ERANGE, "%.80s...: path too long", path);
	int cur = open(rest[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return rundir_say(err, errlen, VRAMZ_EIO, "%s: %s", path, strerror(errno));
	const char *p = rest;
	unsigned links = 0;
	snprintf(last, lastlen, ".");
	while (next_comp(&p, comp, sizeof comp)) {
		if (is_last(p)) {
			snprintf(last, lastlen, "%s", comp);
			break;
		}
		if (!strcmp(comp, "."))
			continue;
		int nfd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (nfd >= 0) {
			close(cur);
			cur = nfd;
			continue;
		}
		int e = errno;
		struct stat st;
		if ((e != ENOTDIR && e != ELOOP) || fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISLNK(st.st_mode)) {
			close(cur);
			return rundir_say(err, errlen, e == ENOTDIR ? VRAMZ_EINVAL : rundir_errno_rc(e),
				   "%s: %s: %s", path, comp, strerror(e));
		}
		if (!trusted_uid((uint32_t)st.st_uid, RUNDIR_NO_UID)) {
			close(cur);
			return rundir_say(err, errlen, VRAMZ_EPERM,
				   "%s: not trusted: its parent %s is a symbolic link owned by uid %u, not followed",
				   path, comp, (unsigned)st.st_uid);
		}
		char target[PATH_MAX];
		ssize_t n = readlinkat(cur, comp, target, sizeof target - 1);
		if (n <= 0 || ++links > MAX_LINKS) {
			close(cur);
			return rundir_say(err, errlen, VRAMZ_EIO, "%s: %s: %s", path, comp,
				   n <= 0 ? strerror(errno) : strerror(ELOOP));
		}
		target[n] = 0;
		/* the link's target, then what was left after it */
		char tail[2 * PATH_MAX];
		if (snprintf(tail, sizeof tail, "%s/%s", target, p) >= (int)sizeof tail) {
			close(cur);
			return rundir_say(err, errlen, VRAMZ_ERANGE, "%s: path too long", path);
		}
		memcpy(rest, tail, sizeof rest);
		p = rest;
		if (target[0] == '/') {
			close(cur);
			if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
				return rundir_say(err, errlen, VRAMZ_EIO, "/: %s", strerror(errno));
		}
	}
	*pfd = cur;
	return 0;
}

int rundir_open(const char *path, unsigned create_mode, uint32_t also_uid, struct rundir *out,
		char *err, size_t errlen)
{
	out->fd = -1;
	out->shared = 0;
	if (!path || !*path)
		return rundir_say(err, errlen, VRAMZ_EINVAL, "empty runtime directory name");
	char last[NAME_MAX + 2];
	int pfd, rc = rundir_walk(path, &pfd, last, sizeof last, err, errlen);
	if (rc)
		return rc;
	int fd = openat(pfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create_mode) {
		if (mkdirat(pfd, last, create_mode) && errno != EEXIST) {
			rc = rundir_say(err, errlen, rundir_errno_rc(errno), "cannot create %s: %s", path, strerror(errno));
			close(pfd);
			return rc;
		}
		fd = openat(pfd, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	int e = errno;
	struct stat st;
	if (fd < 0) {
		if ((e == ENOTDIR || e == ELOOP) && !fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			rc = rundir_say(err, errlen, VRAMZ_EPERM,
				 "%s: not trusted: a symbolic link, not followed", path);
		else
			rc = rundir_say(err, errlen, e == ENOTDIR ? VRAMZ_EINVAL : rundir_errno_rc(e), "%s: %s", path,
				 e == ENOTDIR ? "not a directory" : strerror(e));
		close(pfd);
		return rc;
	}
	close(pfd);
	if (fstat(fd, &st)) {
		rc = rundir_say(err, errlen, VRAMZ_EIO, "%s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if ((rc = rundir_check(path, &st, also_uid, &out->shared, err, errlen))) {
		close(fd);
		return rc;
	}
	out->fd = fd;
	out->uid = (uint32_t)st.st_uid;
	return 0;
}

void rundir_close(struct rundir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int rundir_split(const char *path, char *dir, size_t dirlen, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
	if (n >= dirlen)
		return VRAMZ_ERANGE;
	if (!n)
		snprintf(dir, dirlen, ".");
	else
		snprintf(dir, dirlen, "%.*s", (int)n, path);
	return **name ? 0 : VRAMZ_EINVAL;
}

int rundir_own_file(int dirfd, const char *name, struct stat *st)
{
	struct stat s;
	if (!st)
		st = &s;
	return !fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st->st_mode) &&
	       st->st_uid == geteuid();
}

int rundir_unlink_own(int dirfd, const char *name)
{
	if (!rundir_own_file(dirfd, name, NULL))
		return VRAMZ_EPERM;
	return unlinkat(dirfd, name, 0) ? rundir_errno_rc(errno) : 0;
}

const char *rundir_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory"
	       : S_ISSOCK(m) ? "a socket" : S_ISREG(m) ? "a file"
	       : S_ISCHR(m) ? "a character device" : "a block device";
}
