/* SPDX-License-Identifier: Apache-2.0 */
/* test_segment.c - the daemon's segment (lib/segment*.c): what a reader
 * gets is what the publisher published, field for field; what it refuses
 * (a file someone else could write, another layout, garbage, a dead or
 * stopped publisher) it refuses with a line saying why; and a publisher at
 * 1 kHz never hands a reader a torn snapshot.  Each of these is something
 * a user of `vramz status` on a daemon would notice: wrong numbers, a
 * crash, or trusting a file planted by another user.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "../fuzz/fuzz_segment.c"
#include "clock.h"
#include "segment.h"
#include "segment_codec.h"
#include "vramz/daemon.h"

static char dir[TMPDIR_LEN];
static int dir_fd = -1; /* the publishers' directory, as the daemon holds it */

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, "seg"))
		return -1;
	dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	close(dir_fd);
	dir_fd = -1;
	return tmpdir_remove(dir);
}

#define NG 2
static vramz_gpu_info infos[NG];
static unsigned char present[NG] = {1, 1};
static vramz_link links[NG * NG];

static struct seg_static make_static(uint32_t flags)
{
	for (unsigned i = 0; i < NG; i++) {
		memset(&infos[i], 0, sizeof infos[i]);
		infos[i].index = i;
		infos[i].valid = VRAMZ_I_MEM_TOTAL | VRAMZ_I_T_SLOWDOWN | VRAMZ_I_DETAILS;
		snprintf(infos[i].name, sizeof infos[i].name, "NVIDIA H200");
		snprintf(infos[i].uuid, sizeof infos[i].uuid, "GPU-%u-aaaa", i);
		snprintf(infos[i].pci_bus_id, sizeof infos[i].pci_bus_id, "00000000:%02X:00.0", 0x19 + i);
		infos[i].mem_total_bytes = 150754820096ull;
		infos[i].temp_slowdown_c = -7; /* a negative survives the trip */
	}
	links[1] = (vramz_link){VRAMZ_LINK_NVLINK, 18};
	links[2] = (vramz_link){VRAMZ_LINK_NVLINK, 18};
	struct seg_static st = {.flags = flags, .interval_ms = 1000, .slow_interval_ms = 10000,
				.sample_flags = VRAMZ_SAMPLE_PROCS, .gpu_count = NG,
				.info = infos, .present = present, .links = links};
	snprintf(st.sys.driver_version, sizeof st.sys.driver_version, "580.159.04");
	snprintf(st.sys.backend, sizeof st.sys.backend, "nvml");
	return st;
}

/* A snapshot whose every figure follows from gen, so a reader can tell a
 * torn copy from a whole one without the CRC. */
struct built {
	vramz_gpu_sample g[NG];
	vramz_proc_sample p[64];
	vramz_mig_sample m[1];
	vramz_finding f[2];
	vramz_snapshot s;
};

static void build(struct built *b, uint64_t gen, unsigned nprocs)
{
	memset(b, 0, sizeof *b);
	for (unsigned i = 0; i < NG; i++) {
		b->g[i].index = i;
		b->g[i].valid = VRAMZ_F_MEM | VRAMZ_F_TEMP | VRAMZ_F_PROCS;
		b->g[i].mem_used_bytes = gen * 4096 + i;
		b->g[i].mem_total_bytes = 150754820096ull;
		b->g[i].temp_c = -(int)(gen % 50);
		b->g[i].proc_first = i == 0 ? 0 : nprocs / 2;
		b->g[i].proc_count = i == 0 ? nprocs / 2 : nprocs - nprocs / 2;
	}
	for (unsigned i = 0; i < nprocs; i++) {
		vramz_proc_sample *p = &b->p[i];
		p->gpu_index = i < nprocs / 2 ? 0 : 1;
		p->pid = 1000 + i;
		p->valid = VRAMZ_P_USED | VRAMZ_P_VISIBLE;
		p->used_bytes = gen + i;
		p->uid = 1000;
		snprintf(p->user, sizeof p->user, "alice");
		snprintf(p->cmdline, sizeof p->cmdline, "python train.py --gen=%llu", (unsigned long long)gen);
		snprintf(p->slurm_job, sizeof p->slurm_job, "4242");
	}
	b->m[0] = (vramz_mig_sample){.parent_index = 1, .mig_index = 0, .gi_id = 1, .ci_id = 0,
				     .valid = VRAMZ_F_MEM, .mem_total_bytes = 1 << 30};
	snprintf(b->m[0].uuid, sizeof b->m[0].uuid, "MIG-abc");
	b->f[0] = (vramz_finding){.id = 7, .kind = VRAMZ_FK_LEAK, .severity = VRAMZ_SEV_WARNING,
				  .gpu = 0, .pid = 1000, .figures = VRAMZ_FG_RATE,
				  .rate_bytes_per_s = 1234.5, .time_to_oom_s = -1};
	snprintf(b->f[0].job, sizeof b->f[0].job, "torchrun:run7");
	snprintf(b->f[0].user, sizeof b->f[0].user, "alice");
	b->f[1] = (vramz_finding){.id = 8, .kind = VRAMZ_FK_IMBALANCE, .severity = VRAMZ_SEV_INFO,
				  .gpu = -1};
	snprintf(b->f[1].job, sizeof b->f[1].job, "slurm:4242");
	b->s = (vramz_snapshot){.time_ms = 1700000000000 + (int64_t)gen, .mono_ns = (int64_t)gen,
				.gpu_count = NG, .gpus = b->g, .proc_count = nprocs, .procs = b->p,
				.mig_count = 1, .migs = b->m};
}

static struct seg_writer *publisher(uint32_t flags, const char *name)
{
	struct seg_writer *w;
	char err[300];
	struct seg_static st = make_static(flags);
	int rc = seg_writer_create(&w, dir_fd, dir, name, 0644, &st, 8, 4, err, sizeof err);
	if (rc)
		fail_msg("create: %s", err);
	return w;
}

static void publish(struct seg_writer *w, uint64_t gen, unsigned nprocs)
{
	struct built b;
	char err[300];
	build(&b, gen, nprocs);
	if (seg_writer_publish(w, &b.s, 0, b.f, 2, err, sizeof err))
		fail_msg("publish: %s", err);
}

static struct seg_reader *reader(const char *name, int want_rc, const char *want_text)
{
	char path[128], err[400] = "";
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct seg_reader *r;
	int rc = seg_reader_open(&r, path, err, sizeof err);
	if (rc != want_rc)
		fail_msg("open %s: %d (%s), wanted %d", name, rc, err, want_rc);
	if (want_text && !strstr(err, want_text))
		fail_msg("open %s: '%s' does not say '%s'", name, err, want_text);
	if (rc) {
		seg_reader_close(r);
		return NULL;
	}
	return r;
}

static void what_is_published_is_read(void **state)
{
	(void)state;
	struct seg_writer *w = publisher(SEG_FL_PROCS, "segment");
	publish(w, 41, 5);
	publish(w, 42, 6);
	struct seg_reader *r = reader("segment", 0, NULL);
	const struct seg_header *h = seg_reader_header(r);
	assert_int_equal(h->major, 1);
	assert_int_equal(h->gpu_count, NG);
	assert_int_equal(h->interval_ms, 1000);
	assert_int_equal(h->pid, (uint32_t)getpid());
	assert_string_equal(h->sys.driver_version, "580.159.04");
	int pr;
	const vramz_gpu_info *gi = seg_reader_gpu(r, 1, &pr);
	assert_true(pr);
	assert_string_equal(gi->uuid, "GPU-1-aaaa");
	assert_string_equal(gi->pci_bus_id, "00000000:1A:00.0");
	assert_int_equal(gi->temp_slowdown_c, -7);
	assert_int_equal(gi->mem_total_bytes, 150754820096ull);
	vramz_link l;
	assert_int_equal(seg_reader_link(r, 0, 1, &l), 0);
	assert_int_equal(l.kind, VRAMZ_LINK_NVLINK);
	assert_int_equal(l.nvlinks, 18);

	const struct seg_snapshot *s;
	char err[300];
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), 0);
	assert_int_equal(s->generation, 2);
	assert_int_equal(s->snap.gpu_count, NG);
	assert_int_equal(s->snap.gpus[1].mem_used_bytes, 42 * 4096 + 1);
	assert_int_equal(s->snap.gpus[0].temp_c, -42);
	assert_int_equal(s->snap.proc_count, 6);
	assert_int_equal(s->snap.gpus[1].proc_first, 3);
	assert_string_equal(s->snap.procs[5].cmdline, "python train.py --gen=42");
	assert_string_equal(s->snap.procs[5].user, "alice");
	assert_string_equal(s->snap.procs[5].slurm_job, "4242");
	assert_int_equal(s->snap.procs[5].used_bytes, 47);
	assert_int_equal(s->snap.mig_count, 1);
	assert_string_equal(s->snap.migs[0].uuid, "MIG-abc");
	assert_int_equal(s->finding_count, 2);
	assert_true(s->findings[0].rate_bytes_per_s == 1234.5);
	assert_string_equal(s->findings[0].job, "torchrun:run7");
	assert_int_equal(s->findings[1].gpu, -1);
	seg_reader_close(r);
	seg_writer_close(w);
}

static void redacted_leaves_out_what_proc_said(void **state)
{
	(void)state;
	struct seg_writer *w = publisher(SEG_FL_PROCS | SEG_FL_REDACTED, "segment");
	publish(w, 5, 4);
	struct seg_reader *r = reader("segment", 0, NULL);
	const struct seg_snapshot *s;
	char err[300];
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), 0);
	const vramz_proc_sample *p = &s->snap.procs[3];
	assert_int_equal(p->pid, 1003);
	assert_int_equal(p->used_bytes, 8);            /* NVML's figure stays */
	assert_false(p->valid & VRAMZ_P_VISIBLE);
	assert_string_equal(p->cmdline, "");           /* /proc's do not */
	assert_string_equal(p->user, "");
	assert_string_equal(p->slurm_job, "");
	assert_int_equal(p->uid, 0);
	assert_string_equal(s->findings[0].job, "");   /* read from an environment */
	assert_string_equal(s->findings[0].user, "");
	assert_string_equal(s->findings[1].job, "slurm:4242"); /* from the cgroup */
	seg_reader_close(r);
	seg_writer_close(w);
}

/* Through a daemon context: a redacted segment's findings name no user or
 * command, and the reader fills them in for the processes its own /proc
 * shows it (here itself), as it does the process rows, and for no other
 * (a pid that is not running, or the same pid with another start time). */
static void a_reader_names_the_redacted_findings_it_can_see(void **state)
{
	(void)state;
	struct seg_writer *w = publisher(SEG_FL_PROCS | SEG_FL_REDACTED | SEG_FL_FINDINGS,
					 VRAMZ_SEGMENT_NAME);
	struct built b;
	build(&b, 3, 2);
	uint32_t me = (uint32_t)getpid();
	uint64_t start = seg_self_start_ticks();
	b.s.mono_ns = clock_mono_ns(); /* fresh */
	b.p[0].pid = me;
	b.p[0].start_time_ticks = start;
	b.p[1].pid = 4194000; /* above any pid_max in use: not running */
	b.f[0].pid = me;
	b.f[0].start_time_ticks = start;
	b.f[1] = b.f[0];
	b.f[1].id = 9;
	b.f[1].start_time_ticks = start + 1; /* the pid, reused */
	char err[300];
	if (seg_writer_publish(w, &b.s, 0, b.f, 2, err, sizeof err))
		fail_msg("publish: %s", err);
	vramz_ctx *ctx;
	assert_int_equal(vramz_open_daemon(&ctx, dir, 0), 0);
	const vramz_snapshot *v;
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &v), 0);
	const vramz_finding *f;
	assert_int_equal(vramz_daemon_findings(ctx, &f), 2);
	char comm[32] = "";
	FILE *c = fopen("/proc/self/comm", "r");
	assert_non_null(c);
	assert_non_null(fgets(comm, sizeof comm, c));
	fclose(c);
	comm[strcspn(comm, "\n")] = 0;
	assert_string_equal(f[0].comm, comm);
	assert_true(f[0].user[0] != 0);
	assert_string_equal(f[1].comm, "");
	assert_string_equal(f[1].user, "");
	vramz_close(ctx);
	seg_writer_close(w);
}

/* A daemon that runs no engine publishes no findings: NULL, not none. */
static void no_engine_no_findings(void **state)
{
	(void)state;
	struct seg_writer *w = publisher(SEG_FL_PROCS, VRAMZ_SEGMENT_NAME);
	struct built b;
	build(&b, 3, 2);
	b.s.mono_ns = clock_mono_ns();
	char err[300];
	if (seg_writer_publish(w, &b.s, 0, NULL, 0, err, sizeof err))
		fail_msg("publish: %s", err);
	vramz_ctx *ctx;
	assert_int_equal(vramz_open_daemon(&ctx, dir, 0), 0);
	const vramz_snapshot *v;
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &v), 0);
	const vramz_finding *f = (const vramz_finding *)&b;
	assert_int_equal(vramz_daemon_findings(ctx, &f), 0);
	assert_null(f);
	vramz_close(ctx);
	seg_writer_close(w);
}

static void growing_replaces_the_file_and_stopping_removes_it(void **state)
{
	(void)state;
	struct seg_writer *w = publisher(SEG_FL_PROCS, "segment");
	publish(w, 1, 4);
	struct seg_reader *old = reader("segment", 0, NULL);
	publish(w, 2, 60); /* more than the 8 the file was made for */
	const struct seg_snapshot *s;
	char err[300];
	assert_int_equal(seg_reader_read(old, &s, err, sizeof err), VRAMZ_EIO);
	assert_non_null(strstr(err, "replaced"));
	struct seg_reader *r = reader("segment", 0, NULL);
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), 0);
	assert_int_equal(s->snap.proc_count, 60);
	assert_int_equal(s->generation, 2); /* generations go on counting */
	seg_writer_close(w);
	/* a reader that had it mapped keeps a valid map that says stopped */
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), VRAMZ_EIO);
	assert_non_null(strstr(err, "stopped"));
	char path[128];
	snprintf(path, sizeof path, "%s/segment", dir);
	assert_int_equal(access(path, F_OK), -1);
	seg_reader_close(r);
	seg_reader_close(old);
}

/* The bytes of a fresh one-snapshot segment. */
static unsigned char *valid_bytes(size_t *len)
{
	struct seg_writer *w = publisher(SEG_FL_PROCS, "bytes");
	publish(w, 9, 4);
	char path[128];
	snprintf(path, sizeof path, "%s/bytes", dir);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*len);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	seg_writer_close(w);
	return b;
}

static void put_file(const char *name, const void *b, size_t n, mode_t mode)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	unlink(path);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	chmod(path, mode);
}

static void mem_refuses(const unsigned char *b, size_t n, int want_rc, const char *want)
{
	struct seg_reader *r;
	char err[400] = "";
	int rc = seg_reader_open_mem(&r, b, n, err, sizeof err);
	if (rc == 0) {
		const struct seg_snapshot *s;
		rc = seg_reader_read(r, &s, err, sizeof err);
	}
	seg_reader_close(r);
	if (rc != want_rc || !strstr(err, want))
		fail_msg("got %d '%s', wanted %d '%s'", rc, err, want_rc, want);
}

static void bad_files_are_refused_with_a_reason(void **state)
{
	(void)state;
	size_t n;
	unsigned char *b = valid_bytes(&n);
	unsigned char *c = malloc(n);
	/* another major layout */
	memcpy(c, b, n);
	c[SEG_H_MAJOR] = 2;
	c[SEG_H_MINOR] = c[SEG_H_MINOR + 1] = 0; /* a 2.0, whatever minor this one is */
	mem_refuses(c, n, VRAMZ_EUNSUPPORTED, "segment layout 2.0; this vramz reads layout 1.x");
	/* a newer minor of layout 1 is read */
	memcpy(c, b, n);
	c[SEG_H_MINOR] = 7;
	struct seg_reader *r;
	char err[300];
	assert_int_equal(seg_reader_open_mem(&r, c, n, err, sizeof err), 0);
	seg_reader_close(r);
	memcpy(c, b, n);
	memcpy(c, "NOTVRAMZ", 8);
	mem_refuses(c, n, VRAMZ_EPARSE, "wrong magic");
	mem_refuses(b, 0, VRAMZ_EPARSE, "empty file");
	mem_refuses(b, 100, VRAMZ_EPARSE, "truncated");
	mem_refuses(b, n / 2, VRAMZ_EPARSE, "truncated");
	/* one flipped payload byte: the checksum says so */
	memcpy(c, b, n);
	uint64_t gen = seg_get64(c, SEG_H_GENERATION);
	c[seg_get64(c, (gen & 1) ? SEG_H_SLOT1_OFF : SEG_H_SLOT0_OFF) + SEG_SLOT_HEAD + 50] ^= 1;
	mem_refuses(c, n, VRAMZ_EPARSE, "checksum mismatch");
	/* counts larger than the slot */
	memcpy(c, b, n);
	size_t pl = seg_get64(c, (gen & 1) ? SEG_H_SLOT1_OFF : SEG_H_SLOT0_OFF) + SEG_SLOT_HEAD;
	seg_put32(c, pl + 20, 0x7fffffff);
	seg_put32(c, pl - SEG_SLOT_HEAD + 16, seg_crc32(c + pl, seg_get32(c, pl - SEG_SLOT_HEAD + 20)));
	mem_refuses(c, n, VRAMZ_EPARSE, "exceed");
	/* random bytes, and the same through the file checks */
	srand(7);
	for (size_t i = 0; i < n; i++)
		c[i] = (unsigned char)rand();
	mem_refuses(c, n, VRAMZ_EPARSE, "wrong magic");
	put_file("random", c, n, 0644);
	reader("random", VRAMZ_EPARSE, "wrong magic");
	put_file("empty", c, 0, 0644);
	reader("empty", VRAMZ_EPARSE, "empty file");
	put_file("short", b, 300, 0644);
	reader("short", VRAMZ_EPARSE, "truncated");
	reader("none-here", VRAMZ_ENOTFOUND, NULL);
	free(b);
	free(c);
}

/* A fresh segment's bytes whose slots are slot_size bytes and whose latest
 * claims a payload of plen bytes under its old CRC, in a sparse file NAME. */
static void put_big(const char *name, uint64_t slot_size, uint32_t plen)
{
	size_t n;
	unsigned char *b = valid_bytes(&n);
	seg_put32(b, SEG_H_STATE, SEG_LIVE);
	uint64_t gen = seg_get64(b, SEG_H_GENERATION);
	uint64_t s0 = seg_get64(b, SEG_H_SLOT0_OFF), s1 = seg_get64(b, SEG_H_SLOT1_OFF);
	uint64_t end = (s0 > s1 ? s0 : s1) + slot_size;
	seg_put64(b, SEG_H_SLOT_SIZE, slot_size);
	seg_put64(b, SEG_H_FILE_SIZE, end);
	seg_put32(b, (gen & 1 ? s1 : s0) + 20, plen);
	put_file(name, b, n, 0644);
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(truncate(path, (off_t)end), 0);
	free(b);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The audit's forged sizes: each refused with a reason, before the reader
 * copies or sums the bytes they claim (it took 14 s to refuse a 16 MiB
 * payload with a wrong CRC, and gave no reason for a 64 GiB slot). */
static void huge_sizes_are_refused_before_any_checksum(void **state)
{
	(void)state;
	put_big("huge-slot", (uint64_t)64 << 30, 1000);
	reader("huge-slot", VRAMZ_EPARSE, "slot size 68719476736 bytes: more than the 268435456");
	/* a payload past its slot: refused at once, not retried */
	put_big("past-slot", 1 << 20, (1 << 20) + 1);
	struct seg_reader *r = reader("past-slot", 0, NULL);
	const struct seg_snapshot *s;
	char err[400] = "";
	double t0;
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), VRAMZ_EPARSE);
	if (!strstr(err, "payload size 1048577 bytes: more than its 1048552-byte slot holds"))
		fail_msg("past-slot: '%s'", err);
	assert_int_equal(seg_reader_retries(r), 0);
	seg_reader_close(r);
	/* 16 MiB under a wrong CRC in a slot that does not change: a corrupt
	 * file, said so, after a few sums (not 2000, not "dying mid-write") */
	put_big("bad-crc", (16 << 20) + SEG_SLOT_HEAD, 16 << 20);
	r = reader("bad-crc", 0, NULL);
	t0 = now_s();
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), VRAMZ_EPARSE);
	double took = now_s() - t0;
	if (!strstr(err, "snapshot checksum mismatch") || !strstr(err, "not a write in progress") ||
	    strstr(err, "dying"))
		fail_msg("bad-crc: '%s'", err);
	/* 3 sums (2 retries), whatever the machine's load; the time is loose */
	if (seg_reader_retries(r) > 2 || took > 5.0)
		fail_msg("bad-crc: %llu retries, %.2f s to refuse",
			 (unsigned long long)seg_reader_retries(r), took);
	seg_reader_close(r);
	/* and the publisher never makes a slot past the bound */
	struct seg_writer *w = publisher(SEG_FL_PROCS, "toobig");
	struct built b;
	build(&b, 1, 4);
	b.s.proc_count = 600000; /* refused before a record is read */
	assert_int_equal(seg_writer_publish(w, &b.s, 0, b.f, 2, err, sizeof err), VRAMZ_EIO);
	if (!strstr(err, "600000 processes and 2 findings: more than a segment's slot holds"))
		fail_msg("toobig: '%s'", err);
	b.s.proc_count = 4;
	publish(w, 2, 4); /* the file it had still works */
	seg_writer_close(w);
}

static void untrusted_files_are_ignored(void **state)
{
	(void)state;
	size_t n;
	unsigned char *b = valid_bytes(&n);
	seg_put32(b, SEG_H_STATE, SEG_LIVE);
	put_file("gw", b, n, 0664);
	reader("gw", VRAMZ_EPERM, "writable by its group");
	put_file("ow", b, n, 0646);
	reader("ow", VRAMZ_EPERM, "writable by everyone");
	put_file("ok", b, n, 0644);
	struct seg_reader *r = reader("ok", 0, NULL); /* ours, 0644, publisher alive (us) */
	seg_reader_close(r);
	if (geteuid() == 0) {
		char path[128];
		snprintf(path, sizeof path, "%s/ok", dir);
		assert_int_equal(chown(path, 65534, 65534), 0);
		reader("ok", VRAMZ_EPERM, "owned by uid 65534");
	}
	free(b);
}

static void a_dead_publisher_is_detected(void **state)
{
	(void)state;
	size_t n;
	unsigned char *b = valid_bytes(&n);
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	seg_put32(b, SEG_H_STATE, SEG_LIVE);
	seg_put32(b, SEG_H_PID, (uint32_t)child);
	put_file("dead", b, n, 0644);
	reader("dead", VRAMZ_EIO, "is gone");
	/* a pid reused by another process: the start time tells them apart */
	seg_put32(b, SEG_H_PID, (uint32_t)getpid());
	seg_put64(b, SEG_H_START_TICKS, 1);
	put_file("reused", b, n, 0644);
	reader("reused", VRAMZ_EIO, "is gone");
	free(b);
	/* killed mid-write: the next slot stays odd, and says so */
	struct seg_writer *w = publisher(SEG_FL_PROCS, "torn");
	publish(w, 1, 2);
	unsigned char *m = seg_writer_map(w);
	uint64_t gen = seg_get64(m, SEG_H_GENERATION);
	uint64_t next = seg_get64(m, ((gen + 1) & 1) ? SEG_H_SLOT1_OFF : SEG_H_SLOT0_OFF);
	m[next] |= 1; /* as if the publisher stopped between seq odd and even */
	struct seg_reader *r = reader("torn", 0, NULL);
	uint64_t torn = 0;
	assert_int_equal(seg_reader_torn(r, &torn), 1);
	assert_int_equal(torn, 2);
	const struct seg_snapshot *s;
	char err[300];
	assert_int_equal(seg_reader_read(r, &s, err, sizeof err), 0); /* the last whole one */
	assert_int_equal(s->generation, 1);
	seg_reader_close(r);
	seg_writer_close(w);
}

static void mutated_segments_never_crash_the_reader(void **state)
{
	(void)state;
	size_t n;
	unsigned char *b = valid_bytes(&n);
	unsigned char *c = malloc(n);
	srand(12345);
	unsigned ok = 0;
	for (int it = 0; it < 3000; it++) {
		memcpy(c, b, n);
		int flips = 1 + rand() % 8;
		for (int k = 0; k < flips; k++) {
			/* the header and the first records are where offsets live */
			size_t at = (size_t)(rand() % 4 ? rand() % 1024 : rand() % (int)n);
			c[at] = (unsigned char)rand();
		}
		size_t len = rand() % 10 ? n : (size_t)rand() % n;
		ok += (unsigned)fuzz_segment_one(c, len);
	}
	assert_true(ok > 0); /* most mutations of the payload are caught, some read */
	free(b);
	free(c);
}

/* ---- a 1 kHz publisher against readers checking every snapshot ---- */

struct stress {
	volatile int stop;
	uint64_t reads[2], bad[2];
	char first_bad[480];
};

static void *stress_writer(void *arg)
{
	struct stress *st = arg;
	struct seg_writer *w = publisher(SEG_FL_PROCS, "stress");
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (uint64_t gen = 1; !st->stop; gen++) {
		publish(w, gen, (unsigned)(gen % 37));
		t.tv_nsec += 1000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	seg_writer_close(w);
	return NULL;
}

struct reader_arg {
	struct stress *st;
	int k;
};

/* Every snapshot must be one build(): its figures all follow from one gen. */
static const char *check(const struct seg_snapshot *s)
{
	uint64_t gen = (uint64_t)s->snap.mono_ns;
	if (s->snap.time_ms != 1700000000000 + (int64_t)gen)
		return "time";
	if (s->snap.proc_count != gen % 37 || s->snap.gpu_count != NG)
		return "counts";
	for (unsigned i = 0; i < NG; i++)
		if (s->snap.gpus[i].mem_used_bytes != gen * 4096 + i)
			return "gpu";
	char want[64];
	snprintf(want, sizeof want, "python train.py --gen=%llu", (unsigned long long)gen);
	for (unsigned i = 0; i < s->snap.proc_count; i++)
		if (s->snap.procs[i].used_bytes != gen + i || strcmp(s->snap.procs[i].cmdline, want))
			return "process";
	return NULL;
}

static void *stress_reader(void *arg)
{
	struct reader_arg *a = arg;
	struct stress *st = a->st;
	struct seg_reader *r = NULL;
	char path[128], err[400];
	snprintf(path, sizeof path, "%s/stress", dir);
	uint64_t last = 0;
	while (!st->stop) {
		if (!r && seg_reader_open(&r, path, err, sizeof err)) {
			seg_reader_close(r);
			r = NULL;
			continue;
		}
		const struct seg_snapshot *s;
		int rc = seg_reader_read(r, &s, err, sizeof err);
		if (rc == VRAMZ_EIO) { /* replaced as it grew: the new file */
			seg_reader_close(r);
			r = NULL;
			continue;
		}
		if (rc == VRAMZ_EEOF)
			continue;
		const char *why = rc ? err : check(s);
		if (!why && s->generation < last)
			why = "generation went back";
		if (why) {
			if (!st->bad[a->k]++)
				snprintf(st->first_bad, sizeof st->first_bad, "%s", why);
		} else {
			last = s->generation;
		}
		st->reads[a->k]++;
	}
	seg_reader_close(r);
	return NULL;
}

static void readers_never_see_a_torn_snapshot(void **state)
{
	(void)state;
	struct stress st = {0};
	pthread_t w, r[2];
	struct reader_arg ra[2] = {{&st, 0}, {&st, 1}};
	pthread_create(&w, NULL, stress_writer, &st);
	for (int k = 0; k < 2; k++)
		pthread_create(&r[k], NULL, stress_reader, &ra[k]);
	const char *secs = getenv("VRAMZ_STRESS_SECONDS");
	sleep(secs ? (unsigned)atoi(secs) : 10);
	st.stop = 1;
	pthread_join(w, NULL);
	for (int k = 0; k < 2; k++)
		pthread_join(r[k], NULL);
	print_message("stress: %llu + %llu reads, %llu torn\n", (unsigned long long)st.reads[0],
		      (unsigned long long)st.reads[1], (unsigned long long)(st.bad[0] + st.bad[1]));
	if (st.bad[0] + st.bad[1])
		fail_msg("%llu torn reads, first: %s", (unsigned long long)(st.bad[0] + st.bad[1]),
			 st.first_bad);
	assert_true(st.reads[0] > 100 && st.reads[1] > 100);
}

/* The sliced CRC against the check value of CRC-32/ISO-HDLC and against
 * the plain bitwise definition, at every length and alignment around the
 * 8-byte steps. */
/* CRC-32 by its bitwise definition */
static uint32_t crc_bitwise(const unsigned char *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t k = 0; k < n; k++) {
		c ^= p[k];
		for (int b = 0; b < 8; b++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xFFFFFFFFu;
}

static void crc_is_zlibs(void **state)
{
	(void)state;
	assert_int_equal(seg_crc32("123456789", 9), 0xCBF43926u);
	assert_int_equal(seg_crc32("", 0), 0);
	unsigned char buf[80];
	for (unsigned i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 37u + 11u);
	for (unsigned off = 0; off < 8; off++)
		for (unsigned n = 0; n + off <= sizeof buf; n++)
			assert_int_equal(seg_crc32(buf + off, n), crc_bitwise(buf + off, n));
	/* long payloads, at every alignment and around the 16- and 64-byte
	 * steps of the carry-less fold (taken where the CPU has it), against
	 * the bitwise definition */
	static unsigned char big[9000];
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < sizeof big; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		big[i] = (unsigned char)x;
	}
	for (unsigned t = 0; t < 600; t++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t n = t < 200 ? 60 + t : (size_t)(x % (sizeof big - 16)), off = (x >> 32) % 16;
		assert_int_equal(seg_crc32(big + off, n), crc_bitwise(big + off, n));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crc_is_zlibs),
		cmocka_unit_test_setup_teardown(what_is_published_is_read, setup, teardown),
		cmocka_unit_test_setup_teardown(redacted_leaves_out_what_proc_said, setup, teardown),
		cmocka_unit_test_setup_teardown(a_reader_names_the_redacted_findings_it_can_see, setup, teardown),
		cmocka_unit_test_setup_teardown(no_engine_no_findings, setup, teardown),
		cmocka_unit_test_setup_teardown(growing_replaces_the_file_and_stopping_removes_it, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_files_are_refused_with_a_reason, setup, teardown),
		cmocka_unit_test_setup_teardown(huge_sizes_are_refused_before_any_checksum, setup, teardown),
		cmocka_unit_test_setup_teardown(untrusted_files_are_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(a_dead_publisher_is_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(mutated_segments_never_crash_the_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(readers_never_see_a_torn_snapshot, setup, teardown),
	};
	/* unit.test_segment_crc_tables: the CRC without the carry-less fold,
	 * as on a CPU without it */
	if (getenv("VRAMZ_CRC_NO_CLMUL"))
		cmocka_set_test_filter("crc_is_zlibs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
