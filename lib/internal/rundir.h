/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.h - the runtime directory: which one (lib/rundir.c, the rule
 * with its inputs as arguments, so the tests can check every branch
 * whatever uid runs them; CI is root), and whether to trust it
 * (lib/rundir_open.c: opened once, by descriptor, and every file in it
 * reached relative to that descriptor, through the link rule of
 * safefile.h). */
#ifndef VRAMZ_RUNDIR_H
#define VRAMZ_RUNDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* vramz_runtime_dir_nth() for an explicit uid and environment values
 * (NULL: unset).  publish: only the publishing directory (n must be 0). */
int rundir_resolve(int is_root, const char *env_dir, const char *xdg_dir, int publish,
		   unsigned n, char *buf, size_t len);

/* ---- trusting it (docs/daemon.md, "Trusting the runtime directory") ---- */

#define RUNDIR_NO_UID UINT32_MAX

struct rundir {
	int fd;       /* O_PATH|O_DIRECTORY, close-on-exec; -1 none */
	int shared;   /* sticky and writable by others: touch only our own files */
	uint32_t uid; /* its owner */
};

/* Opens path as a runtime directory: its parents walked one component at
 * a time, a symbolic link among them followed only when owned by root or
 * the effective user, the last component never a link; made with
 * create_mode (umask applies) when absent and create_mode is not 0 (its
 * parents must exist); then trusted only when it is a directory owned by
 * the effective user, root or also_uid (a reader looking into that user's
 * directory; RUNDIR_NO_UID: none), not writable by group or others unless
 * sticky (then shared).  0; VRAMZ_ENOTFOUND absent, VRAMZ_EPERM refused
 * (err says why), VRAMZ_EINVAL not a directory, VRAMZ_EIO, VRAMZ_ERANGE.
 * err may be NULL. */
int rundir_open(const char *path, unsigned create_mode, uint32_t also_uid, struct rundir *out,
		char *err, size_t errlen);
void rundir_close(struct rundir *d);
/* The same judgement of an fstat of a directory already held (a reader
 * re-checks each tick what it holds). */
int rundir_check(const char *path, const struct stat *st, uint32_t also_uid, int *shared,
		 char *err, size_t errlen);
/* path's directory part ("." when none) and last component. */
int rundir_split(const char *path, char *dir, size_t dirlen, const char **name);

/* 1 when name in dirfd is a regular file (not followed) owned by the
 * effective user; st filled when not NULL. */
int rundir_own_file(int dirfd, const char *name, struct stat *st);
/* Unlinks name only when rundir_own_file says it is ours: 0, VRAMZ_EPERM
 * (not ours, or absent), or another code. */
int rundir_unlink_own(int dirfd, const char *name);
/* Walks path's parents from / (or the working directory) under the rule
 * above (a link among them followed only when owned by root or the
 * effective user): the parent's O_PATH descriptor into *pfd and the last
 * component into last ("." for "/").  A missing parent is an error
 * (VRAMZ_ENOTFOUND), never made.  The link rule (safefile.h) walks with it. */
int rundir_walk(const char *path, int *pfd, char *last, size_t lastlen, char *err,
		size_t errlen);
/* The reason into err (when given) and rc back: the one way rundir_open.c
 * and the link rule (safefile.c) say why they refuse. */
int rundir_say(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* VRAMZ_ENOTFOUND for ENOENT, VRAMZ_EPERM for EACCES / EPERM, else VRAMZ_EIO */
int rundir_errno_rc(int e);
/* "a FIFO", "a symbolic link", ... for a reason given to a person. */
const char *rundir_kind(mode_t m);

#endif
