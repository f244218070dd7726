/* SPDX-License-Identifier: Apache-2.0 */
/* agentlog.h - what `vramz log --procs` keeps of the PyTorch agents
 * (issue 27): each process with an agent is followed from tick to tick;
 * when its allocator's OOM count rises, the agent's record of that OOM
 * (the line, the bytes asked, what held the memory) becomes a `torch_oom`
 * row of the events file, and when it leaves the GPUs' lists, how it
 * ended (the tombstone's end record, or a SIGTERM's stacks) becomes a
 * `process_end` row - so `analyze` and `report` of the log judge its end
 * as a live watch did (lib/internal/agentrec.h).  Rows go through
 * evfile.h; a process whose agent left nothing (kill -9) gets no row. */
#ifndef VRAMZ_AGENTLOG_H
#define VRAMZ_AGENTLOG_H

#include <stddef.h>

#include "logfile.h"
#include "vramz/vramz.h"

struct agentlog;

/* Opens the events file beside the log at log_path (evfile_open).  NULL
 * when it cannot be, after one line on stderr naming the command cmd
 * (a static string) and why; the log goes on without the records. */
struct agentlog *agentlog_open(const char *cmd, const char *log_path);
/* One tick of the log: follows snap's processes with an agent, appends
 * the rows due.  info: the GPUs' identity (the OOM's GPU by UUID).  A row
 * that cannot be written (or memory that runs out) is said once, and the
 * records stop there; the log does not.  a may be NULL: nothing. */
void agentlog_tick(struct agentlog *a, const vramz_snapshot *snap, log_info_fn info, void *arg);
void agentlog_close(struct agentlog *a);

#endif
