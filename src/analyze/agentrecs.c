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

struct agentrecs *agentrecs_open(char *const *paths, unsigned n, int64_t since_ms,
				 int64_t until_ms)
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
		agentrow_count_driver(e->r, since_ms, until_ms);
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

unsigned agentrecs_driver(struct agentrecs *a, struct agentrow_driver *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; a && i < a->n; i++) {
		struct evsrc *e = &a->src[i];
		while (e->have)
			read_next(e);
		const struct agentrow_driver *s;
		unsigned ns = agentrow_driver_sums(e->r, &s);
		for (unsigned k = 0; k < ns; k++) {
			unsigned j = 0;
			while (j < n && (out[j].gpu != s[k].gpu || out[j].xid != s[k].xid ||
					 strcmp(out[j].event, s[k].event)))
				j++;
			if (j == n && n == max)
				continue;
			if (j == n) {
				out[n++] = s[k];
				continue;
			}
			out[j].count += s[k].count;
			out[j].first_ms = s[k].first_ms < out[j].first_ms ? s[k].first_ms : out[j].first_ms;
			out[j].last_ms = s[k].last_ms > out[j].last_ms ? s[k].last_ms : out[j].last_ms;
		}
	}
	return n;
}

void agentrecs_close(struct agentrecs *a)
{
	for (unsigned i = 0; a && i < a->n; i++)
		agentrow_close(a->src[i].r);
	free(a);
}
