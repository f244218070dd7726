/* SPDX-License-Identifier: Apache-2.0 */
/* test_proc.c - attribution of GPU processes from /proc: cgroup paths of
 * real container runtimes, a fake /proc tree for reused, vanished, exec'd,
 * half-readable and odd-named processes, and the live /proc with this
 * process and a child it forks.
 */
#include "proc.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define CID "3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f"
#define CID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define POD "8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2d"
#define POD_ "8d3c2b1a_5e4f_4a3b_9c8d_7e6f5a4b3c2d"

/* ---- cgroup paths -------------------------------------------------------- */

static const struct {
	const char *text, *container, *pod, *job;
} cgroup_cases[] = {
	/* Docker, cgroup v1 (every controller line alike) */
	{ "12:memory:/docker/" CID "\n11:cpu,cpuacct:/docker/" CID "\n"
	  "1:name=systemd:/docker/" CID "\n", CID, "", "" },
	/* Docker, cgroup v2, systemd driver */
	{ "0::/system.slice/docker-" CID ".scope\n", CID, "", "" },
	/* containerd CRI outside Kubernetes slices */
	{ "0::/system.slice/cri-containerd-" CID ".scope\n", CID, "", "" },
	/* CRI-O */
	{ "0::/machine.slice/crio-" CID ".scope\n", CID, "", "" },
	/* Podman, rootless, with cgroupns' inner "container" directory */
	{ "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"
	  CID ".scope/container\n", CID, "", "" },
	/* Kubernetes, cgroupfs driver, v1 */
	{ "11:memory:/kubepods/burstable/pod" POD "/" CID "\n"
	  "4:pids:/kubepods/burstable/pod" POD "/" CID "\n", CID, POD, "" },
	/* Kubernetes guaranteed QoS has no QoS level in the path */
	{ "0::/kubepods/pod" POD "/" CID "\n", CID, POD, "" },
	/* Kubernetes, systemd driver, v2, containerd: underscores in the uid */
	{ "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	  POD_ ".slice/cri-containerd-" CID ".scope\n", CID, POD, "" },
	{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  POD_ ".slice/crio-" CID ".scope\n", CID, POD, "" },
	/* Static (mirror) pod: the uid is a 32-hex config hash */
	{ "0::/kubepods.slice/kubepods-pod0123456789abcdef0123456789abcdef.slice"
	  "/cri-containerd-" CID ".scope\n", CID,
	  "0123456789abcdef0123456789abcdef", "" },
	/* Slurm, v2 */
	{ "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n", "",
	  "", "4242" },
	/* Slurm, v2 with several slurmd per host */
	{ "0::/system.slice/node07_slurmstepd.scope/job_77/step_batch/user/task_0\n",
	  "", "", "77" },
	/* Slurm, v1 */
	{ "10:devices:/slurm/uid_1000/job_123456/step_batch\n"
	  "4:memory:/slurm/uid_1000/job_123456/step_batch/task_0\n"
	  "1:name=systemd:/system.slice/slurmd.service\n", "", "", "123456" },
	/* Docker inside a Slurm job is both */
	{ "0::/system.slice/slurmstepd.scope/job_9/step_0/docker-" CID ".scope\n",
	  CID, "", "9" },
	/* v1 lines that disagree: the first one naming a container wins */
	{ "12:memory:/docker/" CID "\n0::/docker/" CID2 "\n", CID, "", "" },
	/* docker-in-docker: the innermost container runs the process */
	{ "0::/docker/" CID2 "/docker/" CID "\n", CID, "", "" },
	/* vramz in a container with its own cgroup namespace sees ".." */
	{ "0::/../../system.slice/docker-" CID ".scope\n", CID, "", "" },
	/* A plain host process, a login session, a user service */
	{ "0::/user.slice/user-1000.slice/session-3.scope\n", "", "", "" },
	{ "0::/system.slice/nvidia-persistenced.service\n", "", "", "" },
	{ "0::/\n", "", "", "" },
	/* job_ without slurm above it is not a Slurm job; kube words elsewhere */
	{ "0::/system.slice/job_12/pod" POD "\n", "", "", "" },
	/* 63 and 65 hex are not container ids */
	{ "0::/docker/" CID "a\n0::/docker-3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7"
	  "f8a9b0c1d2e3f4a5b6c7d8e9.scope\n", "", "", "" },
	/* no final newline, uppercase hex refused */
	{ "0::/docker/" CID, CID, "", "" },
	{ "0::/docker/3F4E8A9B2C1D0E5F6A7B8C9D0E1F2A3B4C5D6E7F8A9B0C1D2E3F4A5B6C7D8E9F",
	  "", "", "" },
};

static void test_cgroup_table(void **state)
{
	char c[VRAMZ_CONTAINER_LEN], p[40], j[24];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cgroup_cases / sizeof cgroup_cases[0]; i++) {
		memset(c, 'x', sizeof c);
		memset(p, 'x', sizeof p);
		memset(j, 'x', sizeof j);
		proc_parse_cgroup(cgroup_cases[i].text, c, sizeof c, p, sizeof p,
				  j, sizeof j);
		if (strcmp(c, cgroup_cases[i].container) ||
		    strcmp(p, cgroup_cases[i].pod) || strcmp(j, cgroup_cases[i].job))
			fail_msg("case %zu: got [%s] [%s] [%s]", i, c, p, j);
	}
}

/* Exact-size heap copies so ASan sees any read past the end. */
static void parse_exact(const char *text, size_t len)
{
	char *t = malloc(len + 1);
	char c[VRAMZ_CONTAINER_LEN], p[40], j[24];

	assert_non_null(t);
	memcpy(t, text, len);
	t[len] = '\0';
	proc_parse_cgroup(t, c, sizeof c, p, sizeof p, j, sizeof j);
	assert_true(strlen(c) < sizeof c && strlen(p) < sizeof p &&
		    strlen(j) < sizeof j);
	free(t);
}

static void test_cgroup_hostile(void **state)
{
	static const char *bad[] = {
		"", "\n", ":", "::", "0::", "0::/", "\n\n\n", "garbage",
		"0:/docker/" CID, "/docker/" CID, "0::////////", "0::/docker-.scope",
		"0::/kubepods/pod", "0::/kubepods/pod.slice", "0::/slurm/job_",
		"0::/slurm/job_99999999999999999999999999999999",
		"0::/kubepods-pod" POD_ POD_ ".slice", "\xff\xfe:\x01:\x7f/\x80",
	};
	char c[VRAMZ_CONTAINER_LEN], p[40], j[24], tiny[5];
	size_t i, n = 1u << 20;
	char *big = malloc(n + 1);

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		parse_exact(bad[i], strlen(bad[i]));
	proc_parse_cgroup(NULL, c, sizeof c, p, sizeof p, j, sizeof j);
	assert_string_equal(c, "");
	/* A megabyte-long line of path components and of hex, no newline. */
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = i < 3 ? "0::"[i] : (i % 70 == 3 ? '/' : 'a');
	parse_exact(big, n);
	memset(big, 'f', n);
	parse_exact(big, n);
	memset(big, ':', n);
	parse_exact(big, n);
	memset(big, '/', n);
	parse_exact(big, n);
	free(big);
	/* Small and absent output buffers are cut, never overrun. */
	proc_parse_cgroup("0::/docker/" CID, tiny, sizeof tiny, NULL, 0, NULL, 0);
	assert_string_equal(tiny, "3f4e");
	proc_parse_cgroup("0::/docker/" CID, NULL, 0, NULL, 0, j, 0);
}

/* ---- a fake /proc ---------------------------------------------------------- */

static char root[64];

static void put(unsigned pid, const char *file, const char *data, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof path, "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%u/%s", root, pid, file);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void put_stat(unsigned pid, const char *comm, unsigned long long start)
{
	char s[512];
	int n = snprintf(s, sizeof s, "%u (%s) S 1 %u %u 0 -1 4194560 100 0 0 0 "
			 "5 3 0 0 20 0 1 0 %llu 123456 789 18446744073709551615\n",
			 pid, comm, pid, pid, start);
	put(pid, "stat", s, (size_t)n);
}

static void put_status(unsigned pid, unsigned uid, const char *nspid)
{
	char s[512];
	int n = snprintf(s, sizeof s, "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\n"
			 "Tgid:\t%u\nPid:\t%u\nPPid:\t1\nUid:\t%u\t%u\t%u\t%u\n"
			 "Gid:\t0\t0\t0\t0\nGroups:\t\nNStgid:\t%s\nNSpid:\t%s\n"
			 "Threads:\t1\n", pid, pid, uid, uid + 1, uid + 2, uid + 3,
			 nspid, nspid);
	put(pid, "status", s, (size_t)n);
}

static void put_proc(unsigned pid, const char *comm, unsigned long long start,
		     unsigned uid, const char *cmdline, size_t cmdlen,
		     const char *cgroup)
{
	char nspid[32];

	snprintf(nspid, sizeof nspid, "%u", pid);
	put_stat(pid, comm, start);
	put_status(pid, uid, nspid);
	put(pid, "cmdline", cmdline, cmdlen);
	put(pid, "cgroup", cgroup, strlen(cgroup));
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	chmod(path, 0700);
	return remove(path);
}

/* Pid 1's ns/pid link of a fake tree: which PID namespace it shows. */
static int fake_pidns(const char *dir, const char *link)
{
	char path[128];

	snprintf(path, sizeof path, "%s/1", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/1/ns", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/1/ns/pid", dir);
	unlink(path);
	return symlink(link, path);
}

static int fake_setup(void **state)
{
	(void)state;
	/* tmpfs when there is one: the tree has some 15000 files. */
	strcpy(root, "/dev/shm/vramz-proc-XXXXXX");
	if (!mkdtemp(root)) {
		strcpy(root, "/tmp/vramz-proc-XXXXXX");
		if (!mkdtemp(root))
			return -1;
	}
	if (chmod(root, 0755)) /* the unprivileged child below reads it */
		return -1;
	return fake_pidns(root, "pid:[4026531836]"); /* the host's namespace */
}

static int fake_teardown(void **state)
{
	(void)state;
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static unsigned unused_uid(void)
{
	unsigned uid = 4000000;

	while (getpwuid(uid))
		uid++;
	return uid;
}

static int attr(struct proc_cache *pc, unsigned pid, vramz_proc_sample *p)
{
	memset(p, 'j', sizeof *p); /* junk a caller might leave */
	p->pid = pid;
	p->valid = VRAMZ_P_USED;
	return proc_attribute(pc, p);
}

static void test_fake_attribution(void **state)
{
	static const char cmd[] = "python3\0train.py\0--gpus\0" "8\0";
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	unsigned nouser = unused_uid();
	char num[16];

	(void)state;
	assert_non_null(pc);
	put_proc(4100, "python3", 987654, 0, cmd, sizeof cmd - 1,
		 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
		 POD_ ".slice/cri-containerd-" CID ".scope\n");
	put_status(4100, 0, "4100\t812\t7");
	assert_int_equal(attr(pc, 4100, &p), 0);
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	assert_true(p.valid & VRAMZ_P_USED); /* other bits are left alone */
	assert_int_equal(p.uid, 0);
	assert_string_equal(p.user, "root");
	assert_string_equal(p.comm, "python3");
	assert_string_equal(p.cmdline, "python3 train.py --gpus 8");
	assert_int_equal(p.ppid, 1);
	assert_int_equal(p.pgid, 4100);
	assert_int_equal(p.ns_pid, 7);
	assert_int_equal(p.start_time_ticks, 987654);
	assert_string_equal(p.container, CID);
	assert_string_equal(p.pod_uid, POD);
	assert_string_equal(p.slurm_job, "");
	assert_int_equal(proc_start_time(root, 4100), 987654);

	/* A uid no passwd entry names (a container's user) shows as a number;
	 * a comm with spaces and parentheses does not shift the fields. */
	put_proc(4101, "a) b (c", 555, nouser, "x\0", 2,
		 "0::/system.slice/slurmstepd.scope/job_31337/step_0/user/task_0\n");
	assert_int_equal(attr(pc, 4101, &p), 0);
	snprintf(num, sizeof num, "%u", nouser);
	assert_string_equal(p.user, num);
	assert_string_equal(p.comm, "a) b (c");
	assert_int_equal(p.start_time_ticks, 555);
	assert_int_equal(p.pgid, 4101);
	assert_string_equal(p.slurm_job, "31337");
	assert_string_equal(p.container, "");
	/* The uid cache answers the same on the next process of that user. */
	put_proc(4102, "y", 556, nouser, "y\0", 2, "0::/\n");
	assert_int_equal(attr(pc, 4102, &p), 0);
	assert_string_equal(p.user, num);
	proc_cache_free(pc);
}

static void test_fake_cmdline_edges(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	char big[1000];
	size_t i;

	(void)state;
	/* Kernel thread / zombie: empty cmdline, shown as ps does. */
	put_proc(4200, "kworker/3:1", 10, 0, "", 0, "0::/\n");
	assert_int_equal(attr(pc, 4200, &p), 0);
	assert_string_equal(p.cmdline, "[kworker/3:1]");

	/* Long argv is cut to the field, not mid-character: "é" is 2 bytes
	 * and the 255th byte would split one. */
	for (i = 0; i + 1 < sizeof big; i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	put_proc(4201, "u", 11, 0, big, sizeof big, "0::/\n");
	assert_int_equal(attr(pc, 4201, &p), 0);
	assert_int_equal(strlen(p.cmdline), 254);
	assert_int_equal(memcmp(p.cmdline, big, 254), 0);

	/* An argument ending exactly at the limit is kept whole. */
	memset(big, 'b', 255);
	big[255] = '\0';
	put_proc(4202, "b", 12, 0, big, 256, "0::/\n");
	assert_int_equal(attr(pc, 4202, &p), 0);
	assert_int_equal(strlen(p.cmdline), 255);

	/* Terminal escapes in argv or comm never reach a screen. */
	put_proc(4203, "ev\x1b[2Jil", 13, 0, "rm\0-rf\x1b]0;pwn\a\0", 15, "0::/\n");
	assert_int_equal(attr(pc, 4203, &p), 0);
	assert_string_equal(p.cmdline, "rm -rf?]0;pwn?");
	assert_string_equal(p.comm, "ev?[2Jil");

	/* comm longer than the kernel's 15 bytes (a fake) is cut. */
	put_proc(4204, "abcdefghijklmnopqrstuvwxyz", 14, 0, "", 0, "0::/\n");
	assert_int_equal(attr(pc, 4204, &p), 0);
	assert_string_equal(p.comm, "abcdefghijklmno");
	proc_cache_free(pc);
}

static void test_fake_vanished(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	char path[128];

	(void)state;
	/* Never existed: not visible, nothing stale printed. */
	assert_int_equal(attr(pc, 999999, &p), VRAMZ_ENOTFOUND);
	assert_false(p.valid & VRAMZ_P_VISIBLE);
	assert_true(p.valid & VRAMZ_P_USED);
	assert_string_equal(p.user, "");
	assert_string_equal(p.cmdline, "");
	assert_string_equal(p.comm, "");
	assert_string_equal(p.container, "");
	assert_string_equal(p.pod_uid, "");
	assert_string_equal(p.slurm_job, "");
	assert_int_equal(p.start_time_ticks, 0);
	assert_int_equal(proc_start_time(root, 999999), 0);
	assert_int_equal(attr(pc, 0, &p), VRAMZ_ENOTFOUND);

	/* Cached, then exits: the cache must not keep it alive. */
	put_proc(4300, "gone", 20, 0, "gone\0", 5, "0::/docker/" CID "\n");
	assert_int_equal(attr(pc, 4300, &p), 0);
	snprintf(path, sizeof path, "%s/4300/stat", root);
	unlink(path);
	assert_int_equal(attr(pc, 4300, &p), VRAMZ_ENOTFOUND);
	assert_false(p.valid & VRAMZ_P_VISIBLE);
	assert_string_equal(p.container, "");

	/* Garbage or truncated stat is not a process. */
	put(4301, "stat", "4301 (x S 1 2", 13);
	assert_int_equal(attr(pc, 4301, &p), VRAMZ_ENOTFOUND);
	put(4302, "stat", "4302 (x) S 1 2 3 4", 18);
	assert_int_equal(attr(pc, 4302, &p), VRAMZ_ENOTFOUND);
	put(4303, "stat", "", 0);
	assert_int_equal(attr(pc, 4303, &p), VRAMZ_ENOTFOUND);

	/* A root that does not exist: everything not visible, no crash. */
	proc_cache_free(pc);
	pc = proc_cache_new("/nonexistent/proc");
	assert_non_null(pc);
	assert_int_equal(attr(pc, 1, &p), VRAMZ_ENOTFOUND);
	assert_int_equal(proc_start_time("/nonexistent/proc", 1), 0);
	assert_int_equal(proc_attribute(NULL, &p), VRAMZ_EINVAL);
	proc_cache_free(pc);
	proc_cache_free(NULL);
	proc_cache_sweep(NULL);
}

/* With a recheck interval (what the sampler uses: 1 s), a pid is read at
 * most once per interval: again within it (or twice in one tick) it comes
 * from the cache; after it, the stat is read and changes show. */
static void test_recheck_interval(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	const char *st77 = "4410 (python3) S 77 4410 4410 0 -1 0 0 0 0 0 0 0 "
			   "0 0 20 0 1 0 3000 0 0\n";

	(void)state;
	proc_cache_set_recheck(pc, 300 * 1000000LL);
	put_proc(4410, "python3", 3000, 1000, "python3\0a.py\0", 13, "0::/\n");
	assert_int_equal(attr(pc, 4410, &p), 0);
	assert_int_equal(p.ppid, 1);
	/* reparented: within the interval the cached ppid still shows */
	put(4410, "stat", st77, strlen(st77));
	assert_int_equal(attr(pc, 4410, &p), 0);
	assert_int_equal(p.ppid, 1);
	assert_string_equal(p.cmdline, "python3 a.py");
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	struct timespec nap = {.tv_sec = 0, .tv_nsec = 350 * 1000000L};
	nanosleep(&nap, NULL);
	proc_cache_sweep(pc);
	assert_int_equal(attr(pc, 4410, &p), 0);
	assert_int_equal(p.ppid, 77);
	assert_int_equal(p.start_time_ticks, 3000);
	/* and a reused pid shows as the new process once the interval passed */
	put_proc(4410, "bash", 3100, 1000, "bash\0", 5, "0::/\n");
	nanosleep(&nap, NULL);
	proc_cache_sweep(pc);
	assert_int_equal(attr(pc, 4410, &p), 0);
	assert_int_equal(p.start_time_ticks, 3100);
	assert_string_equal(p.comm, "bash");
	proc_cache_free(pc);
}

static void test_fake_reuse_and_exec(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	unsigned nouser = unused_uid();

	(void)state;
	put_proc(4400, "python3", 1000, 0, "python3\0old.py\0", 15,
		 "0::/docker/" CID "\n");
	assert_int_equal(attr(pc, 4400, &p), 0);
	assert_string_equal(p.cmdline, "python3 old.py");

	/* Same process (same start time): served from the cache, so a changed
	 * file is not even read. */
	put(4400, "cmdline", "python3\0changed.py\0", 19);
	assert_int_equal(attr(pc, 4400, &p), 0);
	assert_string_equal(p.cmdline, "python3 old.py");

	/* The pid is reused by another user's process in another container:
	 * nothing of the old one may show. */
	put_proc(4400, "python3", 2000, nouser, "python3\0new.py\0", 15,
		 "0::/system.slice/docker-" CID2 ".scope\n");
	assert_int_equal(attr(pc, 4400, &p), 0);
	assert_int_equal(p.start_time_ticks, 2000);
	assert_int_equal(p.uid, nouser);
	assert_string_equal(p.cmdline, "python3 new.py");
	assert_string_equal(p.container, CID2);

	/* exec keeps pid and start time but changes comm and argv. */
	put_proc(4400, "torchrun", 2000, nouser, "torchrun\0--nproc\0" "8\0", 19,
		 "0::/system.slice/docker-" CID2 ".scope\n");
	assert_int_equal(attr(pc, 4400, &p), 0);
	assert_string_equal(p.comm, "torchrun");
	assert_string_equal(p.cmdline, "torchrun --nproc 8");

	/* ppid changes (reparenting to init) show without a reload. */
	{
		const char *st = "4400 (torchrun) S 77 4400 4400 0 -1 0 0 0 0 0 0 0 "
				 "0 0 20 0 1 0 2000 0 0\n";
		put(4400, "stat", st, strlen(st));
	}
	assert_int_equal(attr(pc, 4400, &p), 0);
	assert_int_equal(p.ppid, 77);
	assert_string_equal(p.cmdline, "torchrun --nproc 8");
	proc_cache_free(pc);
}

/* The cache is observed from outside: a rewritten cmdline shows only once
 * the entry was dropped.  Scattered pids, as on a busy host, so that probe
 * chains in the table collide and deletions must keep them whole. */
static void test_fake_sweep(void **state)
{
	enum { N = 1500 };
	static unsigned pids[N];
	static unsigned char used[1u << 19];
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	unsigned i, seed = 12345;

	(void)state;
	for (i = 0; i < N; i++) {
		do {
			seed = seed * 1103515245u + 12345u;
			pids[i] = 100000 + ((seed >> 8) & ((1u << 19) - 1));
		} while (used[pids[i] - 100000]++);
		put_proc(pids[i], "w", 100 + i, 0, "old\0", 4, "0::/\n");
	}
	for (i = 0; i < N; i++)
		assert_int_equal(attr(pc, pids[i], &p), 0);
	proc_cache_sweep(pc); /* all used: all kept */
	for (i = 0; i < N; i++)
		put(pids[i], "cmdline", "new\0", 4);
	for (i = 0; i < N; i += 2)
		assert_int_equal(attr(pc, pids[i], &p), 0);
	proc_cache_sweep(pc); /* odd ones unused this tick: dropped */
	for (i = 0; i < N; i++) {
		assert_int_equal(attr(pc, pids[i], &p), 0);
		assert_string_equal(p.cmdline, i % 2 ? "new" : "old");
	}
	proc_cache_sweep(pc);
	proc_cache_sweep(pc); /* nothing used: all dropped */
	assert_int_equal(attr(pc, pids[0], &p), 0);
	assert_string_equal(p.cmdline, "new");
	proc_cache_free(pc);
}

/* More pids than the table holds, never swept: still right for each. */
static void test_fake_bounded(void **state)
{
	enum { N = 4000, BASE = 20000 };
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	unsigned i, round;

	(void)state;
	for (i = 0; i < N; i++)
		put_stat(BASE + i, "s", 7 + i);
	for (round = 0; round < 2; round++)
		for (i = 0; i < N; i++) {
			assert_int_equal(attr(pc, BASE + i, &p), 0);
			assert_int_equal(p.start_time_ticks, 7 + i);
			assert_string_equal(p.cmdline, "[s]");
		}
	proc_cache_free(pc);
}

static int check_readable_parts(uid_t owner)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	int ok;

	ok = attr(pc, 4500, &p) == 0 && (p.valid & VRAMZ_P_VISIBLE) &&
	     p.start_time_ticks == 30 && !strcmp(p.comm, "locked") &&
	     !strcmp(p.cmdline, "[locked]") && !strcmp(p.container, "") &&
	     p.uid == owner && p.user[0];
	ok = ok && attr(pc, 4501, &p) == VRAMZ_ENOTFOUND &&
	     !(p.valid & VRAMZ_P_VISIBLE);
	proc_cache_free(pc);
	return ok;
}

/* hidepid and LSMs deny some files: what can be read is still shown. */
static void test_fake_permissions(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	char path[128];
	pid_t child;
	uid_t owner;
	int st;

	(void)state;
	/* status unreadable even for root (a directory): uid from the owner of
	 * /proc/PID, everything else still filled. */
	put_proc(4502, "half", 31, 12345, "half\0", 5, "0::/docker/" CID "\n");
	snprintf(path, sizeof path, "%s/4502/status", root);
	unlink(path);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/4502", root);
	owner = geteuid() == 0 && !chown(path, 54321, 54321) ? 54321 : geteuid();
	assert_int_equal(attr(pc, 4502, &p), 0);
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	assert_int_equal(p.uid, owner);
	assert_string_equal(p.cmdline, "half");
	assert_string_equal(p.container, CID);
	assert_int_equal(p.ns_pid, 0); /* unknown */
	proc_cache_free(pc);

	/* Real EACCES: status, cmdline, cgroup mode 000 (stat 000 too for
	 * 4501), checked by an unprivileged process when run as root. */
	put_proc(4500, "locked", 30, 0, "secret\0", 7, "0::/docker/" CID "\n");
	put_proc(4501, "hidden", 32, 0, "secret\0", 7, "0::/\n");
	snprintf(path, sizeof path, "%s/4500/status", root);
	chmod(path, 0);
	snprintf(path, sizeof path, "%s/4500/cmdline", root);
	chmod(path, 0);
	snprintf(path, sizeof path, "%s/4500/cgroup", root);
	chmod(path, 0);
	snprintf(path, sizeof path, "%s/4501/stat", root);
	chmod(path, 0);
	if (geteuid() != 0) {
		assert_true(check_readable_parts(geteuid()));
		return;
	}
	/* As root the files are owned by uid 0, which the child then is not. */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(check_readable_parts(0) ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* status with a Groups: line longer than any buffer, NSpid after it. */
static void test_fake_long_status(void **state)
{
	struct proc_cache *pc = proc_cache_new(root);
	vramz_proc_sample p;
	size_t n = 0, cap = 1 << 17;
	char *s = malloc(cap);
	unsigned g;

	(void)state;
	assert_non_null(s);
	n += (size_t)snprintf(s, cap, "Name:\tbig\nUid:\t0\t0\t0\t0\nGroups:");
	for (g = 0; g < 10000; g++)
		n += (size_t)snprintf(s + n, cap - n, " %u", 100000 + g);
	n += (size_t)snprintf(s + n, cap - n, "\nNSpid:\t4600\t1\nThreads:\t3");
	put_proc(4600, "big", 40, 0, "big\0", 4, "0::/\n");
	put(4600, "status", s, n);
	assert_int_equal(attr(pc, 4600, &p), 0);
	assert_int_equal(p.ns_pid, 1);
	assert_string_equal(p.user, "root");

	/* The tail of an overlong line is not a line: it must not pass for a
	 * "Uid:" (each 2047-byte piece of this one starts with one). */
	n = (size_t)snprintf(s, cap, "Name:\tbig\nUid:\t0\t0\t0\t0\n");
	for (g = 0; g < 400; g++)
		n += (size_t)snprintf(s + n, cap - n, "%-23s", "Uid:\t999");
	n += (size_t)snprintf(s + n, cap - n, "\nNSpid:\t4601\n");
	put_proc(4601, "big", 41, 0, "big\0", 4, "0::/\n");
	put(4601, "status", s, n);
	assert_int_equal(attr(pc, 4601, &p), 0);
	assert_int_equal(p.uid, 0);
	assert_int_equal(p.ns_pid, 4601);
	free(s);
	proc_cache_free(pc);
}

/* ---- the live /proc ------------------------------------------------------ */

/* The one /proc/PID/stat parser (proc, proctree and the job key use it):
 * a name with ') ' and control bytes, the session, and truncated text. */
static void test_parse_stat(void **state)
{
	(void)state;
	struct proc_stat_fields st;
	assert_int_equal(proc_parse_stat("42 (a) b\x1b) S 7 40 39 0 -1 4194560 0 0 0 0 0 0 0 0"
					 " 20 0 1 0 987 0 0", &st), 0);
	assert_string_equal(st.comm, "a) b?");
	assert_int_equal(st.ppid, 7);
	assert_int_equal(st.pgid, 40);
	assert_int_equal(st.session, 39);
	assert_int_equal(st.start_ticks, 987);
	assert_int_equal(st.flags, 4194560u); /* field 9, PF_* bits */
	assert_int_equal(proc_parse_stat("42 (a) S 7 40 39 0 -1 4194560 0", &st), -1);
	assert_int_equal(proc_parse_stat("42 (trunc", &st), -1);
	assert_int_equal(proc_parse_stat("", &st), -1);
	/* the host side `top` shows: state, CPU time, resident pages; a line
	 * that ends at the start time has no rss (unknown, not 0) */
	assert_int_equal(proc_parse_stat("9 (python3 x) D 1 9 9 0 -1 4194304 5 0 0 0 1234 567"
					 " 0 0 20 0 8 0 4242 99999 51200 18446744073709551615",
					 &st), 0);
	assert_int_equal(st.state, 'D');
	assert_int_equal(st.utime_ticks, 1234);
	assert_int_equal(st.stime_ticks, 567);
	assert_int_equal(st.start_ticks, 4242);
	assert_true(st.has_rss);
	assert_int_equal(st.rss_pages, 51200);
	assert_int_equal(proc_parse_stat("9 (p) R 1 9 9 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 77", &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.start_ticks, 77);
	assert_false(st.has_rss);
	/* a number field that is not one is malformed, as sscanf's %u was */
	assert_int_equal(proc_parse_stat("9 (p) R x 9 9 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 77", &st), -1);
	assert_int_equal(proc_parse_stat("9 (p) R 1 9 9 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 7x7", &st), -1);
}

/* Issue 12: a /proc of another PID namespace numbers other processes with
 * the same pids NVML reports.  Nothing in it may be taken for a GPU
 * process: every pid is "not visible", however well its files read. */
static void test_other_pidns(void **state)
{
	static const char cmd[] = "sleep\0" "300\0";
	char other[96], path[160];
	vramz_proc_sample p;
	struct proc_cache *pc;

	(void)state;
	put_proc(4242, "sleep", 777, 0, cmd, sizeof cmd - 1, "0::/\n");
	pc = proc_cache_new(root);
	assert_int_equal(proc_cache_host_pids(pc), 1);
	assert_int_equal(attr(pc, 4242, &p), 0);
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	proc_cache_free(pc);
	assert_int_equal(proc_root_is_host(root), 1);

	/* the same tree, but pid 1 is a container's init */
	snprintf(other, sizeof other, "%s/other", root);
	assert_int_equal(mkdir(other, 0755), 0);
	snprintf(path, sizeof path, "%s/4242", other);
	assert_int_equal(symlink("../4242", path), 0);
	assert_int_equal(fake_pidns(other, "pid:[4026532999]"), 0);
	pc = proc_cache_new(other);
	assert_int_equal(proc_cache_host_pids(pc), 0);
	assert_int_equal(attr(pc, 4242, &p), VRAMZ_ENOTFOUND);
	assert_false(p.valid & VRAMZ_P_VISIBLE);
	assert_string_equal(p.cmdline, "");
	assert_int_equal(p.start_time_ticks, 0);
	proc_cache_free(pc);
	assert_int_equal(proc_root_is_host(other), 0);

	/* nothing says which namespace: unproven is not the host's */
	snprintf(path, sizeof path, "%s/1/ns/pid", other);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(proc_root_is_host(other), 0);
	pc = proc_cache_new(other);
	assert_int_equal(attr(pc, 4242, &p), VRAMZ_ENOTFOUND);
	proc_cache_free(pc);
}

/* Issue 12: C1 controls (U+009B is a one-character CSI), raw bytes that
 * are not UTF-8 (0x9B is CSI on an 8-bit terminal), C0 and DEL never reach
 * a terminal; real UTF-8 text is kept.  Issue 25: nor do bidi controls.
 * (lib/text.c, the one sanitizer /proc's text goes through.) */
static void test_sanitize(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{"plain ascii", "plain ascii"},
		{"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\x8d", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x90\x8d"},
		{"a\xc2\x9b" "31mred", "a?31mred"},        /* U+009B CSI */
		{"\xc2\x80\xc2\x9f\xc2\xa0", "??\xc2\xa0"}, /* C1 bounds; NBSP kept */
		{"raw\x9b" "2J", "raw?2J"},                  /* 8-bit CSI byte */
		{"\x1b[2Jbell\x07" "del\x7f", "?[2Jbell?del?"},
		{"over\xc0\xaf" "long", "over??long"},           /* overlong '/' */
		{"sur\xed\xa0\x80" "gate", "sur???gate"},       /* UTF-16 surrogate */
		{"cut\xe6\x97", "cut??"},                    /* truncated sequence */
		{"big\xf4\x90\x80\x80", "big????"},          /* above U+10FFFF */
		/* issue 25: bidi controls reorder what a person reads */
		{"\xe2\x80\xae" "gnp.exe", "?gnp.exe"},          /* U+202E RLO */
		{"a\xe2\x80\xaa" "b\xe2\x81\xa6" "c\xe2\x81\xa9", "a?b?c?"}, /* U+202A, 2066, 2069 */
		{"\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "???"},    /* LRM, RLM, ALM */
		/* their neighbours are text: U+2029, U+202F, U+2065, U+206A, U+061B */
		{"\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b",
		 "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b"},
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(buf, sizeof buf, "%s", cases[i].in);
		text_sanitize(buf);
		assert_string_equal(buf, cases[i].out);
	}
}

static void test_real_self(void **state)
{
	struct proc_cache *pc = proc_cache_new("/proc");
	struct passwd *pw = getpwuid(getuid());
	vramz_proc_sample p;
	char num[16];

	(void)state;
	assert_int_equal(attr(pc, (unsigned)getpid(), &p), 0);
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	assert_int_equal(p.uid, getuid());
	snprintf(num, sizeof num, "%u", (unsigned)getuid());
	assert_string_equal(p.user, pw ? pw->pw_name : num);
	assert_int_equal(p.ppid, getppid());
	assert_int_equal(p.pgid, getpgrp());
	assert_int_equal(p.ns_pid, getpid()); /* this /proc is our namespace's */
	/* argv[0] leads the command line, whatever the binary is called */
	assert_int_equal(strncmp(p.cmdline, program_invocation_name,
				 strlen(program_invocation_name)), 0);
	assert_true(p.start_time_ticks > 0);
	assert_int_equal(p.start_time_ticks,
			 proc_start_time("/proc", (unsigned)getpid()));
	proc_cache_free(pc);
}

static void test_real_child(void **state)
{
	struct proc_cache *pc = proc_cache_new("/proc");
	vramz_proc_sample p;
	int fds[2], st;
	char c, path[64], buf[512];
	pid_t child;
	unsigned long long start;
	int i;

	(void)state;
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		setpgid(0, 0);
		execl("/bin/sleep", "/bin/sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/* EOF once exec closed the pipe: argv is the new program's from here. */
	assert_int_equal(read(fds[0], &c, 1), 0);
	close(fds[0]);

	assert_int_equal(attr(pc, (unsigned)child, &p), 0);
	assert_true(p.valid & VRAMZ_P_VISIBLE);
	assert_string_equal(p.comm, "sleep");
	assert_string_equal(p.cmdline, "/bin/sleep 30");
	assert_int_equal(p.ppid, getpid());
	assert_int_equal(p.pgid, child);
	start = proc_start_time("/proc", (unsigned)child);
	assert_true(start > 0);
	assert_int_equal(p.start_time_ticks, start);

	/* A zombie still has its stat; a fresh cache shows it as ps does. */
	kill(child, SIGKILL);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)child);
	for (i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		char *rp = f && fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (rp && rp[2] == 'Z')
			break;
		usleep(1000);
	}
	proc_cache_free(pc);
	pc = proc_cache_new("/proc");
	assert_int_equal(attr(pc, (unsigned)child, &p), 0);
	assert_string_equal(p.cmdline, "[sleep]");

	/* Reaped: the pid is gone. */
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_int_equal(attr(pc, (unsigned)child, &p), VRAMZ_ENOTFOUND);
	assert_false(p.valid & VRAMZ_P_VISIBLE);
	assert_string_equal(p.cmdline, "");
	assert_int_equal(proc_start_time("/proc", (unsigned)child), 0);
	proc_cache_free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_table),
		cmocka_unit_test(test_cgroup_hostile),
		cmocka_unit_test(test_fake_attribution),
		cmocka_unit_test(test_fake_cmdline_edges),
		cmocka_unit_test(test_fake_vanished),
		cmocka_unit_test(test_fake_reuse_and_exec),
		cmocka_unit_test(test_recheck_interval),
		cmocka_unit_test(test_fake_sweep),
		cmocka_unit_test(test_fake_bounded),
		cmocka_unit_test(test_fake_permissions),
		cmocka_unit_test(test_fake_long_status),
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_other_pidns),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_real_self),
		cmocka_unit_test(test_real_child),
	};

	return cmocka_run_group_tests(tests, fake_setup, fake_teardown);
}
