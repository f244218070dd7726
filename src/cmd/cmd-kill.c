/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-kill.c - `vramz kill PID... | --idle DURATION`: clears out what
 * blocks a job - processes holding GPU memory - without ever signalling
 * the wrong process.
 *
 * Dry run by default: it lists what it would terminate and why (memory,
 * idle time) and what it refuses to touch (safekill.c decides: reused
 * pids, other users' processes unless root, vramz itself, pid 1, the
 * shell that ran it).  With --yes (or --ask and a "y") it sends SIGTERM
 * through a pidfd, waits --timeout, sends SIGKILL when --force says so,
 * then samples again until the driver stops listing what it ended (a
 * bounded wait, --settle) and reports per GPU how much memory came back
 * and what is still held, and by whom: a zombie, a child that outlived
 * its parent, or memory no listed process owns.
 *
 * "Idle" is measured, not guessed: vramz watches the GPUs for DURATION and
 * applies the library's idle rule (vramz_idle_verdict, the one the
 * idle_holder finding uses): the driver reported its SM utilization at
 * every sample and it was 0 every time, and its memory did not move beyond
 * noise.  A process whose utilization is unknown is never called idle; a
 * process that was not taken is listed with the reason ("its memory grew
 * 1.2 GiB in the window").
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "format/jsondoc.h"
#include "clock.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsonw.h"
#include "grow.h"
#include "jobs/jobrun.h"
#include "proc.h"
#include "jobs/safekill.h"
#include "vramz/diagnose.h"

#define KILL_MAX_GPUS 64

enum kill_state { KS_PLANNED, KS_REFUSED, KS_ENDED, KS_KILLED, KS_SURVIVED, KS_GONE };

struct kill_target {
	unsigned pid;
	unsigned long long start_ticks;
	uint32_t uid;
	char user[VRAMZ_USER_LEN];
	char cmd[VRAMZ_CMD_LEN];
	uint64_t used_bytes;                 /* over all selected GPUs */
	uint64_t gpu_bytes[KILL_MAX_GPUS];   /* by selection slot */
	int64_t idle_ms;                     /* -1: not measured */
	enum safekill_verdict verdict;
	const char *why_not;                 /* refusal other than a verdict */
	char why_buf[112];                   /* set: the reason, in place of why_not's
					        constant (the array may move) */
	enum kill_state state;
	int pidfd;
};

struct kill_conf {
	int64_t idle_ms, timeout_ms, settle_ms, interval_ms;
	uint64_t min_bytes;
	int yes, ask, force;
};

struct kill_plan {
	struct kill_target *t;
	unsigned n, cap;
	/* per selection slot, before and after */
	uint64_t before[KILL_MAX_GPUS], after[KILL_MAX_GPUS];
	int before_ok[KILL_MAX_GPUS], after_ok[KILL_MAX_GPUS];
	unsigned ngpus;
};

static void kill_sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static struct kill_target *kill_find(struct kill_plan *pl, unsigned pid)
{
	for (unsigned i = 0; i < pl->n; i++)
		if (pl->t[i].pid == pid)
			return &pl->t[i];
	return NULL;
}

static struct kill_target *kill_add(struct kill_plan *pl, unsigned pid)
{
	struct kill_target *t = kill_find(pl, pid);
	if (t)
		return t;
	if (pl->n == pl->cap) {
		struct kill_target *nt = grow_array(pl->t, &pl->cap, 16, sizeof *nt);
		if (!nt)
			return NULL;
		pl->t = nt;
	}
	t = &pl->t[pl->n++];
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->idle_ms = -1;
	t->pidfd = -1;
	return t;
}

/* Fills a target's identity and memory from a snapshot; 0 when the driver
 * does not list pid on any selected GPU. */
static int kill_fill(struct kill_target *t, const vramz_snapshot *s)
{
	int found = 0;
	t->used_bytes = 0;
	for (unsigned g = 0; g < s->gpu_count && g < KILL_MAX_GPUS; g++) {
		const vramz_gpu_sample *gs = &s->gpus[g];
		t->gpu_bytes[g] = 0;
		for (unsigned k = gs->proc_first; k < gs->proc_first + gs->proc_count; k++) {
			const vramz_proc_sample *p = &s->procs[k];
			if (p->pid != t->pid)
				continue;
			found = 1;
			if (p->valid & VRAMZ_P_USED) {
				t->gpu_bytes[g] += p->used_bytes;
				t->used_bytes += p->used_bytes;
			}
			if (p->valid & VRAMZ_P_VISIBLE) {
				t->start_ticks = p->start_time_ticks;
				t->uid = p->uid;
				snprintf(t->user, sizeof t->user, "%s", p->user);
				snprintf(t->cmd, sizeof t->cmd, "%s", p->cmdline);
			}
		}
	}
	return found;
}

static int kill_sample(vramz_ctx *ctx, unsigned flags, const vramz_snapshot **s)
{
	int rc = vramz_sample(ctx, flags, s);
	if (rc < 0 && rc != VRAMZ_ELOST) {
		cli_err("kill: sampling failed: %s", vramz_strerror(rc));
		return -1;
	}
	return 0;
}

static void kill_memory(struct kill_plan *pl, const vramz_snapshot *s, int after)
{
	pl->ngpus = s->gpu_count < KILL_MAX_GPUS ? s->gpu_count : KILL_MAX_GPUS;
	for (unsigned g = 0; g < pl->ngpus; g++) {
		int ok = !s->gpus[g].lost && (s->gpus[g].valid & VRAMZ_F_MEM);
		(after ? pl->after_ok : pl->before_ok)[g] = ok;
		(after ? pl->after : pl->before)[g] = s->gpus[g].mem_used_bytes;
	}
}

static int pid_in(const unsigned *pids, int n, unsigned pid)
{
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/* Watches for o->idle_ms; adds every process that was listed from the first
 * sample to the last, reported 0 % SM each time, and holds >= min bytes.
 * With pids (npids > 0) only those are candidates, and each one that was
 * not idle is listed as refused, with the reason. */
static int kill_watch_idle(vramz_ctx *ctx, const struct kill_conf *o, struct kill_plan *pl,
			   const unsigned *pids, int npids)
{
	struct watch {
		unsigned pid;
		unsigned long long start;
		int gone, last_seen;
		vramz_idle_track idle;       /* the library's idle rule */
	} *w = NULL;
	unsigned nw = 0, cw = 0;
	int64_t step = o->interval_ms;
	if (step > o->idle_ms / 5)
		step = o->idle_ms / 5 > 10 ? o->idle_ms / 5 : 10;
	int64_t t0 = clock_mono_ms(), deadline = t0 + o->idle_ms;
	const vramz_snapshot *s = NULL;
	for (int tick = 0;; tick++) {
		/* every tick reads utilization for real (every sample since the
		 * last read): the views' shortcuts - a reading reused for 5 s, 0 %
		 * inferred from an idle GPU - could call a process idle that ran
		 * in between */
		if (kill_sample(ctx, VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL_NOW, &s)) {
			free(w);
			return -1;
		}
		if (tick == 0)
			kill_memory(pl, s, 0);
		for (unsigned i = 0; i < nw; i++)
			w[i].last_seen = 0;
		for (unsigned k = 0; k < s->proc_count; k++) {
			const vramz_proc_sample *p = &s->procs[k];
			unsigned i;
			for (i = 0; i < nw && w[i].pid != p->pid; i++)
				;
			if (i == nw) {
				if (tick > 0)
					continue; /* arrived during the watch: not idle for DURATION */
				if (npids > 0 && !pid_in(pids, npids, p->pid))
					continue;
				if (nw == cw) {
					void *nv = grow_array(w, &cw, 32, sizeof *w);
					if (!nv) {
						free(w);
						cli_err("kill: out of memory");
						return -1;
					}
					w = nv;
				}
				w[nw++] = (struct watch){.pid = p->pid, .start = p->start_time_ticks};
				vramz_idle_reset(&w[nw - 1].idle);
			}
			w[i].last_seen = 1;
			if (p->start_time_ticks != w[i].start)
				w[i].gone = 1; /* the pid went to another process */
			/* a process on several GPUs: each GPU's row is one more sample */
			vramz_idle_feed(&w[i].idle, s->time_ms, p);
		}
		for (unsigned i = 0; i < nw; i++)
			if (!w[i].last_seen)
				w[i].gone = 1; /* gone, even for a moment: not one process */
		int64_t now = clock_mono_ms();
		if (now >= deadline && tick > 0)
			break;
		kill_sleep_ms(deadline - now < step ? (deadline - now > 0 ? deadline - now : 0) : step);
	}
	for (unsigned i = 0; i < nw; i++) {
		char why[96];
		int idle = !w[i].gone && vramz_idle_verdict(&w[i].idle, why, sizeof why);
		struct kill_target t = {.pid = w[i].pid};
		if (!kill_fill(&t, s) || t.used_bytes < o->min_bytes)
			continue;
		/* not idle: listed (as refused, with why) when named, or when only
		 * its memory moving kept it from being taken - what would have been
		 * called idle before the rule looked at memory */
		if (!idle && npids == 0 && (w[i].gone || w[i].idle.sm_max_pct > 0 ||
					    w[i].idle.sm_unknown == w[i].idle.samples))
			continue;
		struct kill_target *nt = kill_add(pl, w[i].pid);
		if (!nt) {
			free(w);
			cli_err("kill: out of memory");
			return -1;
		}
		kill_fill(nt, s);
		if (idle) {
			nt->idle_ms = clock_mono_ms() - t0;
		} else {
			snprintf(nt->why_buf, sizeof nt->why_buf, "not idle: %s",
				 w[i].gone ? "it ended or its pid was reused during the window" : why);
			nt->why_not = "not idle";
		}
	}
	free(w);
	for (int i = 0; i < npids; i++) {
		if (kill_find(pl, pids[i]))
			continue;
		struct kill_target *nt = kill_add(pl, pids[i]);
		if (!nt) {
			cli_err("kill: out of memory");
			return -1;
		}
		int listed = kill_fill(nt, s);
		nt->why_not = !listed ? "holds no memory on the selected GPUs (not listed by the driver)"
			      : nt->used_bytes < o->min_bytes ? "holds less than --min"
			      : "not idle: it arrived after the watch began";
	}
	return 0;
}

static const char *kill_state_str(const struct kill_target *t, int acted)
{
	switch (t->state) {
	case KS_PLANNED: return acted ? "-" : "would terminate";
	case KS_REFUSED: return "refused";
	case KS_ENDED: return "terminated (SIGTERM)";
	case KS_KILLED: return "killed (SIGKILL)";
	case KS_SURVIVED: return "still running";
	case KS_GONE: return "ended before the signal";
	}
	return "?";
}

static const char *kill_reason(const struct kill_target *t)
{
	if (t->why_buf[0])
		return t->why_buf;
	return t->why_not ? t->why_not : safekill_reason(t->verdict);
}

static void kill_print_plan(FILE *f, vramz_ctx *ctx, const struct kill_plan *pl, int acted)
{
	char b[32], d[32], c[48];
	if (!pl->n) {
		fprintf(f, "nothing to terminate\n");
		return;
	}
	fprintf(f, "%-8s %-10s %10s %8s  %-24s %s\n", "PID", "USER", "MEMORY", "IDLE",
		"ACTION", "COMMAND");
	for (unsigned i = 0; i < pl->n; i++) {
		const struct kill_target *t = &pl->t[i];
		fprintf(f, "%-8u %-10s %10s %8s  %-24s %s\n", t->pid, *t->user ? t->user : "-",
			fmt_bytes(b, sizeof b, t->used_bytes),
			t->idle_ms >= 0 ? jobrun_fmt_secs(d, sizeof d, t->idle_ms) : "-",
			kill_state_str(t, acted), fmt_trunc(c, sizeof c, *t->cmd ? t->cmd : "-", 40));
		if (t->state == KS_REFUSED)
			fprintf(f, "         refused: %s\n", kill_reason(t));
	}
	(void)ctx;
}

static void kill_report(FILE *f, vramz_ctx *ctx, const struct kill_plan *pl,
			const vramz_snapshot *s)
{
	char a[32], b[32], c[32];
	fprintf(f, "\n%-4s %10s %10s %10s\n", "GPU", "BEFORE", "AFTER", "RETURNED");
	for (unsigned g = 0; g < pl->ngpus; g++) {
		int ok = pl->before_ok[g] && pl->after_ok[g];
		uint64_t back = ok && pl->before[g] > pl->after[g] ? pl->before[g] - pl->after[g] : 0;
		fprintf(f, "%-4u %10s %10s %10s\n", s->gpus[g].index,
			fmt_bytes_if(a, sizeof a, pl->before_ok[g], pl->before[g]),
			fmt_bytes_if(b, sizeof b, pl->after_ok[g], pl->after[g]),
			fmt_bytes_if(c, sizeof c, ok, back));
		const vramz_gpu_sample *gs = &s->gpus[g];
		for (unsigned k = gs->proc_first; k < gs->proc_first + gs->proc_count; k++) {
			const vramz_proc_sample *p = &s->procs[k];
			const struct kill_target *t = kill_find((struct kill_plan *)pl, p->pid);
			if (!t || t->state == KS_REFUSED)
				continue;
			fprintf(f, "     still held: pid %u %s (%s)\n", p->pid,
				fmt_bytes_if(a, sizeof a, p->valid & VRAMZ_P_USED, p->used_bytes),
				t->state == KS_SURVIVED ? "it is still running" :
				"the driver still lists it: a zombie or a context being torn down");
		}
		for (unsigned k = gs->proc_first; k < gs->proc_first + gs->proc_count; k++) {
			const vramz_proc_sample *p = &s->procs[k];
			if (!(p->valid & VRAMZ_P_VISIBLE) || kill_find((struct kill_plan *)pl, p->pid))
				continue;
			/* a child of a target outlives it: re-parented, but it was
			 * started by what we ended, which is what a user asks about */
			const struct kill_target *par = kill_find((struct kill_plan *)pl, p->ppid);
			if (par && par->state != KS_REFUSED)
				fprintf(f, "     still held: pid %u %s (a child of %u)\n", p->pid,
					fmt_bytes_if(a, sizeof a, p->valid & VRAMZ_P_USED, p->used_bytes),
					par->pid);
		}
		if ((gs->valid & VRAMZ_F_UNATTRIBUTED) && gs->unattributed_bytes)
			fprintf(f, "     %s held by no listed process\n",
				fmt_bytes(a, sizeof a, gs->unattributed_bytes));
	}
	(void)ctx;
}

static void kill_json(vramz_ctx *ctx, const struct kill_plan *pl, int acted,
		      const vramz_snapshot *s)
{
	struct jsonw w;
	jw_init(&w, stdout, 1);
	json_envelope(&w, "kill");
	jw_bool(&w, "dry_run", !acted);
	jw_arr(&w, "targets");
	static const char *const st[] = {"planned", "refused", "terminated", "killed",
					 "survived", "gone"};
	for (unsigned i = 0; i < pl->n; i++) {
		const struct kill_target *t = &pl->t[i];
		jw_obj(&w, NULL);
		jw_u64(&w, "pid", t->pid);
		jw_str(&w, "user", *t->user ? t->user : NULL);
		jw_str(&w, "command", *t->cmd ? t->cmd : NULL);
		jw_u64(&w, "used_bytes", t->used_bytes);
		jw_i64_if(&w, "idle_ms", t->idle_ms >= 0, t->idle_ms);
		jw_str(&w, "state", st[t->state]);
		jw_str(&w, "refused_because", t->state == KS_REFUSED ? kill_reason(t) : NULL);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_arr(&w, "gpus");
	for (unsigned g = 0; g < pl->ngpus; g++) {
		const vramz_gpu_info *gi = vramz_gpu(ctx, s->gpus[g].index);
		int ok = acted && pl->before_ok[g] && pl->after_ok[g];
		jw_obj(&w, NULL);
		jw_u64(&w, "index", s->gpus[g].index);
		jw_str(&w, "uuid", gi ? gi->uuid : NULL);
		jw_u64_if(&w, "used_before_bytes", pl->before_ok[g], pl->before[g]);
		jw_u64_if(&w, "used_after_bytes", acted && pl->after_ok[g], pl->after[g]);
		jw_u64_if(&w, "returned_bytes", ok,
			  ok && pl->before[g] > pl->after[g] ? pl->before[g] - pl->after[g] : 0);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	jw_end_obj(&w);
	jw_finish(&w);
}

/* Signals every planned target; returns how many did not end. */
static unsigned kill_act(struct kill_plan *pl, const struct kill_conf *o, uid_t me)
{
	unsigned survivors = 0;
	for (unsigned i = 0; i < pl->n; i++) {
		struct kill_target *t = &pl->t[i];
		if (t->state != KS_PLANNED)
			continue;
		struct safekill_target st = {.pid = (pid_t)t->pid, .start_ticks = t->start_ticks};
		t->verdict = safekill_signal("/proc", &st, me, SIGTERM, &t->pidfd);
		if (t->verdict == SK_GONE)
			t->state = KS_GONE;
		else if (t->verdict != SK_OK)
			t->state = KS_REFUSED;
	}
	int64_t deadline = clock_mono_ms() + o->timeout_ms;
	for (unsigned i = 0; i < pl->n; i++) {
		struct kill_target *t = &pl->t[i];
		if (t->pidfd < 0)
			continue;
		int64_t left = deadline - clock_mono_ms();
		if (safekill_wait(t->pidfd, left > 0 ? (long)left : 0)) {
			t->state = KS_ENDED;
		} else if (o->force) {
			safekill_resend(t->pidfd, SIGKILL);
			/* SIGKILL cannot be caught; only a task stuck in the
			 * kernel (D state) outlives this wait */
			t->state = safekill_wait(t->pidfd, 5000) ? KS_KILLED : KS_SURVIVED;
		} else {
			t->state = KS_SURVIVED;
		}
		if (t->state == KS_SURVIVED)
			survivors++;
		close(t->pidfd);
		t->pidfd = -1;
	}
	return survivors;
}

static int kill_ask(unsigned n, int force)
{
	char line[32];
	fprintf(stderr, "send SIGTERM%s to %u process%s? [y/N] ", force ? " (then SIGKILL)" : "",
		n, n == 1 ? "" : "es");
	fflush(stderr);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

static struct kill_conf conf = {.timeout_ms = 10000, .settle_ms = 5000, .interval_ms = 1000};
static const char *gpu_list;

const struct opt kill_opts[] = {
	{0, "idle", OPT_DURATION, &conf.idle_ms, NULL,
	 "watch this long; target processes with 0% SM all along"},
	{0, "min", OPT_SIZE, &conf.min_bytes, NULL, "only processes holding at least SIZE"},
	{0, "gpu", OPT_STR, &gpu_list, "LIST", "only these GPUs (as -g)"},
	{'y', "yes", OPT_FLAG, &conf.yes, NULL, "act: without it vramz only lists (dry run)"},
	{0, "ask", OPT_FLAG, &conf.ask, NULL, "list, then ask on stdin before acting"},
	{0, "timeout", OPT_DURATION, &conf.timeout_ms, NULL,
	 "wait this long after SIGTERM (default 10s)"},
	{0, "force", OPT_FLAG, &conf.force, NULL, "SIGKILL what is still running after --timeout"},
	{0, "settle", OPT_DURATION, &conf.settle_ms, NULL,
	 "wait at most this long for the memory to come back (default 5s)"},
	OPT_SAMPLE_INTERVAL(&conf.interval_ms, "sampling period while watching for --idle (default 1s)"),
	OPT_GPUS,
	OPT_JSON,
	OPT_END,
};
const char kill_synopsis[] =
	"[OPTIONS] PID... | --idle DURATION [--min SIZE] [--gpu LIST] [PID...]";
const char kill_about[] =
	"Terminates processes holding GPU memory, safely.  A dry run unless --yes:\n"
	"never a reused pid, another user's process (unless root), vramz itself,\n"
	"pid 1 or the shell that ran it.  Reports the memory that came back.\n"
	"PIDs with --idle: only those, and only if they were idle.";

/* The PIDs of the command line into pids; 0, or -1 after naming a bad one. */
static int kill_pids(const struct cmd_args *args, unsigned *pids)
{
	for (int i = 0; i < args->n; i++) {
		const char *w = args->v[i];
		char *end;
		errno = 0;
		unsigned long v = strtoul(w, &end, 10);
		if (!*w || *end || errno || v == 0 || v > 0x7fffffffUL || w[0] == '-') {
			cli_err("kill: bad pid '%s'%s", w,
				v == 0 && !*end && *w ? ": 0 names a process group, not a process" : "");
			return -1;
		}
		pids[i] = (unsigned)v;
	}
	return 0;
}

/* Named pids without --idle: each as the driver lists it now, or why not. */
static int kill_plan_named(vramz_ctx *ctx, struct kill_plan *pl, const unsigned *pids, int npids,
			   uid_t me, const vramz_snapshot **s)
{
	if (kill_sample(ctx, VRAMZ_SAMPLE_PROCS, s))
		return -1;
	kill_memory(pl, *s, 0);
	for (int i = 0; i < npids; i++) {
		struct kill_target *t = kill_add(pl, pids[i]);
		if (!t)
			return -1;
		if (!kill_fill(t, *s)) {
			/* who it is (pid 1, the shell) says more than "not listed" */
			struct safekill_target st = {.pid = (pid_t)t->pid,
				.start_ticks = proc_start_time("/proc", t->pid)};
			t->verdict = safekill_check("/proc", &st, me);
			if (t->verdict == SK_OK || t->verdict == SK_GONE)
				t->why_not = "holds no memory on the selected GPUs (not listed by the driver)";
			else
				t->state = KS_REFUSED;
		}
		else if (!t->start_ticks)
			t->why_not = proc_self_is_host() && proc_root_is_host("/proc") ?
				"not visible from here (exited, or hidden by hidepid): cannot be checked" :
				safekill_reason(SK_NAMESPACE);
	}
	return 0;
}

/* The checks a person sees in the listing (repeated at the signal);
 * returns how many targets are refused. */
static int kill_refuse(struct kill_plan *pl, uid_t me)
{
	int refused = 0;
	for (unsigned i = 0; i < pl->n; i++) {
		struct kill_target *t = &pl->t[i];
		struct safekill_target st = {.pid = (pid_t)t->pid, .start_ticks = t->start_ticks};
		if (!t->why_not && t->state != KS_REFUSED)
			t->verdict = safekill_check("/proc", &st, me);
		if (t->why_not || t->verdict != SK_OK) {
			t->state = KS_REFUSED;
			refused++;
		}
	}
	return refused;
}

/* The driver frees a context shortly after its process ends, and the
 * process list and the memory figures are separate reads: a sample can
 * show the process gone and its memory still used.  So sample until no
 * ended target is listed and every GPU's used memory read the same twice
 * running (or --settle passes).  0, or -1 when sampling failed. */
static int kill_settle(vramz_ctx *ctx, const struct kill_plan *pl, const vramz_snapshot **s)
{
	int64_t settle_end = clock_mono_ms() + conf.settle_ms;
	uint64_t *prev_used = calloc(vramz_selected_count(ctx) + 1, sizeof *prev_used);
	int have_prev = 0, rc = 0;
	if (!prev_used) {
		cli_err("kill: out of memory");
		return -1;
	}
	for (;;) {
		if (kill_sample(ctx, VRAMZ_SAMPLE_PROCS, s)) {
			rc = -1;
			break;
		}
		int listed = 0, stable = have_prev;
		for (unsigned k = 0; k < (*s)->proc_count; k++) {
			const struct kill_target *t = kill_find((struct kill_plan *)pl, (*s)->procs[k].pid);
			if (t && (t->state == KS_ENDED || t->state == KS_KILLED || t->state == KS_GONE))
				listed = 1;
		}
		for (unsigned g = 0; g < (*s)->gpu_count && g <= vramz_selected_count(ctx); g++) {
			stable &= prev_used[g] == (*s)->gpus[g].mem_used_bytes;
			prev_used[g] = (*s)->gpus[g].mem_used_bytes;
		}
		have_prev = !listed;
		if ((!listed && stable) || clock_mono_ms() >= settle_end)
			break;
		kill_sleep_ms(50);
	}
	free(prev_used);
	return rc;
}

int cmd_kill(const struct cmd_args *args)
{
	if (args->n == 0 && conf.idle_ms <= 0) {
		cli_err("kill: give PIDs, --idle DURATION, or both (those PIDs, if idle)");
		return EXIT_USAGE;
	}
	if (gpu_list)
		g_opts.gpus = gpu_list;
	unsigned *pids = calloc((size_t)args->n + 1, sizeof *pids);
	if (!pids) {
		cli_err("kill: out of memory");
		return EXIT_FAIL;
	}
	if (kill_pids(args, pids)) {
		free(pids);
		return EXIT_USAGE;
	}
	vramz_ctx *ctx;
	int ex = cli_open(&ctx);
	if (ex) {
		free(pids);
		return ex;
	}
	struct kill_plan *pl = calloc(1, sizeof *pl);
	const vramz_snapshot *s = NULL;
	uid_t me = getuid();
	ex = EXIT_FAIL;
	if (!pl)
		goto out;
	if (conf.idle_ms > 0 ? kill_watch_idle(ctx, &conf, pl, pids, args->n)
			  : kill_plan_named(ctx, pl, pids, args->n, me, &s))
		goto out;
	int refused = kill_refuse(pl, me);
	unsigned planned = pl->n - (unsigned)refused;
	int act = conf.yes || (conf.ask && planned && (kill_print_plan(stderr, ctx, pl, 0),
						    kill_ask(planned, conf.force)));
	if (!act || !planned) {
		if (g_opts.json) {
			if (!s)
				kill_sample(ctx, VRAMZ_SAMPLE_PROCS, &s);
			kill_json(ctx, pl, 0, s);
		} else if (!conf.ask || !planned) {
			kill_print_plan(stdout, ctx, pl, 0);
		}
		if (planned && !act && !g_opts.json)
			printf("dry run: nothing was signalled (add --yes to act)\n");
		ex = refused ? EXIT_FAIL : EXIT_OK;
		goto out;
	}
	unsigned survivors = kill_act(pl, &conf, me);
	/* a target may also be refused at the signal (its pid was reused) */
	refused = 0;
	for (unsigned i = 0; i < pl->n; i++)
		refused += pl->t[i].state == KS_REFUSED;
	if (kill_settle(ctx, pl, &s))
		goto out;
	kill_memory(pl, s, 1);
	if (g_opts.json) {
		kill_json(ctx, pl, 1, s);
	} else {
		kill_print_plan(stdout, ctx, pl, 1);
		kill_report(stdout, ctx, pl, s);
	}
	ex = refused || survivors ? EXIT_FAIL : EXIT_OK;
out:
	if (pl)
		free(pl->t);
	free(pl);
	free(pids);
	cli_close(ctx);
	return ex;
}
