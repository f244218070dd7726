/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_jobs.c - which processes form one job, on a fake /proc tree
 * (stat and environ files): the false imbalance a validation script caused
 * (three unrelated processes in one process group), torchrun ranks, an
 * mp.spawn job, siblings under a shell, session leaders, what a log can
 * still tell without /proc, the start-up grace, and that a finding is
 * handed out only once it has held report-after. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tmpdir.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag_sim.h"
#include "diagnose/jobkey.h"
#include "diagnose/state.h"

#define TOTAL (141 * GiB)

static char root[TMPDIR_LEN];

/* ROOT/PID/stat (and ROOT/PID/environ unless env is NULL; entries are
 * separated by '|' here, NUL in the file) */
static void fake_proc(uint32_t pid, const char *comm, uint32_t ppid, uint32_t pgid,
		      uint32_t sid, const char *env)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%u", root, (unsigned)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%u/stat", root, (unsigned)pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%u (%s) S %u %u %u 0 -1 4194560 100 0 0 0 5 2 0 0 20 0 1 0 %u 1000 100\n",
		(unsigned)pid, comm, (unsigned)ppid, (unsigned)pgid, (unsigned)sid,
		(unsigned)(1000 + pid));
	fclose(f);
	if (!env)
		return;
	snprintf(path, sizeof path, "%s/%u/environ", root, (unsigned)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	for (const char *c = env; *c; c++)
		fputc(*c == '|' ? 0 : *c, f);
	fputc(0, f);
	fclose(f);
}

static int setup(void **s)
{
	(void)s;
	return tmpdir_make(root, "jobs");
}

static int teardown(void **s)
{
	(void)s;
	return tmpdir_remove(root);
}

/* a visible process sample, as the sampler fills it from /proc */
static vramz_proc_sample *proc(struct sim *m, unsigned gpu, uint32_t pid, uint32_t ppid,
			       uint32_t pgid, const char *comm)
{
	vramz_proc_sample *p = sim_proc(m, gpu, pid, 1);
	p->slurm_job[0] = 0;
	p->ppid = ppid;
	p->pgid = pgid;
	snprintf(p->comm, sizeof p->comm, "%s", comm);
	return p;
}

static vramz_diag *diag_on(const char *proc_root)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.proc_root = proc_root;
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	return d;
}

static const char *job_of(vramz_diag *d, uint32_t pid)
{
	for (unsigned i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == pid)
			return d->procs[i].job;
	return "(absent)";
}

/* The GPU validation's false positive: one non-interactive bash script
 * (pid 556, group 556, not a session leader) starts leak_and_steady.py
 * (600), whose two multiprocessing children leak / hold steady on GPU 0,
 * and busy.py (603) on GPU 1.  One process group, two parents, no rank
 * variables: NO imbalance - and the leak is still flagged, at its rate. */
static void shell_script_jobs_are_not_one_job(void **s)
{
	(void)s;
	const char *env = "PATH=/usr/bin|HOME=/root|PYTHONUNBUFFERED=1";
	fake_proc(556, "bash", 400, 556, 400, env);
	fake_proc(600, "python3", 556, 556, 400, env);
	fake_proc(601, "python3", 600, 556, 400, env);
	fake_proc(602, "python3", 600, 556, 400, env);
	fake_proc(603, "python3", 556, 556, 400, "PATH=/usr/bin|CUDA_VISIBLE_DEVICES=1");
	struct sim m;
	sim_init(&m, 2, TOTAL);
	vramz_proc_sample *leak = proc(&m, 0, 601, 600, 556, "python3");
	vramz_proc_sample *steady = proc(&m, 0, 602, 600, 556, "python3");
	vramz_proc_sample *busy = proc(&m, 1, 603, 556, 556, "python3");
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 150000; t += 500) {
		double ts = t / 1000.0;
		/* start-up as seen: GPU 1 allocates at once, GPU 0 ten seconds later */
		busy->used_bytes = (uint64_t)(8.9 * GiB);
		steady->used_bytes = ts < 10 ? 0 : (uint64_t)(6 * GiB);
		leak->used_bytes = ts < 10 ? 0 : (uint64_t)(1 * GiB + (ts - 10) * 64 * MiB);
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_STRAY_CONTEXT, NULL), 0);
	}
	assert_string_equal(job_of(d, 601), "parent:600 (python3)");
	assert_string_equal(job_of(d, 602), "parent:600 (python3)");
	assert_string_equal(job_of(d, 603), ""); /* its parent is the shell */
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_LEAK, &f), 1);
	assert_int_equal(f->pid, 601);
	assert_string_equal(f->job, "parent:600 (python3)");
	assert_true(fabs(f->rate_bytes_per_s - 64 * MiB) < 0.1 * 64 * MiB);
	/* each environment read once, however many ticks */
	assert_int_equal(jobkey_env_reads(d->jobs), 3);
	vramz_diag_free(d);
}

/* torchrun: the agent (700) started ranks 701, 702 with one run id; rank 0
 * holds 60 GiB on GPU 0, rank 1 12 GiB on GPU 1: imbalance, after the
 * start-up grace, named by the run id. */
static void torchrun_ranks_are_one_job(void **s)
{
	(void)s;
	fake_proc(700, "torchrun", 556, 556, 400, "PATH=/usr/bin");
	fake_proc(701, "python3", 700, 556, 400,
		  "PATH=/usr/bin|TORCHELASTIC_RUN_ID=abc123|RANK=0|LOCAL_RANK=0|WORLD_SIZE=2|"
		  "MASTER_ADDR=127.0.0.1|MASTER_PORT=29500");
	fake_proc(702, "python3", 700, 556, 400,
		  "PATH=/usr/bin|TORCHELASTIC_RUN_ID=abc123|RANK=1|LOCAL_RANK=1|WORLD_SIZE=2|"
		  "MASTER_ADDR=127.0.0.1|MASTER_PORT=29500");
	struct sim m;
	sim_init(&m, 2, TOTAL);
	proc(&m, 0, 701, 700, 556, "python3")->used_bytes = (uint64_t)(60 * GiB);
	proc(&m, 1, 702, 700, 556, "python3")->used_bytes = (uint64_t)(12 * GiB);
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 25000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0); /* within the grace */
	for (int64_t t = 26000; t <= 60000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	assert_string_equal(f->job, "torchrun:abc123");
	assert_int_equal(f->gpu, 0);
	assert_int_equal(f->count, 2);
	assert_true(fabs(f->share - 5.0) < 0.01);
	char b[512];
	assert_non_null(strstr(vramz_finding_summary(f, b, sizeof b), "torchrun:abc123"));
	vramz_diag_free(d);
}

/* the ranks' environment unreadable (another user's job, not root): the
 * launcher parent still groups them */
static void unreadable_environment_falls_back_to_the_launcher(void **s)
{
	(void)s;
	fake_proc(710, "torchrun", 400, 710, 710, NULL); /* even as a session leader */
	fake_proc(711, "python3", 710, 710, 710, NULL);
	fake_proc(712, "python3", 710, 710, 710, NULL);
	struct sim m;
	sim_init(&m, 2, TOTAL);
	proc(&m, 0, 711, 710, 710, "python3")->used_bytes = (uint64_t)(60 * GiB);
	proc(&m, 1, 712, 710, 710, "python3")->used_bytes = (uint64_t)(12 * GiB);
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 60000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	assert_string_equal(f->job, "parent:710 (torchrun)");
	vramz_diag_free(d);
}

/* mp.spawn: children of one Python main process, no rank variables */
static void mp_spawn_children_are_one_job(void **s)
{
	(void)s;
	fake_proc(800, "python3", 556, 556, 400, "PATH=/usr/bin");
	fake_proc(801, "python3", 800, 556, 400, "PATH=/usr/bin");
	fake_proc(802, "python3", 800, 556, 400, "PATH=/usr/bin");
	struct sim m;
	sim_init(&m, 2, TOTAL);
	proc(&m, 0, 801, 800, 556, "python3")->used_bytes = (uint64_t)(60 * GiB);
	proc(&m, 1, 802, 800, 556, "python3")->used_bytes = (uint64_t)(12 * GiB);
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 60000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, &f), 1);
	assert_string_equal(f->job, "parent:800 (python3)");
	vramz_diag_free(d);
}

/* two single-GPU programs one bash script started (same parent shell, same
 * group, no rank variables) are two jobs; so are two notebooks of one
 * server that leads its session, and processes adopted by init */
static void siblings_under_a_shell_or_server_are_not_grouped(void **s)
{
	(void)s;
	fake_proc(900, "bash", 400, 900, 400, "PATH=/usr/bin");
	fake_proc(901, "python3", 900, 900, 400, "PATH=/usr/bin");
	fake_proc(902, "python3", 900, 900, 400, "PATH=/usr/bin");
	fake_proc(910, "python3", 1, 910, 910, "PATH=/usr/bin"); /* a server, session leader */
	fake_proc(911, "python3", 910, 911, 911, "PATH=/usr/bin");
	fake_proc(912, "python3", 910, 912, 912, "PATH=/usr/bin");
	fake_proc(921, "python3", 1, 921, 921, "PATH=/usr/bin");
	fake_proc(922, "python3", 1, 922, 922, "PATH=/usr/bin");
	/* MASTER_* exported in a profile: not ranks, not a job */
	fake_proc(930, "bash", 400, 930, 400, "PATH=/usr/bin");
	fake_proc(931, "python3", 930, 930, 400, "MASTER_ADDR=localhost|MASTER_PORT=29500");
	fake_proc(932, "python3", 930, 930, 400, "MASTER_ADDR=localhost|MASTER_PORT=29500");
	struct sim m;
	sim_init(&m, 2, TOTAL);
	const uint32_t pairs[][3] = {{901, 902, 900}, {911, 912, 910}, {921, 922, 1}, {931, 932, 930}};
	for (unsigned i = 0; i < 4; i++) {
		proc(&m, 0, pairs[i][0], pairs[i][2], pairs[i][2], "python3")->used_bytes =
			(uint64_t)(30 * GiB);
		proc(&m, 1, pairs[i][1], pairs[i][2], pairs[i][2], "python3")->used_bytes =
			(uint64_t)(3 * GiB);
	}
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 60000; t += 1000)
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0);
	for (unsigned i = 0; i < 4; i++) {
		assert_string_equal(job_of(d, pairs[i][0]), "");
		assert_string_equal(job_of(d, pairs[i][1]), "");
	}
	vramz_diag_free(d);
}

/* cgroup identities come first; then the environment's */
static void strong_identities_and_environment_order(void **s)
{
	(void)s;
	struct jobkey_cache *c = jobkey_new(NULL);
	assert_non_null(c);
	struct sim m;
	sim_init(&m, 1, TOTAL);
	vramz_proc_sample *p = proc(&m, 0, 950, 1, 950, "python3");
	char k[VRAMZ_JOB_LEN];
	snprintf(p->container, sizeof p->container, "0123456789abcdef0123456789abcdef");
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "container:0123456789ab");
	snprintf(p->pod_uid, sizeof p->pod_uid, "6f1b2c3d-aaaa-bbbb-cccc-0123456789ab");
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "pod:6f1b2c3d-aaaa-bbbb-cccc-0123456789ab");
	/* a pod the kubelet's logs name (lib/kube.c): its name, whole or not
	 * at all (a name cut short could be another pod's) */
	snprintf(p->pod_namespace, sizeof p->pod_namespace, "ml-team");
	snprintf(p->pod, sizeof p->pod, "trainer-7f9c");
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "pod:ml-team/trainer-7f9c");
	memset(p->pod, 'x', 120);
	p->pod[120] = 0;
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "pod:6f1b2c3d-aaaa-bbbb-cccc-0123456789ab");
	snprintf(p->pod, sizeof p->pod, "trainer-7f9c");
	/* and the findings' words say "pod", with the process when it is one */
	vramz_finding f = {.kind = VRAMZ_FK_LEAK, .gpu = 3, .pid = 950};
	char w[256];
	snprintf(f.job, sizeof f.job, "pod:ml-team/trainer-7f9c");
	snprintf(f.comm, sizeof f.comm, "python3");
	assert_non_null(strstr(vramz_finding_summary(&f, w, sizeof w),
			       "pid 950 (python3) in pod ml-team/trainer-7f9c on GPU 3"));
	f.pid = 0;
	f.gpu = -1;
	f.kind = VRAMZ_FK_IMBALANCE;
	assert_non_null(strstr(vramz_finding_summary(&f, w, sizeof w), "pod ml-team/trainer-7f9c"));
	assert_null(strstr(w, "job pod:"));
	snprintf(p->slurm_job, sizeof p->slurm_job, "123");
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "slurm:123");
	p->valid &= ~VRAMZ_P_VISIBLE; /* not visible: nothing known */
	jobkey_compute(c, NULL, p, k, sizeof k);
	assert_string_equal(k, "");
	jobkey_free(c);

	static const struct {
		const char *env, *key;
		int rank;
	} cases[] = {
		{"TORCHELASTIC_RUN_ID=r1|RANK=3", "torchrun:r1", 1},
		/* torchrun without --rdzv-id: "none" is every job's id */
		{"TORCHELASTIC_RUN_ID=none|RANK=0|MASTER_ADDR=10.0.0.1|MASTER_PORT=29511",
		 "master:10.0.0.1:29511", 1},
		{"MASTER_ADDR=10.0.0.1|MASTER_PORT=29511", "", 0},
		{"OMPI_COMM_WORLD_RANK=1|MASTER_ADDR=h|MASTER_PORT=1", "master:h:1", 1},
		{"SLURM_JOB_ID=77|SLURM_PROCID=0", "slurm:77", 0},
		{"PMI_RANK=2|PMIX_NAMESPACE=prterun-h-1@1", "mpi:prterun-h-1@1", 1},
		{"XRANK=1|RANKS=2|PATH=/bin", "", 0},
		{"", "", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char env[256];
		size_t n = strlen(cases[i].env);
		memcpy(env, cases[i].env, n + 1);
		for (size_t j = 0; j < n; j++)
			if (env[j] == '|')
				env[j] = 0;
		assert_int_equal(jobkey_from_environ(env, n + 1, k, sizeof k), cases[i].rank);
		assert_string_equal(k, cases[i].key);
	}
	assert_int_equal(jobkey_parent_kind("bash"), -1);
	assert_int_equal(jobkey_parent_kind("jupyter-lab"), -1);
	assert_int_equal(jobkey_parent_kind("torchrun"), 1);
	assert_int_equal(jobkey_parent_kind("python3"), 0);
}

/* A log has no /proc: the parent groups its children only when the log
 * shows what it is (it holds a context too) or a child is a multiprocessing
 * child by its command line. */
static void log_without_proc(void **s)
{
	(void)s;
	struct jobkey_cache *c = jobkey_new(NULL);
	struct sim m;
	sim_init(&m, 2, TOTAL);
	proc(&m, 0, 1000, 556, 556, "python3");           /* the main process, listed */
	vramz_proc_sample *a = proc(&m, 1, 1001, 1000, 556, "python3");
	proc(&m, 0, 1100, 556, 556, "bash");              /* a shell holding a context */
	vramz_proc_sample *b = proc(&m, 1, 1101, 1100, 556, "python3");
	vramz_proc_sample *x = proc(&m, 1, 1201, 1200, 556, "python3"); /* parent not listed */
	m.s.proc_count = m.np;
	m.s.procs = m.p;
	char k[VRAMZ_JOB_LEN];
	jobkey_compute(c, &m.s, a, k, sizeof k);
	assert_string_equal(k, "parent:1000 (python3)");
	jobkey_compute(c, &m.s, b, k, sizeof k);
	assert_string_equal(k, "");
	jobkey_compute(c, &m.s, x, k, sizeof k);
	assert_string_equal(k, "");
	snprintf(x->cmdline, sizeof x->cmdline,
		 "python3 -c from multiprocessing.spawn import spawn_main; "
		 "spawn_main(tracker_fd=5, pipe_handle=7) --multiprocessing-fork");
	jobkey_compute(c, &m.s, x, k, sizeof k);
	assert_string_equal(k, "parent:1200");
	jobkey_free(c);
}

/* Four ranks that start one after another and ramp up to the same size: at
 * no evaluation is an imbalance raised (the start-up grace), so `watch`
 * never announces one and clears it seconds later. */
static void staggered_start_is_no_imbalance(void **s)
{
	(void)s;
	fake_proc(1300, "torchrun", 556, 556, 400, "PATH=/usr/bin");
	for (uint32_t r = 0; r < 4; r++) {
		char env[128];
		snprintf(env, sizeof env, "TORCHELASTIC_RUN_ID=stag|RANK=%u", (unsigned)r);
		fake_proc(1301 + r, "python3", 1300, 556, 400, env);
	}
	struct sim m;
	sim_init(&m, 4, TOTAL);
	vramz_proc_sample *p[4];
	for (unsigned r = 0; r < 4; r++)
		p[r] = proc(&m, r, 1301 + r, 1300, 556, "python3");
	vramz_diag *d = diag_on(root);
	for (int64_t t = 0; t <= 120000; t += 500) {
		double ts = t / 1000.0;
		for (unsigned r = 0; r < 4; r++) {
			/* rank r starts at 8r s and loads 40 GiB over 20 s */
			double x = (ts - 8 * r) / 20;
			x = x < 0 ? 0 : x > 1 ? 1 : x;
			p[r]->used_bytes = (uint64_t)(x * 40 * GiB);
		}
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_IMBALANCE, NULL), 0);
	}
	assert_string_equal(job_of(d, 1304), "torchrun:stag");
	vramz_diag_free(d);
}

/* a condition that holds 3 s is never handed out, nor listed as cleared */
static void short_transient_is_not_reported(void **s)
{
	(void)s;
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.keep_ended = 1;
	vramz_diag *d = vramz_diag_new(&c);
	struct sim m;
	sim_init(&m, 1, TOTAL);
	m.g[0].valid |= VRAMZ_F_TEMP_MEM;
	for (int64_t t = 0; t <= 30000; t += 1000) {
		m.g[0].temp_mem_c = t >= 10000 && t < 13000 ? 94 : 70;
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_MEM_TEMP, NULL), 0);
	}
	const vramz_finding *past;
	assert_int_equal(vramz_diag_cleared(d, &past), 0);
	/* held 6 s: handed out from 5 s on, then kept for mem_temp's hold
	 * time (30 s after it was last raised), listed as cleared after */
	for (int64_t t = 31000; t <= 90000; t += 1000) {
		m.g[0].temp_mem_c = t >= 40000 && t < 46000 ? 94 : 70;
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
		assert_int_equal(count_kind(d, VRAMZ_FK_MEM_TEMP, NULL), t >= 45000 && t < 75000);
	}
	assert_int_equal(vramz_diag_cleared(d, &past), 1);
	assert_int_equal(past[0].first_seen_ms, 40000);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shell_script_jobs_are_not_one_job),
		cmocka_unit_test(torchrun_ranks_are_one_job),
		cmocka_unit_test(unreadable_environment_falls_back_to_the_launcher),
		cmocka_unit_test(mp_spawn_children_are_one_job),
		cmocka_unit_test(siblings_under_a_shell_or_server_are_not_grouped),
		cmocka_unit_test(strong_identities_and_environment_order),
		cmocka_unit_test(log_without_proc),
		cmocka_unit_test(staggered_start_is_no_imbalance),
		cmocka_unit_test(short_transient_is_not_reported),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
