/* SPDX-License-Identifier: Apache-2.0 */
/* time.c - the diagnosis engine's clock: one rule for every caller.
 *
 * Callers used to improvise when the wall clock stepped back (serve kept
 * stale findings, watch skipped ticks, top discarded the engine, analyze
 * aborted).  Now the engine keeps its own time, and a step either way is
 * never an error; the rule is below and in docs/diagnoses.md ("Time").
 */
#include "state.h"

/* The engine keeps its own time, which only moves forward: it starts at
 * the first snapshot's wall clock and then advances by the time elapsed
 * between snapshots, measured on the monotonic clock when both carry one
 * (live: a wall clock that NTP or a person steps, either way, changes
 * nothing), else on the wall clock (a log, a library user who fills only
 * time_ms).  A recorded clock that goes back (a log written across a step)
 * is absorbed: that tick is taken to follow the previous one at the log's
 * cadence (the latest forward step), and the data after it continues from
 * there.  A recorded clock that jumps forward cannot be told from a gap in
 * the recording and is one.  Each step seen - live, wall and monotonic
 * disagreeing by more than a second; offline, a step back - is counted
 * (vramz_diag_clock_steps) so a caller can say where it happened. */
int64_t engine_time(vramz_diag *d, const vramz_snapshot *snap)
{
	int64_t wall = snap->time_ms;
	if (!d->have_time)
		return wall;
	int64_t dwall = wall - d->last_wall_ms, dt = dwall;
	if (snap->mono_ns && d->last_mono_ns)
		dt = (snap->mono_ns - d->last_mono_ns) / 1000000;
	int stepped = 0;
	if (dt < 0) {
		dt = d->last_dt_ms;
		stepped = 1;
	} else if (dwall - dt > 1000 || dt - dwall > 1000) {
		stepped = 1;
	}
	if (stepped) {
		d->clock_steps++;
		d->last_step_ms = dwall - dt;
	} else {
		d->last_dt_ms = dt;
	}
	return d->last_ms + dt;
}

unsigned vramz_diag_clock_steps(const vramz_diag *d, int64_t *last_step_ms)
{
	if (last_step_ms)
		*last_step_ms = d ? d->last_step_ms : 0;
	return d ? d->clock_steps : 0;
}

