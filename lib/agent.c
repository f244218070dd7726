/* SPDX-License-Identifier: Apache-2.0 */
/* agent.c - reads the files the PyTorch agent publishes (python/vramz/torch,
 * format in docs/python.md) and decides whether to believe them.
 *
 * The tool joins a process row to its agent by pid and start time, so a
 * reused pid never inherits another process's figures.  Because any user
 * can write a file into their own runtime directory, and root's readers
 * look into every user's, a file is believed only when its owner could
 * have written it about itself: owned by the process's uid or by root,
 * not writable by group or others, a regular file opened without
 * following links, and naming the same pid and start time inside; and
 * only in a directory trusted by the runtime directory's rule
 * (lib/rundir_open.c), every file reached relative to its descriptor.  A
 * directory is listed once a tick (agent_scan_list), so a process without
 * an agent costs no system call at all, and a directory that has not
 * changed is not listed again (one fstat of it, held open).
 */
#include "agent.h"
#include "torchfigs.h"
#include "grow.h"
#include "rundir.h"
#include "safefile.h"
#include "proc.h"
#include "vramz/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- trust ---------------------------------------------------------------- */

static int read_trusted(int dirfd, const char *name, uint32_t uid, char *buf, size_t cap,
			size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? VRAMZ_ENOTFOUND : errno == ELOOP ? VRAMZ_EPERM : VRAMZ_EIO;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != uid && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return VRAMZ_EPERM;
	}
	size_t n = 0;
	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return 0;
}

int agent_read_path(const char *path, uint32_t uid, char *buf, size_t cap, size_t *len)
{
	char dir[512];
	const char *name;
	struct rundir rd;
	if (rundir_split(path, dir, sizeof dir, &name))
		return VRAMZ_EINVAL;
	int rc = rundir_open(dir, 0, uid, &rd, NULL, 0);
	if (rc)
		return rc == VRAMZ_ENOTFOUND ? rc : VRAMZ_EPERM;
	rc = read_trusted(rd.fd, name, uid, buf, cap, len);
	rundir_close(&rd);
	return rc;
}

/* ---- directories ------------------------------------------------------------ */

/* The set is rebuilt every tick, mostly the same: the names stay listed
 * unless a slot gets another directory or the count differs. */
void agent_scan_reset(struct agent_scan *s)
{
	s->ndirs = 0;
}

void agent_scan_add_dir(struct agent_scan *s, const char *dir, uint32_t uid)
{
	if (!dir || !*dir || s->ndirs == AGENT_MAX_DIRS || strlen(dir) >= sizeof s->dirs[0])
		return;
	for (unsigned i = 0; i < s->ndirs; i++)
		if (!strcmp(s->dirs[i], dir))
			return;
	unsigned d = s->ndirs;
	if (d >= s->listed_ndirs || strcmp(s->dirs[d], dir) || s->dir_uid[d] != uid) {
		if ((strcmp(s->dirs[d], dir) || s->dir_uid[d] != uid) && s->dfd[d]) {
			close(s->dfd[d] - 1); /* held for another directory */
			s->dfd[d] = 0;
		}
		strcpy(s->dirs[d], dir);
		s->dir_uid[d] = uid;
		s->changed = 1;
	}
	s->ndirs++;
}

void agent_scan_add_default(struct agent_scan *s)
{
	if (!s->own_known) {
		s->own_known = 1;
		s->own_override = getenv("VRAMZ_RUNTIME_DIR") != NULL;
		s->nown = 0;
		while (s->nown < sizeof s->own / sizeof s->own[0] &&
		       vramz_runtime_dir_nth(s->nown, s->own[s->nown], sizeof s->own[0]) == 0)
			s->nown++;
	}
	for (unsigned n = 0; n < s->nown; n++)
		agent_scan_add_dir(s, s->own[n], RUNDIR_NO_UID);
}

/* "torch-PID-START", nothing after it */
static int parse_name(const char *name, uint32_t *pid, uint64_t *start)
{
	unsigned long long p, st;
	int used = 0;
	if (strncmp(name, "torch-", 6) || sscanf(name + 6, "%llu-%llu%n", &p, &st, &used) != 2 ||
	    name[6 + used] || p == 0 || p > UINT32_MAX || name[6] == '-' || name[6] == '+')
		return -1;
	*pid = (uint32_t)p;
	*start = st;
	return 0;
}

/* Directory d's state, by the descriptor the scan holds for it: an fstat
 * walks no path, and a stat of the path was most of what a reader's tick
 * cost here (docs/performance.md).  The path is opened again, under the
 * runtime directory's rule, when nothing is held, or when what is held
 * was removed (a link count of 0: the directory was deleted, and perhaps
 * made again); what is held is judged again at each fstat (a chmod). */
static void dir_state(struct agent_scan *s, unsigned d, struct agent_dir_state *o)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	int fd = s->dfd[d] - 1;
	if (fd >= 0 && (fstat(fd, &st) || st.st_nlink == 0)) {
		close(fd);
		s->dfd[d] = 0;
		fd = -1;
	}
	if (fd < 0) {
		/* most directories looked in do not exist: one open says so
		 * before the walk of the rule */
		int probe = open(s->dirs[d], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (probe < 0)
			return;
		close(probe);
		struct rundir rd;
		if (rundir_open(s->dirs[d], 0, s->dir_uid[d], &rd, NULL, 0))
			return;
		fd = rd.fd;
		if (fstat(fd, &st)) {
			close(fd);
			return;
		}
		s->dfd[d] = fd + 1;
	}
	if (rundir_check(s->dirs[d], &st, s->dir_uid[d], NULL, NULL, 0))
		return; /* held, but no longer trusted: not listed */
	o->ok = 1;
	o->dev = (uint64_t)st.st_dev;
	o->ino = (uint64_t)st.st_ino;
	o->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	o->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

/* A directory changed twice within the file system's clock granularity
 * (a jiffy) keeps its mtime: a listing is trusted again only when the
 * directory had last changed well before it was made (as git's racy-index
 * rule), so an agent that starts right after a listing is still seen. */
#define RACY_NS 2000000000LL

static int still_listed(struct agent_scan *s, struct agent_dir_state *now)
{
	int same = s->listed && !s->changed && s->ndirs == s->listed_ndirs;
	for (unsigned d = 0; d < s->ndirs; d++) {
		dir_state(s, d, &now[d]);
		const struct agent_dir_state *was = &s->state[d];
		if (!same || now[d].ok != was->ok || now[d].dev != was->dev ||
		    now[d].ino != was->ino || now[d].mtime_ns != was->mtime_ns ||
		    now[d].ctime_ns != was->ctime_ns ||
		    (now[d].ok && s->listed_at_ns - now[d].mtime_ns < RACY_NS))
			same = 0;
	}
	return same;
}

int agent_scan_list(struct agent_scan *s)
{
	struct agent_dir_state now[AGENT_MAX_DIRS];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (still_listed(s, now))
		return 0;
	s->listings++;
	s->listed = 0;
	s->n = 0;
	for (unsigned d = 0; d < s->ndirs; d++) {
		int lfd = now[d].ok ? openat(s->dfd[d] - 1, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		DIR *dp = lfd >= 0 ? fdopendir(lfd) : NULL;
		if (!dp) {
			if (lfd >= 0)
				close(lfd);
			continue;
		}
		struct dirent *e;
		while ((e = readdir(dp))) {
			uint32_t pid;
			uint64_t start;
			if (e->d_name[0] != 't' || parse_name(e->d_name, &pid, &start))
				continue;
			if (s->n == s->cap) {
				void *nv = grow_array(s->names, &s->cap, 16, sizeof *s->names);
				if (!nv) {
					closedir(dp);
					return VRAMZ_ENOMEM;
				}
				s->names = nv;
			}
			s->names[s->n++] = (struct agent_name){pid, start, d};
		}
		closedir(dp);
	}
	memcpy(s->state, now, s->ndirs * sizeof now[0]);
	s->listed_ndirs = s->ndirs;
	s->listed_at_ns = at;
	s->changed = 0;
	s->listed = 1;
	return 0;
}

void agent_scan_free(struct agent_scan *s)
{
	for (unsigned d = 0; d < AGENT_MAX_DIRS; d++)
		if (s->dfd[d]) {
			close(s->dfd[d] - 1);
			s->dfd[d] = 0;
		}
	free(s->names);
	s->names = NULL;
	s->n = s->cap = 0;
	s->listed = 0;
}

int agent_lookup(const struct agent_scan *s, uint32_t pid, uint64_t start, uint32_t uid,
		 struct agent_figures *out)
{
	int rc = VRAMZ_ENOTFOUND;
	for (unsigned i = 0; i < s->n; i++) {
		if (s->names[i].pid != pid || s->names[i].start != start)
			continue;
		char name[64], buf[AGENT_FILE_MAX];
		size_t len;
		int dfd = s->dfd[s->names[i].dir] - 1;
		if (dfd < 0)
			continue;
		snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64, pid, start);
		rc = read_trusted(dfd, name, uid, buf, sizeof buf, &len);
		if (rc == VRAMZ_ENOTFOUND) /* removed since the listing */
			continue;
		if (rc)
			continue;
		rc = agent_parse(buf, len, out);
		if (rc)
			continue;
		if (out->pid != pid || out->start_time_ticks != start) {
			rc = VRAMZ_EPERM; /* a file claiming another process */
			continue;
		}
		out->dir = (int)s->names[i].dir;
		return 0;
	}
	return rc;
}

const struct agent_device *agent_device(const struct agent_figures *f, const char *uuid)
{
	if (!uuid || !*uuid)
		return NULL;
	for (unsigned i = 0; i < f->ndev; i++)
		if (!strcmp(f->dev[i].uuid, uuid))
			return &f->dev[i];
	return NULL;
}

const char *agent_oom_uuid(const struct agent_figures *f)
{
	for (unsigned i = 0; f->oom_valid && f->oom_cuda >= 0 && i < f->ndev; i++)
		if (f->dev[i].cuda == f->oom_cuda && f->dev[i].uuid[0])
			return f->dev[i].uuid;
	return NULL;
}

const struct agent_frame *agent_oom_line(const struct agent_figures *f)
{
	if (f->oom_valid && f->oom_at.file[0])
		return &f->oom_at;
	return f->end.valid && f->end.at.file[0] ? &f->end.at : NULL;
}

void agent_site_text(char *buf, size_t len, const char *file, unsigned line, const char *func)
{
	const char *base = strrchr(file, '/');
	snprintf(buf, len, "%.96s:%u in %.40s()", base ? base + 1 : file, line, func);
}

/* ---- leak sites ----------------------------------------------------------- */

int agent_find_dir(uint32_t pid, uint64_t start, uint32_t uid, char *dir, size_t len)
{
	struct agent_scan s = {0};
	agent_scan_add_default(&s);
	if (!s.own_override) {
		char d[64];
		snprintf(d, sizeof d, "/run/user/%" PRIu32 "/vramz", uid);
		agent_scan_add_dir(&s, d, uid);
	}
	for (unsigned i = 0; i < s.ndirs; i++) {
		char name[64];
		struct stat st;
		struct rundir rd;
		if (rundir_open(s.dirs[i], 0, s.dir_uid[i], &rd, NULL, 0))
			continue;
		snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64, pid, start);
		int found = fstatat(rd.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
			    (st.st_uid == uid || st.st_uid == 0);
		rundir_close(&rd);
		if (found) {
			snprintf(dir, len, "%s", s.dirs[i]);
			return 0;
		}
	}
	return VRAMZ_ENOTFOUND;
}

int agent_request_sites(const char *dir, uint32_t pid, uint64_t start, uint32_t uid)
{
	struct rundir rd;
	int rc = rundir_open(dir, 0, uid, &rd, NULL, 0);
	if (rc)
		return rc == VRAMZ_ENOTFOUND ? VRAMZ_EIO : VRAMZ_EPERM;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/torch-%" PRIu32 "-%" PRIu64 ".req", dir, pid, start);
	/* the agent's user owns the directory: only a request of our own is
	 * touched there, never their file or link at the name */
	int fd = safefile_open(rd.fd, path, SAFEFILE_WRITE, 0644, NULL, 0);
	rundir_close(&rd);
	if (fd < 0)
		return fd == VRAMZ_EPERM ? VRAMZ_EPERM : VRAMZ_EIO;
	close(fd);
	return 0;
}

int agent_read_sites(const char *dir, uint32_t pid, uint64_t start, uint32_t uid,
		     struct agent_sites *out)
{
	char name[64], buf[AGENT_FILE_MAX];
	size_t len;
	struct rundir rd;
	int rc = rundir_open(dir, 0, uid, &rd, NULL, 0);
	if (rc)
		return rc == VRAMZ_ENOTFOUND ? rc : VRAMZ_EPERM;
	snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64 ".sites", pid, start);
	rc = read_trusted(rd.fd, name, uid, buf, sizeof buf, &len);
	rundir_close(&rd);
	if (rc)
		return rc;
	return agent_parse_sites(buf, len, out);
}

/* ---- a process that has just ended ----------------------------------------- */

int agent_read_figures(uint32_t pid, uint64_t start, uint32_t uid, struct agent_figures *out)
{
	char dir[256], name[64], buf[AGENT_FILE_MAX];
	size_t len;
	struct rundir rd;
	if (agent_find_dir(pid, start, uid, dir, sizeof dir))
		return VRAMZ_ENOTFOUND;
	int rc = rundir_open(dir, 0, uid, &rd, NULL, 0);
	if (rc)
		return rc == VRAMZ_ENOTFOUND ? rc : VRAMZ_EPERM;
	snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64, pid, start);
	rc = read_trusted(rd.fd, name, uid, buf, sizeof buf, &len);
	rundir_close(&rd);
	if (rc)
		return rc;
	rc = agent_parse(buf, len, out);
	if (rc)
		return rc;
	return out->pid == pid && out->start_time_ticks == start ? 0 : VRAMZ_EPERM;
}

int agent_sig_written(const char *dir, uint32_t pid, uint64_t start, uint32_t uid)
{
	char name[64], buf[64];
	size_t len = 0;
	struct rundir rd;
	if (rundir_open(dir, 0, uid, &rd, NULL, 0))
		return 0;
	snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64 ".sig", pid, start);
	int rc = read_trusted(rd.fd, name, uid, buf, sizeof buf, &len);
	rundir_close(&rd);
	return rc == 0 && len > 0;
}

int agent_read_end(uint32_t pid, uint64_t start, uint32_t uid, struct agent_figures *out)
{
	char dir[256];
	int rc = agent_read_figures(pid, start, uid, out);
	if (rc || out->end.valid)
		return rc;
	if (agent_find_dir(pid, start, uid, dir, sizeof dir) == 0 &&
	    agent_sig_written(dir, pid, start, uid)) {
		out->end.valid = 1;
		out->end.how = AGENT_END_SIGNAL;
	}
	return 0;
}

/* ---- the sweep of dead agents' files ---------------------------------------- */

/* What faulthandler writes first (Python 3.9 to 3.14): agentfile.py's
 * _SIG_HEADS, kept the same. */
static const char *const sig_heads[] = {"Thread 0x", "Current thread", "Stack (most recent",
					"Fatal Python", "<no Python frame>", "  File "};

/* "torch-PID-START" and a suffix ("", ".sites", ".req", ".sig"): agentfile.py's _LEFT */
static int left_name(const char *name, uint32_t *pid, uint64_t *start, const char **suffix)
{
	static const char *const sufs[] = {".sites", ".req", ".sig"};
	char base[64];
	const char *dot = strchr(name, '.');
	size_t n = dot ? (size_t)(dot - name) : strlen(name);
	if (n >= sizeof base)
		return -1;
	memcpy(base, name, n);
	base[n] = 0;
	if (parse_name(base, pid, start))
		return -1;
	*suffix = "";
	if (!dot)
		return 0;
	for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++)
		if (!strcmp(dot, sufs[i])) {
			*suffix = sufs[i];
			return 0;
		}
	return -1;
}

/* The bytes of a file say it is the agent's kind (agentfile.py's _says_agent). */
static int says_agent(const char *suffix, const char *head, size_t len)
{
	if (!strcmp(suffix, ".req"))
		return len == 0;
	if (!strcmp(suffix, ".sig")) {
		if (!len)
			return 1;
		for (size_t i = 0; i < sizeof sig_heads / sizeof sig_heads[0]; i++)
			if (len >= strlen(sig_heads[i]) && !memcmp(head, sig_heads[i], strlen(sig_heads[i])))
				return 1;
		return 0;
	}
	const char *magic = !strcmp(suffix, ".sites") ? "vramz-torch-sites " : "vramz-torch ";
	return len >= strlen(magic) && !memcmp(head, magic, strlen(magic));
}

struct swept {
	char name[80];
	uint64_t pid, start;
	uint64_t dev, ino;
	int64_t mtime_s;
	int tomb;                      /* a figures file with an end, or a written .sig */
};

/* Reads name when it is a regular file of ours: 0 and its stat, else -1. */
static int read_own(int dirfd, const char *name, char *buf, size_t cap, size_t *len,
		    struct stat *st)
{
	if (!rundir_own_file(dirfd, name, NULL))
		return -1;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = fstat(fd, st) ? -1 : read(fd, buf, cap - 1);
	close(fd);
	if (r < 0 || !S_ISREG(st->st_mode) || st->st_uid != geteuid())
		return -1;
	buf[r] = 0;
	*len = (size_t)r;
	return 0;
}

int agent_alive(uint32_t pid, uint64_t start, void *arg)
{
	(void)arg;
	return proc_start_time("/proc", pid) == start;
}

/* The dead agents' files of the directory, with what the sweep needs. */
static int sweep_list(int dirfd, int (*alive)(uint32_t, uint64_t, void *), void *arg,
		      struct swept **out, unsigned *n)
{
	unsigned cap = 0;
	int lfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!dp) {
		if (lfd >= 0)
			close(lfd);
		return VRAMZ_EIO;
	}
	char *buf = malloc(AGENT_FILE_MAX);
	struct dirent *e;
	while (buf && (e = readdir(dp))) {
		uint32_t pid;
		uint64_t start;
		const char *suf;
		struct stat st;
		size_t len;
		if (strlen(e->d_name) >= sizeof (*out)->name ||
		    left_name(e->d_name, &pid, &start, &suf) || alive(pid, start, arg) ||
		    read_own(dirfd, e->d_name, buf, AGENT_FILE_MAX, &len, &st) ||
		    !says_agent(suf, buf, len))
			continue;
		if (*n == cap) {
			void *nv = grow_array(*out, &cap, 16, sizeof **out);
			if (!nv)
				break;
			*out = nv;
		}
		struct swept *w = &(*out)[(*n)++];
		memcpy(w->name, e->d_name, strlen(e->d_name) + 1); /* its length checked */
		w->pid = pid;
		w->start = start;
		w->dev = (uint64_t)st.st_dev;
		w->ino = (uint64_t)st.st_ino;
		w->mtime_s = (int64_t)st.st_mtime;
		w->tomb = (!*suf && strstr(buf, "\nend ") != NULL) || (!strcmp(suf, ".sig") && len);
	}
	closedir(dp);
	int ok = buf != NULL;
	free(buf);
	return ok ? 0 : VRAMZ_ENOMEM;
}

int agent_sweep(int dirfd, int (*alive)(uint32_t pid, uint64_t start, void *arg), void *arg,
		int64_t now_s, int64_t keep_s)
{
	struct swept *w = NULL;
	unsigned n = 0;
	int rc = sweep_list(dirfd, alive ? alive : agent_alive, arg, &w, &n);
	int removed = 0;
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		/* a tombstone (its figures file and its .sig) stays keep_s after
		 * the latest write of either */
		int64_t tomb = -1;
		for (unsigned j = 0; j < n; j++)
			if (w[j].tomb && w[j].pid == w[i].pid && w[j].start == w[i].start &&
			    w[j].mtime_s > tomb)
				tomb = w[j].mtime_s;
		const char *dot = strchr(w[i].name, '.');
		int kept_kind = !dot || !strcmp(dot, ".sig");
		if (kept_kind && tomb >= 0 && now_s - tomb < keep_s)
			continue;
		/* still the file read (agentfile.py: in a private directory nobody
		 * can swap it; in a sticky one nobody can rename over ours) */
		struct stat st;
		if (!rundir_own_file(dirfd, w[i].name, &st) || (uint64_t)st.st_dev != w[i].dev ||
		    (uint64_t)st.st_ino != w[i].ino)
			continue;
		if (unlinkat(dirfd, w[i].name, 0) == 0)
			removed++;
	}
	free(w);
	return rc ? rc : removed;
}

/* ---- the join -------------------------------------------------------------- */

/* every agent figure of lib/torchfigs.h, logged or not, in its order */
#define TF(log, key, bit, stat, metric, counter, help) \
	{#key, bit, offsetof(vramz_proc_sample, torch_##key), stat},
const struct torch_field torch_fields[] = {VRAMZ_TORCH_FIGURES(TF)};
#undef TF
const size_t torch_field_count = sizeof torch_fields / sizeof torch_fields[0];

static void clear_torch(vramz_proc_sample *p)
{
	p->valid &= ~(uint32_t)(VRAMZ_P_TORCH | VRAMZ_P_OUTSIDE);
	p->torch_valid = 0;
	for (size_t i = 0; i < torch_field_count; i++)
		*(uint64_t *)((char *)p + torch_fields[i].offset) = 0;
	p->torch_time_ms = 0;
	p->outside_allocator_bytes = 0;
	p->valid &= ~(uint32_t)VRAMZ_P_OUTSIDE_PARTS;
	p->outside_context_bytes = p->outside_libraries_bytes = 0;
	p->outside_nccl_bytes = p->outside_other_bytes = 0;
	p->outside_nccl_comms = 0;
}

/* The GPU a record names: its own UUID, else its CUDA index's device
 * record's; NULL unknown. */
static const char *outside_gpu(const struct agent_figures *f, const struct agent_outside *o)
{
	if (o->uuid >= 0 && (unsigned)o->uuid < f->noutside_uuid)
		return f->outside_uuid[o->uuid];
	for (unsigned i = 0; o->cuda >= 0 && i < f->ndev; i++)
		if (f->dev[i].cuda == o->cuda && f->dev[i].uuid[0])
			return f->dev[i].uuid;
	return NULL;
}

int agent_outside_parts(const struct agent_figures *f, const char *uuid, uint64_t outside,
			uint64_t parts[AGENT_PART_COUNT], unsigned *comms)
{
	uint64_t sum[AGENT_PART_COUNT] = {0};
	int seen[AGENT_MAX_OUTSIDE];
	unsigned nseen = 0;
	memset(parts, 0, AGENT_PART_COUNT * sizeof *parts);
	*comms = 0;
	if (!f->outside_on)
		return -1;
	for (unsigned i = 0; i < f->noutside; i++) {
		const struct agent_outside *o = &f->outside[i];
		const char *g = outside_gpu(f, o);
		if (!g || !uuid || strcmp(g, uuid))
			continue; /* another GPU's, or one that cannot be told */
		sum[o->part] += o->bytes;
		if (o->part != AGENT_PART_NCCL)
			continue;
		int dup = 0;
		for (unsigned j = 0; o->comm >= 0 && j < nseen && !dup; j++)
			dup = seen[j] == o->comm;
		if (!dup) {
			*comms += o->comms;
			if (o->comm >= 0)
				seen[nseen++] = o->comm;
		}
	}
	/* the surest first: each cut to what is left, the rest other (an
	 * agent's own "other" records are part of that rest) */
	static const enum agent_part order[] = {AGENT_PART_CONTEXT, AGENT_PART_NCCL,
						AGENT_PART_LIBRARIES};
	uint64_t left = outside;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		uint64_t v = sum[order[i]] < left ? sum[order[i]] : left;
		parts[order[i]] = v;
		left -= v;
	}
	parts[AGENT_PART_OTHER] = left;
	return 0;
}

static void fill_torch(vramz_proc_sample *p, const struct agent_figures *f, const char *uuid)
{
	const struct agent_device *d = agent_device(f, uuid);
	if (!d) {
		/* no record for this GPU: the allocator never used it, unless a
		 * record lacks its UUID (then this could be it: unknown) */
		for (unsigned i = 0; i < f->ndev; i++)
			if (!f->dev[i].uuid[0])
				return;
	}
	p->valid |= VRAMZ_P_TORCH;
	p->torch_time_ms = f->time_ms;
	if (f->history)
		p->torch_valid |= VRAMZ_T_HISTORY;
	for (size_t i = 0; i < torch_field_count; i++) {
		const struct torch_field *tf = &torch_fields[i];
		if (d && !(d->valid & (1u << tf->stat)))
			continue;
		*(uint64_t *)((char *)p + tf->offset) = d ? d->v[tf->stat] : 0;
		p->torch_valid |= tf->bit;
	}
	if ((p->valid & VRAMZ_P_USED) && (p->torch_valid & VRAMZ_T_RESERVED)) {
		p->outside_allocator_bytes = p->used_bytes > p->torch_reserved_bytes
						     ? p->used_bytes - p->torch_reserved_bytes : 0;
		p->valid |= VRAMZ_P_OUTSIDE;
		uint64_t parts[AGENT_PART_COUNT];
		if (agent_outside_parts(f, uuid, p->outside_allocator_bytes, parts,
					&p->outside_nccl_comms) == 0) {
			p->outside_context_bytes = parts[AGENT_PART_CONTEXT];
			p->outside_libraries_bytes = parts[AGENT_PART_LIBRARIES];
			p->outside_nccl_bytes = parts[AGENT_PART_NCCL];
			p->outside_other_bytes = parts[AGENT_PART_OTHER];
			p->valid |= VRAMZ_P_OUTSIDE_PARTS;
		}
	}
}

/* The directories to look in for procs' agents: the reader's own and, for
 * each user with a visible process, /run/user/UID/vramz.  The count of
 * visible rows. */
static unsigned scan_dirs_for(struct agent_scan *s, const vramz_proc_sample *procs, unsigned n)
{
	unsigned visible = 0;
	agent_scan_reset(s);
	agent_scan_add_default(s);
	for (unsigned i = 0; i < n; i++) {
		if (!(procs[i].valid & VRAMZ_P_VISIBLE))
			continue;
		visible++;
		if (!s->own_override) {
			char d[64];
			snprintf(d, sizeof d, "/run/user/%" PRIu32 "/vramz", procs[i].uid);
			agent_scan_add_dir(s, d, procs[i].uid);
		}
	}
	return visible;
}

/* by pid and start time, as python/vramz/_agentjoin.py's ended() */
static int cmp_ended(const void *a, const void *b)
{
	const struct agent_figures *x = &((const struct agent_ended *)a)->fig;
	const struct agent_figures *y = &((const struct agent_ended *)b)->fig;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->start_time_ticks > y->start_time_ticks) - (x->start_time_ticks < y->start_time_ticks);
}

int agent_ended_list(struct agent_scan *s, const vramz_proc_sample *procs, unsigned n,
		     struct agent_ended *out, unsigned max)
{
	scan_dirs_for(s, procs, n);
	int rc = agent_scan_list(s);
	if (rc)
		return rc;
	unsigned got = 0;
	char *buf = malloc(AGENT_FILE_MAX);
	if (!buf)
		return VRAMZ_ENOMEM;
	for (unsigned i = 0; i < s->n && got < max; i++) {
		const struct agent_name *nm = &s->names[i];
		int listed = 0;
		for (unsigned j = 0; j < n && !listed; j++)
			listed = procs[j].pid == nm->pid && procs[j].start_time_ticks == nm->start;
		int dfd = s->dfd[nm->dir] - 1;
		if (listed || dfd < 0)
			continue;
		/* whose: the directory's user, or ours in our own */
		uint32_t uid = s->dir_uid[nm->dir] == RUNDIR_NO_UID ? (uint32_t)geteuid()
								    : s->dir_uid[nm->dir];
		char name[64];
		size_t len;
		snprintf(name, sizeof name, "torch-%" PRIu32 "-%" PRIu64, nm->pid, nm->start);
		struct agent_ended *e = &out[got];
		if (read_trusted(dfd, name, uid, buf, AGENT_FILE_MAX, &len) ||
		    agent_parse(buf, len, &e->fig) || !e->fig.end.valid ||
		    e->fig.pid != nm->pid || e->fig.start_time_ticks != nm->start)
			continue;
		e->uid = uid;
		got++;
	}
	free(buf);
	qsort(out, got, sizeof *out, cmp_ended);
	return (int)got;
}

int agent_join(struct agent_scan *s, vramz_proc_sample *procs, unsigned n,
	       const vramz_gpu_info *info, unsigned ninfo)
{
	for (unsigned i = 0; i < n; i++)
		clear_torch(&procs[i]);
	if (!scan_dirs_for(s, procs, n))
		return 0;
	int rc = agent_scan_list(s);
	if (rc || !s->n)
		return rc;
	struct agent_figures f;
	uint32_t last_pid = 0;
	uint64_t last_start = 0;
	int last_ok = 0;
	for (unsigned i = 0; i < n; i++) {
		vramz_proc_sample *p = &procs[i];
		if (!(p->valid & VRAMZ_P_VISIBLE))
			continue;
		/* a process on several GPUs is read once */
		if (!(p->pid == last_pid && p->start_time_ticks == last_start)) {
			last_pid = p->pid;
			last_start = p->start_time_ticks;
			last_ok = agent_lookup(s, p->pid, p->start_time_ticks, p->uid, &f) == 0;
		}
		if (last_ok)
			fill_torch(p, &f, p->gpu_index < ninfo ? info[p->gpu_index].uuid : NULL);
	}
	return 0;
}
