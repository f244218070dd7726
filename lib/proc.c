/* SPDX-License-Identifier: Apache-2.0 */
/* proc.c - who holds a GPU: user, command, container, pod and Slurm job of a
 * host pid, read from /proc.
 *
 * NVML names processes by host pid only.  This module turns a pid into what a
 * person asks about (whose is it, what is it, which container / pod / job)
 * and says "not visible" when this /proc cannot see the pid, rather than
 * guessing.  The sampler calls it for every GPU process on every tick, so
 * results are kept in a small per-pid hash table: a cached pid costs one read
 * of /proc/PID/stat, whose start time (field 22) tells a reused pid from the
 * process that held it before, and whose comm tells an exec.  Only then are
 * status, cmdline and cgroup read again, through one open directory fd of
 * /proc/PID so that every file comes from the same process even if the pid is
 * reused meanwhile.  See docs/attribution.md.
 */
#include "proc.h"
#include "clock.h"
#include "hashtab.h"
#include "kube.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What is cached per pid: the fields that cost more than the stat read. */
struct proc_attr {
	uint32_t uid, ns_pid;
	char user[VRAMZ_USER_LEN];
	char cmdline[VRAMZ_CMD_LEN];
	char container[VRAMZ_CONTAINER_LEN];
	char pod_uid[40];
	char slurm_job[24];
};

struct proc_entry {
	uint32_t pid;         /* 0: empty slot (no process has pid 0) */
	uint32_t gen;         /* sweep generation of the last use */
	struct proc_stat_fields st; /* fresh every call; start and comm tell reuse and exec apart */
	struct proc_attr a;
	int64_t checked_ns;   /* CLOCK_MONOTONIC of the last stat read */
};

/* Slots double up to MAX (hashtab.h).  Beyond that (thousands of GPU
 * processes between two sweeps) pids are attributed uncached: correct,
 * only slower, and memory stays bounded (~2 MiB). */
#define PROC_BITS_MAX 12u
#define PROC_USERS 32u

struct proc_user {
	uint32_t uid;
	char name[VRAMZ_USER_LEN];
};

struct proc_cache {
	int rootfd;           /* -1: root unreadable, every pid not visible */
	int host_pids;        /* 1: this /proc numbers pids as NVML does */
	uint32_t gen;
	struct htab tab;      /* of struct proc_entry, by pid */
	/* getpwuid_r may ask LDAP/sssd: at most once per uid. */
	struct proc_user users[PROC_USERS];
	unsigned nusers, next_user;
	int64_t recheck_ns;   /* proc_cache_set_recheck */
	struct kube_names *kube; /* pod and container names (kube.h) */
};

/* ---- reading files ------------------------------------------------------ */

/* Reads up to cap bytes of the file; returns the count or -1. */
static ssize_t proc_read(int dirfd, const char *name, char *buf, size_t cap)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (have < cap && ((n = read(fd, buf + have, cap - have)) > 0 ||
			      (n < 0 && errno == EINTR)))
		have += n > 0 ? (size_t)n : 0;
	close(fd);
	return n < 0 ? -1 : (ssize_t)have;
}

static void proc_copy(char *dst, size_t cap, const char *src, size_t n)
{
	if (!dst || cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int proc_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The next field after p (which is at a field or blanks), "" at the end */
static const char *proc_next_field(const char *p)
{
	while (*p && !proc_space(*p))
		p++;
	while (proc_space(*p))
		p++;
	return p;
}

/* A field of decimal digits at p into *v; -1 when it is not one. */
static int proc_parse_u64(const char *p, uint64_t *v)
{
	uint64_t x = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		x = x * 10 + (uint64_t)(*p - '0');
	if (*p && !proc_space(*p))
		return -1;
	*v = x;
	return 0;
}

int proc_parse_stat(const char *text, struct proc_stat_fields *st)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	uint64_t v[25];
	unsigned have = 2;

	/* comm may hold spaces and parentheses: fields resume after the LAST ')' */
	if (!open || !close || close < open)
		return -1;
	const char *p = close + 1;
	while (proc_space(*p))
		p++;
	if (!*p)
		return -1;
	st->state = *p;
	/* fields 4 .. 24; those read as numbers must be ones */
	for (unsigned f = 4; f <= 24; f++) {
		p = proc_next_field(p);
		if (!*p)
			break;
		v[f] = 0;
		int number = f == 4 || f == 5 || f == 6 || f == 9 || f == 14 || f == 15 || f == 22 ||
			     f == 24;
		if (number && proc_parse_u64(p, &v[f])) {
			if (f < 24)
				return -1;
			break; /* rss: left unknown */
		}
		have = f;
	}
	if (have < 22)
		return -1;
	st->ppid = (uint32_t)v[4];
	st->pgid = (uint32_t)v[5];
	st->session = (uint32_t)v[6];
	st->flags = (unsigned)v[9];
	st->utime_ticks = v[14];
	st->stime_ticks = v[15];
	st->start_ticks = v[22];
	st->has_rss = have >= 24;
	st->rss_pages = st->has_rss ? v[24] : 0;
	proc_copy(st->comm, sizeof st->comm, open + 1, (size_t)(close - open - 1));
	text_sanitize(st->comm);
	return 0;
}

static int proc_read_stat(int dirfd, const char *name, struct proc_stat_fields *st)
{
	char buf[1024];
	ssize_t n = proc_read(dirfd, name, buf, sizeof buf - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return proc_parse_stat(buf, st);
}

static void proc_status_line(const char *line, struct proc_attr *a, int *have_uid)
{
	const char *last;

	if (sscanf(line, "Uid: %" SCNu32, &a->uid) == 1)
		*have_uid = 1; /* the real uid, first of four */
	/* One pid per nested PID namespace, innermost last. */
	else if (!strncmp(line, "NSpid:", 6) && (last = strrchr(line, '\t')))
		sscanf(last, "%" SCNu32, &a->ns_pid);
}

/* status can be long (Groups: lists every supplementary group) and the lines
 * wanted are short, so it is read line by line and an overlong line is
 * skipped instead of cutting the file short. */
static void proc_read_status(int dirfd, struct proc_attr *a, int *have_uid)
{
	char buf[2048], *line, *nl;
	size_t have = 0;
	int skipping = 0, fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, buf + have, sizeof buf - 1 - have)) >= 0 ||
	       errno == EINTR) {
		if (n < 0)
			continue;
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; (nl = memchr(line, '\n', (size_t)(buf + have - line)));
		     line = nl + 1, skipping = 0) {
			*nl = '\0';
			if (!skipping)
				proc_status_line(line, a, have_uid);
		}
		if (n == 0) {
			if (!skipping)
				proc_status_line(line, a, have_uid);
			break;
		}
		have = (size_t)(buf + have - line);
		if (have == sizeof buf - 1)
			skipping = 1, have = 0;
		memmove(buf, line, have);
	}
	close(fd);
}

/* NUL-separated argv joined by spaces.  One byte more than fits is read so
 * that a cut through a UTF-8 character can be seen and moved before it. */
static void proc_read_cmdline(int dirfd, char *out, const char *comm)
{
	char buf[VRAMZ_CMD_LEN];
	ssize_t r = proc_read(dirfd, "cmdline", buf, sizeof buf);
	size_t n = r > 0 ? (size_t)r : 0, i;

	while (n > 0 && buf[n - 1] == '\0')
		n--;
	if (n > VRAMZ_CMD_LEN - 1)
		for (n = VRAMZ_CMD_LEN - 1; n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80;)
			n--;
	if (n == 0) { /* kernel thread, zombie, unreadable: as ps shows them */
		snprintf(out, VRAMZ_CMD_LEN, "[%s]", comm);
		return;
	}
	for (i = 0; i < n; i++)
		out[i] = buf[i] ? buf[i] : ' ';
	out[n] = '\0';
	text_sanitize(out);
}

static void proc_user_name(struct proc_cache *pc, uint32_t uid, char *out)
{
	struct passwd pw, *res = NULL;
	char stackbuf[4096], *buf = stackbuf, *big = NULL, *nb;
	size_t len = sizeof stackbuf;
	struct proc_user *u;
	unsigned i;
	int err;

	for (i = 0; i < pc->nusers; i++)
		if (pc->users[i].uid == uid) {
			memcpy(out, pc->users[i].name, VRAMZ_USER_LEN);
			return;
		}
	while ((err = getpwuid_r(uid, &pw, buf, len, &res)) == ERANGE &&
	       len < (1u << 20) && (nb = realloc(big, len * 2)))
		buf = big = nb, len *= 2;
	/* Not in passwd (a container's user, a deleted account): the number.
	 * A too-long name is cut, never replaced by another user's. */
	if (!err && res && res->pw_name && res->pw_name[0]) {
		proc_copy(out, VRAMZ_USER_LEN, res->pw_name, strlen(res->pw_name));
		text_sanitize(out);
	} else {
		snprintf(out, VRAMZ_USER_LEN, "%" PRIu32, uid);
	}
	free(big);
	if (err && err != ENOENT && err != ESRCH && err != EBADF && err != EPERM)
		return; /* transient (EIO, EMFILE, ENOMEM): ask again next time */
	if (pc->nusers < PROC_USERS) {
		u = &pc->users[pc->nusers++];
	} else {
		u = &pc->users[pc->next_user];
		pc->next_user = (pc->next_user + 1) % PROC_USERS;
	}
	u->uid = uid;
	memcpy(u->name, out, VRAMZ_USER_LEN);
}

/* ---- cgroup paths --------------------------------------------------------- */

/* Lowercase only: runtimes write ids in lowercase, and "DEADBEEF…"-shaped
 * unit names are not ids. */
static int proc_is_hex(const char *s, size_t n)
{
	while (n--)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return 0;
	return 1;
}

static int proc_ends(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !memcmp(s + n - k, suf, k);
}

/* One path component c[0..n): "<64hex>", "docker-<64hex>.scope",
 * "cri-containerd-…", "crio-…", "libpod-…".  Exactly 64 hex, so names such as
 * "session-3.scope" never pass for a container. */
static const char *proc_container_id(const char *c, size_t n)
{
	if (proc_ends(c, n, ".scope"))
		n -= 6;
	if (n == 64 && proc_is_hex(c, 64))
		return c;
	if (n > 64 && c[n - 65] == '-' && proc_is_hex(c + n - 64, 64))
		return c + n - 64;
	return NULL;
}

/* "pod<uid>" (cgroupfs driver) or "kubepods-<qos>-pod<uid_>.slice" (systemd
 * driver, dashes written as '_').  A static pod's uid is 32 hex, no dashes. */
static int proc_pod_uid(const char *c, size_t n, char *out, size_t cap)
{
	const char *u = NULL;
	char tmp[40];
	size_t len, i;

	if (n > 3 && !memcmp(c, "pod", 3))
		u = c + 3;
	else if ((u = memmem(c, n, "-pod", 4)) != NULL)
		u += 4;
	if (!u)
		return 0;
	len = n - (size_t)(u - c);
	if (proc_ends(u, len, ".slice"))
		len -= 6;
	if (len != 32 && len != 36)
		return 0;
	for (i = 0; i < len; i++) {
		tmp[i] = u[i] == '_' ? '-' : u[i];
		if (tmp[i] != '-' && !proc_is_hex(&tmp[i], 1))
			return 0;
	}
	proc_copy(out, cap, tmp, len);
	return 1;
}

/* "job_<digits>", below a component naming slurm: "/slurm/uid_1000/job_42",
 * "/system.slice/slurmstepd.scope/job_42", "/slurm_node3/...". */
static int proc_slurm_job(const char *c, size_t n, char *out, size_t cap)
{
	size_t i;

	if (n < 5 || n > 4 + 20 || memcmp(c, "job_", 4))
		return 0;
	for (i = 4; i < n; i++)
		if (c[i] < '0' || c[i] > '9')
			return 0;
	proc_copy(out, cap, c + 4, n - 4);
	return 1;
}

void proc_parse_cgroup(const char *text, char *container, size_t clen,
		       char *pod_uid, size_t plen, char *slurm_job, size_t slen)
{
	const char *line, *end, *c1, *c2, *p, *comp, *id;
	int have_c = 0, have_p = 0, have_s = 0, kube, slurm, line_c;
	size_t n;

	proc_copy(container, clen, "", 0);
	proc_copy(pod_uid, plen, "", 0);
	proc_copy(slurm_job, slen, "", 0);
	/* Lines are "N:controllers:/path" (v1) or "0::/path" (v2).  On hybrid
	 * hosts the lines may disagree; the first line naming a thing wins, and
	 * within a path the innermost container (docker-in-docker). */
	for (line = text; line && *line; line = *end ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		c1 = memchr(line, ':', (size_t)(end - line));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		kube = slurm = line_c = 0;
		for (p = c2 ? c2 + 1 : end; p < end; p = comp + 1) {
			comp = p + strcspn(p, "/\n");
			n = (size_t)(comp - p);
			if (n >= 8 && !memcmp(p, "kubepods", 8))
				kube = 1;
			if (!have_c && (id = proc_container_id(p, n)) != NULL) {
				proc_copy(container, clen, id, 64);
				line_c = 1;
			}
			if (!have_p && kube && proc_pod_uid(p, n, pod_uid, plen))
				have_p = 1;
			if (!have_s && slurm && proc_slurm_job(p, n, slurm_job, slen))
				have_s = 1;
			if (memmem(p, n, "slurm", 5))
				slurm = 1;
		}
		have_c |= line_c;
	}
}

/* ---- whose pids ------------------------------------------------------------ */

/* The initial PID namespace's inode is fixed by the kernel
 * (PROC_PID_INIT_INO); NVML reports pids as that namespace numbers them. */
#define PROC_INIT_PIDNS "pid:[4026531836]"

static int proc_ns_is_init(int dirfd, const char *path)
{
	char link[64];
	ssize_t n = readlinkat(dirfd, path, link, sizeof link - 1);

	if (n < 0)
		return -1;
	link[n] = '\0';
	return strcmp(link, PROC_INIT_PIDNS) == 0;
}

/* Does the /proc behind rootfd number pids as the driver does?  Pid 1 of a
 * procfs belongs to the namespace that procfs shows, so its ns/pid link
 * answers directly (readable by root).  Else: if vramz itself is in the
 * initial namespace and this procfs shows it (self resolves), the procfs
 * is the initial namespace's too, for that namespace has no ancestor.
 * Anything unproven is "no": a pid NVML names is then never matched to a
 * local process that merely wears the same number. */
static int proc_root_host_pids(int rootfd)
{
	int r;

	if (rootfd < 0)
		return 0;
	if ((r = proc_ns_is_init(rootfd, "1/ns/pid")) >= 0)
		return r;
	return proc_ns_is_init(rootfd, "self/ns/pid") == 1;
}

int proc_root_is_host(const char *root)
{
	int fd = open(root ? root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = proc_root_host_pids(fd);

	if (fd >= 0)
		close(fd);
	return r;
}

int proc_self_is_host(void)
{
	return proc_ns_is_init(AT_FDCWD, "/proc/self/ns/pid") == 1;
}

const char *proc_root(void)
{
	const char *r = getenv("VRAMZ_PROCFS_ROOT");
	return r && *r ? r : "/proc";
}

/* ---- the cache ------------------------------------------------------------- */

static uint64_t proc_hash(const void *e)
{
	return ((const struct proc_entry *)e)->pid;
}

static int proc_used(const void *e)
{
	return ((const struct proc_entry *)e)->pid != 0;
}

static int proc_match(const void *e, const void *pid)
{
	return ((const struct proc_entry *)e)->pid == *(const uint32_t *)pid;
}

struct proc_cache *proc_cache_new(const char *root)
{
	struct proc_cache *pc = calloc(1, sizeof *pc);

	if (!pc)
		return NULL;
	htab_init(&pc->tab, sizeof(struct proc_entry), proc_hash, proc_used);
	if (htab_reserve(&pc->tab, PROC_BITS_MAX)) {
		free(pc);
		return NULL;
	}
	/* Unopenable root is not an allocation failure: every pid is then
	 * reported not visible, which is the truth from here. */
	pc->rootfd = open(root ? root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pc->host_pids = proc_root_host_pids(pc->rootfd);
	/* reads nothing until a process of a pod asks */
	pc->kube = kube_names_new(NULL);
	if (!pc->kube) {
		proc_cache_free(pc);
		return NULL;
	}
	return pc;
}

int proc_cache_host_pids(const struct proc_cache *pc)
{
	return pc && pc->host_pids;
}

void proc_cache_free(struct proc_cache *pc)
{
	if (!pc)
		return;
	if (pc->rootfd >= 0)
		close(pc->rootfd);
	kube_names_free(pc->kube);
	htab_free(&pc->tab);
	free(pc);
}

/* The slot holding pid, or the empty slot where it belongs. */
static struct proc_entry *proc_slot(struct proc_cache *pc, uint32_t pid)
{
	return htab_at(&pc->tab, htab_find(&pc->tab, pid, proc_match, &pid));
}

void proc_cache_sweep(struct proc_cache *pc)
{
	unsigned i;

	if (!pc)
		return;
	/* An entry shifted into an already visited slot was already judged,
	 * and kept entries are not modified, so one pass is exact. */
	for (i = 0; i < htab_cap(&pc->tab); i++)
		for (struct proc_entry *e = htab_at(&pc->tab, i); e->pid && e->gen != pc->gen;)
			htab_delete(&pc->tab, i);
	pc->gen++;
}

/* Everything, through the pid's directory fd: files of a process that died
 * meanwhile fail to open instead of showing its successor's. */
static int proc_load(struct proc_cache *pc, uint32_t pid, struct proc_stat_fields *st,
		     struct proc_attr *a)
{
	char name[16], cg[8192];
	struct stat sb;
	int have_uid = 0, dfd;
	ssize_t n;

	snprintf(name, sizeof name, "%" PRIu32, pid);
	dfd = openat(pc->rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	if (proc_read_stat(dfd, "stat", st)) {
		close(dfd);
		return -1;
	}
	memset(a, 0, sizeof *a);
	proc_read_status(dfd, a, &have_uid);
	/* status unreadable: the directory's owner is the effective uid. */
	if (!have_uid && !fstat(dfd, &sb))
		a->uid = (uint32_t)sb.st_uid;
	proc_user_name(pc, a->uid, a->user);
	proc_read_cmdline(dfd, a->cmdline, st->comm);
	n = proc_read(dfd, "cgroup", cg, sizeof cg - 1);
	cg[n > 0 ? n : 0] = '\0';
	proc_parse_cgroup(cg, a->container, sizeof a->container, a->pod_uid,
			  sizeof a->pod_uid, a->slurm_job, sizeof a->slurm_job);
	close(dfd);
	return 0;
}

void proc_cache_set_recheck(struct proc_cache *pc, int64_t ns)
{
	if (pc)
		pc->recheck_ns = ns > 0 ? ns : 0;
}

int proc_attribute(struct proc_cache *pc, vramz_proc_sample *p)
{
	char name[24];
	struct proc_stat_fields st = { .start_ticks = 0 };
	struct proc_entry *e;
	struct proc_attr fresh;
	const struct proc_attr *a;

	if (!pc || !p)
		return VRAMZ_EINVAL;
	p->valid &= ~(uint32_t)VRAMZ_P_VISIBLE;
	p->uid = p->ppid = p->pgid = p->ns_pid = 0;
	p->start_time_ticks = 0;
	p->user[0] = p->comm[0] = p->cmdline[0] = '\0';
	p->container[0] = p->pod_uid[0] = p->slurm_job[0] = '\0';
	p->pod[0] = p->pod_namespace[0] = p->container_name[0] = '\0';
	int64_t now = pc->recheck_ns ? clock_mono_ns() : 0;
	if (pc->recheck_ns && p->pid) {
		e = proc_slot(pc, p->pid);
		if (e->pid == p->pid &&
		    (e->gen == pc->gen || now - e->checked_ns < pc->recheck_ns)) {
			st = e->st;
			a = &e->a;
			goto fill;
		}
	}
	snprintf(name, sizeof name, "%" PRIu32 "/stat", p->pid);
	if (!pc->host_pids || p->pid == 0 || proc_read_stat(pc->rootfd, name, &st))
		return VRAMZ_ENOTFOUND;

	e = proc_slot(pc, p->pid);
	if (e->pid && e->st.start_ticks == st.start_ticks && !strcmp(e->st.comm, st.comm)) {
		e->st = st; /* ppid / pgid as read now */
		a = &e->a;
	} else {
		/* New pid, reused pid (start time) or exec (comm): read it all. */
		if (proc_load(pc, p->pid, &st, &fresh))
			return VRAMZ_ENOTFOUND; /* gone since the stat read */
		if (!e->pid) /* growing moves the entries */
			e = htab_reserve(&pc->tab, PROC_BITS_MAX) ? NULL : proc_slot(pc, p->pid);
		if (e) { /* else full: attributed uncached */
			if (!e->pid)
				htab_added(&pc->tab);
			e->pid = p->pid;
			e->st = st;
			e->a = fresh;
		}
		a = e ? &e->a : &fresh;
	}
	if (e)
		e->checked_ns = now;
fill:
	if (e)
		e->gen = pc->gen;

	p->uid = a->uid;
	p->ns_pid = a->ns_pid;
	p->ppid = st.ppid;
	p->pgid = st.pgid;
	p->start_time_ticks = st.start_ticks;
	memcpy(p->comm, st.comm, sizeof p->comm);
	memcpy(p->user, a->user, sizeof p->user);
	memcpy(p->cmdline, a->cmdline, sizeof p->cmdline);
	memcpy(p->container, a->container, sizeof p->container);
	memcpy(p->pod_uid, a->pod_uid, sizeof p->pod_uid);
	memcpy(p->slurm_job, a->slurm_job, sizeof p->slurm_job);
	/* looked up each call, not cached per pid: a pod whose log directory
	 * appears after its process is named once it does */
	if (p->pod_uid[0])
		kube_names_fill(pc->kube, now ? now : clock_mono_ns(), p);
	p->valid |= VRAMZ_P_VISIBLE;
	return 0;
}

int proc_stat_read(const char *root, unsigned pid, struct proc_stat_fields *st)
{
	char path[4096];

	if (!root || pid == 0 ||
	    (size_t)snprintf(path, sizeof path, "%s/%u/stat", root, pid) >= sizeof path)
		return -1;
	return proc_read_stat(AT_FDCWD, path, st);
}

unsigned long long proc_start_time(const char *root, unsigned pid)
{
	struct proc_stat_fields st = { .start_ticks = 0 };

	return proc_stat_read(root, pid, &st) ? 0 : st.start_ticks;
}
