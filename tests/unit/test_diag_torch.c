/* SPDX-License-Identifier: Apache-2.0 */
/* test_diag_torch.c - findings from inside a PyTorch process (lib/diagnose/
 * torch.c): fragmentation only while retries climb, memory outside the
 * allocator, the allocator's own OOM count, and the leak's Python line
 * read back from the agent's answer to the engine's request.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmpdir.h"

#include "diag_sim.h"

static vramz_proc_sample *torch_proc(struct sim *m, uint32_t pid, double used, double reserved)
{
	vramz_proc_sample *p = sim_proc(m, 0, pid, 77);
	p->uid = (uint32_t)geteuid();
	p->used_bytes = (uint64_t)used;
	p->valid |= VRAMZ_P_TORCH | VRAMZ_P_OUTSIDE;
	p->torch_valid = VRAMZ_T_ALLOCATED | VRAMZ_T_RESERVED | VRAMZ_T_INACTIVE_SPLIT |
			 VRAMZ_T_RETRIES | VRAMZ_T_OOMS;
	p->torch_reserved_bytes = (uint64_t)reserved;
	p->torch_allocated_bytes = (uint64_t)(reserved / 2);
	p->outside_allocator_bytes = used > reserved ? (uint64_t)(used - reserved) : 0;
	return p;
}

static vramz_diag *new_diag(void)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	return d;
}

static void fragmentation_needs_climbing_retries(void **state)
{
	for (int climb = 0; climb <= 1; climb++) {
		struct sim m;
		sim_init(&m, 1, 141 * GiB);
		vramz_proc_sample *p = torch_proc(&m, 4242, 20 * GiB, 18 * GiB);
		p->torch_inactive_split_bytes = (uint64_t)(6 * GiB);
		vramz_diag *d = new_diag();
		for (int s = 0; s <= 60; s++) {
			p->torch_alloc_retries = climb && s >= 30 ? 5 + (unsigned)(s - 30) / 10 : 2;
			assert_int_equal(sim_feed(d, &m, 1000000 + s * 1000, NULL), 0);
		}
		const vramz_finding *f;
		unsigned n = count_kind(d, VRAMZ_FK_FRAGMENTATION, &f);
		if (!climb) {
			assert_int_equal(n, 0); /* split memory alone, no retries: no finding */
		} else {
			assert_int_equal(n, 1);
			assert_int_equal(f->pid, 4242);
			assert_int_equal(f->bytes, (uint64_t)(6 * GiB));
			assert_int_equal(f->count, 6); /* 2 -> 8 since first seen */
			char buf[512];
			vramz_finding_summary(f, buf, sizeof buf);
			assert_non_null(strstr(buf, "6.0 GiB of the allocator's 18.0 GiB is free pieces of split blocks (33%)"));
			vramz_finding_advice(f, buf, sizeof buf);
			assert_non_null(strstr(buf, "expandable_segments:True"));
		}
		vramz_diag_free(d);
	}
}

static void outside_allocator_large_in_bytes_and_share(void **state)
{
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	torch_proc(&m, 100, 20 * GiB, 12 * GiB);      /* 8 GiB outside, 40 % */
	torch_proc(&m, 101, 20 * GiB, 19 * GiB);      /* 1 GiB outside */
	vramz_proc_sample *q = torch_proc(&m, 102, 3 * GiB, 0.5 * GiB); /* 83 %, 2.5 GiB */
	q->gpu_index = 0;
	vramz_diag *d = new_diag();
	for (int s = 0; s <= 10; s++)
		assert_int_equal(sim_feed(d, &m, 1000000 + s * 1000, NULL), 0);
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f);
	unsigned seen = 0;
	for (unsigned i = 0; i < n; i++) {
		if (f[i].kind != VRAMZ_FK_OUTSIDE_ALLOCATOR)
			continue;
		seen++;
		assert_true(f[i].pid == 100 || f[i].pid == 102);
		if (f[i].pid == 100) {
			char buf[256];
			assert_int_equal(f[i].bytes, (uint64_t)(8 * GiB));
			vramz_finding_summary(&f[i], buf, sizeof buf);
			assert_non_null(strstr(buf, "holds 8.0 GiB outside PyTorch's allocator, 40% of its 20.0 GiB"));
			assert_string_equal(vramz_finding_kind_str(f[i].kind), "outside_allocator");
		}
	}
	assert_int_equal(seen, 2);
	vramz_diag_free(d);
}

static void oom_from_the_agent_counter(void **state)
{
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	vramz_proc_sample *p = torch_proc(&m, 4242, 130 * GiB, 128 * GiB);
	p->torch_ooms = 2; /* before vramz looked: not news */
	vramz_diag *d = new_diag();
	for (int s = 0; s <= 20; s++) {
		if (s == 10)
			p->torch_ooms = 3;
		assert_int_equal(sim_feed(d, &m, 1000000 + s * 1000, NULL), 0);
		if (s == 9)
			assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 0);
	}
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	/* caught and carried on: a warning, not a death (issue 27) */
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	assert_true(f->evidence & VRAMZ_OOM_AGENT);
	assert_false(f->ended);
	assert_int_equal(f->count, 1);
	char buf[256];
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "pid 4242 (python) on GPU 0 ran out of memory 1 time and carried on; it holds 130.0 GiB (128.0 GiB reserved by the allocator), the GPU has"));
	vramz_diag_free(d);
}

static void leak_names_the_python_line(void **state)
{
	char dir[TMPDIR_LEN];
	assert_int_equal(tmpdir_make(dir, "diag-torch"), 0);
	setenv("VRAMZ_RUNTIME_DIR", dir, 1);
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	vramz_proc_sample *p = torch_proc(&m, 4242, 10 * GiB, 9 * GiB);
	p->torch_valid |= VRAMZ_T_HISTORY;
	char path[256], req[300];
	snprintf(path, sizeof path, "%s/torch-4242-%llu", dir, (unsigned long long)p->start_time_ticks);
	snprintf(req, sizeof req, "%s.req", path);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "vramz-torch 1\nprocess pid=4242 start_time_ticks=%llu history=1\n",
		(unsigned long long)p->start_time_ticks);
	fclose(fp);
	chmod(path, 0644);

	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.proc_root = "/proc";
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	int64_t t0 = 1796000000000;
	int asked = 0, answered = 0;
	const vramz_finding *f = NULL;
	for (int s = 0; s <= 400 && !(f && (f->figures & VRAMZ_FG_SITE)); s++) {
		p->used_bytes = (uint64_t)(10 * GiB + s * 64 * MiB);
		assert_int_equal(sim_feed(d, &m, t0 + s * 1000, NULL), 0);
		count_kind(d, VRAMZ_FK_LEAK, &f);
		if (!asked && access(req, F_OK) == 0) {
			asked = s; /* the leak was found (it is reported after report_after_ms) */
			/* not before the leak could be judged: the onset rules'
			 * 30 s of a smooth rise of NVML's figure (issue 36) */
			assert_true(s >= 30);
		}
		if (asked && !answered && s > asked) {
			char sp[300];
			snprintf(sp, sizeof sp, "%s.sites", path);
			fp = fopen(sp, "w");
			assert_non_null(fp);
			fprintf(fp, "vramz-torch-sites 1\n"
				    "process pid=4242 time_ms=%lld since_ms=%lld growth_bytes=1000\n"
				    "site cuda=0 bytes=5000 growth_bytes=940 line=57 func=step file=/home/ana/train.py\n"
				    "site cuda=0 bytes=100 growth_bytes=60 line=9 func=load file=/home/ana/data.py\n",
				(long long)(t0 + s * 1000), (long long)(t0 + asked * 1000));
			fclose(fp);
			chmod(sp, 0600);
			answered = s;
		}
	}
	if (!asked)
		fprintf(stderr, "leak finding: %s pid %u gpu %d start %llu\n", f ? "yes" : "no", f ? f->pid : 0, f ? f->gpu : -9, f ? (unsigned long long)f->start_time_ticks : 0);
	assert_true(asked);
	assert_non_null(f);
	assert_true(f->figures & VRAMZ_FG_SITE);
	assert_string_equal(f->site, "train.py:57 in step()");
	char buf[512];
	vramz_finding_summary(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "; 94 % of the growth is allocated at train.py:57 in step()"));
	vramz_finding_advice(f, buf, sizeof buf);
	assert_non_null(strstr(buf, "Look at train.py:57 in step()"));
	vramz_diag_free(d);
	assert_int_equal(tmpdir_remove(dir), 0);
	unsetenv("VRAMZ_RUNTIME_DIR");
}

/* A live engine reads the file the agent leaves as a tombstone when its
 * process leaves the GPU's list (issue 27).  The process holds 40 GiB of
 * a 141 GiB GPU, so NVML's figures alone would say nothing. */
static vramz_diag *end_with(const char *dir, const char *records, int ooms_before_end,
			    const vramz_finding **f, unsigned *n)
{
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	vramz_proc_sample *p = torch_proc(&m, 4242, 40 * GiB, 38 * GiB);
	char path[256];
	snprintf(path, sizeof path, "%s/torch-4242-%llu", dir, (unsigned long long)p->start_time_ticks);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "vramz-torch 1\nprocess pid=4242 start_time_ticks=%llu history=1\n%s",
		(unsigned long long)p->start_time_ticks, records);
	fclose(fp);
	chmod(path, 0644);
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.proc_root = "/proc";
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	for (int s = 0; s <= 60; s++) {
		if (s == 40)
			p->torch_ooms = (uint64_t)ooms_before_end;
		if (s == 50)
			m.np = 0; /* gone from the list */
		assert_int_equal(sim_feed(d, &m, 1000000 + s * 1000, NULL), 0);
	}
	*n = count_kind(d, VRAMZ_FK_OOM, f);
	unlink(path);
	return d;
}

static void uncaught_oom_is_a_death_with_its_line(void **state)
{
	char dir[TMPDIR_LEN];
	assert_int_equal(tmpdir_make(dir, "diag-torch-end"), 0);
	setenv("VRAMZ_RUNTIME_DIR", dir, 1);
	const vramz_finding *f;
	unsigned n;
	vramz_diag *d = end_with(dir,
		"oom time_ms=1 cuda=0 requested_bytes=21474836480 limit_bytes=35791394816 "
		"device_free_bytes=10522669056 allocated_bytes=22548578304 reserved_bytes=23622320128 "
		"ooms=1 line=88 func=forward file=/home/ana/model.py\n"
		"holder cuda=0 bytes=13980054487 blocks=52 line=40 func=load time_ms=1 file=/home/ana/data.py\n"
		"end time_ms=2 how=exception exception=torch.OutOfMemoryError oom=1 status=1 "
		"line=88 func=forward file=/home/ana/model.py\n", 1, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(f->severity, VRAMZ_SEV_CRITICAL);
	assert_true(f->ended);
	assert_true(f->evidence & VRAMZ_OOM_ENDED);
	assert_false(f->evidence & VRAMZ_OOM_LOW_FREE); /* NVML saw 100 GiB free */
	assert_true(f->figures & VRAMZ_FG_OOM);
	assert_string_equal(f->site, "model.py:88 in forward()");
	assert_int_equal(f->requested_bytes, 21474836480ull);
	assert_int_equal(f->nholders, 1);
	assert_string_equal(f->holders[0].site, "data.py:40 in load()");
	char buf[512];
	vramz_finding_summary(f, buf, sizeof buf);
	print_message("%s\n", buf);
	assert_string_equal(buf, "pid 4242 (python) on GPU 0 died out of memory at model.py:88 in "
				 "forward() asking 20.0 GiB with 9.8 GiB free (its allocator's limit "
				 "33.3 GiB); 62 % of its memory was allocated at data.py:40 in load()");
	vramz_diag_free(d);
	assert_int_equal(tmpdir_remove(dir), 0);
	unsetenv("VRAMZ_RUNTIME_DIR");
}

/* caught OOMs then a normal exit: never a death, however full the GPU
 * looked; an exit the agent did not record (kill -9) falls back to
 * NVML's rule, which a half-empty GPU does not meet */
static void caught_oom_then_exit_is_no_death(void **state)
{
	char dir[TMPDIR_LEN];
	assert_int_equal(tmpdir_make(dir, "diag-torch-exit"), 0);
	setenv("VRAMZ_RUNTIME_DIR", dir, 1);
	const char *ends[] = {
		"oom time_ms=1 cuda=0 requested_bytes=1024 ooms=3 line=9 func=probe file=/x/p.py\n"
		"end time_ms=2 how=exit status=0\n",
		"end time_ms=2 how=exception exception=ValueError oom=0 status=1 line=3 func=f file=/x/p.py\n",
		"oom time_ms=1 cuda=0 requested_bytes=1024 ooms=3 line=9 func=probe file=/x/p.py\n",
	};
	for (unsigned i = 0; i < 3; i++) {
		const vramz_finding *f;
		unsigned n;
		vramz_diag *d = end_with(dir, ends[i], 3, &f, &n);
		assert_int_equal(n, 0);
		vramz_diag_free(d);
	}
	assert_int_equal(tmpdir_remove(dir), 0);
	unsetenv("VRAMZ_RUNTIME_DIR");
}

/* issue 27: a fragmenting pool whose split share flaps around the
 * threshold while its retries climb without pause is one finding from its
 * first report until the retries stop, its "changed" revisions at most one
 * per DIAG_CHANGE_MIN_MS; once the retries stop and the share is low, it
 * clears, after its hold time */
static void fragmentation_holds_while_retries_climb(void **state)
{
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	vramz_proc_sample *p = torch_proc(&m, 4242, 20 * GiB, 18 * GiB);
	vramz_diag *d = new_diag();
	int64_t t0 = 1000000;
	int first = -1, gone = -1;
	unsigned rev0 = 0, rev = 0;
	for (int s = 0; s <= 400; s++) {
		int climbing = s < 180;
		/* 6 GiB split for 4 s, 0.5 GiB for 3 s, and again */
		p->torch_inactive_split_bytes = (uint64_t)((climbing && s % 7 < 4 ? 6 : 0.5) * GiB);
		p->torch_alloc_retries = 10 + (uint64_t)(climbing ? s * 7 : 180 * 7);
		assert_int_equal(sim_feed(d, &m, t0 + s * 1000, NULL), 0);
		const vramz_finding *f;
		unsigned n = count_kind(d, VRAMZ_FK_FRAGMENTATION, &f);
		if (n && first < 0) {
			first = s;
			rev0 = f->revision;
		}
		if (first >= 0 && gone < 0 && !n)
			gone = s;
		if (n)
			rev = f->revision;
		if (first >= 0 && climbing)
			assert_int_equal(n, 1); /* no flapping while retries climb */
	}
	assert_true(first >= 0 && first <= 10);
	/* one revision at most every 10 s over ~175 s of changes */
	assert_true(rev - rev0 <= (180 - (unsigned)first) / 10 + 1);
	/* the retries stopped at 180 s, the share was low: still climbing
	 * within 60 s, then held 60 s */
	assert_true(gone >= 180 + 60 + 60 - 2 && gone <= 180 + 60 + 60 + 3);
	vramz_diag_free(d);
}

/* a caught-OOM count rising every second: one finding, a "changed" at
 * most every DIAG_CHANGE_MIN_MS */
static void caught_ooms_change_at_a_bounded_rate(void **state)
{
	struct sim m;
	sim_init(&m, 1, 141 * GiB);
	vramz_proc_sample *p = torch_proc(&m, 4242, 40 * GiB, 38 * GiB);
	vramz_diag *d = new_diag();
	unsigned revs = 0, last = 0;
	for (int s = 0; s <= 70; s++) {
		p->torch_ooms = s >= 10 ? (uint64_t)(s - 9) : 0;
		assert_int_equal(sim_feed(d, &m, 1000000 + s * 1000, NULL), 0);
		const vramz_finding *f;
		if (count_kind(d, VRAMZ_FK_OOM, &f)) {
			if (f->revision != last)
				revs++;
			last = f->revision;
		}
	}
	assert_true(revs >= 2 && revs <= 7); /* 60 s: the first, then <= 6 changes */
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fragmentation_needs_climbing_retries),
		cmocka_unit_test(uncaught_oom_is_a_death_with_its_line),
		cmocka_unit_test(fragmentation_holds_while_retries_climb),
		cmocka_unit_test(caught_ooms_change_at_a_bounded_rate),
		cmocka_unit_test(caught_oom_then_exit_is_no_death),
		cmocka_unit_test(outside_allocator_large_in_bytes_and_share),
		cmocka_unit_test(oom_from_the_agent_counter),
		cmocka_unit_test(leak_names_the_python_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
