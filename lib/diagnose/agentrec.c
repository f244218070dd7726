/* SPDX-License-Identifier: Apache-2.0 */
/* agentrec.c - where the engine reads what a process's PyTorch agent
 * says (its latest OOM, how it ended): live, the agent's file, its
 * tombstone once the process is gone (lib/agent.c, agent_read_end); in a
 * log, the records the logger kept of them (lib/internal/agentrec.h),
 * handed in by the log's reader before the tick they belong to.  One
 * source for oom.c and torch.c, so a log is judged as the live machine
 * was.
 */
#include "state.h"
#include "detectors.h"
#include "agentrec.h"

#include <stdlib.h>
#include <string.h>

/* The records kept: the latest per process, the oldest process dropped
 * past this.  A record is asked for at the tick it was written (an end)
 * or while its process lives on (an OOM it caught), so a few dozen
 * processes' worth is plenty. */
#define AGENT_RECS_MAX 64

struct agent_recs {
	unsigned n, next;
	struct agent_figures r[AGENT_RECS_MAX];
};

/* the records live in the engine's block of the agent's slot (torch.c:
 * agent_state) */
static struct agent_recs **recs_of(const vramz_diag *d)
{
	return kind_diag_state(d, AGENT_SLOT);
}

int diag_note_agent(vramz_diag *d, const struct agent_figures *fig)
{
	struct agent_recs **rp = recs_of(d);
	if (!*rp && !(*rp = calloc(1, sizeof **rp)))
		return VRAMZ_ENOMEM;
	struct agent_recs *s = *rp;
	unsigned i = 0;
	while (i < s->n && (s->r[i].pid != fig->pid || s->r[i].start_time_ticks != fig->start_time_ticks))
		i++;
	if (i == s->n) {
		if (s->n < AGENT_RECS_MAX)
			s->n++;
		else
			i = s->next, s->next = (s->next + 1) % AGENT_RECS_MAX;
	}
	s->r[i] = *fig;
	return 0;
}

int diag_agent_figures(const vramz_diag *d, const struct proc_state *p, struct agent_figures *fig)
{
	if (d->live)
		return agent_read_end(p->pid, p->start_ticks, torch_of(d, p)->uid, fig);
	const struct agent_recs *s = *recs_of(d);
	for (unsigned i = 0; s && i < s->n; i++)
		if (s->r[i].pid == p->pid && s->r[i].start_time_ticks == p->start_ticks) {
			*fig = s->r[i];
			return 0;
		}
	return VRAMZ_ENOTFOUND;
}

void agent_recs_fini(void *st)
{
	free(*(struct agent_recs **)st);
}
