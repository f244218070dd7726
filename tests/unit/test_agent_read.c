/* SPDX-License-Identifier: Apache-2.0 */
/* test_agent_read.c - the reader of the PyTorch agent's files: the format
 * (docs/python.md) as the Python agent writes it, and the trust rules that
 * keep a stale or forged file out of a process row (dead pid, reused pid,
 * a file another user wrote claiming your process, a group-writable file,
 * a link).
 */
#include "agent.h"
#include "rundir.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"

#define GiB (1ull << 30)

static const char FIG[] =
	"vramz-torch 1\n"
	"process pid=4242 start_time_ticks=1893455 uid=1000 time_ms=1796002980307 interval_ms=1000 "
	"seq=17 history=1 torch=2.11.0 future_key=x\n"
	"device cuda=1 uuid=GPU-8f3a allocated_bytes=10737418240 reserved_bytes=11811160064 "
	"active_bytes=10737418240 inactive_split_bytes=20971520 peak_allocated_bytes=12884901888 "
	"alloc_retries=3 ooms=1 allocations=212 allocations_total=90211 device_mallocs=31\n"
	"future_record a=1\n"
	"oom time_ms=1796002979100 cuda=1 requested_bytes=21474836480\n";

static void parses_what_the_agent_writes(void **state)
{
	struct agent_figures f;
	assert_int_equal(agent_parse(FIG, strlen(FIG), &f), 0);
	assert_int_equal(f.pid, 4242);
	assert_int_equal(f.start_time_ticks, 1893455);
	assert_int_equal(f.interval_ms, 1000);
	assert_int_equal(f.history, 1);
	assert_int_equal(f.ndev, 1);
	const struct agent_device *d = agent_device(&f, "GPU-8f3a");
	assert_non_null(d);
	assert_int_equal(d->cuda, 1);
	assert_int_equal(d->v[AS_ALLOCATED], 10 * GiB);
	assert_int_equal(d->v[AS_RESERVED], 11811160064ull);
	assert_int_equal(d->v[AS_INACTIVE_SPLIT], 20 << 20);
	assert_int_equal(d->v[AS_RETRIES], 3);
	assert_int_equal(d->v[AS_OOMS], 1);
	assert_true(d->valid & (1u << AS_ALLOCATIONS));
	assert_false(d->valid & (1u << AS_PEAK_RESERVED)); /* not in the file: unknown */
	assert_null(agent_device(&f, "GPU-other"));
	assert_true(f.oom_valid);
	assert_int_equal(f.oom_requested_bytes, 20 * GiB);
}

/* issue 37: the outside records - the context, libraries and NCCL's
 * communicators per group, on two GPUs - turned into parts that sum to
 * NVML's figure minus reserved; an unknown part is skipped, an older
 * agent (no outside=1) has no parts at all */
static void parses_the_outside_parts(void **state)
{
	(void)state;
	static const char T[] =
		"vramz-torch 1\n"
		"process pid=4242 start_time_ticks=1893455 time_ms=5 outside=1\n"
		"device cuda=0 uuid=GPU-a reserved_bytes=100\n"
		"outside part=context bytes=639631360 how=process cuda=0 uuid=GPU-a at=tick time_ms=1\n"
		"outside part=libraries bytes=77594624 how=process cuda=0 lib=libcudnn_cnn\n"
		"outside part=nccl bytes=591396864 how=process cuda=0 uuid=GPU-a comm=0 group=nccl:0-7 "
		"at=init_process_group\n"
		"outside part=nccl bytes=5 how=process cuda=0 uuid=GPU-a comm=0 group=nccl:0-7 at=all_reduce\n"
		"outside part=nccl bytes=591396864 how=device cuda=0 uuid=GPU-a comm=1 comms=3 group=nccl:0,2\n"
		"outside part=future bytes=7 cuda=0 uuid=GPU-a\n"
		"outside part=nccl cuda=0 uuid=GPU-a\n"
		"outside part=context bytes=639631360 how=process cuda=1 uuid=GPU-b\n"
		"outside part=other bytes=33554432 how=process cuda=0 uuid=GPU-a\n";
	struct agent_figures f;
	assert_int_equal(agent_parse(T, strlen(T), &f), 0);
	assert_true(f.outside_on);
	assert_int_equal(f.noutside, 7); /* the unknown part and the one without bytes skipped */
	assert_int_equal(f.outside[0].part, AGENT_PART_CONTEXT);
	assert_int_equal(f.outside[0].how, 1);
	assert_int_equal(f.outside[4].how, 2);
	assert_int_equal(f.outside[4].comms, 3);
	assert_string_equal(f.outside[2].group, "nccl:0-7");
	uint64_t parts[AGENT_PART_COUNT];
	unsigned comms;
	uint64_t sum = 639631360ull + 77594624 + 591396864 * 2 + 5;
	assert_int_equal(agent_outside_parts(&f, "GPU-a", sum + (100 << 20), parts, &comms), 0);
	assert_int_equal(parts[AGENT_PART_CONTEXT], 639631360);
	/* the libraries record has no uuid: its cuda index's device record says */
	assert_int_equal(parts[AGENT_PART_LIBRARIES], 77594624);
	assert_int_equal(parts[AGENT_PART_NCCL], 591396864ull * 2 + 5);
	assert_int_equal(parts[AGENT_PART_OTHER], 100 << 20); /* the agent's own 32 MiB in it */
	assert_int_equal(comms, 1 + 3); /* comm 0 twice is one communicator */
	/* NVML's figure below the parts (a communicator freed since): the
	 * surest first, never more than the whole */
	assert_int_equal(agent_outside_parts(&f, "GPU-a", 700 << 20, parts, &comms), 0);
	assert_int_equal(parts[AGENT_PART_CONTEXT], 639631360);
	assert_int_equal(parts[AGENT_PART_NCCL], (700 << 20) - 639631360);
	assert_int_equal(parts[AGENT_PART_LIBRARIES] + parts[AGENT_PART_OTHER], 0);
	/* the other GPU: only its context */
	assert_int_equal(agent_outside_parts(&f, "GPU-b", 1ull << 30, parts, &comms), 0);
	assert_int_equal(parts[AGENT_PART_CONTEXT], 639631360);
	assert_int_equal(parts[AGENT_PART_OTHER], (1ull << 30) - 639631360);
	assert_int_equal(comms, 0);
	/* an agent from before issue 37 */
	assert_int_equal(agent_parse(FIG, strlen(FIG), &f), 0);
	assert_int_equal(agent_outside_parts(&f, "GPU-8f3a", 1ull << 30, parts, &comms), -1);
}

/* issue 27: the oom record in full, the holders and the end record; a
 * record of a type a reader does not know is skipped */
static void parses_the_oom_and_the_end(void **state)
{
	(void)state;
	static const char T[] =
		"vramz-torch 1\n"
		"process pid=4242 start_time_ticks=1893455 time_ms=5 history=1\n"
		"oom time_ms=9 cuda=0 requested_bytes=256 limit_bytes=8589934592 device_free_bytes=77 "
		"allocated_bytes=100 reserved_bytes=200 ooms=4 line=88 func=forward file=/home/a b/model.py\n"
		"holder cuda=0 uuid=GPU-1 bytes=62 blocks=5 line=40 func=load time_ms=9 file=/home/data.py\n"
		"holder cuda=0 bytes=30 blocks=1 line=41 func=load2 time_ms=9 file=/home/data.py\n"
		"future key=1\n"
		"end time_ms=10 how=exception exception=torch.cuda.OutOfMemoryError status=1 "
		"line=88 func=forward file=/home/a b/model.py\n";
	struct agent_figures f;
	assert_int_equal(agent_parse(T, strlen(T), &f), 0);
	assert_int_equal(f.oom_limit_bytes, 8589934592ull);
	assert_true(f.oom_has_free);
	assert_int_equal(f.oom_free_bytes, 77);
	assert_int_equal(f.oom_allocated_bytes, 100);
	assert_int_equal(f.oom_count, 4);
	assert_int_equal(f.oom_at.line, 88);
	assert_string_equal(f.oom_at.func, "forward");
	assert_string_equal(f.oom_at.file, "/home/a b/model.py"); /* free text, to the end */
	assert_int_equal(f.nholders, 2);
	assert_string_equal(f.holder[0].uuid, "GPU-1");
	assert_int_equal(f.holder[0].bytes, 62);
	assert_int_equal(f.holder[0].blocks, 5);
	assert_int_equal(f.holder[1].at.line, 41);
	assert_true(f.end.valid);
	assert_int_equal(f.end.how, AGENT_END_EXCEPTION);
	assert_true(f.end.oom); /* by the exception's name, without oom=1 */
	assert_true(f.end.has_status);
	assert_int_equal(f.end.status, 1);
	assert_string_equal(f.end.exception, "torch.cuda.OutOfMemoryError");
	static const char E[] = "vramz-torch 1\nprocess pid=1 start_time_ticks=2\nend how=exit status=0\n";
	assert_int_equal(agent_parse(E, strlen(E), &f), 0);
	assert_true(f.end.valid);
	assert_int_equal(f.end.how, AGENT_END_EXIT);
	assert_false(f.end.oom);
	assert_int_equal(f.end.status, 0);
	assert_false(f.oom_valid);
}

static void rejects_other_formats(void **state)
{
	struct agent_figures f;
	const char *bad[] = {
		"",
		"vramz-torch 2\nprocess pid=1 start_time_ticks=2\n",
		"vramz-torch 10\nprocess pid=1 start_time_ticks=2\n",
		"vramz-torch-sites 1\nprocess pid=1 start_time_ticks=2\n",
		"vramz-torch 1\nprocess start_time_ticks=2\n",       /* no pid */
		"vramz-torch 1\nprocess pid=x start_time_ticks=2\n",
		"vramz-torch 1\nprocess pid=99999999999 start_time_ticks=2\n",
		"\x01\x02\x03",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(agent_parse(bad[i], strlen(bad[i]), &f), VRAMZ_EPARSE);
	/* a value that does not fit is unknown, not wrapped */
	const char *big = "vramz-torch 1\nprocess pid=1 start_time_ticks=2\n"
			  "device uuid=G reserved_bytes=99999999999999999999999 allocated_bytes=-5\n";
	assert_int_equal(agent_parse(big, strlen(big), &f), 0);
	assert_int_equal(f.dev[0].valid, 0);
}

static void parses_sites(void **state)
{
	const char *t = "vramz-torch-sites 1\n"
			"process pid=1 start_time_ticks=2 time_ms=2000 since_ms=1000 growth_bytes=1000\n"
			"site cuda=0 uuid=GPU-a bytes=5000 blocks=3 growth_bytes=940 line=57 func=step file=/my dir/train.py\n"
			"site cuda=0 uuid=GPU-a bytes=100 blocks=1 growth_bytes=60 line=9 func=<module> file=x.py\n";
	struct agent_sites s;
	assert_int_equal(agent_parse_sites(t, strlen(t), &s), 0);
	assert_int_equal(s.since_ms, 1000);
	assert_true(s.has_growth);
	assert_int_equal(s.growth_bytes, 1000);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.site[0].file, "/my dir/train.py");
	assert_string_equal(s.site[0].func, "step");
	assert_int_equal(s.site[0].line, 57);
	assert_int_equal(s.site[0].growth_bytes, 940);
	const char *e = "vramz-torch-sites 1\nprocess pid=1\nerror why=attach(history=True) to record\n";
	assert_int_equal(agent_parse_sites(e, strlen(e), &s), 0);
	assert_string_equal(s.error, "attach(history=True) to record");
	assert_int_equal(s.n, 0);
}

/* Issue 25: an agent's text (a file name, a function, its why) goes through
 * the one sanitizer (lib/internal/text.h): escapes and bidi controls become '?',
 * a UTF-8 file name stays readable. */
static void sanitizes_sites(void **state)
{
	const char *t = "vramz-torch-sites 1\n"
			"process pid=1 time_ms=2000 since_ms=1000 growth_bytes=10\n"
			"site cuda=0 uuid=GPU-a\x1b[2J bytes=5 growth_bytes=5 line=1 func=st\xc2\x9b" "ep "
			"file=/d/\xe2\x80\xaeyp.niart\x1b]0;t\x07\n"
			"site cuda=0 uuid=GPU-a bytes=5 growth_bytes=5 line=2 func=f file=donn\xc3\xa9" "es.py\n";
	struct agent_sites s;
	(void)state;
	assert_int_equal(agent_parse_sites(t, strlen(t), &s), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.site[0].file, "/d/?yp.niart?]0;t?");
	assert_string_equal(s.site[0].func, "st?ep");
	assert_string_equal(s.site[0].uuid, "GPU-a?[2J");
	assert_string_equal(s.site[1].file, "donn\xc3\xa9" "es.py");
	const char *e = "vramz-torch-sites 1\nprocess pid=1\nerror why=\xe2\x81\xa6no\x1b[H\n";
	assert_int_equal(agent_parse_sites(e, strlen(e), &s), 0);
	assert_string_equal(s.error, "?no?[H");
}

/* ---- files and trust ------------------------------------------------------ */

static char dir[TMPDIR_LEN];

static int setup_dir(void **state)
{
	return tmpdir_make(dir, "agent");
}

static int teardown_dir(void **state)
{
	return tmpdir_remove(dir);
}

static void put(const char *name, const char *text, mode_t mode)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static const char *fig(unsigned pid, unsigned long long start)
{
	static char buf[512];
	snprintf(buf, sizeof buf, "vramz-torch 1\nprocess pid=%u start_time_ticks=%llu\n"
				  "device cuda=0 uuid=GPU-a allocated_bytes=7 reserved_bytes=9\n", pid, start);
	return buf;
}

static int lookup(unsigned pid, unsigned long long start, unsigned uid, struct agent_figures *f)
{
	struct agent_scan s = {0};
	agent_scan_add_dir(&s, dir, RUNDIR_NO_UID);
	agent_scan_add_dir(&s, "/nonexistent/vramz", RUNDIR_NO_UID); /* a missing directory is no error */
	assert_int_equal(agent_scan_list(&s), 0);
	int rc = agent_lookup(&s, pid, start, uid, f);
	agent_scan_free(&s);
	return rc;
}

static void joins_by_pid_and_start_time(void **state)
{
	struct agent_figures f;
	unsigned me = (unsigned)geteuid();
	put("torch-4242-100", fig(4242, 100), 0644);
	assert_int_equal(lookup(4242, 100, me, &f), 0);
	assert_int_equal(f.dev[0].v[AS_RESERVED], 9);
	/* the pid was reused: the new process started later */
	assert_int_equal(lookup(4242, 555, me, &f), VRAMZ_ENOTFOUND);
	/* no agent */
	assert_int_equal(lookup(4343, 100, me, &f), VRAMZ_ENOTFOUND);
}

/* the directory's mtime set an hour back: a listing of it is trusted */
static void age_dir(void)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 3600;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, dir, t, 0), 0);
}

static unsigned list_again(struct agent_scan *s)
{
	agent_scan_reset(s);
	agent_scan_add_dir(s, dir, RUNDIR_NO_UID);
	assert_int_equal(agent_scan_list(s), 0);
	return s->n;
}

/* A reader lists the runtime directory every tick; one that has not
 * changed (and had not for a while) is kept, not read again. */
static void keeps_a_listing_until_the_directory_changes(void **state)
{
	struct agent_scan s = {0};
	age_dir();
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(s.listings, 1);
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(s.listings, 1); /* unchanged: not read again */
	/* an agent starts: the directory's mtime moves, it is read */
	put("torch-4242-100", fig(4242, 100), 0644);
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 2);
	/* changed just now: a second change within the file system's clock
	 * tick would leave the same mtime, so it is read again */
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 3);
	age_dir();
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 4);
	/* another set of directories: read */
	agent_scan_reset(&s);
	agent_scan_add_dir(&s, dir, RUNDIR_NO_UID);
	agent_scan_add_dir(&s, "/nonexistent/vramz", RUNDIR_NO_UID);
	assert_int_equal(agent_scan_list(&s), 0);
	assert_int_equal(s.listings, 5);
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 6);
	/* the agent goes away (its file removed, the mtime set back as it
	 * was): the ctime still tells */
	struct stat before;
	assert_int_equal(stat(dir, &before), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/torch-4242-100", dir);
	assert_int_equal(unlink(path), 0);
	struct timespec t[2] = {before.st_atim, before.st_mtim};
	assert_int_equal(utimensat(AT_FDCWD, dir, t, 0), 0);
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(s.listings, 7);
	agent_scan_free(&s);
}

/* The scan holds each directory open (fstat, no path walk a tick); one
 * deleted and made again under the same path, as a login's runtime
 * directory is, is the new directory, listed afresh. */
static void a_directory_made_again_is_listed_again(void **state)
{
	struct agent_scan s = {0};
	age_dir();
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(s.listings, 1);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	put("torch-4242-100", fig(4242, 100), 0644);
	age_dir(); /* same path, an old mtime: only the inode tells */
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 2);
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(s.listings, 2);
	/* and what changes in the new one is seen, not the old one's state */
	put("torch-4343-200", fig(4343, 200), 0644);
	assert_int_equal(list_again(&s), 2);
	agent_scan_free(&s);
	assert_int_equal(s.dfd[0], 0); /* nothing left open */
}

/* A directory is judged by the runtime directory's rule each tick, not
 * only when first opened: one made writable by others while held is no
 * longer listed, and is again once put right (tests/rundir-cases.txt has
 * the rule's cases). */
static void a_held_directory_made_writable_is_not_trusted(void **state)
{
	struct agent_scan s = {0};
	put("torch-4242-100", fig(4242, 100), 0644);
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(list_again(&s), 0);
	assert_int_equal(chmod(dir, 01777), 0); /* sticky: others add names, never replace ours */
	assert_int_equal(list_again(&s), 1);
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(list_again(&s), 1);
	agent_scan_free(&s);
}

static void ignores_forged_and_loose_files(void **state)
{
	struct agent_figures f;
	unsigned me = (unsigned)geteuid();
	/* named for 5000/1 but written about another process */
	put("torch-5000-1", fig(6000, 1), 0644);
	assert_int_equal(lookup(5000, 1, me, &f), VRAMZ_EPERM);
	/* group- or world-writable: anyone could have written it */
	put("torch-5001-1", fig(5001, 1), 0664);
	assert_int_equal(lookup(5001, 1, me, &f), VRAMZ_EPERM);
	put("torch-5002-1", fig(5002, 1), 0646);
	assert_int_equal(lookup(5002, 1, me, &f), VRAMZ_EPERM);
	/* a link, even to a good file */
	put("good", fig(5003, 1), 0644);
	char l[256], t[256];
	snprintf(l, sizeof l, "%s/torch-5003-1", dir);
	snprintf(t, sizeof t, "%s/good", dir);
	assert_int_equal(symlink(t, l), 0);
	assert_int_equal(lookup(5003, 1, me, &f), VRAMZ_EPERM);
	/* a directory by that name */
	snprintf(l, sizeof l, "%s/torch-5004-1", dir);
	assert_int_equal(mkdir(l, 0755), 0);
	assert_int_equal(lookup(5004, 1, me, &f), VRAMZ_EPERM);
	/* names that only look like agents' are not listed */
	put("torch-5005-1.tmp", fig(5005, 1), 0644);
	put(".torch-5005-1.tmp", fig(5005, 1), 0644);
	assert_int_equal(lookup(5005, 1, me, &f), VRAMZ_ENOTFOUND);
}

static void only_the_owner_or_root_is_believed(void **state)
{
	struct agent_figures f;
	if (geteuid() != 0)
		skip(); /* chown needs root; CI runs as root */
	char path[256];
	put("torch-7000-1", fig(7000, 1), 0644);
	snprintf(path, sizeof path, "%s/torch-7000-1", dir);
	/* user 2001's file claiming user 1000's process */
	assert_int_equal(chown(path, 2001, 2001), 0);
	assert_int_equal(lookup(7000, 1, 1000, &f), VRAMZ_EPERM);
	/* user 1000's own file */
	assert_int_equal(chown(path, 1000, 1000), 0);
	assert_int_equal(lookup(7000, 1, 1000, &f), 0);
	/* root's file is believed for anyone */
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(lookup(7000, 1, 1000, &f), 0);
}

static void requests_and_reads_sites(void **state)
{
	struct agent_sites s;
	unsigned me = (unsigned)geteuid();
	assert_int_equal(agent_read_sites(dir, 8000, 1, me, &s), VRAMZ_ENOTFOUND);
	assert_int_equal(agent_request_sites(dir, 8000, 1, me), 0);
	char path[256];
	snprintf(path, sizeof path, "%s/torch-8000-1.req", dir);
	assert_int_equal(access(path, F_OK), 0);
	put("torch-8000-1.sites", "vramz-torch-sites 1\nprocess pid=8000 start_time_ticks=1\n"
				  "site bytes=10 growth_bytes=10 line=3 func=f file=a.py\n", 0600);
	assert_int_equal(agent_read_sites(dir, 8000, 1, me, &s), 0);
	assert_int_equal(s.n, 1);
	put("torch-8001-1.sites", "vramz-torch-sites 1\n", 0666);
	assert_int_equal(agent_read_sites(dir, 8001, 1, me, &s), VRAMZ_EPERM);
}

/* agent_sweep: the C twin of tests/python/test_agent_end.py's SweepTest,
 * case for case (the rule of python/vramz/agentfile.py's sweep) */
static void put_aged(const char *name, const char *text, long age_s)
{
	char p[TMPDIR_LEN + 64];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct timespec ts[2];
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= age_s;
	ts[1] = ts[0];
	assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static int all_dead(uint32_t pid, uint64_t start, void *arg)
{
	(void)pid, (void)start, (void)arg;
	return 0;
}

static int all_alive(uint32_t pid, uint64_t start, void *arg)
{
	(void)pid, (void)start, (void)arg;
	return 1;
}

static int exists(const char *name)
{
	char p[TMPDIR_LEN + 64];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void sweeps_tombstones_after_their_time(void **state)
{
	const char *end = "vramz-torch 1\nprocess pid=1\nend time_ms=1 how=exit status=0\n";
	const char *noend = "vramz-torch 1\nprocess pid=1\n";
	long keep = AGENT_TOMBSTONE_KEEP_S;
	put_aged("torch-4194901-1", end, 10);               /* young: stays */
	put_aged("torch-4194902-1", end, keep + 5);         /* old: goes */
	put_aged("torch-4194903-1", noend, 10);             /* kill -9: goes now */
	put_aged("torch-4194904-1", noend, 10);             /* SIGTERM ... */
	put_aged("torch-4194904-1.sig", "Thread 0x1 (most recent call first):\n  File \"x.py\"", 10);
	put_aged("torch-4194905-1.sig", "", 10);            /* an empty .sig: goes */
	put_aged("torch-4194906-1", noend, 10);
	put_aged("torch-4194906-1.sig", "not what faulthandler writes", 10); /* not ours: stays */
	put_aged("torch-4194901-1.sites", "vramz-torch-sites 1\n", 10); /* a tombstone's sites: go */
	put_aged("torch-4194907-1.req", "not empty\n", 10); /* not a request of ours: stays */
	put_aged("notes", "vramz-torch 1\n", keep * 2);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	time_t now = time(NULL);
	/* a live agent's files are never swept */
	assert_int_equal(agent_sweep(fd, all_alive, NULL, now, keep), 0);
	assert_int_equal(agent_sweep(fd, all_dead, NULL, now, keep), 5);
	assert_true(exists("torch-4194901-1") && exists("torch-4194904-1") &&
		    exists("torch-4194904-1.sig") && exists("torch-4194906-1.sig"));
	assert_false(exists("torch-4194901-1.sites") || exists("torch-4194902-1") ||
		     exists("torch-4194903-1") || exists("torch-4194905-1.sig") ||
		     exists("torch-4194906-1"));
	assert_int_equal(agent_sweep(fd, all_dead, NULL, now + keep, keep), 3);
	assert_false(exists("torch-4194901-1") || exists("torch-4194904-1") ||
		     exists("torch-4194904-1.sig"));
	assert_true(exists("torch-4194906-1.sig") && exists("torch-4194907-1.req") && exists("notes"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_what_the_agent_writes),
		cmocka_unit_test(parses_the_oom_and_the_end),
		cmocka_unit_test(parses_the_outside_parts),
		cmocka_unit_test(rejects_other_formats),
		cmocka_unit_test(parses_sites),
		cmocka_unit_test(sanitizes_sites),
		cmocka_unit_test_setup_teardown(joins_by_pid_and_start_time, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(sweeps_tombstones_after_their_time, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(keeps_a_listing_until_the_directory_changes, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(a_directory_made_again_is_listed_again, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(a_held_directory_made_writable_is_not_trusted, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(ignores_forged_and_loose_files, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(only_the_owner_or_root_is_believed, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(requests_and_reads_sites, setup_dir, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
