/* SPDX-License-Identifier: Apache-2.0 */
/* test_safefile.c - the link rule (lib/safefile.c) on its own: what each
 * mode makes, appends to or refuses, by the reason a person reads; as
 * root, the cases with another user's names (uid 65534) too.  The tool's
 * side (log, report, run, pick) is tests/e2e/t2050-log-links.sh. */
#include "safefile.h"
#include "vramz/vramz.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#define OTHER 65534

static char dir[TMPDIR_LEN];
static char err[512];

static int setup(void **s)
{
	(void)s;
	return tmpdir_make(dir, "safefile");
}

static int teardown(void **s)
{
	(void)s;
	return tmpdir_remove(dir);
}

static const char *at(const char *name)
{
	static char p[4][256];
	static unsigned i;
	char *b = p[i++ % 4];
	snprintf(b, 256, "%s/%s", dir, name);
	return b;
}

static int open_rc(const char *name, unsigned how)
{
	err[0] = 0;
	int fd = safefile_open(-1, at(name), how, 0644, err, sizeof err);
	if (fd > 0 && !(how & SAFEFILE_CHECK))
		close(fd);
	return fd > 0 ? 0 : fd;
}

static void test_private_dir(void **state)
{
	(void)state;
	/* new, then appended to */
	int fd = safefile_open(-1, at("a.csv"), SAFEFILE_APPEND, 0644, err, sizeof err);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
	fd = safefile_open(-1, at("a.csv"), SAFEFILE_APPEND, 0644, err, sizeof err);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "y\n", 2), 2);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
	/* a link is never followed, even our own in our own directory */
	assert_int_equal(symlink(at("target"), at("link")), 0);
	assert_int_equal(open_rc("link", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "refusing to write "));
	assert_non_null(strstr(err, "/link: a symbolic link (owned by uid "));
	assert_int_equal(open_rc("link", SAFEFILE_CHECK), VRAMZ_EPERM);
	assert_int_equal(access(at("target"), F_OK), -1);
	/* a FIFO: refused at once, unless the user named it (ANY_KIND) */
	assert_int_equal(mkfifo(at("fifo"), 0600), 0);
	assert_int_equal(open_rc("fifo", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "/fifo: a FIFO, not a regular file"));
	assert_int_equal(open_rc("fifo", SAFEFILE_APPEND | SAFEFILE_ANY_KIND), 0);
	/* a temporary name: a stale file of ours is replaced, a FIFO refused */
	assert_int_equal(open_rc("a.csv", SAFEFILE_TEMP), 0);
	assert_int_equal(stat(at("a.csv"), &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(open_rc("fifo", SAFEFILE_TEMP), VRAMZ_EPERM);
	assert_non_null(strstr(err, "a FIFO owned by uid "));
	assert_non_null(strstr(err, "is at this temporary name"));
	/* absent names may be made; a missing directory is not made */
	assert_int_equal(open_rc("none", SAFEFILE_CHECK), 0);
	assert_int_equal(access(at("none"), F_OK), -1);
	assert_int_equal(open_rc("nodir/x", SAFEFILE_APPEND), VRAMZ_ENOTFOUND);
}

static void test_shared_dirs(void **state)
{
	(void)state;
	char ww[128], st_dir[128];
	snprintf(ww, sizeof ww, "%s/ww", dir);
	snprintf(st_dir, sizeof st_dir, "%s/st", dir);
	assert_int_equal(mkdir(ww, 0700), 0);
	assert_int_equal(chmod(ww, 0777), 0);
	assert_int_equal(open_rc("ww/new", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "/ww/new: in "));
	assert_non_null(strstr(err, "/ww, which other users can write and is not sticky"));
	assert_int_equal(access(at("ww/new"), F_OK), -1);
	assert_int_equal(chmod(ww, 0770), 0);
	assert_int_equal(open_rc("ww/new", SAFEFILE_CHECK), VRAMZ_EPERM);
	assert_non_null(strstr(err, "which its group's members can write"));

	assert_int_equal(mkdir(st_dir, 0700), 0);
	assert_int_equal(chmod(st_dir, 01777), 0);
	assert_int_equal(open_rc("st/new", SAFEFILE_APPEND), 0); /* O_EXCL */
	assert_int_equal(open_rc("st/new", SAFEFILE_APPEND), 0); /* ours */
	assert_int_equal(link(at("st/new"), at("st/hard")), 0);
	assert_int_equal(open_rc("st/hard", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "a file with 2 hard links, in "));
	if (geteuid() != 0)
		skip(); /* the rest plants another user's names */
	assert_int_equal(symlink(at("target"), at("st/link")), 0);
	assert_int_equal(lchown(at("st/link"), OTHER, OTHER), 0);
	assert_int_equal(open_rc("st/link", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "/st/link: a symbolic link (owned by uid 65534), not followed"));
	assert_int_equal(access(at("target"), F_OK), -1);
	int fd = open(at("st/theirs"), O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chown(at("st/theirs"), OTHER, OTHER), 0);
	assert_int_equal(open_rc("st/theirs", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "/st/theirs: owned by uid 65534, not you, in "));
	assert_int_equal(open_rc("st/theirs", SAFEFILE_CHECK), VRAMZ_EPERM);
	/* a lock file is only read: another user's serves */
	assert_int_equal(open_rc("st/theirs", SAFEFILE_LOCK), 0);
	/* another user's directory: only our own files in it */
	char foreign[128];
	snprintf(foreign, sizeof foreign, "%s/foreign", dir);
	assert_int_equal(mkdir(foreign, 0755), 0);
	assert_int_equal(chown(foreign, OTHER, OTHER), 0);
	assert_int_equal(open_rc("foreign/mine", SAFEFILE_APPEND), 0);
	assert_int_equal(chown(at("foreign/mine"), OTHER, OTHER), 0);
	assert_int_equal(open_rc("foreign/mine", SAFEFILE_APPEND), VRAMZ_EPERM);
	assert_non_null(strstr(err, "which uid 65534 owns"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_dir),
		cmocka_unit_test(test_shared_dirs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
