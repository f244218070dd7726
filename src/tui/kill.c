/* kill.c - the dashboard's `k`: signal the selected GPU process without
 * ever hitting the wrong one, then report what the GPU got back.
 *
 * The table is up to a second old, so the pid it shows may have exited and
 * been reused by the time a person confirms.  Right before signalling we
 * open a pidfd (which pins whichever process has the pid now), then
 * compare that process's start time with the one recorded in the snapshot:
 * equal means the pidfd is the process the person chose, and the signal
 * goes through the pidfd, so no reuse can slip in between.  Kernels
 * without pidfds fall back to kill(2) right after the same check.
 *
 * Other users' processes are refused unless we run as root - the kernel
 * would refuse too, but saying so before asking is kinder.  A pid this
 * /proc cannot see (another PID namespace) is refused: its number means a
 * different process here.
 */
#include "tui/kill.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fmt.h"
#include "proc.h"

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

int kill_allowed(const struct model_row *r, char *why, size_t len)
{
	if (r->group) {
		snprintf(why, len, "pid %u holds no GPU memory; select a GPU process", r->pid);
		return -1;
	}
	if (!r->visible) {
		snprintf(why, len, "pid %u is not visible from this PID namespace: not signalled",
			 r->pid);
		return -1;
	}
	uid_t me = geteuid();
	if (me != 0 && r->uid != me) {
		snprintf(why, len, "refused: pid %u belongs to %s, not you (only root may signal it)",
			 r->pid, r->user);
		return -1;
	}
	if (!r->start_ticks) {
		snprintf(why, len, "pid %u: start time unknown, cannot rule out a reused pid",
			 r->pid);
		return -1;
	}
	return 0;
}

static int pidfd_open_(uint32_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int pidfd_signal(int fd, int sig)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
#else
	(void)fd, (void)sig;
	errno = ENOSYS;
	return -1;
#endif
}

int kill_send(struct killwatch *w, const struct model *m, const struct model_row *r,
	      int sig, char *msg, size_t len)
{
	if (kill_allowed(r, msg, len))
		return -1;
	int fd = pidfd_open_(r->pid);
	if (fd < 0 && errno == ESRCH) {
		snprintf(msg, len, "pid %u has already exited", r->pid);
		return -1;
	}
	unsigned long long st = proc_start_time("/proc", r->pid);
	if (st != r->start_ticks) {
		if (fd >= 0)
			close(fd);
		snprintf(msg, len, st ? "pid %u now belongs to another process (start time "
					"changed): not signalled"
				      : "pid %u has already exited", r->pid);
		return -1;
	}
	int rc = fd >= 0 ? pidfd_signal(fd, sig) : -1;
	if (fd < 0 || (rc < 0 && errno == ENOSYS))
		rc = kill((pid_t)r->pid, sig);
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		snprintf(msg, len, "SIG%s to pid %u failed: %s", kill_signame(sig), r->pid,
			 strerror(e));
		return -1;
	}
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
	snprintf(msg, len, "sent SIG%s to pid %u (held %s on GPU %s); watching its memory",
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
	snprintf(g, sizeof g, "%s", "");
	for (int i = 0, n = 0; i < MODEL_MAX_GPUS; i++)
		if (w->gpu_mask >> i & 1)
			n += snprintf(g + n, sizeof g - (size_t)n, n ? ",%d" : "%d", i);
	if (!present) {
		if (!w->gone_ms)
			w->gone_ms = m->now_ms ? m->now_ms : 1;
		w->ticks_since++;
		int settled = w->held_bytes && freed >= w->held_bytes * 9 / 10;
		if (!settled && w->ticks_since < SETTLE_TICKS)
			return 0;
		w->active = 0;
		if (!w->held_bytes)
			snprintf(msg, len, "pid %u exited: GPU %s got %s back", w->pid, g,
				 fmt_bytes(a, sizeof a, freed));
		else if (freed >= w->held_bytes / 2)
			snprintf(msg, len, "pid %u exited: GPU %s got %s back (it held %s)",
				 w->pid, g, fmt_bytes(a, sizeof a, freed),
				 fmt_bytes(b, sizeof b, w->held_bytes));
		else
			snprintf(msg, len, "pid %u exited but GPU %s got only %s of its %s back: "
				 "memory still held", w->pid, g, fmt_bytes(a, sizeof a, freed),
				 fmt_bytes(b, sizeof b, w->held_bytes));
		return 1;
	}
	if (since >= WATCH_MAX_MS) {
		w->active = 0;
		snprintf(msg, len, "pid %u still running %s after SIG%s; stopped watching",
			 w->pid, fmt_duration(a, sizeof a, since), kill_signame(w->sig));
		return 1;
	}
	if (since >= STILL_RUNNING_MS && w->sig != SIGKILL && !w->ticks_since) {
		w->ticks_since = 1; /* say it once */
		snprintf(msg, len, "pid %u still running %s after SIG%s (k, then KILL, forces it)",
			 w->pid, fmt_duration(a, sizeof a, since), kill_signame(w->sig));
		return 1;
	}
	return 0;
}
