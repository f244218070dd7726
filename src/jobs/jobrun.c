/* SPDX-License-Identifier: Apache-2.0 */
/* jobrun.c - runs a command and follows its GPU memory from outside, for
 * any framework: the measuring engine of `vramz run` and `vramz fit`.
 *
 * The command runs without a shell in its own process group (so signals
 * can be forwarded to all of it) and vramz becomes a child subreaper (so
 * workers orphaned by a launcher stay in its tree, see proctree.c).  Each
 * tick samples the selected GPUs and sums, per GPU, the memory of the
 * processes that belong to the command.  Ticks are scheduled on absolute
 * deadlines: a slow tick does not shift the ones after it, and a deadline
 * missed by more than a period is skipped and counted, never bunched up.
 * The wait between ticks is a ppoll on a pidfd of the child, so the end of
 * the command is noticed at once instead of at the next tick.
 *
 * On a terminal the command's group gets the foreground, as a shell would
 * do, so Ctrl-C and job control reach it directly; elsewhere SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT sent to vramz are forwarded to the group.
 */
#include "jobs/jobrun.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/fmt.h"
#include "jobs/proctree.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static volatile sig_atomic_t jr_pgid;
static volatile sig_atomic_t jr_forwarded;

static void jr_forward(int sig)
{
	if (jr_pgid > 0) {
		kill(-(pid_t)jr_pgid, sig);
		jr_forwarded = 1;
	}
}

static const int jr_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define JR_NSIG (sizeof jr_signals / sizeof jr_signals[0])

int jobrun_is_oom_text(const char *text)
{
	static const char *const pats[] = {
		"out of memory", "OutOfMemoryError", "CUDA_ERROR_OUT_OF_MEMORY",
		"cudaErrorMemoryAllocation", "CUBLAS_STATUS_ALLOC_FAILED",
		"RESOURCE_EXHAUSTED",
	};
	for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++)
		if (strcasestr(text, pats[i]))
			return 1;
	return 0;
}

const char *jobrun_fmt_secs(char *buf, size_t len, int64_t ms)
{
	if (ms < 10000)
		snprintf(buf, len, "%.2fs", (double)ms / 1000);
	else if (ms < 60000)
		snprintf(buf, len, "%.1fs", (double)ms / 1000);
	else
		fmt_duration(buf, len, ms);
	return buf;
}

int jobrun_status(const struct jobrun_result *r)
{
	if (!r->started)
		return r->exec_errno == ENOENT ? 127 : 126;
	if (r->signaled)
		return 128 + r->signo;
	return r->exit_code;
}

/* Keeps the last bytes of the command's output and looks for OOM words in
 * them; a chunk is at most half the buffer so a message split across two
 * reads is still seen whole. */
static void jr_take_output(struct jobrun_result *r, const char *buf, size_t n)
{
	size_t cap = sizeof r->tail - 1, have = strlen(r->tail);
	if (have + n > cap) {
		size_t drop = have + n - cap;
		memmove(r->tail, r->tail + drop, have - drop + 1);
		have -= drop;
	}
	memcpy(r->tail + have, buf, n);
	r->tail[have + n] = 0;
	/* NUL bytes in the output would hide what follows from the scan */
	for (size_t i = have; i < have + n; i++)
		if (!r->tail[i])
			r->tail[i] = ' ';
	if (jobrun_is_oom_text(r->tail))
		r->oom_message = 1;
}

static void jr_drain(int fd, struct jobrun_result *r, int echo)
{
	char buf[1024];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			return;
		if (echo && write(STDERR_FILENO, buf, (size_t)n) < 0) {
			/* our stderr is gone; keep measuring */
		}
		jr_take_output(r, buf, (size_t)n);
	}
}

/* Energy counters of every selected GPU (a slow read: start and end only). */
static void jr_energy(vramz_ctx *ctx, struct jobrun_result *r, int end)
{
	const vramz_snapshot *s;
	if (vramz_sample(ctx, VRAMZ_SAMPLE_SLOW, &s) < 0)
		return;
	for (unsigned i = 0; i < s->gpu_count && i < r->ngpus; i++) {
		const vramz_gpu_sample *g = &s->gpus[i];
		struct jobrun_gpu *jg = &r->gpus[i];
		int ok = !g->lost && (g->valid & VRAMZ_F_ENERGY);
		if (!end) {
			jg->energy_ok = ok;
			jg->energy_start_mj = g->energy_mj;
		} else {
			jg->energy_ok = jg->energy_ok && ok && g->energy_mj >= jg->energy_start_mj;
			jg->energy_end_mj = g->energy_mj;
		}
	}
}

struct jr_seen {
	unsigned pids[256];
	unsigned n;
};

static void jr_tick(vramz_ctx *ctx, struct proctree *t, const struct jobrun_opts *o,
		    struct jobrun_result *r, struct jr_seen *seen, int64_t t0_ns)
{
	const vramz_snapshot *s;
	unsigned char member_buf[512];
	if (vramz_sample(ctx, VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL, &s) < 0)
		return;
	unsigned char *member = s->proc_count <= sizeof member_buf ? member_buf
				: calloc(s->proc_count, 1);
	if (!member)
		return;
	int64_t at_ms = (s->mono_ns - t0_ns) / 1000000;
	uint64_t total = 0;
	for (unsigned i = 0; i < s->gpu_count && i < r->ngpus; i++) {
		const vramz_gpu_sample *g = &s->gpus[i];
		struct jobrun_gpu *jg = &r->gpus[i];
		uint64_t sum = 0;
		unsigned nproc = 0, sm = 0;
		int sm_known = 0;
		for (unsigned k = g->proc_first; k < g->proc_first + g->proc_count; k++) {
			const vramz_proc_sample *p = &s->procs[k];
			member[k] = proctree_member(t, p->pid) == 1;
			if (!member[k])
				continue;
			nproc++;
			if (p->valid & VRAMZ_P_USED)
				sum += p->used_bytes;
			if (p->valid & VRAMZ_P_SM) {
				sm += p->sm_pct;
				sm_known = 1;
			}
			unsigned j;
			for (j = 0; j < seen->n && seen->pids[j] != p->pid; j++)
				;
			if (j == seen->n && seen->n < sizeof seen->pids / sizeof seen->pids[0])
				seen->pids[seen->n++] = p->pid;
		}
		if (nproc) {
			jg->touched = 1;
			if (sm_known) {
				jg->sm_pct_sum += sm > 100 ? 100 : sm;
				jg->sm_ticks++;
			}
		}
		if (nproc > jg->procs_peak)
			jg->procs_peak = nproc;
		if (sum > jg->peak_bytes) {
			jg->peak_bytes = sum;
			jg->peak_at_ms = at_ms;
		}
		total += sum;
	}
	if (total > r->peak_total_bytes) {
		r->peak_total_bytes = total;
		r->peak_total_at_ms = at_ms;
	}
	r->procs_seen = seen->n;
	r->ticks++;
	if (o->on_tick)
		o->on_tick(o->arg, s, member);
	if (member != member_buf)
		free(member);
}

/* Child side of the fork: never returns. */
static void jr_exec(char **argv, int errfd, int outfd, int take_tty)
{
	setpgid(0, 0);
	if (take_tty) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	for (size_t i = 0; i < JR_NSIG; i++)
		signal(jr_signals[i], SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL); /* `run -o` ignores it for itself only */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (outfd >= 0) {
		dup2(outfd, STDOUT_FILENO);
		dup2(outfd, STDERR_FILENO);
		if (outfd > STDERR_FILENO)
			close(outfd);
	}
	execvp(argv[0], argv);
	int e = errno;
	if (write(errfd, &e, sizeof e) < 0) {
		/* the parent will see an empty pipe and report exit 127 */
	}
	_exit(127);
}

/* Samples every interval (r->started) until the child ends, reaping the
 * orphans re-parented to us on the way and draining the captured output
 * (*outfd, closed and -1 at its end); returns the child's wait status. */
static int jr_wait(vramz_ctx *ctx, struct proctree *t, const struct jobrun_opts *o,
		   struct jobrun_result *r, pid_t child, int pidfd, int *outfd, int64_t t0)
{
	int64_t period_ns = (o->interval_ms > 0 ? o->interval_ms : 20) * 1000000;
	int64_t next = clock_mono_ns();
	struct jr_seen seen = {.n = 0};
	int status = 0, done = 0;
	while (!done) {
		if (r->started)
			jr_tick(ctx, t, o, r, &seen, t0);
		next += period_ns;
		for (;;) {
			pid_t w;
			while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
				if (w == child) {
					done = 1;
					break;
				}
				/* an orphaned descendant re-parented to us: reaped */
			}
			if (done || (w < 0 && errno == ECHILD)) {
				done = 1;
				break;
			}
			int64_t now = clock_mono_ns();
			if (now >= next) {
				if (now - next > period_ns) {
					r->late_ticks++;
					next = now;
				}
				break;
			}
			struct pollfd pf[2];
			nfds_t nf = 0;
			if (pidfd >= 0)
				pf[nf++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
			if (*outfd >= 0)
				pf[nf++] = (struct pollfd){.fd = *outfd, .events = POLLIN};
			int64_t left = next - now;
			if (pidfd < 0 && left > 2000000)
				left = 2000000; /* no pidfd: notice the exit within 2 ms */
			struct timespec ts = {.tv_sec = left / 1000000000, .tv_nsec = left % 1000000000};
			int pr = ppoll(pf, nf, &ts, NULL);
			if (pr > 0 && *outfd >= 0) {
				struct pollfd *op = &pf[nf - 1];
				if (op->revents & (POLLIN | POLLHUP)) {
					jr_drain(*outfd, r, o->echo);
					if (op->revents & POLLHUP && !(op->revents & POLLIN)) {
						close(*outfd);
						*outfd = -1;
					}
				}
			}
		}
	}
	/* the closing tick: on_tick sees the command's processes gone, so a
	 * log of the run ends as the run did (analyze finds their end); the
	 * result's figures are the ticks' above */
	const vramz_snapshot *s;
	if (r->started && o->on_tick &&
	    vramz_sample(ctx, VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL, &s) >= 0)
		o->on_tick(o->arg, s, NULL);
	return status;
}

int jobrun(vramz_ctx *ctx, char **argv, const struct jobrun_opts *o,
	   struct jobrun_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	r->ngpus = vramz_selected_count(ctx);
	if (r->ngpus > JOBRUN_MAX_GPUS)
		r->ngpus = JOBRUN_MAX_GPUS;
	for (unsigned i = 0; i < r->ngpus; i++)
		r->gpus[i].index = vramz_selected_index(ctx, i);
	jr_energy(ctx, r, 0);

	struct proctree *t = proctree_new("/proc", (unsigned)getpid());
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return VRAMZ_ENOMEM;
	}
	/* orphaned workers come back to us, not to init */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	int errpipe[2], outpipe[2] = {-1, -1};
	if (pipe2(errpipe, O_CLOEXEC) || (o->capture && pipe2(outpipe, O_CLOEXEC))) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		proctree_free(t);
		return VRAMZ_EIO;
	}
	int take_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();

	/* handlers before the fork, so a signal in between is not lost */
	struct sigaction sa, old[JR_NSIG];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = jr_forward;
	sigemptyset(&sa.sa_mask);
	jr_pgid = 0;
	jr_forwarded = 0;
	for (size_t i = 0; i < JR_NSIG; i++)
		sigaction(jr_signals[i], &sa, &old[i]);

	int64_t t0 = clock_mono_ns();
	pid_t child = fork();
	if (child == 0)
		jr_exec(argv, errpipe[1], outpipe[1], take_tty);
	close(errpipe[1]);
	if (outpipe[1] >= 0)
		close(outpipe[1]);
	int rc = 0;
	if (child < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		rc = VRAMZ_EIO;
		goto out;
	}
	setpgid(child, child); /* also here: whichever runs first wins the race */
	jr_pgid = child;
	if (take_tty) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, child);
	}
	int e = 0;
	ssize_t en = read(errpipe[0], &e, sizeof e);
	close(errpipe[0]);
	r->started = en != (ssize_t)sizeof e;
	if (!r->started)
		r->exec_errno = e;
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (outpipe[0] >= 0)
		fcntl(outpipe[0], F_SETFL, O_NONBLOCK);

	int status = jr_wait(ctx, t, o, r, child, pidfd, &outpipe[0], t0);
	r->duration_ms = (clock_mono_ns() - t0) / 1000000;
	if (outpipe[0] >= 0)
		jr_drain(outpipe[0], r, o->echo);
	if (pidfd >= 0)
		close(pidfd);
	if (WIFEXITED(status)) {
		r->exited = 1;
		r->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->signaled = 1;
		r->signo = WTERMSIG(status);
	}
	if (!r->started)
		r->exited = 0;
	r->left_running = 0;
	int left = proctree_list(t, NULL, 0);
	if (left > 0)
		r->left_running = (unsigned)left;
	r->proc_reads = proctree_reads(t);
	jr_energy(ctx, r, 1);
out:
	if (take_tty) {
		tcsetpgrp(STDIN_FILENO, getpgrp());
		signal(SIGTTOU, SIG_DFL);
	}
	r->interrupted = jr_forwarded;
	jr_pgid = 0;
	for (size_t i = 0; i < JR_NSIG; i++)
		sigaction(jr_signals[i], &old[i], NULL);
	if (outpipe[0] >= 0)
		close(outpipe[0]);
	proctree_free(t);
	return rc;
}
