/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stdint.h>

#include "vramz/diagnose.h"
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

/* A snapshot is fresh when it is at most two of the daemon's intervals and
 * at most this old. */
#define VRAMZ_DAEMON_MAX_AGE_MS 5000

/* Opens a context on a live daemon's segment: in dir, or (dir NULL) in the
 * directories of vramz_runtime_dir_nth in turn.  The context reads no
 * driver at all: its GPUs, static facts (details included), topology and
 * samples are the daemon's, and each vramz_sample returns the daemon's
 * latest snapshot.  Fails, with vramz_last_error saying why (one line that
 * names the file), when there is no segment (VRAMZ_ENOTFOUND), when it is
 * untrusted (VRAMZ_EPERM: owned by another user, or group/other-writable,
 * or in a directory the runtime directory's rule refuses: docs/daemon.md),
 * malformed (VRAMZ_EPARSE), of an unknown major layout
 * (VRAMZ_EUNSUPPORTED), or when its daemon stopped, died or its latest
 * snapshot is not fresh (VRAMZ_EIO).  vramz_sample fails the same way
 * (VRAMZ_EIO) once the daemon stops or falls behind.  flags: 0. */
VRAMZ_EXPORT int vramz_open_daemon(vramz_ctx **out, const char *dir, unsigned flags);

/* What a daemon context reads from. */
typedef struct vramz_daemon_info {
	uint32_t pid;                /* the publisher */
	unsigned interval_ms;        /* its sampling interval */
	unsigned sample_flags;       /* VRAMZ_SAMPLE_* it reads every tick */
	int procs;                   /* 1: it publishes the process lists */
	int redacted;                /* 1: other users' /proc fields left out */
	int64_t started_ms;          /* wall clock, ms since the epoch */
	int64_t age_ms;              /* of the snapshot the last sample gave */
	uint64_t generation;         /* of that snapshot */
	char path[256];              /* the segment file */
} vramz_daemon_info;

/* VRAMZ_EINVAL when ctx does not read a daemon. */
VRAMZ_EXPORT int vramz_daemon_info_get(const vramz_ctx *ctx, vramz_daemon_info *out);
/* 1 when the daemon samples GPU index every tick, else 0. */
VRAMZ_EXPORT int vramz_daemon_covers(const vramz_ctx *ctx, unsigned index);
/* The daemon's findings as of the last vramz_sample (its diagnosis engine,
 * with its thresholds); valid until the next sample.  0 when none; *out
 * is NULL when the daemon publishes no findings at all (it runs with
 * --no-diagnose), else not NULL even for none.  From a redacted segment
 * (hidepid) a finding's user and command are filled in only for the
 * processes this reader's own /proc shows, as the process rows are. */
VRAMZ_EXPORT unsigned vramz_daemon_findings(const vramz_ctx *ctx, const vramz_finding **out);

#ifdef __cplusplus
}
#endif
#endif /* VRAMZ_DAEMON_H */
