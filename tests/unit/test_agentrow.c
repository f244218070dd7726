/* SPDX-License-Identifier: Apache-2.0 */
/* test_agentrow.c - a PyTorch agent's records in a log's events file
 * (issue 27: lib/log/agentrow.c, src/format/evfile.c) and the engine
 * judging a log by them (lib/diagnose/agentrec.c):
 *  - a record written and read back is the record the engine reads live:
 *    the end (how, status, exception, OOM), the OOM (line, bytes asked,
 *    cap, free, allocator figures, count, GPU) and the lines that held
 *    the memory, through paths with commas, quotes, colons and " in ";
 *  - rows that are not the agents' (Xid, a newer kind) and a torn last
 *    row are skipped; a driver row is as wide as the header;
 *  - the events file gets its header once and refuses another's;
 *  - an engine given the records says "died out of memory" with the line
 *    when the record says so, and nothing of an OOM when the record is a
 *    normal exit, however full the GPU was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agentrec.h"
#include "diag_sim.h"
#include "diagnose/detectors.h"
#include "format/evfile.h"
#include "tmpdir.h"

static char dir[TMPDIR_LEN];
static int setup(void **s) { (void)s; return tmpdir_make(dir, "agentrow"); }
static int teardown(void **s) { (void)s; return tmpdir_remove(dir); }

#define UUID0 "GPU-00000000-0000-4000-8000-000000000000"
#define UUID1 "GPU-11111111-0000-4000-8000-000000000000"

static void frame(struct agent_frame *f, const char *file, unsigned line, const char *func)
{
	snprintf(f->file, sizeof f->file, "%s", file);
	f->line = line;
	snprintf(f->func, sizeof f->func, "%s", func);
}

/* a death of an uncaught OOM on CUDA device 1 (UUID1), three holders of
 * which one is device 0's */
static void oom_death(struct agent_figures *f)
{
	memset(f, 0, sizeof *f);
	f->pid = 4242;
	f->start_time_ticks = 987654;
	f->ndev = 2;
	f->dev[0].cuda = 0;
	snprintf(f->dev[0].uuid, sizeof f->dev[0].uuid, UUID0);
	f->dev[1].cuda = 1;
	snprintf(f->dev[1].uuid, sizeof f->dev[1].uuid, UUID1);
	f->oom_valid = 1;
	f->oom_cuda = 1;
	f->oom_requested_bytes = 20ull << 30;
	f->oom_limit_bytes = 35ull << 30;
	f->oom_free_bytes = 9ull << 30;
	f->oom_has_free = 1;
	f->oom_allocated_bytes = 30ull << 30;
	f->oom_reserved_bytes = 31ull << 30;
	f->oom_count = 3;
	frame(&f->oom_at, "/home/a, \"b\"/x:y in z/model.py", 88, "forward");
	f->nholders = 3;
	f->holder[0] = (struct agent_holder){.cuda = 1, .bytes = 18ull << 30};
	frame(&f->holder[0].at, "/srv/data.py", 40, "load");
	f->holder[1] = (struct agent_holder){.cuda = 0, .bytes = 5ull << 30};
	frame(&f->holder[1].at, "/srv/other.py", 1, "elsewhere");
	f->holder[2] = (struct agent_holder){.cuda = -1, .bytes = 1ull << 30};
	frame(&f->holder[2].at, "/srv/cache.py", 7, "<module>");
	f->end.valid = 1;
	f->end.how = AGENT_END_EXCEPTION;
	f->end.has_status = 1;
	f->end.status = 1;
	f->end.oom = 1;
	snprintf(f->end.exception, sizeof f->end.exception, "torch.OutOfMemoryError");
	frame(&f->end.at, "/home/a/train.py", 12, "main");
}

static void put_text(struct logbuf *b, const char *s)
{
	assert_int_equal(logbuf_reserve(b, strlen(s)), 0);
	memcpy(b->p + b->len, s, strlen(s));
	b->len += strlen(s);
}

static void write_file(const char *path, const struct logbuf *b)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(b->p, 1, b->len, f), b->len);
	fclose(f);
}

static unsigned cells_of(const char *s)
{
	unsigned n = 1;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

static void round_trip(void **s)
{
	(void)s;
	struct agent_figures w, r;
	struct logbuf b = {0};
	oom_death(&w);
	put_text(&b, LOG_EVENT_COLUMNS "\n");
	/* a driver row, as wide as the header, and a kind this reader does not know */
	const char *xid = "2026-12-02T10:00:00.000Z,0," UUID0 ",xid,79,fell off the bus" LOG_EVENT_DRIVER_TAIL "1\n";
	assert_int_equal(cells_of(xid), cells_of(LOG_EVENT_COLUMNS));
	const char *other = "2026-12-02T10:00:00.500Z,0,,torch_future,,,1,2,3\n";
	put_text(&b, xid);
	put_text(&b, other);
	assert_string_equal(agent_oom_uuid(&w), UUID1);
	assert_int_equal(agentrow_format(&b, 1796200000123, AGENT_EV_END, 1, UUID1, 1000, &w), 0);
	/* a torn last row: cut mid-way, no newline */
	assert_int_equal(agentrow_format(&b, 1796200001000, AGENT_EV_END, 1, UUID1, 1000, &w), 0);
	b.len -= 40;
	char path[128];
	snprintf(path, sizeof path, "%s/gpu.events.csv", dir);
	write_file(path, &b);
	logbuf_free(&b);

	struct agentrow_reader *rd;
	char err[256];
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), 0);
	int64_t t;
	uint32_t uid;
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 1);
	assert_int_equal(t, 1796200000123);
	assert_int_equal(uid, 1000);
	assert_int_equal(r.pid, 4242);
	assert_int_equal(r.start_time_ticks, 987654);
	assert_true(r.end.valid);
	assert_int_equal(r.end.how, AGENT_END_EXCEPTION);
	assert_true(r.end.has_status);
	assert_int_equal(r.end.status, 1);
	assert_true(r.end.oom);
	assert_string_equal(r.end.exception, "torch.OutOfMemoryError");
	assert_true(r.oom_valid);
	assert_string_equal(r.oom_at.file, "/home/a, \"b\"/x:y in z/model.py");
	assert_int_equal(r.oom_at.line, 88);
	assert_string_equal(r.oom_at.func, "forward");
	assert_int_equal(r.oom_requested_bytes, 20ull << 30);
	assert_int_equal(r.oom_limit_bytes, 35ull << 30);
	assert_true(r.oom_has_free);
	assert_int_equal(r.oom_free_bytes, 9ull << 30);
	assert_int_equal(r.oom_allocated_bytes, 30ull << 30);
	assert_int_equal(r.oom_reserved_bytes, 31ull << 30);
	assert_int_equal(r.oom_count, 3);
	assert_string_equal(agent_oom_uuid(&r), UUID1);
	/* device 0's holder is not the OOM's: left out */
	assert_int_equal(r.nholders, 2);
	assert_int_equal(r.holder[0].bytes, 18ull << 30);
	assert_string_equal(r.holder[0].at.file, "/srv/data.py");
	assert_int_equal(r.holder[0].at.line, 40);
	assert_string_equal(r.holder[1].at.func, "<module>");
	/* the engine's words of both are the same */
	vramz_finding fw, fr;
	memset(&fw, 0, sizeof fw);
	memset(&fr, 0, sizeof fr);
	torch_oom_figures(&fw, &w);
	torch_oom_figures(&fr, &r);
	assert_string_equal(fw.site, fr.site);
	assert_string_equal(fr.site, "model.py:88 in forward()");
	assert_int_equal(fw.nholders, fr.nholders);
	for (unsigned i = 0; i < fr.nholders; i++) {
		assert_string_equal(fw.holders[i].site, fr.holders[i].site);
		assert_true(fw.holders[i].share == fr.holders[i].share);
	}
	assert_int_equal(fw.figures, fr.figures);
	/* the torn row is not a record */
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 0);
	agentrow_close(rd);
}

/* a normal exit without an OOM, a SIGTERM, a negative status */
static void ends_without_oom(void **s)
{
	(void)s;
	struct agent_figures w, r;
	struct logbuf b = {0};
	put_text(&b, LOG_EVENT_COLUMNS "\n");
	memset(&w, 0, sizeof w);
	w.pid = 7;
	w.start_time_ticks = 70;
	w.end.valid = 1;
	w.end.how = AGENT_END_EXIT;
	w.end.has_status = 1;
	w.end.status = -3;
	frame(&w.end.at, "run.py", 3, "main");
	assert_int_equal(agentrow_format(&b, 1000, AGENT_EV_END, -1, NULL, 0, &w), 0);
	w.end = (struct agent_end){.valid = 1, .how = AGENT_END_SIGNAL};
	assert_int_equal(agentrow_format(&b, 2000, AGENT_EV_END, -1, NULL, 0, &w), 0);
	memset(&w.end, 0, sizeof w.end); /* kill -9 after an OOM: no end, its OOM */
	w.oom_valid = 1;
	w.oom_cuda = -1;
	w.oom_requested_bytes = 1;
	assert_int_equal(agentrow_format(&b, 3000, AGENT_EV_END, -1, NULL, 0, &w), 0);
	char path[128];
	snprintf(path, sizeof path, "%s/ends.events.csv", dir);
	write_file(path, &b);
	logbuf_free(&b);
	struct agentrow_reader *rd;
	char err[256];
	int64_t t;
	uint32_t uid;
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), 0);
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 1);
	assert_true(r.end.valid);
	assert_int_equal(r.end.how, AGENT_END_EXIT);
	assert_int_equal(r.end.status, -3);
	assert_false(r.end.oom);
	assert_false(r.oom_valid);
	assert_string_equal(r.end.at.file, "run.py");
	assert_int_equal(r.end.at.line, 3);
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 1);
	assert_true(r.end.valid);
	assert_int_equal(r.end.how, AGENT_END_SIGNAL);
	assert_false(r.end.has_status);
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 1);
	assert_false(r.end.valid);
	assert_true(r.oom_valid);
	assert_null(agent_oom_uuid(&r));
	assert_int_equal(agentrow_next(rd, &t, &uid, &r), 0);
	agentrow_close(rd);
	/* not an events file */
	snprintf(path, sizeof path, "%s/none.events.csv", dir);
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), VRAMZ_ENOTFOUND);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_int_equal(write(fd, "a,b\n", 4), 4);
	close(fd);
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), VRAMZ_EPARSE);
	assert_non_null(strstr(err, "none.events.csv: not a vramz events file"));
}

/* the header once; another file's header refused */
static void events_file(void **s)
{
	(void)s;
	char path[128], err[256], buf[1024];
	snprintf(path, sizeof path, "%s/ev.events.csv", dir);
	int a = evfile_open(path, err, sizeof err);
	int b = evfile_open(path, err, sizeof err);
	assert_true(a >= 0 && b >= 0);
	struct logbuf row = {.p = "x\n", .len = 2};
	assert_int_equal(evfile_append(a, &row), 0);
	assert_int_equal(evfile_append(b, &row), 0);
	close(a);
	close(b);
	FILE *f = fopen(path, "r");
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_string_equal(buf, LOG_EVENT_COLUMNS "\nx\nx\n");
	snprintf(path, sizeof path, "%s/old.events.csv", dir);
	f = fopen(path, "w");
	fputs("time,gpu,uuid,event,xid,meaning\n", f);
	fclose(f);
	assert_int_equal(evfile_open(path, err, sizeof err), -1);
	assert_non_null(strstr(err, "old.events.csv has other columns"));
}

/* the driver's rows summed by (GPU, event, code), each counting its
 * `count`; a file from before the column counts a row as one event; a
 * torn last row and rows outside the window are not counted */
static void driver_counts(void **s)
{
	(void)s;
	char path[128], err[256];
	struct logbuf b = {0};
	put_text(&b, LOG_EVENT_COLUMNS "\n");
	put_text(&b, "2026-12-02T10:00:00.000Z,0," UUID0 ",xid,13,x" LOG_EVENT_DRIVER_TAIL "1\n");
	put_text(&b, "2026-12-02T10:00:01.000Z,0," UUID0 ",xid,13,x" LOG_EVENT_DRIVER_TAIL "799\n");
	put_text(&b, "2026-12-02T10:00:01.500Z,1," UUID1 ",ecc_dbe,,x" LOG_EVENT_DRIVER_TAIL "2\n");
	put_text(&b, "2026-12-02T10:00:02.000Z,0," UUID0 ",xid,13,x" LOG_EVENT_DRIVER_TAIL "200\n");
	put_text(&b, "2026-12-02T10:00:09.000Z,0," UUID0 ",xid,13,x" LOG_EVENT_DRIVER_TAIL "5\n");
	put_text(&b, "2026-12-02T10:00:03.000Z,0," UUID0 ",xid,13,x" LOG_EVENT_DRIVER_TAIL "7");
	snprintf(path, sizeof path, "%s/storm.events.csv", dir);
	write_file(path, &b);
	logbuf_free(&b);
	struct agentrow_reader *rd;
	struct agent_figures f;
	int64_t t, until;
	uint32_t uid;
	assert_int_equal(log_parse_time("2026-12-02T10:00:05Z", 20, &until), 0);
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), 0);
	agentrow_count_driver(rd, 0, until);
	assert_int_equal(agentrow_next(rd, &t, &uid, &f), 0);
	const struct agentrow_driver *d;
	assert_int_equal(agentrow_driver_sums(rd, &d), 2);
	assert_int_equal(d[0].gpu, 0);
	assert_string_equal(d[0].event, "xid");
	assert_int_equal(d[0].xid, 13);
	assert_int_equal(d[0].count, 1000);
	assert_int_equal(d[1].gpu, 1);
	assert_string_equal(d[1].event, "ecc_dbe");
	assert_int_equal(d[1].count, 2);
	agentrow_close(rd);

	/* the 0.2 header, no count column: one event a row */
	b = (struct logbuf){0};
	put_text(&b, "time,gpu,uuid,event,xid,meaning,pid,start_time_ticks,uid\n");
	put_text(&b, "2026-12-02T10:00:00.000Z,0," UUID0 ",xid,79,x,,,\n");
	put_text(&b, "2026-12-02T10:00:00.100Z,0," UUID0 ",xid,79,x,,,\n");
	snprintf(path, sizeof path, "%s/old2.events.csv", dir);
	write_file(path, &b);
	logbuf_free(&b);
	assert_int_equal(agentrow_open(&rd, path, err, sizeof err), 0);
	agentrow_count_driver(rd, INT64_MIN, INT64_MAX);
	assert_int_equal(agentrow_next(rd, &t, &uid, &f), 0);
	assert_int_equal(agentrow_driver_sums(rd, &d), 1);
	assert_int_equal(d[0].xid, 79);
	assert_int_equal(d[0].count, 2);
	agentrow_close(rd);
}

/* a writer follows the name when the log's rotation moved the file */
static void events_follow_rotation(void **s)
{
	(void)s;
	char path[128], moved[140], err[256];
	snprintf(path, sizeof path, "%s/rot.events.csv", dir);
	snprintf(moved, sizeof moved, "%s/rot.1.events.csv", dir);
	int fd = evfile_open(path, err, sizeof err);
	assert_true(fd >= 0);
	int was = fd;
	assert_int_equal(evfile_follow(&fd, path, err, sizeof err), 0);
	assert_int_equal(fd, was); /* not moved: the same file */
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(evfile_follow(&fd, path, err, sizeof err), 0);
	struct logbuf row = {.p = "y\n", .len = 2};
	assert_int_equal(evfile_append(fd, &row), 0);
	close(fd);
	char buf[1024];
	FILE *f = fopen(path, "r");
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_string_equal(buf, LOG_EVENT_COLUMNS "\ny\n");
}

/* A process of a log on a GPU left 300 MiB free leaves the list at 20 s;
 * its record (how is given) was noted before that tick, or none. */
static vramz_diag *log_end(const struct agent_figures *rec)
{
	vramz_diag_config c;
	vramz_diag_config_defaults(&c);
	c.keep_ended = 1;
	struct sim m;
	sim_init(&m, 1, 80 * GiB);
	vramz_proc_sample *x = sim_proc(&m, 0, 200, 200);
	x->used_bytes = (uint64_t)(80 * GiB - 512 * MiB - 300 * MiB);
	x->valid |= VRAMZ_P_TORCH;
	x->torch_valid = VRAMZ_T_OOMS | VRAMZ_T_RESERVED;
	x->torch_reserved_bytes = 70ull << 30;
	vramz_diag *d = vramz_diag_new(&c);
	assert_non_null(d);
	for (int64_t t = 0; t <= 30000; t += 1000) {
		if (t == 20000) {
			m.np = 0;
			if (rec)
				assert_int_equal(diag_note_agent(d, rec), 0);
		}
		assert_int_equal(sim_feed(d, &m, t, NULL), 0);
	}
	return d;
}

static void engine_judges_by_the_records(void **s)
{
	(void)s;
	struct agent_figures rec;
	/* no record: NVML's probable end */
	vramz_diag *d = log_end(NULL);
	const vramz_finding *f;
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	assert_int_equal(f->severity, VRAMZ_SEV_WARNING);
	assert_false(f->evidence & VRAMZ_OOM_ENDED);
	vramz_diag_free(d);
	/* its record says it died of an OOM: certain, with the line */
	oom_death(&rec);
	rec.pid = 200;
	rec.start_time_ticks = 1200;
	rec.oom_cuda = -1; /* its GPU not known: not another GPU's */
	d = log_end(&rec);
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	assert_int_equal(f->severity, VRAMZ_SEV_CRITICAL);
	assert_true(f->evidence & VRAMZ_OOM_ENDED);
	char b[512];
	vramz_finding_summary(f, b, sizeof b);
	assert_non_null(strstr(b, "died out of memory at model.py:88 in forward() asking 20.0 GiB"));
	vramz_diag_free(d);
	/* another process's record says nothing of this one */
	rec.pid = 201;
	d = log_end(&rec);
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, &f), 1);
	assert_false(f->evidence & VRAMZ_OOM_ENDED);
	vramz_diag_free(d);
	/* a normal exit: no OOM, however full the GPU */
	memset(&rec, 0, sizeof rec);
	rec.pid = 200;
	rec.start_time_ticks = 1200;
	rec.end = (struct agent_end){.valid = 1, .how = AGENT_END_EXIT, .has_status = 1};
	d = log_end(&rec);
	assert_int_equal(count_kind(d, VRAMZ_FK_OOM, NULL), 0);
	vramz_diag_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(ends_without_oom),
		cmocka_unit_test(events_file),
		cmocka_unit_test(driver_counts),
		cmocka_unit_test(events_follow_rotation),
		cmocka_unit_test(engine_judges_by_the_records),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
