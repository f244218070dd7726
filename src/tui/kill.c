/* SPDX-License-Identifier: Apache-2.0 */
/* kill.c - the dashboard's `k`: signal the selected GPU process without
 * ever hitting the wrong one, then report what the GPU got back.
 *
 * The table is up to a second old, so the pid it shows may have exited and
 * been reused by the time a person confirms.  The checks and the signal
 * are `vramz kill`'s own (src/jobs/safekill.c), so the two can never disagree
 * about what is safe: the start time recorded in the snapshot must still
 * be the process's, never vramz itself, pid 1 or vramz's ancestors (the
 * shell), another user's process only as root, and the signal goes
 * through a pidfd opened before the last check.  They run twice: when `k`
 * is pressed, so a refusal comes before the signal menu, and again at the
 * moment of signalling.
 *
 * What only the dashboard knows is checked here first: a tree view's group
 * row holds no GPU memory, and a pid this /proc cannot see (another PID
 * namespace) means a different process here, so neither is signalled.
 */
#include "tui/kill.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/fmt.h"
#include "jobs/safekill.h"

#define STILL_RUNNING_MS 10000
#define WATCH_MAX_MS 60000
#define SETTLE_TICKS 3      /* ticks after exit for the driver to free */

const char *kill_signame(int sig)
{
	switch (sig) {
	case SIGTERM: return "TERM";
	case SIGKILL: return "KILL";
	case SIGINT: return "INT";
	case SIGHUP: return "HUP";
	case SIGQUIT: return "QUIT";
	case SIGUSR1: return "USR1";
	case SIGUSR2: return "USR2";
	case SIGSTOP: return "STOP";
	case SIGCONT: return "CONT";
	default: return "?";
	}
}

/* The status line's words for a refusal; -1, or 0 for SK_OK. */
static int verdict_msg(enum safekill_verdict v, const struct model_row *r, char *msg,
		       size_t len)
{
	switch (v) {
	case SK_OK:
		return 0;
	case SK_GONE:
		fmt_snprintf(msg, len, "pid %u has already exited", r->pid);
		break;
	case SK_REUSED:
		fmt_snprintf(msg, len, "pid %u now belongs to another process (start time "
			 "changed): not signalled", r->pid);
		break;
	case SK_OTHER_USER:
		fmt_snprintf(msg, len, "refused: pid %u belongs to %s, not you (only root may "
			 "signal it)", r->pid, r->user);
		break;
	default:
		fmt_snprintf(msg, len, "refused: pid %u: %s", r->pid, safekill_reason(v));
		break;
	}
	return -1;
}

/* What the model alone can refuse. */
static int row_refused(const struct model_row *r, char *why, size_t len)
{
	if (r->group) {
		fmt_snprintf(why, len, "pid %u holds no GPU memory; select a GPU process", r->pid);
		return -1;
	}
	if (!r->visible) {
		fmt_snprintf(why, len, "pid %u is not visible from this PID namespace: not signalled",
			 r->pid);
		return -1;
	}
	if (!r->start_ticks) {
		fmt_snprintf(why, len, "pid %u: start time unknown, cannot rule out a reused pid",
			 r->pid);
		return -1;
	}
	return 0;
}

int kill_allowed(const struct model_row *r, char *why, size_t len)
{
	if (row_refused(r, why, len))
		return -1;
	struct safekill_target t = {.pid = (pid_t)r->pid, .start_ticks = r->start_ticks};
	return verdict_msg(safekill_check("/proc", &t, getuid()), r, why, len);
}

int kill_send(struct killwatch *w, const struct model *m, const struct model_row *r,
	      int sig, char *msg, size_t len)
{
	if (row_refused(r, msg, len))
		return -1;
	struct safekill_target t = {.pid = (pid_t)r->pid, .start_ticks = r->start_ticks};
	int fd;
	if (verdict_msg(safekill_signal("/proc", &t, getuid(), sig, &fd), r, msg, len))
		return -1;
	if (fd >= 0)
		close(fd); /* the model's next ticks tell whether it left */
	memset(w, 0, sizeof *w);
	w->active = 1;
	w->pid = r->pid;
	w->sig = sig;
	w->gpu_mask = r->gpu_mask;
	w->held_bytes = r->vram_valid ? r->vram_bytes : 0;
	w->sent_ms = m->now_ms;
	for (unsigned i = 0; i < m->ngpus; i++) {
		unsigned idx = m->gpus[i].cur.s.index;
		if (idx < MODEL_MAX_GPUS)
			w->used_before[idx] = m->gpus[i].cur.s.mem_used_bytes;
	}
	char held[24];
	fmt_snprintf(msg, len, "sent SIG%s to pid %u (held %s on GPU %s); watching its memory",
		 kill_signame(sig), r->pid, fmt_bytes_if(held, sizeof held, r->vram_valid,
							 r->vram_bytes), r->gpus);
	return 0;
}

/* Memory that came back on the watched GPUs since the signal. */
static uint64_t freed_bytes(const struct killwatch *w, const struct model *m)
{
	uint64_t freed = 0;
	for (unsigned i = 0; i < m->ngpus; i++) {
		const vramz_gpu_sample *s = &m->gpus[i].cur.s;
		if (s->index >= MODEL_MAX_GPUS || !(w->gpu_mask >> s->index & 1) ||
		    !(s->valid & VRAMZ_F_MEM))
			continue;
		if (w->used_before[s->index] > s->mem_used_bytes)
			freed += w->used_before[s->index] - s->mem_used_bytes;
	}
	return freed;
}

int kill_observe(struct killwatch *w, const struct model *m, char *msg, size_t len)
{
	if (!w->active)
		return 0;
	char a[24], b[24], g[24];
	int64_t since = m->now_ms - w->sent_ms;
	int present = model_find_pid(m, w->pid) >= 0;
	uint64_t freed = freed_bytes(w, m);
	fmt_snprintf(g, sizeof g, "%s", "");
	for (int i = 0, n = 0; i < MODEL_MAX_GPUS; i++)
		if (w->gpu_mask >> i & 1)
			n += fmt_snprintf(g + n, sizeof g - (size_t)n, n ? ",%d" : "%d", i);
	if (!present) {
		if (!w->gone_ms)
			w->gone_ms = m->now_ms ? m->now_ms : 1;
		w->ticks_since++;
		int settled = w->held_bytes && freed >= w->held_bytes * 9 / 10;
		if (!settled && w->ticks_since < SETTLE_TICKS)
			return 0;
		w->active = 0;
		if (!w->held_bytes)
			fmt_snprintf(msg, len, "pid %u exited: GPU %s got %s back", w->pid, g,
				 fmt_bytes(a, sizeof a, freed));
		else if (freed >= w->held_bytes / 2)
			fmt_snprintf(msg, len, "pid %u exited: GPU %s got %s back (it held %s)",
				 w->pid, g, fmt_bytes(a, sizeof a, freed),
				 fmt_bytes(b, sizeof b, w->held_bytes));
		else
			fmt_snprintf(msg, len, "pid %u exited but GPU %s got only %s of its %s back: "
				 "memory still held", w->pid, g, fmt_bytes(a, sizeof a, freed),
				 fmt_bytes(b, sizeof b, w->held_bytes));
		return 1;
	}
	if (since >= WATCH_MAX_MS) {
		w->active = 0;
		fmt_snprintf(msg, len, "pid %u still running %s after SIG%s; stopped watching",
			 w->pid, fmt_duration(a, sizeof a, since), kill_signame(w->sig));
		return 1;
	}
	if (since >= STILL_RUNNING_MS && w->sig != SIGKILL && !w->ticks_since) {
		w->ticks_since = 1; /* say it once */
		fmt_snprintf(msg, len, "pid %u still running %s after SIG%s (k, then KILL, forces it)",
			 w->pid, fmt_duration(a, sizeof a, since), kill_signame(w->sig));
		return 1;
	}
	return 0;
}
