/* SPDX-License-Identifier: Apache-2.0 */
/* diag_sim.h - a tiny simulated machine for the diagnosis tests: GPUs and
 * processes whose memory the test sets before each snapshot is fed.
 * Header-only so each test_diag*.c stays one self-contained program. */
#ifndef DIAG_SIM_H
#define DIAG_SIM_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vramz/diagnose.h"

#define MiB (1048576.0)
#define GiB (1073741824.0)

struct sim {
	vramz_gpu_sample g[8];
	vramz_proc_sample p[64];
	unsigned ng, np;
	vramz_snapshot s;
	uint64_t rng;
};

static inline void sim_init(struct sim *m, unsigned ngpus, double total_bytes)
{
	memset(m, 0, sizeof *m);
	m->ng = ngpus;
	m->rng = 88172645463325252ull;
	for (unsigned i = 0; i < ngpus; i++) {
		vramz_gpu_sample *g = &m->g[i];
		g->index = i;
		g->valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_PROCS |
			   VRAMZ_F_UNATTRIBUTED | VRAMZ_F_THROTTLE;
		g->mem_total_bytes = (uint64_t)total_bytes;
		g->mem_reserved_bytes = (uint64_t)(512 * MiB);
		g->util_gpu_pct = 50;
	}
}

/* A process, visible, of Slurm job `job` (0: not visible).  Its parent is
 * init, so only the Slurm job groups it (test_diag_jobs.c covers the other
 * ways a job is recognised). */
static inline vramz_proc_sample *sim_proc(struct sim *m, unsigned gpu, uint32_t pid, uint32_t job)
{
	vramz_proc_sample *p = &m->p[m->np++];
	memset(p, 0, sizeof *p);
	p->gpu_index = gpu;
	p->pid = pid;
	p->valid = VRAMZ_P_USED | VRAMZ_P_SM;
	p->sm_pct = 50;
	if (job) {
		p->valid |= VRAMZ_P_VISIBLE;
		p->pgid = job;
		p->ppid = 1;
		snprintf(p->slurm_job, sizeof p->slurm_job, "%u", (unsigned)job);
		p->start_time_ticks = 1000 + pid;
		snprintf(p->comm, sizeof p->comm, "python");
		snprintf(p->user, sizeof p->user, "alice");
	}
	return p;
}

/* xorshift64: reproducible noise */
static inline double sim_uniform(struct sim *m)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (double)(m->rng >> 11) / 9007199254740992.0;
}

static inline double sim_gauss(struct sim *m)
{
	double u = sim_uniform(m), v = sim_uniform(m);
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Derives each GPU's used/free from its processes plus extra_bytes[gpu]
 * (memory no process accounts for), then feeds the snapshot. */
static inline int sim_feed(vramz_diag *d, struct sim *m, int64_t t_ms, const double *extra_bytes)
{
	for (unsigned i = 0; i < m->ng; i++) {
		vramz_gpu_sample *g = &m->g[i];
		uint64_t sum = 0;
		unsigned first = m->np, cnt = 0;
		for (unsigned k = 0; k < m->np; k++)
			if (m->p[k].gpu_index == i) {
				sum += m->p[k].used_bytes;
				if (first == m->np)
					first = k;
				cnt++;
			}
		uint64_t extra = extra_bytes ? (uint64_t)extra_bytes[i] : 0;
		g->mem_used_bytes = sum + extra;
		uint64_t cap = g->mem_total_bytes - g->mem_reserved_bytes;
		if (g->mem_used_bytes > cap)
			g->mem_used_bytes = cap;
		g->mem_free_bytes = cap - g->mem_used_bytes;
		g->unattributed_bytes = g->mem_used_bytes > sum ? g->mem_used_bytes - sum : 0;
		g->proc_first = first == m->np ? 0 : first;
		g->proc_count = cnt;
	}
	m->s.time_ms = t_ms;
	m->s.gpu_count = m->ng;
	m->s.gpus = m->g;
	m->s.proc_count = m->np;
	m->s.procs = m->p;
	return vramz_diag_feed(d, &m->s);
}

static inline unsigned count_kind(vramz_diag *d, enum vramz_finding_kind k,
				  const vramz_finding **first)
{
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f), c = 0;
	if (first)
		*first = NULL;
	for (unsigned i = 0; i < n; i++)
		if (f[i].kind == k) {
			if (!c && first)
				*first = &f[i];
			c++;
		}
	return c;
}

#endif
