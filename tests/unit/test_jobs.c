/* SPDX-License-Identifier: Apache-2.0 */
/* test_jobs.c - unit tests of the job tools' pure parts: process-tree
 * membership over a fake /proc, the kill refusals against real processes
 * this test starts, the JSON reader, the OOM detector.  The tool's files
 * are compiled in here (they live in src/, not in the library). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/format/jsonr.c"
#include "../../src/jobs/proctree.c"
#include "../../src/jobs/safekill.c"
#include "../../src/jobs/jobrun.c"

/* jobrun.c formats long durations with the tool's fmt_duration */
const char *fmt_duration(char *buf, size_t len, int64_t ms)
{
	snprintf(buf, len, "%llds", (long long)(ms / 1000));
	return buf;
}

static char root[TMPDIR_LEN];

/* /proc/PID/stat of a fake process: comm with a space and a ')' inside */
static void fake_proc(unsigned pid, unsigned ppid, unsigned long long start)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%u/stat", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%u (py thon) x) S %u %u 0 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
		pid, ppid, pid, start);
	fclose(f);
}

static int setup_root(void **state)
{
	(void)state;
	assert_int_equal(tmpdir_make(root, "proctree"), 0);
	/* 100 = vramz; 200 its child; 300 grandchild; 400 orphan re-parented
	 * to 100 (subreaper); 500 an unrelated process under init; 600 under 500 */
	fake_proc(100, 1, 10);
	fake_proc(200, 100, 20);
	fake_proc(300, 200, 30);
	fake_proc(400, 100, 40);
	fake_proc(500, 1, 50);
	fake_proc(600, 500, 60);
	return 0;
}

static int teardown_root(void **state)
{
	(void)state;
	return tmpdir_remove(root);
}

static void test_parse_stat(void **state)
{
	(void)state;
	unsigned ppid = 0;
	unsigned long long st = 0;
	assert_int_equal(proctree_parse_stat("42 (a) b) c) S 7 42 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 987 0", &ppid, &st), 0);
	assert_int_equal(ppid, 7);
	assert_int_equal(st, 987);
	assert_int_equal(proctree_parse_stat("42 (trunc", &ppid, &st), -1);
	assert_int_equal(proctree_parse_stat("42 (x) S 7", &ppid, &st), -1);
}

static void test_membership(void **state)
{
	(void)state;
	struct proctree *t = proctree_new(root, 100);
	assert_non_null(t);
	assert_int_equal(proctree_member(t, 200), 1);
	assert_int_equal(proctree_member(t, 300), 1);
	assert_int_equal(proctree_member(t, 400), 1);
	assert_int_equal(proctree_member(t, 500), 0);
	assert_int_equal(proctree_member(t, 600), 0);
	assert_int_equal(proctree_member(t, 100), 0); /* vramz is not its own job */
	assert_true(proctree_member(t, 999) < 0);     /* not there */
	/* cached: a second question costs one stat read */
	unsigned long before = proctree_reads(t);
	assert_int_equal(proctree_member(t, 300), 1);
	assert_int_equal(proctree_reads(t) - before, 1);
	/* pid 300 reused by a process of the unrelated tree: the start time
	 * tells them apart, the cache is not believed */
	fake_proc(300, 500, 31);
	assert_int_equal(proctree_member(t, 300), 0);
	fake_proc(300, 200, 30);
	unsigned pids[8];
	assert_int_equal(proctree_list(t, pids, 8), 3);
	proctree_free(t);
}

static void test_safekill_refusals(void **state)
{
	(void)state;
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	struct safekill_target t = {.pid = child, .start_ticks = proc_start_time("/proc", (unsigned)child)};
	assert_int_not_equal(t.start_ticks, 0);
	assert_int_equal(safekill_check("/proc", &t, getuid()), SK_OK);
	/* start time differs from the listing: a reused pid */
	struct safekill_target reused = {.pid = child, .start_ticks = t.start_ticks + 1};
	assert_int_equal(safekill_check("/proc", &reused, getuid()), SK_REUSED);
	int fd = -1;
	assert_int_equal(safekill_signal("/proc", &reused, getuid(), SIGTERM, &fd), SK_REUSED);
	assert_int_equal(fd, -1);
	/* the child is ours (root's): a non-root invoker may not touch it,
	 * unless that is its own uid */
	if (getuid() == 0)
		assert_int_equal(safekill_check("/proc", &t, 65534), SK_OTHER_USER);
	struct safekill_target self = {.pid = getpid(), .start_ticks = proc_start_time("/proc", (unsigned)getpid())};
	assert_int_equal(safekill_check("/proc", &self, getuid()), SK_SELF);
	struct safekill_target init = {.pid = 1};
	assert_int_equal(safekill_check("/proc", &init, 0), SK_INIT);
	struct safekill_target parent = {.pid = getppid(), .start_ticks = proc_start_time("/proc", (unsigned)getppid())};
	assert_int_equal(safekill_check("/proc", &parent, getuid()), SK_ANCESTOR);
	/* the real thing: signalled through the pidfd, seen to end */
	assert_int_equal(safekill_signal("/proc", &t, getuid(), SIGTERM, &fd), SK_OK);
	assert_int_equal(safekill_wait(fd, 5000), 1);
	close(fd);
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	/* reaped: gone */
	assert_int_equal(safekill_check("/proc", &t, getuid()), SK_GONE);
}

static void test_jsonr(void **state)
{
	(void)state;
	char err[128];
	struct jr_val *v = jr_parse("{\"a\": [1, 18446744073709551615, -2.5e3], \"s\": \"x\\u00e9\\n\","
				    " \"t\": true, \"n\": null, \"o\": {}}", err, sizeof err);
	assert_non_null(v);
	const struct jr_val *a = jr_get(v, "a");
	assert_int_equal(a->n, 3);
	assert_true(a->items[1].is_uint && a->items[1].u64 == UINT64_MAX);
	assert_true(a->items[2].num == -2500.0 && !a->items[2].is_uint);
	assert_string_equal(jr_str(v, "s"), "x\xc3\xa9\n");
	assert_int_equal(jr_get(v, "t")->boolean, 1);
	assert_int_equal(jr_get(v, "n")->type, JR_NULL);
	assert_null(jr_get(v, "missing"));
	jr_free(v);
	assert_null(jr_parse("{\"a\": 1,}", err, sizeof err));
	assert_non_null(strstr(err, "offset"));
	assert_null(jr_parse("[1] x", err, sizeof err));
	assert_null(jr_parse("\"open", err, sizeof err));
}

static void test_oom_text(void **state)
{
	(void)state;
	assert_true(jobrun_is_oom_text("torch.OutOfMemoryError: CUDA out of memory. Tried"));
	assert_true(jobrun_is_oom_text("RESOURCE_EXHAUSTED: Out of memory while trying to allocate"));
	assert_true(jobrun_is_oom_text("CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate"));
	assert_false(jobrun_is_oom_text("epoch 1 loss 0.35 memory 12 GiB"));
	struct jobrun_result r = {0};
	r.started = 1;
	r.signaled = 1;
	r.signo = SIGKILL;
	assert_int_equal(jobrun_status(&r), 137);
	r.signaled = 0;
	r.exit_code = 4;
	assert_int_equal(jobrun_status(&r), 4);
	r.started = 0;
	r.exec_errno = ENOENT;
	assert_int_equal(jobrun_status(&r), 127);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test_setup_teardown(test_membership, setup_root, teardown_root),
		cmocka_unit_test(test_safekill_refusals),
		cmocka_unit_test(test_jsonr),
		cmocka_unit_test(test_oom_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
