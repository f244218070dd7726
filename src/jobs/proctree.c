/* SPDX-License-Identifier: Apache-2.0 */
/* proctree.c - membership of a command's process tree, for `vramz run`
 * and `vramz fit`, which attribute GPU memory to whatever the command
 * started: a launcher, its workers, their data-loader children.
 *
 * Why not scan all of /proc every tick: on a busy host that is hundreds of
 * opens per tick, and a 10 ms tick would spend most of its time there.  The
 * question asked each tick is narrower - "is this GPU pid ours?" - and has
 * an answer that never changes for a given process: whether it descends
 * from vramz.  So the answer is cached per (pid, start time), and a pid
 * seen for the first time is decided by walking up its ppid chain until a
 * cached pid, vramz itself, or init.  A steady tick costs one stat read per
 * GPU process (to notice a reused pid).
 *
 * A descendant whose parent exits is re-parented to the nearest child
 * subreaper; `run` makes vramz one, so the chain of such an orphan still
 * ends at vramz.  A negative answer is final for the same reason: a
 * process that does not descend from vramz can never be re-parented to it.
 */
#include "jobs/proctree.h"
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramz/vramz.h"

/* Open addressing; a full table is simply cleared (answers are cheap to
 * recompute), which bounds memory on hosts with huge pid churn. */
#define PT_SLOTS 1024u
#define PT_MAX_DEPTH 1024

struct pt_entry {
	unsigned pid;              /* 0: empty */
	unsigned char member;
	unsigned long long start;  /* clock ticks since boot */
};

struct proctree {
	char root[256];
	unsigned top;
	unsigned used;
	unsigned long reads;
	struct pt_entry slot[PT_SLOTS];
};

struct proctree *proctree_new(const char *root, unsigned top)
{
	struct proctree *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	snprintf(t->root, sizeof t->root, "%s", root ? root : "/proc");
	t->top = top;
	return t;
}

void proctree_free(struct proctree *t)
{
	free(t);
}

unsigned long proctree_reads(const struct proctree *t)
{
	return t->reads;
}

int proctree_parse_stat(const char *text, unsigned *ppid,
			unsigned long long *start_ticks)
{
	struct proc_stat_fields st;
	if (proc_parse_stat(text, &st))
		return -1;
	*ppid = st.ppid;
	*start_ticks = st.start_ticks;
	return 0;
}

static int pt_read(struct proctree *t, unsigned pid, unsigned *ppid,
		   unsigned long long *start)
{
	char path[300], buf[1024];
	snprintf(path, sizeof path, "%s/%u/stat", t->root, pid);
	t->reads++;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return VRAMZ_ENOTFOUND;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return VRAMZ_ENOTFOUND;
	buf[n] = 0;
	return proctree_parse_stat(buf, ppid, start) ? VRAMZ_EPARSE : 0;
}

static struct pt_entry *pt_find(struct proctree *t, unsigned pid)
{
	unsigned h = (pid * 2654435761u) % PT_SLOTS;
	for (unsigned i = 0; i < PT_SLOTS; i++) {
		struct pt_entry *e = &t->slot[(h + i) % PT_SLOTS];
		if (e->pid == pid || e->pid == 0)
			return e;
	}
	return NULL; /* unreachable: the table is never full */
}

static void pt_store(struct proctree *t, unsigned pid, unsigned long long start,
		     int member)
{
	if (t->used >= PT_SLOTS * 3 / 4) {
		memset(t->slot, 0, sizeof t->slot);
		t->used = 0;
	}
	struct pt_entry *e = pt_find(t, pid);
	if (e->pid == 0)
		t->used++;
	e->pid = pid;
	e->start = start;
	e->member = (unsigned char)member;
}

/* One walk from pid up; 1/0, or -1 when an ancestor vanished mid-walk
 * (its children were re-parented: walk again). */
static int pt_walk(struct proctree *t, unsigned pid, unsigned ppid,
		   unsigned long long start, int *err)
{
	unsigned chain[PT_MAX_DEPTH];
	unsigned long long starts[PT_MAX_DEPTH];
	int n = 0, result = 0;
	unsigned cur = pid;
	unsigned long long cur_start = start;
	unsigned cur_ppid = ppid;
	*err = 0;
	for (;;) {
		if (cur == t->top) {
			result = 1;
			break;
		}
		if (cur <= 1 || n == PT_MAX_DEPTH) {
			result = 0;
			break;
		}
		struct pt_entry *e = pt_find(t, cur);
		if (e->pid == cur && e->start == cur_start) {
			result = e->member;
			break;
		}
		chain[n] = cur;
		starts[n++] = cur_start;
		cur = cur_ppid;
		if (cur == t->top || cur <= 1)
			continue;
		int rc = pt_read(t, cur, &cur_ppid, &cur_start);
		if (rc < 0) {
			*err = rc;
			return -1;
		}
	}
	for (int i = 0; i < n; i++)
		pt_store(t, chain[i], starts[i], result);
	return result;
}

int proctree_member(struct proctree *t, unsigned pid)
{
	unsigned ppid;
	unsigned long long start;
	if (pid == 0 || pid == t->top)
		return 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		int rc = pt_read(t, pid, &ppid, &start);
		if (rc < 0)
			return rc;
		int err;
		int m = pt_walk(t, pid, ppid, start, &err);
		if (m >= 0)
			return m;
	}
	/* ancestors kept vanishing under us: undecided, and not cached */
	return 0;
}

int proctree_list(struct proctree *t, unsigned *pids, size_t cap)
{
	DIR *d = opendir(t->root);
	if (!d)
		return VRAMZ_EIO;
	int count = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		if (*end || pid == 0 || pid > 0x7fffffffUL)
			continue;
		if (proctree_member(t, (unsigned)pid) == 1) {
			if ((size_t)count < cap)
				pids[count] = (unsigned)pid;
			count++;
		}
	}
	closedir(d);
	return count;
}
