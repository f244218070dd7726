/* SPDX-License-Identifier: Apache-2.0 */
/* agentrec.h - a PyTorch agent's records (its latest out-of-memory error,
 * how its process ended: lib/internal/agent.h's struct agent_figures) kept
 * in a CSV log, so that `analyze` and `report` of a log recorded with
 * --procs judge an end as a live watch does (issue 27).
 *
 * `vramz log` writes them as rows of the log's events file (docs/csv.md,
 * "Events file": `torch_oom` when a process's OOM count rose, `process_end`
 * when a process with an agent left the GPUs' lists); lib/log/agentrow.c
 * formats and parses those rows; the reader of a log hands each to the
 * diagnosis engine (diag_note_agent) before the tick of its time, and the
 * engine reads them where live it reads the agent's file.
 */
#ifndef VRAMZ_AGENTREC_H
#define VRAMZ_AGENTREC_H

#include <stdint.h>
#include <stdio.h>

#include "agent.h"
#include "logfile.h"
#include "vramz/diagnose.h"

/* The kinds of agent row in the events file. */
#define AGENT_EV_OOM "torch_oom"
#define AGENT_EV_END "process_end"

/* Appends one events-file row for the agent record fig of a process owned
 * by uid, at t_ms: event AGENT_EV_OOM or AGENT_EV_END; gpu and uuid the
 * GPU of its OOM (the log's index; -1 and NULL unknown).  0 or
 * VRAMZ_ENOMEM. */
int agentrow_format(struct logbuf *b, int64_t t_ms, const char *event, int gpu, const char *uuid,
		    uint32_t uid, const struct agent_figures *fig);

/* The agent rows of an events file (other rows skipped), one by one. */
struct agentrow_reader;
/* Opens path: 0, VRAMZ_ENOTFOUND (no events file: an older log, or none
 * recorded), or VRAMZ_EPARSE / VRAMZ_EIO with err "FILE: why". */
int agentrow_open(struct agentrow_reader **out, const char *path, char *err, size_t errlen);
/* The next agent row: 1 with its time, uid and record; 0 at the end.  A
 * row that does not parse is skipped, and a last row without its newline
 * is not read (torn by a crash, or still being written). */
int agentrow_next(struct agentrow_reader *r, int64_t *t_ms, uint32_t *uid,
		  struct agent_figures *fig);
void agentrow_close(struct agentrow_reader *r);

/* The driver's events (xid, ecc_sbe, ecc_dbe rows) that agentrow_next
 * passed over, summed by (GPU, event, Xid code): a row counts its
 * `count` cell, or 1 where the file has none (older vramz) or it is
 * empty.  Rows outside [since_ms, until_ms] are not counted. */
struct agentrow_driver {
	int gpu;                 /* -1: not given */
	char event[8];           /* "xid", "ecc_sbe", "ecc_dbe" */
	unsigned xid;            /* xid rows, else 0 */
	uint64_t count;
	int64_t first_ms, last_ms;
};
/* Counts from now on the driver rows between since_ms and until_ms. */
void agentrow_count_driver(struct agentrow_reader *r, int64_t since_ms, int64_t until_ms);
/* The sums so far, *out valid until the next agentrow_next or close. */
unsigned agentrow_driver_sums(const struct agentrow_reader *r, const struct agentrow_driver **out);

/* The engine (lib/diagnose/agentrec.c): keeps a record of a log for the
 * process it names, the latest of each, a bounded number.  0 or
 * VRAMZ_ENOMEM.  A live engine reads the agents' files instead. */
int diag_note_agent(vramz_diag *d, const struct agent_figures *fig);

#endif
