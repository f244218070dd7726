/* daemon.h - where `vramz daemon` publishes its snapshots, and how a
 * context reads them.
 *
 * One daemon per runtime directory samples the GPUs and publishes each tick
 * into a memory-mapped file there (the layout is documented byte by byte in
 * docs/daemon.md so that programs in any language can read it without this
 * library).  Which directory is decided by one rule, implemented here and
 * nowhere else in C (the Python package implements the same rule):
 *
 *   1. VRAMZ_RUNTIME_DIR, when set and not empty, is the only directory;
 *   2. otherwise a process running as root uses /run/vramz;
 *   3. otherwise $XDG_RUNTIME_DIR/vramz, when XDG_RUNTIME_DIR is set to an
 *      absolute path;
 *   4. a reader that is not root also looks in /run/vramz afterwards (the
 *      machine's daemon, run by systemd as root).
 *
 * Public API: part of libvramz's ABI, append-only within a major version.
 */
#ifndef VRAMZ_DAEMON_H
#define VRAMZ_DAEMON_H

#include <stddef.h>

#include "vramz/vramz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The segment's file name inside a runtime directory. */
#define VRAMZ_SEGMENT_NAME "segment"
/* The full segment, readable by root only, when /proc hides other users'
 * processes (docs/daemon.md, "Who sees what"). */
#define VRAMZ_SEGMENT_FULL_NAME "segment.full"
/* The publisher's lock file: one daemon per directory. */
#define VRAMZ_LOCK_NAME "daemon.lock"

/* The directory a daemon started by this process publishes into (rules 1
 * to 3).  Returns 0, VRAMZ_ENOTFOUND when no rule gives one (not root and
 * no XDG_RUNTIME_DIR), or VRAMZ_ERANGE when it does not fit in len. */
VRAMZ_EXPORT int vramz_runtime_dir(char *buf, size_t len);

/* The n-th directory a reader looks in, n from 0: the publishing directory
 * first, then (rule 4) /run/vramz.  VRAMZ_ENOTFOUND past the last one. */
VRAMZ_EXPORT int vramz_runtime_dir_nth(unsigned n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* VRAMZ_DAEMON_H */
