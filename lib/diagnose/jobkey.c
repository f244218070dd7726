/* SPDX-License-Identifier: Apache-2.0 */
/* jobkey.c - which job a GPU process belongs to, for the imbalance and
 * stray-context detectors and for the `job` of every finding.
 *
 * Grouping is what makes "this job's GPUs hold very different amounts" true
 * or false, and the cheap signal - a shared process group - is wrong as
 * often as it is right: every process a non-interactive shell script starts
 * shares the script's group, related or not.  So the key is the strongest
 * identity known, in this order:
 *
 *   1. what /proc's cgroup told the sampler: Slurm job, Kubernetes pod,
 *      container ("slurm:123", "pod:NAMESPACE/NAME" when the kubelet's
 *      log directories name the pod (lib/kube.c), else "pod:UID",
 *      "container:<12 hex>");
 *   2. a distributed-training identity from the process's environment,
 *      read once per process (pid + start time: an environment never
 *      changes after exec): TORCHELASTIC_RUN_ID ("torchrun:ID"), else
 *      MASTER_ADDR + MASTER_PORT of a process that is a rank (RANK,
 *      LOCAL_RANK, WORLD_SIZE, OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK
 *      set: "master:HOST:PORT"), else SLURM_JOB_ID, else an MPI namespace
 *      (PMIX_NAMESPACE: "mpi:NS");
 *   3. the parent process, when the parent is a launcher and not a shell,
 *      init or a session leader ("parent:PID (comm)"): torchrun's agent,
 *      mpirun, mp.spawn's main process.  Two jobs a shell started are
 *      siblings too, and are not one job.
 *
 * Anything else is no job: never grouped.  The environment is readable only
 * for the caller's own processes (or as root); when it is not, rule 3 still
 * applies.  Without a /proc (replaying a log, whose pids belong to another
 * time) rule 2 is skipped and rule 3 needs the parent's name from the log
 * itself (the parent holds a GPU context too) or a multiprocessing child's
 * command line (`--multiprocessing-fork`: its parent is a Python launcher).
 *
 * Results are cached per (pid, start time, ppid); entries not asked about
 * for a few ticks are dropped, so memory follows the live processes.
 */
#include "jobkey.h"
#include "hashtab.h"
#include "proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JK_ENV_MAX (256u * 1024) /* of /proc/PID/environ; the variables wanted come early */
#define JK_STALE_TICKS 8u        /* a process missing this many ticks is forgotten */

struct jk_entry {
	uint32_t pid;                 /* 0: empty */
	uint32_t ppid;
	uint64_t start;
	uint64_t tick;                /* last asked about */
	char key[VRAMZ_JOB_LEN];
};

struct jobkey_cache {
	char *root;                   /* NULL: no /proc (log replay) */
	struct htab tab;              /* of struct jk_entry, by (pid, start) */
	uint64_t tick;
	char *envbuf;                 /* JK_ENV_MAX + 1, allocated on first use */
	unsigned env_reads;           /* environments read (tests: once per process) */
};

static uint64_t jk_hash(const void *e);
static int jk_used(const void *e);

struct jobkey_cache *jobkey_new(const char *proc_root)
{
	struct jobkey_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	htab_init(&c->tab, sizeof(struct jk_entry), jk_hash, jk_used);
	if (proc_root && !(c->root = strdup(proc_root))) {
		free(c);
		return NULL;
	}
	return c;
}

void jobkey_free(struct jobkey_cache *c)
{
	if (!c)
		return;
	free(c->root);
	htab_free(&c->tab);
	free(c->envbuf);
	free(c);
}

unsigned jobkey_env_reads(const struct jobkey_cache *c)
{
	return c ? c->env_reads : 0;
}

/* ---- pure parts ---- */

/* Value of NAME in a NUL-separated environment block, or NULL. */
static const char *env_get(const char *env, size_t n, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < n;) {
		const char *e = env + i;
		size_t len = strnlen(e, n - i);
		if (len > nl && !memcmp(e, name, nl) && e[nl] == '=')
			return e + nl + 1;
		i += len + 1;
	}
	return NULL;
}

int jobkey_from_environ(const char *env, size_t n, char *out, size_t len)
{
	static const char *const rank_vars[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE",
						"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	const char *v;
	int is_rank = 0;
	out[0] = 0;
	for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0] && !is_rank; i++)
		is_rank = env_get(env, n, rank_vars[i]) != NULL;
	/* torchrun without --rdzv-id runs every job as "none": not an identity */
	v = env_get(env, n, "TORCHELASTIC_RUN_ID");
	if (v && *v && strcmp(v, "none")) {
		snprintf(out, len, "torchrun:%s", v);
		return is_rank;
	}
	/* MASTER_ADDR/PORT alone may be a user's exported default: only a rank's count */
	const char *ma = env_get(env, n, "MASTER_ADDR"), *mp = env_get(env, n, "MASTER_PORT");
	if (is_rank && ma && *ma && mp && *mp) {
		snprintf(out, len, "master:%s:%s", ma, mp);
		return is_rank;
	}
	if ((v = env_get(env, n, "SLURM_JOB_ID")) && *v) {
		snprintf(out, len, "slurm:%s", v);
		return is_rank;
	}
	if ((v = env_get(env, n, "PMIX_NAMESPACE")) && *v) {
		snprintf(out, len, "mpi:%s", v);
		return is_rank;
	}
	return is_rank;
}

/* 1: a launcher whose children are ranks of one job, even when it leads its
 * session; -1: a shell, init, terminal, daemon or notebook server whose
 * children are unrelated jobs; 0: anything else (a Python main process). */
int jobkey_parent_kind(const char *comm)
{
	static const char *const launchers[] = {
		"torchrun", "mpirun", "mpiexec", "mpiexec.hydra", "orted", "prted", "prterun",
		"hydra_pmi_proxy", "deepspeed", "accelerate", "horovodrun", "srun", "slurmstepd",
	};
	static const char *const not_launchers[] = {
		"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "busybox",
		"login", "sshd", "su", "sudo", "init", "systemd", "tmux", "tmux: server", "screen",
		"SCREEN", "xargs", "make", "gmake", "parallel", "nohup", "setsid", "tini",
		"dumb-init", "docker-init", "containerd-shim", "conmon", "runc", "slurm_script",
		"cron", "crond", "supervisord", "code", "node",
	};
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
		if (!strcmp(comm, launchers[i]))
			return 1;
	for (size_t i = 0; i < sizeof not_launchers / sizeof not_launchers[0]; i++)
		if (!strcmp(comm, not_launchers[i]))
			return -1;
	if (!strncmp(comm, "jupyter", 7)) /* kernels of one server are separate notebooks */
		return -1;
	return 0;
}

/* ---- reading /proc ---- */

/* Reads ROOT/PID/environ into c->envbuf; its length, or -1 (other user's
 * process without root, gone, or no /proc). */
static ssize_t read_environ(struct jobkey_cache *c, uint32_t pid)
{
	char path[4096];
	if (!c->root ||
	    (size_t)snprintf(path, sizeof path, "%s/%u/environ", c->root, (unsigned)pid) >= sizeof path)
		return -1;
	if (!c->envbuf && !(c->envbuf = malloc(JK_ENV_MAX + 1)))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	c->env_reads++;
	size_t have = 0;
	ssize_t n;
	while (have < JK_ENV_MAX && (n = read(fd, c->envbuf + have, JK_ENV_MAX - have)) > 0)
		have += (size_t)n;
	close(fd);
	c->envbuf[have] = 0;
	return (ssize_t)have;
}

/* Rule 3: the parent, when it is a launcher.  out "" otherwise. */
static void parent_key(const struct jobkey_cache *c, const vramz_snapshot *snap,
		       const vramz_proc_sample *s, char *out, size_t len)
{
	char comm[16] = "";
	out[0] = 0;
	if (s->ppid <= 1)
		return; /* init, or adopted by it: its children are everyone */
	if (c->root) {
		struct proc_stat_fields st;
		if (proc_stat_read(c->root, s->ppid, &st))
			return;
		memcpy(comm, st.comm, sizeof comm);
		int kind = jobkey_parent_kind(comm);
		if (kind < 0 || (kind == 0 && st.session == s->ppid))
			return; /* a shell, or a session leader: a terminal, a daemon */
	} else {
		/* a log: the parent's name is known only when it is listed too */
		int known = 0;
		for (unsigned i = 0; snap && i < snap->proc_count && !known; i++) {
			const vramz_proc_sample *q = &snap->procs[i];
			if (q->pid == s->ppid && (q->valid & VRAMZ_P_VISIBLE)) {
				memcpy(comm, q->comm, sizeof comm);
				comm[sizeof comm - 1] = 0;
				known = 1;
			}
		}
		if (known && jobkey_parent_kind(comm) < 0)
			return;
		if (!known && !strstr(s->cmdline, "--multiprocessing-fork"))
			return; /* could be a shell: siblings alone are no evidence */
	}
	if (comm[0])
		snprintf(out, len, "parent:%u (%s)", (unsigned)s->ppid, comm);
	else
		snprintf(out, len, "parent:%u", (unsigned)s->ppid);
}

void jobkey_compute(struct jobkey_cache *c, const vramz_snapshot *snap,
		    const vramz_proc_sample *s, char *out, size_t len)
{
	out[0] = 0;
	if (!(s->valid & VRAMZ_P_VISIBLE))
		return;
	if (s->slurm_job[0]) {
		snprintf(out, len, "slurm:%s", s->slurm_job);
		return;
	}
	if (s->pod_uid[0]) {
		/* the name a person acts on, when the kubelet's logs give it
		 * and it fits; else the uid.  One pod's processes get the
		 * same key either way: its directory names them all or none. */
		int n = -1;
		if (s->pod[0] && s->pod_namespace[0])
			n = snprintf(out, len, "pod:%s/%s", s->pod_namespace, s->pod);
		if (n < 0 || (size_t)n >= len)
			snprintf(out, len, "pod:%s", s->pod_uid);
		return;
	}
	if (s->container[0]) {
		snprintf(out, len, "container:%.12s", s->container);
		return;
	}
	ssize_t n = read_environ(c, s->pid);
	if (n > 0) {
		jobkey_from_environ(c->envbuf, (size_t)n, out, len);
		if (out[0])
			return;
	}
	parent_key(c, snap, s, out, len);
}

/* ---- the cache ---- */

static uint64_t jk_hash(const void *e)
{
	const struct jk_entry *x = e;
	return htab_mix(htab_mix(HTAB_SEED, x->pid), x->start);
}

static int jk_used(const void *e)
{
	return ((const struct jk_entry *)e)->pid != 0;
}

static int jk_match(const void *e, const void *key)
{
	const struct jk_entry *a = e, *b = key;
	return a->pid == b->pid && a->start == b->start;
}

static int jk_fresh(const void *e, void *arg)
{
	const struct jobkey_cache *c = arg;
	return c->tick - ((const struct jk_entry *)e)->tick < JK_STALE_TICKS;
}

void jobkey_tick(struct jobkey_cache *c)
{
	c->tick++;
	/* forget processes gone for a while: every 64 ticks, when half full of them */
	if (htab_cap(&c->tab) && (c->tick & 63) == 0) {
		unsigned stale = 0;
		for (unsigned i = 0; i < htab_cap(&c->tab); i++)
			stale += jk_used(htab_at(&c->tab, i)) && !jk_fresh(htab_at(&c->tab, i), c);
		if (stale * 2 >= c->tab.count)
			htab_rebuild(&c->tab, c->tab.bits, jk_fresh, c);
	}
}

int jobkey_get(struct jobkey_cache *c, const vramz_snapshot *snap, const vramz_proc_sample *s,
	       char *out, size_t len)
{
	out[0] = 0;
	if (!(s->valid & VRAMZ_P_VISIBLE) || !s->pid)
		return 0;
	if (htab_reserve(&c->tab, 24))
		return VRAMZ_ENOMEM;
	struct jk_entry k = {.pid = s->pid, .start = s->start_time_ticks};
	struct jk_entry *e = htab_at(&c->tab, htab_find(&c->tab, jk_hash(&k), jk_match, &k));
	/* a changed ppid (the parent died: adopted) changes the parent rule's answer */
	if (!e->pid || e->ppid != s->ppid) {
		if (!e->pid)
			htab_added(&c->tab);
		e->pid = s->pid;
		e->start = s->start_time_ticks;
		e->ppid = s->ppid;
		jobkey_compute(c, snap, s, e->key, sizeof e->key);
	}
	e->tick = c->tick;
	/* every process of every tick passes here: a copy, not snprintf */
	size_t n = strnlen(e->key, len - 1);
	memcpy(out, e->key, n);
	out[n] = 0;
	return 0;
}
