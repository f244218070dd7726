/* SPDX-License-Identifier: Apache-2.0 */
/* test_log_write.c - writing log files and replaying them: the append
 * check that never overwrites, a torn tail cut before appending, rotation
 * boundaries with --keep, /dev/full, and a log replayed through
 * vramz_open() so the usual commands see the recorded GPUs and time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "fields.h"
#include "format/logwrite.h"
#include "vramz/log.h"

static char dir[TMPDIR_LEN];

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, "logwrite");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static const char *path_of(const char *name)
{
	static char p[4][160];
	static int k;
	char *s = p[k++ & 3];
	snprintf(s, 160, "%s/%s", dir, name);
	return s;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = malloc(1 << 20);
	size_t n = fread(b, 1, (1 << 20) - 1, f);
	fclose(f);
	b[n] = 0;
	if (len)
		*len = n;
	return b;
}

static vramz_gpu_info info0 = {.index = 0, .uuid = "GPU-0000", .name = "NVIDIA H200"};

static const vramz_gpu_info *info_of(void *arg, unsigned idx)
{
	return &info0;
}

/* One tick of one GPU (and, with procs, one process) at time ms. */
static void tick(struct logbuf *gb, struct logbuf *pb, int64_t ms, uint64_t used)
{
	vramz_gpu_sample g = {.index = 0, .valid = VRAMZ_F_MEM | VRAMZ_F_PROCS,
			      .mem_total_bytes = 100ull << 30, .mem_used_bytes = used,
			      .mem_free_bytes = (100ull << 30) - used, .proc_count = 1};
	vramz_proc_sample p = {.gpu_index = 0, .pid = 99, .valid = VRAMZ_P_USED,
			       .used_bytes = used};
	vramz_snapshot s = {.time_ms = ms, .gpu_count = 1, .gpus = &g, .proc_count = 1,
			    .procs = &p};
	gb->len = 0;
	if (pb)
		pb->len = 0;
	assert_int_equal(log_format_tick(gb, pb, &s, info_of, NULL), 0);
}

static int count_ticks(const char *path, int64_t *first_ms, unsigned *procs)
{
	vramz_log_reader *r;
	const vramz_snapshot *s;
	int n = 0, rc = vramz_log_open(&r, path);
	if (rc < 0)
		fail_msg("%s: %s", path, vramz_log_error(r));
	while ((rc = vramz_log_next(r, &s)) == 1) {
		if (n++ == 0 && first_ms)
			*first_ms = s->time_ms;
		if (procs)
			*procs += s->proc_count;
	}
	if (rc < 0)
		fail_msg("%s", vramz_log_error(r));
	vramz_log_close(r);
	return n;
}

static void test_append_and_refuse(void **state)
{
	char err[512];
	struct log_writer *w;
	struct logbuf gb = {0};
	struct log_writer_opts o = {.path = path_of("a.csv")};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	tick(&gb, NULL, 1000, 1);
	assert_int_equal(log_writer_tick(w, &gb, NULL, err, sizeof err), 0);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	/* the same header: appended, no second header */
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	tick(&gb, NULL, 2000, 2);
	assert_int_equal(log_writer_tick(w, &gb, NULL, err, sizeof err), 0);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	assert_int_equal(count_ticks(o.path, NULL, NULL), 2);

	/* a power loss tore the tail: cut back to the last whole line */
	FILE *f = fopen(o.path, "a");
	fputs("1970-01-01T00:00:03.000Z,0,GPU-00", f);
	fclose(f);
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	tick(&gb, NULL, 4000, 4);
	assert_int_equal(log_writer_tick(w, &gb, NULL, err, sizeof err), 0);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	assert_int_equal(count_ticks(o.path, NULL, NULL), 3);

	/* another file's header: refused, the file left as it was */
	o.path = path_of("other.csv");
	f = fopen(o.path, "w");
	fputs("date,price\n2026-01-01,3\n", f);
	fclose(f);
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EPARSE);
	log_writer_close(w, err + 256, 256);
	assert_non_null(strstr(err, "other.csv: exists with other columns"));
	char *b = slurp(o.path, NULL);
	assert_string_equal(b, "date,price\n2026-01-01,3\n");
	free(b);
	/* a vramz log of other columns (an older version): refused too */
	o.path = path_of("older.csv");
	f = fopen(o.path, "w");
	fputs("time,gpu,uuid,mem_used_bytes\n", f);
	fclose(f);
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EPARSE);
	log_writer_close(w, err, sizeof err);
	/* --procs to stdout has nowhere to put the sibling */
	o.path = "-";
	o.procs = 1;
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EINVAL);
	assert_non_null(strstr(err, "--procs needs -o FILE"));
	log_writer_close(w, err, sizeof err);
	logbuf_free(&gb);
}

static void test_dev_full(void **state)
{
	char err[512];
	struct log_writer *w;
	struct log_writer_opts o = {.path = "/dev/full"};
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EIO);
	assert_string_equal(err, "/dev/full: write failed: No space left on device");
	log_writer_close(w, err, sizeof err);
}

static void test_rotation(void **state)
{
	char err[512];
	struct log_writer *w;
	struct logbuf gb = {0}, pb = {0}, hdr = {0};
	log_gpu_header(&hdr);
	tick(&gb, &pb, 0, 1);
	size_t row = gb.len;
	/* room for the header and exactly three rows per file */
	struct log_writer_opts o = {.path = path_of("r.csv"), .procs = 1,
				    .rotate_bytes = hdr.len + 3 * row, .keep = 2};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	for (int k = 0; k < 10; k++) {
		tick(&gb, &pb, 1000 * k, (uint64_t)k);
		assert_int_equal(gb.len, row);
		assert_int_equal(log_writer_tick(w, &gb, &pb, err, sizeof err), 0);
	}
	assert_int_equal(log_writer_rotations(w), 3);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	/* ticks 9 | 6 7 8 in .1 | 3 4 5 in .2 | 0 1 2 deleted (keep 2) */
	int64_t first = -1;
	unsigned procs = 0;
	assert_int_equal(count_ticks(o.path, &first, &procs), 1);
	assert_int_equal(first, 9000);
	assert_int_equal(procs, 1);
	struct stat st;
	assert_int_equal(stat(path_of("r.1.csv"), &st), 0);
	assert_int_equal((size_t)st.st_size, hdr.len + 3 * row); /* exactly at the limit */
	procs = 0;
	assert_int_equal(count_ticks(path_of("r.1.csv"), &first, &procs), 3);
	assert_int_equal(first, 6000);
	assert_int_equal(procs, 3);
	assert_int_equal(count_ticks(path_of("r.2.csv"), &first, NULL), 3);
	assert_int_equal(first, 3000);
	assert_int_equal(stat(path_of("r.2.procs.csv"), &st), 0);
	assert_int_not_equal(stat(path_of("r.3.csv"), &st), 0);
	assert_int_not_equal(stat(path_of("r.3.procs.csv"), &st), 0);
	/* keep 0: the full file is dropped, no numbered files */
	o.path = path_of("k0.csv");
	o.keep = 0;
	o.procs = 0;
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	for (int k = 0; k < 7; k++) {
		tick(&gb, NULL, 1000 * k, 1);
		assert_int_equal(log_writer_tick(w, &gb, NULL, err, sizeof err), 0);
	}
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	assert_int_equal(count_ticks(o.path, &first, NULL), 1);
	assert_int_equal(first, 6000);
	assert_int_not_equal(stat(path_of("k0.1.csv"), &st), 0);
	logbuf_free(&gb);
	logbuf_free(&pb);
	logbuf_free(&hdr);
}

static void test_replay_backend(void **state)
{
	/* recorded with -g 1,3: GPUs 0 and 2 do not exist in the replay */
	const char *p = path_of("rp.csv");
	FILE *f = fopen(p, "w");
	fputs("time,gpu,uuid,name,lost,proc_count,mem_used_bytes\n"
	      "2026-11-30T01:00:00.000Z,1,GPU-b,H200,0,1,100\n"
	      "2026-11-30T01:00:00.000Z,3,GPU-d,H200,0,0,300\n"
	      "2026-11-30T01:00:01.000Z,1,GPU-b,H200,0,1,110\n"
	      "2026-11-30T01:00:01.000Z,3,GPU-d,H200,1,,\n",
	      f);
	fclose(f);
	f = fopen(path_of("rp.procs.csv"), "w");
	fputs("time,gpu,pid,user,uid,used_bytes,command\n"
	      "2026-11-30T01:00:00.000Z,1,4242,alice,1000,100,\"python, again\"\n"
	      "2026-11-30T01:00:01.000Z,1,4242,alice,1000,110,\"python, again\"\n",
	      f);
	fclose(f);
	vramz_ctx *ctx;
	const vramz_snapshot *s;
	vramz_open_opts o = {.size = sizeof o, .replay_path = p};
	assert_int_equal(vramz_open(&ctx, &o), 0);
	assert_string_equal(vramz_system(ctx)->backend, "replay");
	assert_int_equal(vramz_selected_count(ctx), 2);
	assert_int_equal(vramz_selected_index(ctx, 0), 1);
	assert_string_equal(vramz_gpu(ctx, 3)->uuid, "GPU-d");
	assert_int_equal(vramz_select(ctx, "GPU-d"), 0);
	assert_int_equal(vramz_select(ctx, NULL), 0);
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &s), 0);
	assert_int_equal(s->time_ms, 1796000400000);
	assert_int_equal(s->gpus[0].mem_used_bytes, 100);
	assert_int_equal(s->proc_count, 1);
	assert_string_equal(s->procs[0].user, "alice"); /* as recorded, not this /proc */
	assert_string_equal(s->procs[0].cmdline, "python, again");
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &s), 0);
	assert_int_equal(s->time_ms, 1796000401000);
	assert_int_equal(s->gpus[1].lost, 1);
	assert_int_equal(vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &s), VRAMZ_EEOF);
	vramz_close(ctx);

	/* a malformed log: the open names FILE:LINE */
	f = fopen(p, "w");
	fputs("time,gpu\nyesterday,0\n", f);
	fclose(f);
	assert_int_equal(vramz_open(&ctx, &o), VRAMZ_EPARSE);
	assert_non_null(strstr(vramz_last_error(ctx), "rp.csv:2: bad time 'yesterday'"));
	vramz_close(ctx);
	/* no samples at all */
	f = fopen(p, "w");
	fputs("time,gpu\n", f);
	fclose(f);
	assert_int_equal(vramz_open(&ctx, &o), VRAMZ_EEOF);
	assert_non_null(strstr(vramz_last_error(ctx), "holds no samples"));
	vramz_close(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_and_refuse),
		cmocka_unit_test(test_dev_full),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_replay_backend),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
