/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.c - the one place that decides which directory `vramz daemon`
 * publishes into and where readers look for it (the rule is written in
 * include/vramz/daemon.h and docs/daemon.md; the Python package implements
 * the same rule, so the two must change together).
 *
 * It reads only the environment and the effective uid: no file is touched,
 * so a reader can ask on every start at no cost.
 */
#include "rundir.h"
#include "vramz/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SYSTEM_DIR "/run/vramz"

static int join_path(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s%s", a, b);
	return n < 0 || (size_t)n >= len ? VRAMZ_ERANGE : 0;
}

int rundir_resolve(int is_root, const char *env_dir, const char *xdg_dir, int publish,
		   unsigned n, char *buf, size_t len)
{
	if (!buf || !len)
		return VRAMZ_EINVAL;
	buf[0] = 0;
	if (env_dir && *env_dir) /* rule 1: the only directory */
		return n == 0 ? join_path(buf, len, env_dir, "") : VRAMZ_ENOTFOUND;
	if (is_root) /* rule 2 */
		return n == 0 ? join_path(buf, len, SYSTEM_DIR, "") : VRAMZ_ENOTFOUND;
	unsigned k = 0;
	if (xdg_dir && xdg_dir[0] == '/') { /* rule 3 */
		if (n == k)
			return join_path(buf, len, xdg_dir, "/vramz");
		k++;
	}
	if (publish) /* rule 4 is for readers only */
		return VRAMZ_ENOTFOUND;
	if (n == k)
		return join_path(buf, len, SYSTEM_DIR, "");
	return VRAMZ_ENOTFOUND;
}

int vramz_runtime_dir_nth(unsigned n, char *buf, size_t len)
{
	return rundir_resolve(geteuid() == 0, getenv("VRAMZ_RUNTIME_DIR"),
			      getenv("XDG_RUNTIME_DIR"), 0, n, buf, len);
}

int vramz_runtime_dir(char *buf, size_t len)
{
	return rundir_resolve(geteuid() == 0, getenv("VRAMZ_RUNTIME_DIR"),
			      getenv("XDG_RUNTIME_DIR"), 1, 0, buf, len);
}
