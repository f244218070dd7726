/* SPDX-License-Identifier: Apache-2.0 */
/* safefile.c - the link rule (safefile.h): every file vramz creates,
 * appends to, replaces, renames or removes is reached through
 * safefile_open(), so no writer can forget O_NOFOLLOW or write into a
 * directory another user can swap names in.
 *
 * Why: `vramz log -o DIR/gpu.csv --procs`, run as root, opened its three
 * files with O_CREAT and no O_NOFOLLOW; another user's symbolic link at
 * gpu.events.csv in a directory that user could write made root create
 * the link's target and fill it with rows carrying text that user
 * controlled.  The agent's runtime directory had met that attack already
 * (lib/rundir_open.c), so this is its rule applied to any file: the same
 * walk of the parents (rundir_walk), the same judgement of the directory
 * (rundir_check, here with the directory's own owner trusted: root may
 * write in a user's directory, but only to its own files there).
 *
 * An existing name is judged by lstat before it is opened (a device node
 * is never opened, whatever opening it would do), then opened with
 * O_NOFOLLOW|O_NONBLOCK (a FIFO swapped in meanwhile cannot block) and
 * judged again by fstat, the same inode.  A missing name is created with
 * O_EXCL, so what was created is ours, never something that appeared at
 * the name in between.
 */
#include "safefile.h"
#include "rundir.h"
#include "vramz/vramz.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* open_existing's "no such name (any more)": no code or descriptor */
#define GONE INT_MIN

/* the directory a name is in, as the rule sees it */
struct place {
	const char *path, *dir; /* the whole path and its directory, for reasons */
	int strict;             /* others can add names (sticky) or it is another
				   user's: only our own files, new ones O_EXCL */
	int shared;             /* strict because others can write it */
	unsigned owner;         /* its owner */
};

/* Why an existing name at place may not be used (NULL: it may), in buf. */
static const char *judge(const struct place *pl, const struct stat *st, unsigned how, char *buf,
			 size_t len)
{
	if (S_ISLNK(st->st_mode)) {
		snprintf(buf, len, "a symbolic link (owned by uid %u), not followed",
			 (unsigned)st->st_uid);
		return buf;
	}
	if (!S_ISREG(st->st_mode)) {
		if ((how & SAFEFILE_ANY_KIND) && !pl->strict &&
		    (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode)))
			return NULL; /* the user's own plumbing: nobody else could put it there */
		snprintf(buf, len, "%s, not a regular file", rundir_kind(st->st_mode));
		return buf;
	}
	if (!pl->strict || (how & SAFEFILE_LOCK))
		return NULL;
	char where[PATH_MAX + 64];
	if (pl->shared)
		snprintf(where, sizeof where, "in %s, which other users can write", pl->dir);
	else
		snprintf(where, sizeof where, "in %s, which uid %u owns", pl->dir, pl->owner);
	if (st->st_uid != geteuid())
		snprintf(buf, len, "owned by uid %u, not you, %s", (unsigned)st->st_uid, where);
	else if (st->st_nlink > 1)
		snprintf(buf, len, "a file with %lu hard links, %s", (unsigned long)st->st_nlink, where);
	else
		return NULL;
	return buf;
}

/* Judges the directory pfd: 0, or the refusal. */
static int judge_dir(int pfd, struct place *pl, char *err, size_t errlen)
{
	struct stat ds;
	if (fstat(pfd, &ds))
		return rundir_say(err, errlen, VRAMZ_EIO, "%s: %s", pl->dir, strerror(errno));
	if (!S_ISDIR(ds.st_mode))
		return rundir_say(err, errlen, VRAMZ_EINVAL, "%s: not a directory", pl->dir);
	/* the agent's judgement, with the directory's owner trusted: that
	 * user could write there anyway, and is held to our own files below */
	if (rundir_check(pl->dir, &ds, (uint32_t)ds.st_uid, &pl->shared, NULL, 0))
		return rundir_say(err, errlen, VRAMZ_EPERM,
			   "refusing to write %s: in %s, which %s can write and is not sticky",
			   pl->path, pl->dir,
			   ds.st_mode & S_IWOTH ? "other users" : "its group's members");
	pl->owner = (unsigned)ds.st_uid;
	pl->strict = pl->shared || (ds.st_uid != geteuid() && ds.st_uid != 0);
	return 0;
}

/* Opens the existing name after judging it; GONE when it is gone. */
static int open_existing(int pfd, const char *name, const struct place *pl, unsigned how, int flags,
			 char *err, size_t errlen)
{
	struct stat before, st;
	char why[PATH_MAX + 128];
	if (fstatat(pfd, name, &before, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? GONE
				       : rundir_say(err, errlen, rundir_errno_rc(errno), "%s: %s", pl->path,
					     strerror(errno));
	if (judge(pl, &before, how, why, sizeof why))
		return rundir_say(err, errlen, VRAMZ_EPERM, "refusing to write %s: %s", pl->path, why);
	if (how & SAFEFILE_CHECK)
		return 0;
	int fd = openat(pfd, name, flags);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return GONE;
		if (e == ELOOP) /* swapped for a link since the lstat */
			return rundir_say(err, errlen, VRAMZ_EPERM,
				   "refusing to write %s: a symbolic link, not followed", pl->path);
		return rundir_say(err, errlen, rundir_errno_rc(e), "%s: %s", pl->path, strerror(e));
	}
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return rundir_say(err, errlen, VRAMZ_EIO, "%s: %s", pl->path, strerror(e));
	}
	const char *bad = judge(pl, &st, how, why, sizeof why);
	if (!bad && (st.st_dev != before.st_dev || st.st_ino != before.st_ino))
		bad = "replaced while it was opened";
	if (bad) {
		close(fd);
		return rundir_say(err, errlen, VRAMZ_EPERM, "refusing to write %s: %s", pl->path, bad);
	}
	return fd;
}

/* The name at pl, judged and opened or made; pfd is its directory. */
static int open_in(int pfd, const char *name, struct place *pl, unsigned how, unsigned mode,
		   char *err, size_t errlen)
{
	int rc = judge_dir(pfd, pl, err, errlen);
	if (rc)
		return rc;
	int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
		    (how & SAFEFILE_LOCK ? O_RDONLY : O_RDWR) | (how & SAFEFILE_APPEND ? O_APPEND : 0);
	for (int again = 0; again < 3; again++) {
		int fd = GONE;
		if (!(how & SAFEFILE_TEMP))
			fd = open_existing(pfd, name, pl, how, flags, err, errlen);
		if (fd == GONE && (how & SAFEFILE_CHECK))
			return 0; /* absent: the directory allows it */
		if (fd == GONE)
			fd = openat(pfd, name, flags | O_CREAT | O_EXCL, mode);
		else if (fd < 0 || (how & SAFEFILE_CHECK))
			return fd;
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
			return fd;
		}
		int e = errno;
		if (e != EEXIST)
			return rundir_say(err, errlen, rundir_errno_rc(e), "%s: %s", pl->path, strerror(e));
		if (!(how & SAFEFILE_TEMP))
			continue; /* made meanwhile: judged as an existing name */
		struct stat st;
		if (!rundir_own_file(pfd, name, &st)) {
			if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW))
				continue; /* gone meanwhile */
			return rundir_say(err, errlen, VRAMZ_EPERM,
				   "refusing to write %s: %s owned by uid %u is at this temporary name",
				   pl->path, rundir_kind(st.st_mode), (unsigned)st.st_uid);
		}
		/* ours, left by a write that died: in a private directory nobody
		 * else could have made it, in a sticky one nobody else can swap it */
		if (unlinkat(pfd, name, 0) && errno != ENOENT)
			return rundir_say(err, errlen, rundir_errno_rc(errno), "%s: %s", pl->path, strerror(errno));
	}
	return rundir_say(err, errlen, VRAMZ_EIO, "%s: changed again and again while it was opened",
		   pl->path);
}

int safefile_open(int dirfd, const char *path, unsigned how, unsigned mode, char *err,
		  size_t errlen)
{
	char dir[PATH_MAX], last[NAME_MAX + 2];
	const char *name;
	if (!path || rundir_split(path, dir, sizeof dir, &name))
		return rundir_say(err, errlen, VRAMZ_EINVAL, "%s: not a file name", path ? path : "(none)");
	struct place pl = {.path = path, .dir = dir};
	if (dirfd >= 0)
		return open_in(dirfd, name, &pl, how, mode, err, errlen);
	int pfd, rc = rundir_walk(path, &pfd, last, sizeof last, err, errlen);
	if (rc)
		return rc;
	rc = open_in(pfd, last, &pl, how, mode, err, errlen);
	close(pfd);
	return rc;
}
