/* SPDX-License-Identifier: Apache-2.0 */
/* idle.c - the one rule that calls a process idle, shared by the engine's
 * idle_holder finding and `vramz kill --idle`.
 *
 * "Idle" used to mean "SM share 0": a data loader filling host-to-device
 * buffers, or a leaking job doing little compute, reads 0 % SM while its
 * memory grows, and was offered for termination.  So a stretch of idleness
 * needs both: the SM share reads 0, and memory stays within noise of where
 * the stretch began.  Memory moving beyond noise starts a new stretch from
 * that sample (a process that allocated and then sat still is idle from
 * then on); an SM reading above 0 ends it.  An unknown SM reading neither
 * starts nor breaks a stretch (per-process utilization is read every few
 * seconds at most in the views), but a verdict over a whole window - what
 * kill gives - counts it against idleness: unknown is never called idle.
 */
#include "words.h"

#include <stdio.h>
#include <string.h>

void vramz_idle_reset(vramz_idle_track *t)
{
	memset(t, 0, sizeof *t);
	t->since_ms = -1;
	t->idle_from_ms = -1;
}

uint64_t vramz_idle_noise_bytes(uint64_t level_bytes)
{
	uint64_t pct = level_bytes / 100, floor_bytes = 64ull << 20;
	return pct > floor_bytes ? pct : floor_bytes;
}

static int holding_moved(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;
	return d > vramz_idle_noise_bytes(a > b ? a : b);
}

void vramz_idle_feed(vramz_idle_track *t, int64_t t_ms, const vramz_proc_sample *p)
{
	if (!(p->valid & VRAMZ_P_USED))
		return;
	uint64_t b = p->used_bytes;
	if (!t->samples) {
		t->first_ms = t_ms;
		t->first_bytes = t->lo_bytes = t->hi_bytes = b;
	}
	t->samples++;
	t->last_ms = t_ms;
	t->last_bytes = b;
	if (b < t->lo_bytes)
		t->lo_bytes = b;
	if (b > t->hi_bytes)
		t->hi_bytes = b;
	int known = (p->valid & VRAMZ_P_SM) != 0;
	if (!known) {
		t->sm_unknown++;
		/* neither starts nor breaks; memory moving still restarts */
		if (t->since_ms >= 0 && holding_moved(b, t->ref_bytes)) {
			t->since_ms = t_ms;
			t->ref_bytes = b;
		}
		return;
	}
	if (p->sm_pct > t->sm_max_pct)
		t->sm_max_pct = p->sm_pct;
	if (p->sm_pct > 0) {
		t->since_ms = -1;
		return;
	}
	if (t->since_ms < 0 || holding_moved(b, t->ref_bytes)) {
		t->since_ms = t_ms;
		t->ref_bytes = b;
		if (t->idle_from_ms < 0)
			t->idle_from_ms = t_ms;
	}
}

int vramz_idle_verdict(const vramz_idle_track *t, char *why, size_t len)
{
	char a[32];
	if (len)
		why[0] = 0;
	if (!t->samples) {
		snprintf(why, len, "not sampled");
		return 0;
	}
	if (t->sm_max_pct > 0) {
		snprintf(why, len, "it used the GPU (SM up to %u %%)", t->sm_max_pct);
		return 0;
	}
	uint64_t up = t->hi_bytes - t->first_bytes, down = t->first_bytes - t->lo_bytes;
	uint64_t ref = t->hi_bytes;
	if (up > vramz_idle_noise_bytes(ref) || down > vramz_idle_noise_bytes(ref)) {
		if (up >= down)
			snprintf(why, len, "its memory grew %s in the window",
				 diag_bytes_str(a, sizeof a, (double)up));
		else
			snprintf(why, len, "its memory fell %s in the window",
				 diag_bytes_str(a, sizeof a, (double)down));
		return 0;
	}
	if (t->sm_unknown) {
		snprintf(why, len, "its SM share was not reported at every sample");
		return 0;
	}
	return 1;
}
