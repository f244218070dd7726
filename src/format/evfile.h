/* SPDX-License-Identifier: Apache-2.0 */
/* evfile.h - the events file beside a log (FILE.events.csv, docs/csv.md),
 * written by two writers of `vramz log`: the driver-event watcher
 * (src/evwatch.c, its own thread) and the agent watcher (agentlog.c, the
 * tick's).  Each opens it for appending and writes whole rows with one
 * write(2), so their rows never interleave inside a line.  It rotates
 * with the log: each writer follows the name (evfile_follow) before it
 * appends. */
#ifndef VRAMZ_EVFILE_H
#define VRAMZ_EVFILE_H

#include <stddef.h>

#include "logfile.h"

/* Opens path to append events: a descriptor, or -1 with a one-line err
 * naming the file.  A new (empty) file gets the header; a file whose
 * first line is another header is refused, not appended to (its rows
 * would not match their columns). */
int evfile_open(const char *path, char *err, size_t errlen);
/* Keeps *fd on the file at path: when the log's rotation (logwrite.c)
 * moved the file away (gpu.events.csv -> gpu.1.events.csv), opens the
 * new one at path (evfile_open) in *fd's place.  0, or -1 with err as
 * evfile_open's (*fd is then left as it was). */
int evfile_follow(int *fd, const char *path, char *err, size_t errlen);
/* Appends b's whole rows in one write: 0, or -1 (errno). */
int evfile_append(int fd, const struct logbuf *b);

#endif
