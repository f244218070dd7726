/* SPDX-License-Identifier: Apache-2.0 */
/* test_rundir_cases.c - the runtime directory's rule in C, case by case
 * from tests/rundir-cases.txt (its header says what each column means),
 * the table tests/python/test_rundir.py walks for the Python side.  For
 * each case it builds the layout, asks the readers (the segment reader,
 * the agent-file reader) what they trust, opens the directory as a
 * publisher does (lib/rundir_open.c) and writes a file through the
 * daemon's temporary-file helper, then checks every planted file's fate
 * and that nothing else was written.  An audit's attack is a row: a
 * symbolic link to a root-only directory where root's agent wrote and
 * swept. */
#include "agent.h"
#include "rundir.h"
#include "safefile.h"
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "tmpdir.h"

#define NOBODY 65534u
#define MAX_ITEMS 8
#define TMP_NAME ".torch-4194000-1.tmp"
#define OUT_NAME "torch-4194000-1"

struct item {
	char kind[16], name[64], fate[8];
	uint32_t owner;
};

struct rcase {
	char name[64], open[16], write[16];
	char shape[16];          /* dir, link, regular, none */
	unsigned mode;
	uint32_t owner;
	int parent;              /* CASE/via -> CASE/real */
	uint32_t parent_owner;
	struct item item[MAX_ITEMS];
	unsigned nitems;
	int needs_root;
};

static uint32_t uid_of(const char *w, int *needs_root)
{
	uint32_t me = (uint32_t)geteuid();
	uint32_t u = !strcmp(w, "root") ? 0 : !strcmp(w, "nobody") ? NOBODY : me;
	if (strcmp(w, "me") && strcmp(w, "root") && strcmp(w, "nobody"))
		fail_msg("unknown owner '%s'", w);
	if (u != me)
		*needs_root = 1;
	return u;
}

static void parse_layout(struct rcase *c, char *layout)
{
	for (char *save = NULL, *it = strtok_r(layout, ",", &save); it;
	     it = strtok_r(NULL, ",", &save)) {
		char *f[4] = {0};
		int n = 0;
		for (char *s2 = NULL, *p = strtok_r(it, ":", &s2); p && n < 4; p = strtok_r(NULL, ":", &s2))
			f[n++] = p;
		if (!strcmp(f[0], "none")) {
			strcpy(c->shape, "none");
		} else if (!strcmp(f[0], "parent") && n == 2) {
			c->parent = 1;
			c->parent_owner = uid_of(f[1], &c->needs_root);
		} else if ((!strcmp(f[0], "dir") || !strcmp(f[0], "link") || !strcmp(f[0], "regular")) &&
			   n == 3) {
			snprintf(c->shape, sizeof c->shape, "%s", f[0]);
			c->mode = (unsigned)strtoul(f[1], NULL, 8);
			c->owner = uid_of(f[2], &c->needs_root);
			if (!strcmp(f[0], "link"))
				c->needs_root |= geteuid() != 0; /* its target is root's */
		} else if (n == 4 && c->nitems < MAX_ITEMS) {
			struct item *x = &c->item[c->nitems++];
			snprintf(x->kind, sizeof x->kind, "%s", f[0]);
			snprintf(x->name, sizeof x->name, "%s", f[1]);
			x->owner = uid_of(f[2], &c->needs_root);
			snprintf(x->fate, sizeof x->fate, "%s", f[3]);
		} else {
			fail_msg("%s: bad layout item '%s'", c->name, f[0]);
		}
	}
}

static struct rcase *load(const char *file, unsigned *count)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return NULL;
	struct rcase *cs = NULL;
	unsigned n = 0;
	char line[1024];
	while (fgets(line, sizeof line, f)) {
		char name[64], layout[700], open[16], write[16];
		if (line[0] == '#' || sscanf(line, "%63s %699s %15s %15s", name, layout, open, write) != 4)
			continue;
		cs = realloc(cs, (n + 1) * sizeof *cs);
		assert_non_null(cs);
		struct rcase *c = &cs[n++];
		memset(c, 0, sizeof *c);
		snprintf(c->name, sizeof c->name, "%s", name);
		snprintf(c->open, sizeof c->open, "%s", open);
		snprintf(c->write, sizeof c->write, "%s", write);
		parse_layout(c, layout);
	}
	fclose(f);
	*count = n;
	return cs;
}

/* ---- building a layout ------------------------------------------------- */

static char base[TMPDIR_LEN];

static void put_text(const char *path, const char *text, uint32_t owner)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(lchown(path, owner, owner), 0);
}

/* the figures a reader would believe for torch-PID-START */
static int agent_text(const char *name, char *buf, size_t len, uint32_t *pid,
		      unsigned long long *start)
{
	int used = 0;
	if (sscanf(name, "torch-%u-%llu%n", pid, start, &used) != 2)
		return 0;
	snprintf(buf, len, "vramz-torch 1\nprocess pid=%u start_time_ticks=%llu\n", *pid, *start);
	return name[used] == 0;
}

static void plant(const char *dir, const struct item *x)
{
	char path[400], text[160];
	uint32_t pid;
	unsigned long long start;
	snprintf(path, sizeof path, "%s/%s", dir, x->name);
	if (!strcmp(x->kind, "agent")) {
		agent_text(x->name, text, sizeof text, &pid, &start);
		put_text(path, text, x->owner);
	} else if (!strcmp(x->kind, "sites")) {
		put_text(path, "vramz-torch-sites 1\n", x->owner);
	} else if (!strcmp(x->kind, "req")) {
		put_text(path, "", x->owner);
	} else if (!strcmp(x->kind, "data")) {
		put_text(path, "precious\n", x->owner);
	} else if (!strcmp(x->kind, "fifo")) {
		assert_int_equal(mkfifo(path, 0644), 0);
		assert_int_equal(lchown(path, x->owner, x->owner), 0);
	} else if (!strcmp(x->kind, "symlink")) {
		char victim[128];
		snprintf(victim, sizeof victim, "%s/victim", base);
		assert_int_equal(symlink(victim, path), 0);
		assert_int_equal(lchown(path, x->owner, x->owner), 0);
	} else {
		fail_msg("unknown kind '%s'", x->kind);
	}
}

/* Builds c's layout under base: the runtime directory's path into run,
 * the real directory holding the items into real. */
static void build(const struct rcase *c, char *run, char *real, size_t len)
{
	char holder[128], victim[128];
	snprintf(victim, sizeof victim, "%s/victim", base);
	put_text(victim, "precious\n", (uint32_t)geteuid());
	snprintf(holder, sizeof holder, "%s", base);
	snprintf(run, len, "%s/run", base);
	if (c->parent) {
		char via[128];
		snprintf(holder, sizeof holder, "%s/real", base);
		snprintf(via, sizeof via, "%s/via", base);
		assert_int_equal(mkdir(holder, 0755), 0);
		assert_int_equal(symlink(holder, via), 0);
		assert_int_equal(lchown(via, c->parent_owner, c->parent_owner), 0);
		snprintf(run, len, "%s/via/run", base);
	}
	snprintf(real, len, "%s/run", holder);
	if (!strcmp(c->shape, "dir")) {
		assert_int_equal(mkdir(real, 0700), 0);
		assert_int_equal(chmod(real, c->mode), 0);
		assert_int_equal(chown(real, c->owner, c->owner), 0);
	} else if (!strcmp(c->shape, "link")) {
		snprintf(real, len, "%s/target", base);
		assert_int_equal(mkdir(real, 0700), 0);
		assert_int_equal(chmod(real, c->mode), 0);
		assert_int_equal(symlink(real, run), 0);
		assert_int_equal(lchown(run, c->owner, c->owner), 0);
	} else if (!strcmp(c->shape, "regular")) {
		put_text(real, "not a directory\n", c->owner);
		assert_int_equal(chmod(real, c->mode), 0);
	}
	for (unsigned i = 0; i < c->nitems; i++)
		plant(real, &c->item[i]);
}

/* ---- checks ------------------------------------------------------------ */

static int trusted(const struct rcase *c)
{
	return !strcmp(c->open, "ok") || !strcmp(c->open, "shared");
}

/* What the readers say, before anything is published. */
static void check_readers(const struct rcase *c, const char *run)
{
	char path[256], err[300] = "";
	struct seg_reader *r;
	snprintf(path, sizeof path, "%s/segment", run);
	int rc = seg_reader_open(&r, path, err, sizeof err);
	seg_reader_close(r);
	int want = trusted(c) || !strcmp(c->shape, "none") ? VRAMZ_ENOTFOUND
		   : !strcmp(c->open, "notdir") ? VRAMZ_EINVAL : VRAMZ_EPERM;
	if (rc != want)
		fail_msg("%s: segment reader: %d (%s), want %d", c->name, rc, err, want);
	if (want == VRAMZ_EPERM && !strstr(err, "not trusted"))
		fail_msg("%s: segment reader says '%s', not why it distrusts", c->name, err);
	for (unsigned i = 0; i < c->nitems; i++) {
		const struct item *x = &c->item[i];
		char text[160];
		uint32_t pid;
		unsigned long long start;
		if (strcmp(x->kind, "agent") || !agent_text(x->name, text, sizeof text, &pid, &start))
			continue;
		/* as agent_join looks into /run/user/UID/vramz for UID's process */
		struct agent_scan s = {0};
		struct agent_figures f;
		agent_scan_add_dir(&s, run, x->owner);
		assert_int_equal(agent_scan_list(&s), 0);
		rc = agent_lookup(&s, pid, start, x->owner, &f);
		agent_scan_free(&s);
		int found = trusted(c) || !strcmp(c->open, "theirs");
		if ((rc == 0) != found)
			fail_msg("%s: agent reader on %s: %d, want %s", c->name, x->name, rc,
				 found ? "found" : "ignored");
	}
}

/* Publishes OUT_NAME as the daemon's writer does: the verdicts. */
static void publish(const struct rcase *c, const char *run)
{
	struct rundir rd;
	char err[300] = "";
	int rc = rundir_open(run, 0700, RUNDIR_NO_UID, &rd, err, sizeof err);
	const char *got = rc == 0 ? (rd.shared ? "shared" : "ok")
			  : rc == VRAMZ_EINVAL ? "notdir" : rc == VRAMZ_EPERM ? "refused" : "error";
	const char *want = !strcmp(c->open, "theirs") ? "refused" : c->open;
	if (strcmp(got, want))
		fail_msg("%s: open: %s (%d: %s), want %s", c->name, got, rc, err, want);
	if (rc) {
		assert_string_equal(c->write, "-");
		return;
	}
	char tmp[400];
	snprintf(tmp, sizeof tmp, "%s/%s", run, TMP_NAME);
	int fd = safefile_open(rd.fd, tmp, SAFEFILE_TEMP, 0644, err, sizeof err);
	if (fd >= 0) {
		assert_int_equal(write(fd, "vramz-torch 1\n", 14), 14);
		close(fd);
		assert_int_equal(renameat(rd.fd, TMP_NAME, rd.fd, OUT_NAME), 0);
	}
	rundir_close(&rd);
	const char *wgot = fd >= 0 ? "ok" : fd == VRAMZ_EPERM ? "refused" : "error";
	if (strcmp(wgot, c->write))
		fail_msg("%s: write: %s (%d: %s), want %s", c->name, wgot, fd, err, c->write);
	if (fd < 0 && !strstr(err, "refusing"))
		fail_msg("%s: the refusal does not say so: %s", c->name, err);
}

/* After: each item's fate, nothing else written, the victim intact. */
static void check_after(const struct rcase *c, const char *real)
{
	char path[400], buf[64];
	struct stat st;
	unsigned expect = 0;
	for (unsigned i = 0; i < c->nitems; i++) {
		const struct item *x = &c->item[i];
		snprintf(path, sizeof path, "%s/%s", real, x->name);
		int there = lstat(path, &st) == 0;
		if (!strcmp(x->fate, "gone")) {
			if (there)
				fail_msg("%s: %s still there", c->name, x->name);
			continue;
		}
		if (!there) /* C does not sweep: swept items stay too */
			fail_msg("%s: %s removed", c->name, x->name);
		expect++;
		if (st.st_uid != x->owner)
			fail_msg("%s: %s changed owner", c->name, x->name);
		if (!strcmp(x->kind, "fifo") && !S_ISFIFO(st.st_mode))
			fail_msg("%s: %s is no longer a FIFO", c->name, x->name);
		if (!strcmp(x->kind, "symlink") && !S_ISLNK(st.st_mode))
			fail_msg("%s: %s is no longer a link", c->name, x->name);
		if (!strcmp(x->kind, "data")) {
			FILE *f = fopen(path, "r");
			assert_non_null(f);
			if (!fgets(buf, sizeof buf, f) || strcmp(buf, "precious\n"))
				fail_msg("%s: %s was written", c->name, x->name);
			fclose(f);
		}
	}
	snprintf(path, sizeof path, "%s/victim", base);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	if (!fgets(buf, sizeof buf, f) || strcmp(buf, "precious\n"))
		fail_msg("%s: the victim behind a link was written", c->name);
	fclose(f);
	if (!strcmp(c->write, "ok"))
		expect++; /* OUT_NAME */
	if (!strcmp(c->shape, "regular"))
		return;
	DIR *d = opendir(real);
	if (!d) {
		if (expect)
			fail_msg("%s: %s: %s", c->name, real, strerror(errno));
		return;
	}
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	if (n != expect)
		fail_msg("%s: %u names in %s, want %u (something else was written)", c->name, n, real,
			 expect);
	snprintf(path, sizeof path, "%s/%s", real, OUT_NAME);
	if (!strcmp(c->write, "ok") && lstat(path, &st))
		fail_msg("%s: %s not published", c->name, OUT_NAME);
	if (!strcmp(c->shape, "none") && (stat(real, &st) || (st.st_mode & 07777) != 0700))
		fail_msg("%s: the directory made is not 0700", c->name);
}

static void run_case(void **state)
{
	const struct rcase *c = *state;
	if (c->needs_root && geteuid() != 0)
		skip(); /* chown needs root; CI runs as root */
	char run[256], real[256];
	build(c, run, real, sizeof run);
	check_readers(c, run);
	publish(c, run);
	check_after(c, real);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(base, "rdc");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(base);
}

int main(void)
{
	const char *src = getenv("TESTS_SRC");
	char file[512];
	snprintf(file, sizeof file, "%s/rundir-cases.txt", src ? src : "tests");
	unsigned n = 0;
	struct rcase *cs = load(file, &n);
	if (!cs || n < 10) {
		fprintf(stderr, "%s: no cases (set TESTS_SRC)\n", file);
		return 1;
	}
	struct CMUnitTest *t = calloc(n, sizeof *t);
	for (unsigned i = 0; i < n; i++)
		t[i] = (struct CMUnitTest){cs[i].name, run_case, setup, teardown, &cs[i]};
	int rc = _cmocka_run_group_tests("rundir_cases", t, n, NULL, NULL);
	free(t);
	free(cs);
	return rc;
}
