/* SPDX-License-Identifier: Apache-2.0 */
/* safefile.h - the link rule: the one way vramz opens a file it creates,
 * appends to, replaces, renames or removes (lib/safefile.c).  Every writer
 * of the tool (the log, its process and events files, rotation, report
 * -o, run --report, pick's locks, the generated docs) and of the library
 * (the daemon's lock and segments, the agent's request files) goes
 * through safefile_open(), so a file another user planted - a symbolic
 * link to a file of root's, a FIFO, a hard link - is refused in one place
 * with one reason, and never written through (docs/logging.md, "Where
 * vramz writes").
 *
 * The rule, the agent's (lib/rundir_open.c) applied to any file:
 * - the parents are walked one at a time, a link among them followed only
 *   when owned by root or the effective user; the last component is never
 *   followed (O_NOFOLLOW);
 * - the directory must be writable by nobody but its owner, or sticky (as
 *   /tmp); a directory others can write without the sticky bit is refused;
 * - in a sticky shared directory, or one owned by another user (not root),
 *   a new file is created with O_EXCL, and an existing one is used only
 *   when it is a regular file of the effective user's with one name;
 * - an existing file must be a regular file (a FIFO or a device is opened
 *   with O_NONBLOCK, so it is judged without blocking, then refused),
 *   except with SAFEFILE_ANY_KIND in a directory nobody else can write.
 * The library never prints: a refusal is a code and a one-line reason the
 * tool prints, "refusing to write PATH: WHY". */
#ifndef VRAMZ_SAFEFILE_H
#define VRAMZ_SAFEFILE_H

#include <stddef.h>

/* what safefile_open does: one of the first five, plus ANY_KIND */
enum {
	SAFEFILE_APPEND = 1 << 0,  /* O_RDWR|O_APPEND, created when absent */
	SAFEFILE_WRITE = 1 << 1,   /* O_RDWR, created when absent; what it holds is
				      kept (ftruncate to replace it) */
	SAFEFILE_TEMP = 1 << 2,    /* O_RDWR, always a new file (O_EXCL): our own
				      regular file at the name (a write that
				      died) is removed first, anything else
				      refused; to be renamed into place */
	SAFEFILE_LOCK = 1 << 3,    /* O_RDONLY, to be flock()ed: an existing
				      regular file is used whoever owns it
				      (nothing is written to it), else created */
	SAFEFILE_CHECK = 1 << 4,   /* judge only: 0 when the name may be written,
				      renamed or removed (absent, or a file the
				      rule allows); nothing opened or made */
	SAFEFILE_ANY_KIND = 1 << 5, /* a FIFO or character device the user named
				       (-o /dev/null, a pipe) is written as it
				       is, in a directory nobody else can write */
};

/* Opens path under the rule.  dirfd < 0: path's parents are walked from /
 * (or the working directory); else dirfd is path's directory, already
 * open (rundir_open()), and only path's last component is reached in it
 * (path then names it in err).  mode as open(2)'s (the umask applies).
 * Returns the descriptor (close-on-exec, O_NONBLOCK cleared), 0 for
 * SAFEFILE_CHECK, or: VRAMZ_EPERM refused by the rule (err: "refusing to
 * write PATH: WHY"), VRAMZ_ENOTFOUND a missing directory, VRAMZ_EINVAL an
 * empty name, VRAMZ_EIO another failure ("PATH: strerror"); err may be
 * NULL. */
int safefile_open(int dirfd, const char *path, unsigned how, unsigned mode, char *err,
		  size_t errlen);

#endif
