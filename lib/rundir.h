/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.h - the runtime-directory rule with its inputs as arguments, so
 * the tests can check every branch whatever uid runs them (CI is root). */
#ifndef VRAMZ_RUNDIR_H
#define VRAMZ_RUNDIR_H

#include <stddef.h>

/* vramz_runtime_dir_nth() for an explicit uid and environment values
 * (NULL: unset).  publish: only the publishing directory (n must be 0). */
int rundir_resolve(int is_root, const char *env_dir, const char *xdg_dir, int publish,
		   unsigned n, char *buf, size_t len);

#endif
