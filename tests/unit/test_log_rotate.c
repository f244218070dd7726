/* SPDX-License-Identifier: Apache-2.0 */
/* test_log_rotate.c - what a kill can leave of a log and what happens next
 * (issue 12 items 3, 4 and 9): every state a kill -9 mid-rotation can
 * leave, read back (never a tick whose processes silently vanish) and
 * repaired by the next open; a GPU file paired with another run's process
 * file, said so; a header cut short by a full disk, rewritten; --keep
 * bounded; --procs refused for a FILE that is not a regular file. */
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

#include "format/logwrite.h"
#include "vramz/log.h"

static char dir[TMPDIR_LEN];

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, "logrot");
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

static int exists(const char *name)
{
	struct stat st;
	return stat(path_of(name), &st) == 0;
}

static void clean(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
	assert_int_equal(system(cmd), 0);
}

static vramz_gpu_info info0 = {.index = 0, .uuid = "GPU-0000", .name = "NVIDIA H200"};

static const vramz_gpu_info *info_of(void *arg, unsigned idx)
{
	(void)arg;
	(void)idx;
	return &info0;
}

/* One tick of one GPU with one process whose usage is k (so every tick's
 * process row can be told from every other's). */
static void tick(struct logbuf *gb, struct logbuf *pb, int k)
{
	vramz_gpu_sample g = {.index = 0, .valid = VRAMZ_F_MEM | VRAMZ_F_PROCS,
			      .mem_total_bytes = 100ull << 30, .mem_used_bytes = (uint64_t)k,
			      .mem_free_bytes = (100ull << 30) - (uint64_t)k, .proc_count = 1};
	vramz_proc_sample p = {.gpu_index = 0, .pid = 99, .valid = VRAMZ_P_USED,
			       .used_bytes = (uint64_t)k};
	vramz_snapshot s = {.time_ms = 1000 * (int64_t)k, .gpu_count = 1, .gpus = &g,
			    .proc_count = 1, .procs = &p};
	gb->len = pb->len = 0;
	assert_int_equal(log_format_tick(gb, pb, &s, info_of, NULL), 0);
}

/* Writes ticks [from, to) to r.csv with --procs, 3 rows a file, keep 2. */
static void write_ticks(int from, int to)
{
	char err[512];
	struct log_writer *w;
	struct logbuf gb = {0}, pb = {0}, hdr = {0};
	log_gpu_header(&hdr);
	tick(&gb, &pb, 0);
	struct log_writer_opts o = {.path = path_of("r.csv"), .procs = 1,
				    .rotate_bytes = hdr.len + 3 * gb.len, .keep = 2};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	for (int k = from; k < to; k++) {
		tick(&gb, &pb, k);
		assert_int_equal(log_writer_tick(w, &gb, &pb, err, sizeof err), 0);
	}
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	logbuf_free(&gb);
	logbuf_free(&pb);
	logbuf_free(&hdr);
}

struct readback {
	int ticks, with_procs, silent; /* silent: procs known, yet none */
	int error;                     /* the reader refused, saying why */
	unsigned mask;                 /* bit k: tick k read */
};

static struct readback read_log(const char *name)
{
	struct readback b = {0};
	vramz_log_reader *r;
	const vramz_snapshot *s;
	int rc = vramz_log_open(&r, path_of(name));
	assert_int_equal(rc, 0);
	while ((rc = vramz_log_next(r, &s)) == 1) {
		int k = (int)(s->time_ms / 1000);
		b.ticks++;
		b.mask |= 1u << k;
		if (s->proc_count == 1 && s->procs[0].used_bytes == (uint64_t)k)
			b.with_procs++;
		else if (s->gpus[0].valid & VRAMZ_F_PROCS)
			b.silent++;
		else
			assert_int_equal(s->proc_count, 0); /* processes unknown */
	}
	if (rc < 0) {
		assert_non_null(strstr(vramz_log_error(r), "is not this log's pair"));
		b.error = 1;
	}
	vramz_log_close(r);
	return b;
}

static const char *const gpu_names[] = {"r.csv", "r.1.csv", "r.2.csv", "r.3.csv"};

/* Every prefix of the rotation's steps is a state a kill can leave.  In
 * each, every GPU file reads back with its own processes or with them
 * unknown (no sibling), never with them silently missing; the next open
 * repairs the set, after which every file has its own processes and
 * every tick that rotation keeps is still there. */
static void test_crash_states(void **state)
{
	(void)state;
	unsigned steps = 0;
	while (1) {
		clean();
		write_ticks(0, 9); /* 6 7 8 | .1: 3 4 5 | .2: 0 1 2 */
		int done = 0;
		unsigned top = log_rotation_top(path_of("r.csv"), 2);
		assert_int_equal(top, 3); /* every level there: .2 goes */
		for (unsigned s = 0; s < steps; s++) {
			int rc = log_rotation_step(path_of("r.csv"), 2, top, 1, s, NULL, 0);
			assert_true(rc >= 0);
			done |= rc == 1;
		}
		if (done)
			break;
		unsigned seen = 0;
		for (unsigned i = 0; i < 4; i++) {
			if (!exists(gpu_names[i]))
				continue;
			struct readback b = read_log(gpu_names[i]);
			assert_int_equal(b.error, 0);
			assert_int_equal(b.silent, 0);
			seen |= b.mask;
		}
		/* a kill loses nothing but the level being deleted (0 1 2) */
		assert_int_equal(seen & 0x1f8, 0x1f8);
		/* the logger starts again: the set is repaired, then written
		 * to (a rotation when r.csv is still full fills the hole the
		 * killed one left, so nothing more is lost) */
		write_ticks(9, 10);
		seen = 0;
		for (unsigned i = 0; i < 4; i++) {
			if (!exists(gpu_names[i]))
				continue;
			struct readback b = read_log(gpu_names[i]);
			assert_int_equal(b.error, 0);
			assert_int_equal(b.with_procs, b.ticks);
			seen |= b.mask;
		}
		assert_int_equal(seen & 0x3f8, 0x3f8);
		steps++;
	}
	assert_int_equal(steps, 7); /* before, and after each of 6 steps:
				       delete a pair, move 2 pairs */
}

/* A whole rotation, step by step, its notes in note. */
static void top_step_all(char *note, size_t len)
{
	unsigned top = log_rotation_top(path_of("r.csv"), 2);
	for (unsigned s = 0; log_rotation_step(path_of("r.csv"), 2, top, 1, s, note, len) == 0; s++)
		;
}

/* Issue 25, item 5: two kills.  The first in a rotation's delete (r.2.csv
 * gone, its process file not yet), the second in the next rotation's first
 * move (r.1.csv moved up to fill that hole, its process file not yet):
 * r.2.csv sits beside an older process file, its own one level down.  The
 * next open puts the real one back and sets the older aside (saying so),
 * and the rotation after overwrites neither. */
static void test_two_kills(void **state)
{
	(void)state;
	clean();
	write_ticks(0, 9); /* 6 7 8 | .1: 3 4 5 | .2: 0 1 2 */
	unsigned top = log_rotation_top(path_of("r.csv"), 2);
	assert_int_equal(log_rotation_step(path_of("r.csv"), 2, top, 1, 0, NULL, 0), 0);
	top = log_rotation_top(path_of("r.csv"), 2);
	assert_int_equal(top, 2); /* the hole the first kill left */
	assert_int_equal(log_rotation_step(path_of("r.csv"), 2, top, 1, 0, NULL, 0), 0);
	assert_true(exists("r.2.csv") && exists("r.2.procs.csv") && !exists("r.1.csv"));
	assert_int_equal(read_log("r.2.csv").error, 1); /* 3 4 5 beside 0 1 2 */

	char note[1024] = "";
	assert_int_equal(log_rotation_repair(path_of("r.csv"), 2, note, sizeof note), 1);
	assert_non_null(strstr(note, "r.2.procs.csv is older than its GPU file: set aside as "));
	assert_non_null(strstr(note, "r.1.procs.csv: put back as "));
	assert_true(exists("r.2.procs.csv.unpaired") && !exists("r.1.procs.csv"));
	struct readback b = read_log("r.2.csv");
	assert_int_equal(b.error, 0);
	assert_int_equal(b.with_procs, 3);
	assert_int_equal(b.mask, 0x38);

	write_ticks(9, 10); /* a rotation: r.csv's pair moves to the hole */
	unsigned seen = 0;
	for (unsigned i = 0; i < 3; i++) {
		b = read_log(gpu_names[i]);
		assert_int_equal(b.error, 0);
		assert_int_equal(b.with_procs, b.ticks);
		seen |= b.mask;
	}
	assert_int_equal(seen, 0x3f8); /* 3 .. 9, each with its processes */
}

/* A process file whose GPU file is gone (a kill in a delete) or that holds
 * another run's rows is set aside at open, never appended to or moved over
 * a real one; a rotation step does not overwrite one in its way. */
static void test_unpaired_set_aside(void **state)
{
	(void)state;
	clean();
	write_ticks(0, 6); /* 3 4 5 | .1: 0 1 2 */
	assert_int_equal(unlink(path_of("r.1.csv")), 0);
	assert_int_equal(rename(path_of("r.procs.csv"), path_of("x.procs.csv")), 0);
	FILE *f = fopen(path_of("r.procs.csv"), "w");
	struct logbuf hdr = {0};
	log_proc_header(&hdr);
	fwrite(hdr.p, 1, hdr.len, f);
	fputs("1969-12-31T23:00:00.000Z,0,,99,compute\n", f); /* older than r.csv */
	fclose(f);
	logbuf_free(&hdr);
	char note[1024] = "";
	assert_int_equal(log_rotation_repair(path_of("r.csv"), 2, note, sizeof note), 2);
	assert_non_null(strstr(note, "r.procs.csv holds other times than its GPU file"));
	assert_non_null(strstr(note, "r.1.procs.csv has no GPU file"));
	assert_true(exists("r.procs.csv.unpaired") && exists("r.1.procs.csv.unpaired"));
	/* a rotation step with a process file in its way sets it aside */
	assert_int_equal(rename(path_of("x.procs.csv"), path_of("r.procs.csv")), 0);
	f = fopen(path_of("r.1.procs.csv"), "w");
	fclose(f);
	note[0] = 0;
	top_step_all(note, sizeof note);
	assert_non_null(strstr(note, "r.1.procs.csv was in the way of a rotation: set aside as "));
	assert_true(exists("r.1.procs.csv.unpaired.2"));
	assert_int_equal(read_log("r.1.csv").with_procs, 3);
}

/* The files of an interrupted rotation of an older vramz (which moved all
 * GPU files first, then all siblings): r.1.csv paired with the process
 * rows of other ticks.  Said so, never read as ticks without processes. */
static void test_mismatch_said(void **state)
{
	(void)state;
	clean();
	write_ticks(0, 6); /* 3 4 5 | .1: 0 1 2 */
	assert_int_equal(rename(path_of("r.1.procs.csv"), path_of("x.procs.csv")), 0);
	assert_int_equal(rename(path_of("r.procs.csv"), path_of("r.1.procs.csv")), 0);
	struct readback b = read_log("r.1.csv");
	assert_int_equal(b.error, 1);
	assert_int_equal(b.with_procs, 0);
	/* and the other way round: newer GPU rows, older process rows */
	assert_int_equal(rename(path_of("r.1.procs.csv"), path_of("r.procs.csv")), 0);
	assert_int_equal(rename(path_of("x.procs.csv"), path_of("r.procs.csv")), 0);
	b = read_log("r.csv");
	assert_int_equal(b.error, 1);
}

/* Two ticks at the same millisecond (`run` writes its last sample once
 * more): each gets its own process rows, split by the counts the GPU rows
 * list; one row more than listed is said. */
static void test_repeated_time(void **state)
{
	(void)state;
	clean();
	FILE *f = fopen(path_of("d.csv"), "w");
	fputs("time,gpu,lost,proc_count,mem_used_bytes\n"
	      "2026-11-30T01:00:00.000Z,0,0,1,100\n"
	      "2026-11-30T01:00:00.000Z,0,0,1,100\n"
	      "2026-11-30T01:00:01.000Z,0,0,1,100\n",
	      f);
	fclose(f);
	f = fopen(path_of("d.procs.csv"), "w");
	fputs("time,gpu,pid,used_bytes\n"
	      "2026-11-30T01:00:00.000Z,0,7,100\n"
	      "2026-11-30T01:00:00.000Z,0,7,100\n"
	      "2026-11-30T01:00:01.000Z,0,7,100\n",
	      f);
	fclose(f);
	vramz_log_reader *r;
	const vramz_snapshot *s;
	assert_int_equal(vramz_log_open(&r, path_of("d.csv")), 0);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(vramz_log_next(r, &s), 1);
		assert_int_equal(s->proc_count, 1);
	}
	assert_int_equal(vramz_log_next(r, &s), 0);
	vramz_log_close(r);
	/* a row more than the first second lists */
	f = fopen(path_of("d.procs.csv"), "w");
	fputs("time,gpu,pid,used_bytes\n"
	      "2026-11-30T01:00:00.000Z,0,7,100\n"
	      "2026-11-30T01:00:00.000Z,0,7,100\n"
	      "2026-11-30T01:00:00.000Z,0,8,100\n"
	      "2026-11-30T01:00:01.000Z,0,7,100\n",
	      f);
	fclose(f);
	assert_int_equal(vramz_log_open(&r, path_of("d.csv")), 0);
	int rc;
	while ((rc = vramz_log_next(r, &s)) == 1)
		;
	assert_int_equal(rc, VRAMZ_EPARSE);
	assert_non_null(strstr(vramz_log_error(r), "is not this log's pair"));
	vramz_log_close(r);
}

/* A full disk cut the header short: rewritten on the next open, since a
 * file holding a prefix of our header holds no data; a cut-short first
 * line that is not ours is refused with that reason. */
static void test_torn_header(void **state)
{
	(void)state;
	char err[512];
	struct log_writer *w;
	struct logbuf hdr = {0}, gb = {0}, pb = {0};
	log_gpu_header(&hdr);
	clean();
	FILE *f = fopen(path_of("t.csv"), "w");
	fwrite(hdr.p, 1, hdr.len / 2, f);
	fclose(f);
	struct log_writer_opts o = {.path = path_of("t.csv")};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	tick(&gb, &pb, 1);
	assert_int_equal(log_writer_tick(w, &gb, NULL, err, sizeof err), 0);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
	vramz_log_reader *r;
	const vramz_snapshot *s;
	assert_int_equal(vramz_log_open(&r, o.path), 0);
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->time_ms, 1000);
	assert_int_equal(vramz_log_next(r, &s), 0);
	vramz_log_close(r);

	f = fopen(path_of("u.csv"), "w");
	fputs("date,pri", f);
	fclose(f);
	o.path = path_of("u.csv");
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EPARSE);
	log_writer_close(w, err + 256, 256);
	assert_non_null(strstr(err, "u.csv: its first line is cut short"));
	logbuf_free(&hdr);
	logbuf_free(&gb);
	logbuf_free(&pb);
}

static void test_keep_bound(void **state)
{
	(void)state;
	char err[512];
	struct log_writer *w;
	struct log_writer_opts o = {.path = path_of("k.csv"), .rotate_bytes = 1000,
				    .keep = 4294967295u};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EINVAL);
	log_writer_close(w, err + 256, 256);
	assert_string_equal(err, "--keep 4294967295: at most 1000 rotated files");
	assert_false(exists("k.csv"));
	o.keep = LOG_KEEP_MAX;
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), 0);
	assert_int_equal(log_writer_close(w, err, sizeof err), 0);
}

/* `log -o /dev/stdout --procs` made /dev/stdout.procs: a FILE that is not
 * a regular file has no sibling; refused before anything is written. */
static void test_procs_need_regular_file(void **state)
{
	(void)state;
	char err[512];
	struct log_writer *w;
	clean();
	assert_int_equal(mkfifo(path_of("fifo"), 0600), 0);
	struct log_writer_opts o = {.path = path_of("fifo"), .procs = 1};
	assert_int_equal(log_writer_open(&w, &o, err, sizeof err), VRAMZ_EINVAL);
	log_writer_close(w, err + 256, 256);
	assert_non_null(strstr(err, "fifo: not a regular file"));
	assert_false(exists("fifo.procs"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_states),
		cmocka_unit_test(test_mismatch_said),
		cmocka_unit_test(test_two_kills),
		cmocka_unit_test(test_unpaired_set_aside),
		cmocka_unit_test(test_repeated_time),
		cmocka_unit_test(test_torn_header),
		cmocka_unit_test(test_keep_bound),
		cmocka_unit_test(test_procs_need_regular_file),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
