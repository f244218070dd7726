/* SPDX-License-Identifier: Apache-2.0 */
/* tmpdir.h - a fresh directory for a unit test, and its removal with all
 * it holds, shared by the tests that write files (logs, segments, agent
 * files, fake /proc trees).  Header-only: each test is one .c file.
 *
 *   static char dir[TMPDIR_LEN];
 *   static int setup(void **s) { return tmpdir_make(dir, "seg"); }
 *   static int teardown(void **s) { return tmpdir_remove(dir); }
 */
#ifndef VRAMZ_TEST_TMPDIR_H
#define VRAMZ_TEST_TMPDIR_H

#include <ftw.h> /* nftw: _GNU_SOURCE, set for the whole build */
#include <stdio.h>
#include <stdlib.h>

/* short, so that the tests' own path buffers ("%s/NAME" in 128 or 256
 * bytes) provably hold a file's path */
#define TMPDIR_LEN 64

/* $TMPDIR (else /tmp)/vramz-NAME.XXXXXX, made mode 0700: 0, or -1 with a
 * line on stderr */
static inline int tmpdir_make(char dir[TMPDIR_LEN], const char *name)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	if (snprintf(dir, TMPDIR_LEN, "%s/vramz-%s.XXXXXX", base, name) >= TMPDIR_LEN) {
		fprintf(stderr, "tmpdir: $TMPDIR '%s' is too long for the tests' paths\n", base);
		return -1;
	}
	if (!mkdtemp(dir)) {
		perror(dir);
		return -1;
	}
	return 0;
}

static inline int tmpdir_rm_one(const char *path, const struct stat *st, int flag,
				struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* dir and everything under it, links not followed: 0, or -1 */
static inline int tmpdir_remove(const char *dir)
{
	return nftw(dir, tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

#endif
