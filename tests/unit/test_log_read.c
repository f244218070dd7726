/* SPDX-License-Identifier: Apache-2.0 */
/* test_log_read.c - the CSV log's text and its reader: times, names,
 * quoting, a formatted tick read back field for field, and every way a
 * malformed file is refused with FILE:LINE and a reason a person can act
 * on.  (Writing files, rotation and replay: test_log_write.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tmpdir.h"

#include "fields.h"
#include "logfile.h"
#include "vramz/log.h"

static char dir[TMPDIR_LEN];

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, "logread");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static const char *put(const char *name, const char *text)
{
	static char path[2][128];
	static int k;
	char *p = path[k++ & 1];
	snprintf(p, 128, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* ---- time, names, quoting ---- */

static void test_time(void **state)
{
	char b[LOG_TIME_LEN + 1];
	int64_t ms;
	assert_int_equal(log_parse_time("2026-11-30T01:32:33.123Z", 24, &ms), 0);
	log_fmt_time(b, ms);
	assert_string_equal(b, "2026-11-30T01:32:33.123Z");
	assert_int_equal(log_parse_time("1970-01-01T00:00:00Z", 20, &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(log_parse_time("2024-02-29T23:59:59.5Z", 22, &ms), 0);
	log_fmt_time(b, ms);
	assert_string_equal(b, "2024-02-29T23:59:59.500Z");
	assert_int_equal(log_parse_time("2024-02-29 23:59:59.123456789Z", 30, &ms), 0);
	assert_int_equal(ms % 1000, 123);
	log_fmt_time(b, -1);
	assert_string_equal(b, "1969-12-31T23:59:59.999Z");
	static const char *bad[] = {
		"2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-31T00:00:00Z",
		"2026-11-30T24:00:00Z", "2026-11-30T01:32:33.123", "2026-11-30T01:32:33.Z",
		"2026-11-30T01:32:33.1234567890Z", "20261130T013233Z", "2026-11-30T01:32:3x.123Z",
		"",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(log_parse_time(bad[i], strlen(bad[i]), &ms), VRAMZ_EPARSE);
}

static void test_names(void **state)
{
	char b[128];
	log_sibling_path("/var/log/vramz/gpu.csv", b, sizeof b);
	assert_string_equal(b, "/var/log/vramz/gpu.procs.csv");
	log_sibling_path("run.d/gpu", b, sizeof b);
	assert_string_equal(b, "run.d/gpu.procs");
	log_sibling_path(".hidden", b, sizeof b);
	assert_string_equal(b, ".hidden.procs");
	log_rotated_path("gpu.csv", 12, b, sizeof b);
	assert_string_equal(b, "gpu.12.csv");
	log_rotated_path("gpu", 1, b, sizeof b);
	assert_string_equal(b, "gpu.1");
	assert_int_equal(log_sibling_path("gpu.csv", b, 8), VRAMZ_ERANGE);
}

static void test_quoting(void **state)
{
	struct logbuf b = {0};
	log_put_str(&b, "plain");
	log_put_str(&b, "|");
	log_put_str(&b, "python train.py --lr=1e-3,2e-3");
	log_put_str(&b, "|");
	log_put_str(&b, "echo \"hi\"\nrm -rf");
	log_put_str(&b, "|");
	log_put_str(&b, " lead");
	logbuf_reserve(&b, 1);
	b.p[b.len] = 0;
	assert_string_equal(b.p, "plain|\"python train.py --lr=1e-3,2e-3\"|"
				 "\"echo \"\"hi\"\" rm -rf\"|\" lead\"");
	logbuf_free(&b);
}

/* ---- a tick formatted, then read back ---- */

static vramz_gpu_info infos[4];

static const vramz_gpu_info *info_of(void *arg, unsigned idx)
{
	return idx < 4 ? &infos[idx] : NULL;
}

static void fill(vramz_gpu_sample *g, unsigned idx, int k)
{
	memset(g, 0, sizeof *g);
	g->index = idx;
	/* distinct values, each inside its field's plausible range (an
	 * out-of-range one would read back unknown: test_log_ranges) */
	for (size_t f = 0; f < gpu_field_count; f++) {
		const struct field *fd = &gpu_fields[f];
		uint64_t span = fd->max - (uint64_t)fd->min;
		uint64_t v = (uint64_t)(f * 1000 + idx * 7 + (unsigned)k);
		field_set(fd, g, fd->min + (int64_t)(span < 1000000 ? v % (span + 1) : v));
	}
	g->mem_total_bytes = 1ull << 40; /* above the other memory fields */
	g->throttle_reasons = UINT64_MAX - 1; /* the full unsigned range */
	g->valid &= ~(uint32_t)VRAMZ_F_FAN; /* unknown: an empty cell */
	g->valid |= VRAMZ_F_PROCS;
}

static void test_round_trip(void **state)
{
	vramz_gpu_sample g[3];
	vramz_proc_sample p[3];
	memset(p, 0, sizeof p);
	for (unsigned i = 0; i < 4; i++) {
		infos[i].index = i;
		snprintf(infos[i].uuid, sizeof infos[i].uuid, "GPU-%u-aaaa", i);
		snprintf(infos[i].name, sizeof infos[i].name, "NVIDIA H200, rev %u", i);
		snprintf(infos[i].pci_bus_id, sizeof infos[i].pci_bus_id, "00000000:%02X:00.0", i);
	}
	/* GPU 3 before GPU 1 (a -g 3,1 selection), GPU 2 lost */
	p[0].gpu_index = 3;
	p[0].pid = 4242;
	p[0].type = VRAMZ_PT_COMPUTE | VRAMZ_PT_GRAPHICS;
	p[0].valid = VRAMZ_P_USED | VRAMZ_P_SM | VRAMZ_P_VISIBLE;
	p[0].used_bytes = 61ull << 30;
	p[0].sm_pct = 55;
	p[0].uid = 1000;
	p[0].start_time_ticks = 123456789;
	strcpy(p[0].user, "alice");
	strcpy(p[0].comm, "python3");
	strcpy(p[0].cmdline, "python3 -c \"print(1,2)\"");
	strcpy(p[0].container, "0123456789ab");
	p[1].gpu_index = 1;
	p[1].pid = 77; /* another namespace: nothing but the pid and memory */
	p[1].valid = VRAMZ_P_USED;
	p[1].used_bytes = 1 << 20;
	p[2] = p[0];
	p[2].gpu_index = 1;
	p[2].used_bytes = 63ull << 30;
	struct logbuf gb = {0}, pb = {0};
	log_gpu_header(&gb);
	log_proc_header(&pb);
	for (int k = 0; k < 3; k++) {
		fill(&g[0], 3, k);
		fill(&g[1], 1, k);
		memset(&g[2], 0, sizeof g[2]);
		g[2].index = 2;
		g[2].lost = 1;
		g[0].proc_first = 0;
		g[0].proc_count = 1;
		g[1].proc_first = 1;
		g[1].proc_count = 2;
		vramz_snapshot s = {.time_ms = 1796000000000 + k * 100, .gpu_count = 3, .gpus = g,
				    .proc_count = 3, .procs = p};
		assert_int_equal(log_format_tick(&gb, &pb, &s, info_of, NULL), 0);
	}
	gb.p[gb.len] = 0;
	pb.p[pb.len] = 0;
	const char *path = put("rt.csv", gb.p);
	put("rt.procs.csv", pb.p);
	logbuf_free(&gb);
	logbuf_free(&pb);

	vramz_log_reader *r;
	const vramz_snapshot *s;
	assert_int_equal(vramz_log_open(&r, path), 0);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(vramz_log_next(r, &s), 1);
		assert_int_equal(s->time_ms, 1796000000000 + k * 100);
		assert_int_equal(s->gpu_count, 3);
		fill(&g[0], 3, k);
		fill(&g[1], 1, k);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(s->gpus[i].index, g[i].index);
			assert_int_equal(s->gpus[i].valid, g[i].valid);
			for (size_t f = 0; f < gpu_field_count; f++)
				if (field_valid(&gpu_fields[f], &g[i]))
					assert_true(field_get(&gpu_fields[f], &s->gpus[i]) ==
						    field_get(&gpu_fields[f], &g[i]));
		}
		assert_int_equal(s->gpus[2].lost, 1);
		assert_int_equal(s->gpus[2].valid, 0);
		assert_int_equal(s->proc_count, 3);
		assert_int_equal(s->gpus[0].proc_count, 1);
		assert_int_equal(s->gpus[1].proc_count, 2);
		const vramz_proc_sample *q = &s->procs[s->gpus[0].proc_first];
		assert_int_equal(q->pid, 4242);
		assert_int_equal(q->gpu_index, 3);
		assert_int_equal(q->valid, p[0].valid);
		assert_int_equal(q->type, p[0].type);
		assert_true(q->used_bytes == 61ull << 30);
		assert_int_equal(q->start_time_ticks, 123456789);
		assert_string_equal(q->cmdline, "python3 -c \"print(1,2)\"");
		assert_string_equal(q->container, "0123456789ab");
		assert_string_equal(q->user, "alice");
		q = &s->procs[s->gpus[1].proc_first];
		assert_int_equal(q->pid, 77);
		assert_int_equal(q->valid, VRAMZ_P_USED);
		assert_string_equal(q->user, "");
	}
	assert_int_equal(vramz_log_next(r, &s), 0);
	assert_int_equal(vramz_log_gpu_count(r), 4);
	assert_null(vramz_log_gpu(r, 0));
	assert_string_equal(vramz_log_gpu(r, 3)->name, "NVIDIA H200, rev 3");
	assert_string_equal(vramz_log_gpu(r, 1)->pci_bus_id, "00000000:01:00.0");
	vramz_log_close(r);
}

/* ---- malformed input ---- */

#define HDR "time,gpu,uuid,lost,mem_used_bytes,temp_c\n"
#define ROW0 "2026-11-30T01:32:33.123Z,0,GPU-a,0,1000,40\n"
#define ROW1 "2026-11-30T01:32:33.123Z,1,GPU-b,0,2000,41\n"
#define ROW2 "2026-11-30T01:32:34.123Z,0,GPU-a,0,1100,40\n"

/* Reads path to its end; returns the last rc and the ticks seen. */
static int read_all(const char *path, int *ticks, char *err, size_t errlen)
{
	vramz_log_reader *r;
	const vramz_snapshot *s;
	int rc = vramz_log_open(&r, path);
	*ticks = 0;
	if (rc == 0)
		while ((rc = vramz_log_next(r, &s)) == 1)
			(*ticks)++;
	snprintf(err, errlen, "%s", vramz_log_error(r));
	vramz_log_close(r);
	return rc;
}

static void expect_error(const char *name, const char *text, const char *where,
			 const char *reason)
{
	char err[512], want[256];
	int ticks;
	const char *path = put(name, text);
	int rc = read_all(path, &ticks, err, sizeof err);
	if (rc != VRAMZ_EPARSE || !strstr(err, reason))
		fail_msg("%s: rc %d, error '%s', wanted '%s'", name, rc, err, reason);
	snprintf(want, sizeof want, "%s/%s", dir, where);
	if (strncmp(err, want, strlen(want)))
		fail_msg("%s: error '%s' does not start with '%s'", name, err, want);
}

static void test_malformed(void **state)
{
	expect_error("empty.csv", "", "empty.csv:1: ", "empty file");
	expect_error("nohdr.csv", "a,b,c\n1,2,3\n", "nohdr.csv:1: ", "no 'time' column");
	expect_error("num.csv", HDR ROW0 "2026-11-30T01:32:33.123Z,1,GPU-b,0,12x4,41\n",
		     "num.csv:3: ", "bad mem_used_bytes '12x4'");
	expect_error("neg.csv", HDR "2026-11-30T01:32:33.123Z,1,GPU-b,0,-1,41\n",
		     "neg.csv:2: ", "bad mem_used_bytes '-1'");
	expect_error("big.csv", HDR "2026-11-30T01:32:33.123Z,1,GPU-b,0,1,99999999999\n",
		     "big.csv:2: ", "bad temp_c");
	expect_error("cols.csv", HDR ROW0 "2026-11-30T01:32:33.123Z,1,GPU-b,0,2000\n",
		     "cols.csv:3: ", "5 columns, the header has 6");
	expect_error("cols2.csv", HDR ROW0 ROW1 "2026-11-30T01:32:34.123Z,1,GPU-b,0,2000,41,9\n",
		     "cols2.csv:4: ", "more than 6 columns");
	expect_error("time.csv", HDR "2026-11-30 01:32:33,0,GPU-a,0,1000,40\n",
		     "time.csv:2: ", "bad time '2026-11-30 01:32:33'");
	expect_error("gpu.csv", HDR "2026-11-30T01:32:33.123Z,zero,GPU-a,0,1000,40\n",
		     "gpu.csv:2: ", "bad gpu index 'zero'");
	expect_error("lost.csv", HDR "2026-11-30T01:32:33.123Z,0,GPU-a,yes,1000,40\n",
		     "lost.csv:2: ", "bad lost 'yes'");
	expect_error("quote.csv", HDR "2026-11-30T01:32:33.123Z,0,\"GPU-a,0,1000,40\n",
		     "quote.csv:2: ", "quote");
	expect_error("dup.csv", "time,gpu,gpu\n", "dup.csv:1: ", "column 'gpu' appears twice");
	/* a process of a GPU the GPU file has no row for at that time */
	put("unk.procs.csv", "time,gpu,pid,used_bytes\n"
			     "2026-11-30T01:32:33.123Z,5,100,1024\n");
	expect_error("unk.csv", HDR ROW0 ROW1, "unk.procs.csv:2: ",
		     "process of gpu 5, which has no row at 2026-11-30T01:32:33.123Z");
}

static void test_tolerated(void **state)
{
	char err[512];
	int ticks;
	/* header only: a log killed before its first tick */
	assert_int_equal(read_all(put("h.csv", HDR), &ticks, err, sizeof err), 0);
	assert_int_equal(ticks, 0);
	/* a torn last line ends the log; what came before reads */
	assert_int_equal(read_all(put("torn.csv", HDR ROW0 ROW1 "2026-11-30T01:32:34.1"),
				  &ticks, err, sizeof err), 0);
	assert_int_equal(ticks, 1);
	/* CRLF line ends (a spreadsheet saved it), a BOM, no final newline on the header */
	assert_int_equal(read_all(put("crlf.csv", "\xEF\xBB\xBFtime,gpu,mem_used_bytes\r\n"
						  "2026-11-30T01:32:33.123Z,0,5\r\n"),
				  &ticks, err, sizeof err), 0);
	assert_int_equal(ticks, 1);
	/* a newer vramz's extra columns are skipped; missing ones are unknown */
	vramz_log_reader *r;
	const vramz_snapshot *s;
	const char *p = put("new.csv", "gpu,flux_capacitor_pct,time,mem_used_bytes,hbm_secret\n"
				       "0,88,2026-11-30T01:32:33.123Z,1234,\"x,y\"\n"
				       "1,,2026-11-30T01:32:33.123Z,,z\n");
	assert_int_equal(vramz_log_open(&r, p), 0);
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->gpu_count, 2);
	assert_int_equal(s->gpus[0].mem_used_bytes, 1234);
	assert_int_equal(s->gpus[0].valid, VRAMZ_F_MEM);
	assert_int_equal(s->gpus[1].valid, 0);
	assert_int_equal(s->proc_count, 0);
	assert_int_equal(vramz_log_next(r, &s), 0);
	vramz_log_close(r);
	/* a repeated GPU at the same time starts a new tick */
	assert_int_equal(read_all(put("rep.csv", HDR ROW0 ROW0 ROW1), &ticks, err, sizeof err), 0);
	assert_int_equal(ticks, 2);
	/* an orphan process row (killed between the two writes) is skipped */
	put("orph.procs.csv", "time,gpu,pid\n"
			      "2026-11-30T01:32:32.000Z,0,1\n"
			      "2026-11-30T01:32:33.123Z,1,2\n");
	p = put("orph.csv", HDR ROW0 ROW1 ROW2);
	assert_int_equal(vramz_log_open(&r, p), 0);
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->proc_count, 1);
	assert_int_equal(s->procs[0].pid, 2);
	assert_int_equal(s->gpus[1].proc_count, 1);
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->proc_count, 0);
	vramz_log_close(r);
	/* a missing file: a plain error, not a parse error */
	assert_int_equal(vramz_log_open(&r, "/nonexistent/x.csv"), VRAMZ_ENOTFOUND);
	assert_non_null(strstr(vramz_log_error(r), "/nonexistent/x.csv: No such file"));
	vramz_log_close(r);
}

/* Rows the one-pass parser hands to the careful one (a quote, a '-', a
 * number of 20 digits, a CR) read as the same numbers and text as plain
 * rows; and a tick whose process rows are not in the order of its GPU
 * rows still gives each GPU its own processes. */
static void test_plain_and_careful(void **state)
{
	vramz_log_reader *r;
	const vramz_snapshot *s;
	put("pc.procs.csv", "time,gpu,pid,type,user,used_bytes,command\n"
			    "2026-11-30T01:32:33.123Z,1,20,compute,bob,2048,\"b, quoted\"\n"
			    "2026-11-30T01:32:33.123Z,0,10,compute+graphics,al,1024,plain a\n"
			    "2026-11-30T01:32:33.123Z,1,21,graphics,bob,00004096,b2\n"
			    "2026-11-30T01:32:34.123Z,0,10,compute,al,1025,plain a\r\n"
			    "2026-11-30T01:32:34.123Z,1,20,compute,bob,2049,b2\n"
			    "2026-11-30T01:32:35.123Z,1,20,compute,bob,2049,b2\n"
			    "2026-11-30T01:32:36.123Z,1,20,compute,bob,2049,b, no quote\n");
	const char *p = put("pc.csv",
		"time,gpu,uuid,name,lost,proc_count,mem_total_bytes,mem_used_bytes,"
		"temp_c,throttle_reasons\n"
		"2026-11-30T01:32:33.123Z,0,GPU-a,\"H200, rev 3\",0,1,2000,1000,-5,"
		"18446744073709551615\n"
		"2026-11-30T01:32:33.123Z,1,GPU-b,H200,0,2,2000,1999,41,9223372036854775807\n"
		"2026-11-30T01:32:34.123Z,0,GPU-a,\"H200, rev 3\",0,1,2000,1001,40,0\r\n"
		"2026-11-30T01:32:34.123Z,1,GPU-b,H200,,1,2000,00000000000000001998,41,\n"
		"2026-11-30T01:32:35.123Z,0,GPU-a,H200,0,0,2000,1000,40,0\n"
		"2026-11-30T01:32:35.123Z,1,GPU-b,H200,0,1,2000,1000,40,0\n"
		"2026-11-30T01:32:36.123Z,1,GPU-b,H200,0,1,2000,1000,40,0\n");
	assert_int_equal(vramz_log_open(&r, p), 0);
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->gpu_count, 2);
	assert_int_equal(s->gpus[0].temp_c, -5);
	assert_int_equal(s->gpus[0].throttle_reasons, UINT64_MAX);
	assert_int_equal(s->gpus[1].throttle_reasons, INT64_MAX);
	assert_int_equal(s->gpus[1].mem_used_bytes, 1999);
	assert_string_equal(vramz_log_gpu(r, 0)->name, "H200, rev 3");
	assert_string_equal(vramz_log_gpu(r, 1)->name, "H200");
	/* GPU 1's processes came first in the file: each GPU gets its own */
	assert_int_equal(s->proc_count, 3);
	const vramz_gpu_sample *g0 = &s->gpus[0], *g1 = &s->gpus[1];
	assert_int_equal(g0->proc_count, 1);
	assert_int_equal(s->procs[g0->proc_first].pid, 10);
	assert_int_equal(s->procs[g0->proc_first].type, VRAMZ_PT_COMPUTE | VRAMZ_PT_GRAPHICS);
	assert_string_equal(s->procs[g0->proc_first].cmdline, "plain a");
	assert_int_equal(g1->proc_count, 2);
	assert_int_equal(s->procs[g1->proc_first].pid, 20);
	assert_string_equal(s->procs[g1->proc_first].cmdline, "b, quoted");
	assert_int_equal(s->procs[g1->proc_first + 1].pid, 21);
	assert_int_equal(s->procs[g1->proc_first + 1].used_bytes, 4096);
	assert_int_equal(s->procs[g1->proc_first + 1].type, VRAMZ_PT_GRAPHICS);
	/* the next tick: a CR line end, 20 digits with leading zeros, empty
	 * cells unknown; then a row with more cells than the header refused
	 * (reading ahead from the tick before it) */
	assert_int_equal(vramz_log_next(r, &s), 1);
	assert_int_equal(s->gpus[0].mem_used_bytes, 1001);
	assert_int_equal(s->gpus[0].temp_c, 40);
	assert_int_equal(s->gpus[1].mem_used_bytes, 1998);
	assert_false(s->gpus[1].valid & VRAMZ_F_THROTTLE);
	assert_int_equal(s->gpus[0].proc_count, 1);
	assert_int_equal(s->procs[s->gpus[0].proc_first].used_bytes, 1025);
	assert_string_equal(s->procs[s->gpus[0].proc_first].user, "al");
	assert_int_equal(s->procs[s->gpus[1].proc_first].used_bytes, 2049);
	assert_int_equal(vramz_log_next(r, &s), VRAMZ_EPARSE);
	assert_non_null(strstr(vramz_log_error(r), "pc.procs.csv:8: more than 7 columns"));
	vramz_log_close(r);
}

/* A clock stepped back an hour between two ticks: both read, each with
 * its own processes (none dropped as "a tick the GPU file lacks"), and the
 * reader says which line the tick after the step starts on. */
static void test_clock_step_back(void **state)
{
	vramz_log_reader *r;
	const vramz_snapshot *s;
	put("step.procs.csv", "time,gpu,pid\n"
			      "2026-11-30T02:00:00.000Z,0,10\n"
			      "2026-11-30T02:00:01.000Z,0,11\n"
			      "2026-11-30T01:00:02.000Z,0,12\n"
			      "2026-11-30T01:00:03.000Z,0,13\n");
	const char *p = put("step.csv", "time,gpu,mem_used_bytes\n"
					"2026-11-30T02:00:00.000Z,0,1\n"
					"2026-11-30T02:00:01.000Z,0,2\n"
					"2026-11-30T01:00:02.000Z,0,3\n"
					"2026-11-30T01:00:03.000Z,0,4\n");
	assert_int_equal(vramz_log_open(&r, p), 0);
	for (unsigned k = 0; k < 4; k++) {
		assert_int_equal(vramz_log_next(r, &s), 1);
		assert_int_equal(vramz_log_tick_line(r), k + 2);
		assert_int_equal(s->gpus[0].mem_used_bytes, k + 1);
		assert_int_equal(s->proc_count, 1);
		assert_int_equal(s->procs[0].pid, 10 + k);
	}
	assert_int_equal(vramz_log_next(r, &s), 0);
	vramz_log_close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_tolerated),
		cmocka_unit_test(test_clock_step_back),
		cmocka_unit_test(test_plain_and_careful),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
