/* SPDX-License-Identifier: Apache-2.0 */
/* agentrecs.c - the agents' records beside a set of logs (agentrecs.h). */
#include "agentrecs.h"
#include "agentrec.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

struct evsrc {
	char path[4096];
	struct agentrow_reader *r;
	int have;                      /* rec holds the next record */
	int64_t t_ms;
	uint32_t uid;
	struct agent_figures rec;
};

struct agentrecs {
	unsigned n;
	struct evsrc src[];
};

static void read_next(struct evsrc *e)
{
	e->have = e->r && agentrow_next(e->r, &e->t_ms, &e->uid, &e->rec) == 1;
}

struct agentrecs *agentrecs_open(char *const *paths, unsigned n)
{
	struct agentrecs *a = calloc(1, sizeof *a + (size_t)n * sizeof a->src[0]);
	if (!a)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		struct evsrc *e = &a->src[a->n];
		char err[600];
		if (!strcmp(paths[i], "-") || log_events_path(paths[i], e->path, sizeof e->path))
			continue;
		int dup = 0;
		for (unsigned j = 0; j < a->n; j++)
			dup |= !strcmp(a->src[j].path, e->path);
		if (dup)
			continue;
		int rc = agentrow_open(&e->r, e->path, err, sizeof err);
		if (rc == VRAMZ_ENOMEM) {
			agentrecs_close(a);
			return NULL;
		}
		if (rc && rc != VRAMZ_ENOTFOUND)
			cli_err("%s; the PyTorch agents' records in it are not read", err);
		if (rc)
			continue;
		read_next(e);
		a->n++;
	}
	return a;
}

int agentrecs_note(struct agentrecs *a, vramz_diag *d, int64_t until_ms)
{
	for (unsigned i = 0; a && i < a->n; i++)
		for (struct evsrc *e = &a->src[i]; e->have && e->t_ms <= until_ms; read_next(e))
			if (diag_note_agent(d, &e->rec))
				return VRAMZ_ENOMEM;
	return 0;
}

void agentrecs_close(struct agentrecs *a)
{
	for (unsigned i = 0; a && i < a->n; i++)
		agentrow_close(a->src[i].r);
	free(a);
}
