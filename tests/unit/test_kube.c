/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube.c - Kubernetes names of GPU processes from the kubelet's log
 * directories: the two name parsers (good, refused, hostile), and a fake
 * /proc beside a fake /var/log where processes of pods under both cgroup
 * drivers, containerd and CRI-O get their namespace, pod and container; a
 * pod of several containers; a pod whose logs are gone (its uid alone);
 * and the bound on reading the directories again.
 */
#include "kube.h"
#include "proc.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"

#define CID_A "3f4e8a9b2c1d0e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f"
#define CID_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CID_C "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CID_D "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define CID_F "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define CID_E "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
#define POD1 "8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2d"
#define POD1_ "8d3c2b1a_5e4f_4a3b_9c8d_7e6f5a4b3c2d"
#define POD2 "11111111-2222-3333-4444-555555555555"
#define POD3 "99999999-8888-7777-6666-555555555555" /* its logs are gone */
#define POD4_ "aaaabbbb_cccc_dddd_eeee_ffff00001111"
#define POD4 "aaaabbbb-cccc-dddd-eeee-ffff00001111"

static char dir[TMPDIR_LEN];
static char proc[TMPDIR_LEN + 8], logs[TMPDIR_LEN + 8];

/* ---- the parsers ----------------------------------------------------------- */

static void test_parse_pod_dir(void **state)
{
	char ns[KUBE_NS_MAX + 1], pod[KUBE_POD_MAX + 1], uid[40], name[600];

	(void)state;
	assert_int_equal(kube_parse_pod_dir("ml-team_trainer-7f9c_" POD1, ns, pod, uid), 0);
	assert_string_equal(ns, "ml-team");
	assert_string_equal(pod, "trainer-7f9c");
	assert_string_equal(uid, POD1);
	/* a static pod's uid is a 32-hex config hash */
	assert_int_equal(kube_parse_pod_dir("kube-system_etcd-node1_0123456789abcdef0123456789abcdef",
					    ns, pod, uid), 0);
	assert_string_equal(pod, "etcd-node1");
	/* dots are allowed in a pod name (a DNS-1123 subdomain) */
	assert_int_equal(kube_parse_pod_dir("a_b.c.d_" POD1, ns, pod, uid), 0);
	assert_string_equal(pod, "b.c.d");

	/* refused: what does not split into exactly three valid parts */
	static const char *const bad[] = {
		"ml-team_trainer",                       /* two parts */
		"ml-team_train_er_" POD1,                /* four */
		"_trainer_" POD1,                        /* empty namespace */
		"ml-team__" POD1,                        /* empty pod */
		"ml-team_trainer_",                      /* empty uid */
		"ml-team_trainer_8d3c2b1a-5e4f",         /* short uid */
		"ml-team_trainer_8D3C2B1A-5E4F-4A3B-9C8D-7E6F5A4B3C2D", /* not as the cgroup writes it */
		"ml-team_trainer_8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2dx",
		"ml-team_trainer_8d3c2b1a-5e4f-4a3b-9c8d_7e6f5a4b3c2d",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(kube_parse_pod_dir(bad[i], ns, pod, uid), -1);

	/* lengths: a namespace of 63 and a pod of 253 are Kubernetes' own
	 * limits; one more is not a kubelet's directory */
	memset(name, 'n', 63);
	name[63] = '_';
	memset(name + 64, 'p', 253);
	snprintf(name + 64 + 253, sizeof name - 64 - 253, "_%s", POD1);
	assert_int_equal(kube_parse_pod_dir(name, ns, pod, uid), 0);
	assert_int_equal(strlen(ns), 63);
	assert_int_equal(strlen(pod), 253);
	memset(name, 'n', 64);
	name[64] = '_';
	snprintf(name + 65, sizeof name - 65, "p_%s", POD1);
	assert_int_equal(kube_parse_pod_dir(name, ns, pod, uid), -1);
	memset(name, 'p', 257);
	memcpy(name, "ns_", 3); /* a pod of 254 */
	snprintf(name + 257, sizeof name - 257, "_%s", POD1);
	assert_int_equal(kube_parse_pod_dir(name, ns, pod, uid), -1);

	/* hostile: terminal controls come out as '?' */
	assert_int_equal(kube_parse_pod_dir("ev\033]0;owned\007il_p\033[2Jod_" POD1, ns, pod, uid), 0);
	assert_null(strchr(ns, '\033'));
	assert_null(strchr(pod, '\033'));
	assert_null(strchr(ns, '\007'));
	assert_string_equal(pod, "p?[2Jod");
}

static void test_parse_container_log(void **state)
{
	char ns[KUBE_NS_MAX + 1], pod[KUBE_POD_MAX + 1], c[KUBE_CONTAINER_MAX + 1], id[65];

	(void)state;
	/* a container name with '-': the id's fixed length splits it right */
	assert_int_equal(kube_parse_container_log("trainer-7f9c_ml-team_py-torch-" CID_A ".log",
						  pod, ns, c, id), 0);
	assert_string_equal(pod, "trainer-7f9c");
	assert_string_equal(ns, "ml-team");
	assert_string_equal(c, "py-torch");
	assert_string_equal(id, CID_A);

	static const char *const bad[] = {
		"trainer_ml-team_pytorch-" CID_A,                /* no .log */
		"trainer_ml-team_pytorch-" CID_A ".log.1",
		"trainer_ml-team_pytorch_" CID_A ".log",         /* '_' before the id */
		"trainer_ml-team_pytorch-" CID_A "0.log",        /* 65 hex */
		"trainer_ml-team_pytorch-3F4E8A9B2C1D0E5F6A7B8C9D0E1F2A3B4C5D6E7F8A9B0C1D2E3F4A5B6C7D8E9F.log",
		"trainer_ml-team-" CID_A ".log",                 /* two parts */
		"trainer_ml_team_pytorch-" CID_A ".log",         /* four */
		"trainer_ml-team_-" CID_A ".log",                /* empty container */
		"-" CID_A ".log",
		".log",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(kube_parse_container_log(bad[i], pod, ns, c, id), -1);
}

/* ---- a fake node ------------------------------------------------------------ */

static void put_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, strlen(data)), (ssize_t)strlen(data));
	close(fd);
}

static void put_proc(unsigned pid, const char *cgroup)
{
	char path[256], s[512];

	snprintf(path, sizeof path, "%s/%u", proc, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%u/stat", proc, pid);
	snprintf(s, sizeof s, "%u (python3) S 1 %u %u 0 -1 4194560 100 0 0 0 "
		 "5 3 0 0 20 0 1 0 %u 123456 789 18446744073709551615\n", pid, pid, pid, pid * 10);
	put_file(path, s);
	snprintf(path, sizeof path, "%s/%u/status", proc, pid);
	snprintf(s, sizeof s, "Name:\tpython3\nUid:\t0\t0\t0\t0\nNSpid:\t%u\t1\n", pid);
	put_file(path, s);
	snprintf(path, sizeof path, "%s/%u/cmdline", proc, pid);
	put_file(path, "python3");
	snprintf(path, sizeof path, "%s/%u/cgroup", proc, pid);
	put_file(path, cgroup);
}

/* What the kubelet writes for one container of a pod. */
static void put_container(const char *ns, const char *pod, const char *uid,
			  const char *container, const char *cid)
{
	char pdir[1024], cdir[1200], log[1300], link[1400];

	snprintf(pdir, sizeof pdir, "%s/pods/%s_%s_%s", logs, ns, pod, uid);
	mkdir(pdir, 0755);
	snprintf(cdir, sizeof cdir, "%s/%s", pdir, container);
	mkdir(cdir, 0755);
	snprintf(log, sizeof log, "%s/0.log", cdir);
	put_file(log, "{}\n");
	snprintf(link, sizeof link, "%s/containers/%s_%s_%s-%s.log", logs, pod, ns, container, cid);
	assert_int_equal(symlink(log, link), 0);
}

static int setup(void **state)
{
	char path[256];

	(void)state;
	if (tmpdir_make(dir, "kube"))
		return -1;
	snprintf(proc, sizeof proc, "%s/proc", dir);
	snprintf(logs, sizeof logs, "%s/log", dir);
	mkdir(proc, 0755);
	mkdir(logs, 0755);
	snprintf(path, sizeof path, "%s/pods", logs);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/containers", logs);
	mkdir(path, 0755);
	/* this /proc is the host's (docs/attribution.md) */
	snprintf(path, sizeof path, "%s/1", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/1/ns", proc);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/1/ns/pid", proc);
	if (symlink("pid:[4026531836]", path))
		return -1;
	setenv("VRAMZ_KUBE_LOG_ROOT", logs, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("VRAMZ_KUBE_LOG_ROOT");
	return tmpdir_remove(dir);
}

static void attr(struct proc_cache *pc, unsigned pid, vramz_proc_sample *p)
{
	memset(p, 'j', sizeof *p); /* junk a caller might leave */
	p->pid = pid;
	p->valid = VRAMZ_P_USED;
	assert_int_equal(proc_attribute(pc, p), 0);
}

static void test_names_of_processes(void **state)
{
	struct proc_cache *pc;
	vramz_proc_sample p;

	(void)state;
	/* trainer: two containers (containerd, systemd driver) */
	put_container("ml-team", "trainer-7f9c", POD1, "pytorch", CID_A);
	put_container("ml-team", "trainer-7f9c", POD1, "sidecar", CID_B);
	put_proc(5001, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
		 POD1_ ".slice/cri-containerd-" CID_A ".scope\n");
	put_proc(5002, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
		 POD1_ ".slice/cri-containerd-" CID_B ".scope\n");
	/* cgroupfs driver, cgroup v1 */
	put_container("vision", "resnet-0", POD2, "main", CID_C);
	put_proc(5003, "11:memory:/kubepods/besteffort/pod" POD2 "/" CID_C "\n"
		 "4:pids:/kubepods/besteffort/pod" POD2 "/" CID_C "\n");
	/* CRI-O, systemd driver */
	put_container("infer", "llm-server", POD4, "vllm", CID_E);
	put_proc(5004, "0::/kubepods.slice/kubepods-pod" POD4_ ".slice/crio-" CID_E ".scope\n");
	/* a pod whose logs are gone: its uid, no name guessed */
	put_proc(5005, "0::/kubepods/pod" POD3 "/" CID_D "\n");
	/* a container outside Kubernetes is never looked up */
	put_proc(5006, "0::/system.slice/docker-" CID_D ".scope\n");

	pc = proc_cache_new(proc);
	assert_non_null(pc);
	attr(pc, 5001, &p);
	assert_string_equal(p.pod_uid, POD1);
	assert_string_equal(p.pod_namespace, "ml-team");
	assert_string_equal(p.pod, "trainer-7f9c");
	assert_string_equal(p.container_name, "pytorch");
	attr(pc, 5002, &p);
	assert_string_equal(p.pod, "trainer-7f9c");
	assert_string_equal(p.container_name, "sidecar");
	attr(pc, 5003, &p);
	assert_string_equal(p.pod_namespace, "vision");
	assert_string_equal(p.pod, "resnet-0");
	assert_string_equal(p.container_name, "main");
	attr(pc, 5004, &p);
	assert_string_equal(p.pod_namespace, "infer");
	assert_string_equal(p.pod, "llm-server");
	assert_string_equal(p.container_name, "vllm");
	attr(pc, 5005, &p);
	assert_string_equal(p.pod_uid, POD3);
	assert_string_equal(p.pod, "");
	assert_string_equal(p.pod_namespace, "");
	assert_string_equal(p.container_name, "");
	attr(pc, 5006, &p);
	assert_string_equal(p.container, CID_D);
	assert_string_equal(p.pod, "");
	assert_string_equal(p.container_name, "");
	proc_cache_free(pc);
}

/* A pod that appears later is named once its directory does; an unknown
 * uid alone reads the directories at most once a second and only when
 * they changed. */
static void test_refresh_bound(void **state)
{
	struct kube_names *k = kube_names_new(NULL);
	vramz_proc_sample p;
	const int64_t s = 1000000000;

	(void)state;
	assert_non_null(k);
	memset(&p, 0, sizeof p);
	strcpy(p.pod_uid, POD3);
	strcpy(p.container, CID_D);
	kube_names_fill(k, 100 * s, &p);
	assert_int_equal(kube_names_scans(k), 1);
	assert_string_equal(p.pod, "");
	/* every tick for ten seconds: nothing changed, nothing read */
	for (int t = 1; t <= 100; t++)
		kube_names_fill(k, 100 * s + t * s / 10, &p);
	assert_int_equal(kube_names_scans(k), 1);
	assert_string_equal(p.pod, "");
	/* its directory appears: read again at the next look, then named */
	put_container("late", "arrival", POD3, "worker", CID_D);
	kube_names_fill(k, 110 * s + s / 2, &p);
	assert_int_equal(kube_names_scans(k), 1); /* within the second */
	kube_names_fill(k, 111 * s + 1, &p);
	assert_int_equal(kube_names_scans(k), 2);
	assert_string_equal(p.pod_namespace, "late");
	assert_string_equal(p.pod, "arrival");
	assert_string_equal(p.container_name, "worker");
	/* known ids never read the directories */
	for (int t = 0; t < 50; t++)
		kube_names_fill(k, 200 * s + t * s, &p);
	assert_int_equal(kube_names_scans(k), 2);
	/* a process without a pod costs nothing */
	memset(&p, 0, sizeof p);
	strcpy(p.container, CID_A);
	kube_names_fill(k, 300 * s, &p);
	assert_string_equal(p.container_name, "");
	assert_int_equal(kube_names_scans(k), 2);
	kube_names_free(k);
}

/* Hostile entries: controls sanitized, bad or oversized names refused,
 * a non-existent root harmless. */
static void test_hostile_tree(void **state)
{
	char path[1024], longpod[80];
	struct kube_names *k;
	vramz_proc_sample p;
	const char *uid = "12121212-3434-5656-7878-909090909090";
	const char *uid2 = "13131313-3434-5656-7878-909090909090";

	(void)state;
	put_container("x\033[31my", "p\033]0;t\007q", uid, "c\033[2Jd", CID_F);
	/* a namespace one longer than a DNS-1123 label: not the kubelet's */
	memset(longpod, 'n', 64);
	longpod[64] = '\0';
	snprintf(path, sizeof path, "%s/pods/%s_pod_%s", logs, longpod, uid2);
	assert_int_equal(mkdir(path, 0755), 0);
	/* junk beside the kubelet's entries */
	snprintf(path, sizeof path, "%s/pods/not-a-pod", logs);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/containers/README", logs);
	put_file(path, "x");

	k = kube_names_new(NULL);
	memset(&p, 0, sizeof p);
	strcpy(p.pod_uid, uid);
	strcpy(p.container, CID_F);
	kube_names_fill(k, 0, &p);
	assert_string_equal(p.pod_namespace, "x?[31my");
	assert_string_equal(p.pod, "p?]0;t?q");
	assert_string_equal(p.container_name, "c?[2Jd");
	/* the over-long namespace is no name: its uid alone */
	strcpy(p.pod_uid, uid2);
	p.container[0] = '\0';
	kube_names_fill(k, 0, &p);
	assert_string_equal(p.pod, "");
	assert_string_equal(p.pod_namespace, "");
	kube_names_free(k);

	k = kube_names_new("/nonexistent/vramz-kube");
	strcpy(p.pod_uid, POD1);
	kube_names_fill(k, 0, &p);
	assert_string_equal(p.pod, "");
	kube_names_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_pod_dir),
		cmocka_unit_test(test_parse_container_log),
		cmocka_unit_test(test_names_of_processes),
		cmocka_unit_test(test_refresh_bound),
		cmocka_unit_test(test_hostile_tree),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
