/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_events.c - a fuzz target for the reader of a log's events file
 * (lib/log/agentrow.c: the PyTorch agents' torch_oom and process_end
 * rows that `analyze` and `report` hand to the engine), for libFuzzer
 * (tests/fuzz/run.sh events) or, linked with smoke_main.c, ctest's bounded
 * fuzz.events.  An input is an events file, written to a file because the
 * reader's contract is a path, and read to the end.  Each record must be
 * one the engine can take: strings ended, counts within their arrays; and
 * written back as a row and read again it must come back the same (the
 * writer and the reader agree on every row the reader accepts).
 * Crashes, sanitizer reports, hangs and leaks are the findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentrec.h"

static char path[64], path2[64];

static void put(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n))
		abort();
	fclose(f);
}

static void check_frame(const struct agent_frame *f)
{
	if (!memchr(f->file, 0, sizeof f->file) || !memchr(f->func, 0, sizeof f->func))
		abort();
}

static void check(const struct agent_figures *f)
{
	if (f->nholders > AGENT_MAX_HOLDERS || f->ndev > 1 ||
	    !memchr(f->end.exception, 0, sizeof f->end.exception) ||
	    !memchr(f->dev[0].uuid, 0, sizeof f->dev[0].uuid))
		abort();
	check_frame(&f->oom_at);
	check_frame(&f->end.at);
	for (unsigned i = 0; i < f->nholders; i++)
		check_frame(&f->holder[i].at);
}

/* f written as a row and read back: the same record */
static void round_trip(int64_t t, uint32_t uid, const struct agent_figures *f)
{
	struct logbuf b = {0};
	static const char head[] = LOG_EVENT_COLUMNS "\n";
	if (logbuf_reserve(&b, sizeof head))
		abort();
	memcpy(b.p, head, sizeof head - 1);
	b.len = sizeof head - 1;
	const char *event = f->end.valid || !f->oom_valid ? AGENT_EV_END : AGENT_EV_OOM;
	if (agentrow_format(&b, t, event, 0, agent_oom_uuid(f), uid, f))
		abort();
	put(path2, b.p, b.len);
	logbuf_free(&b);
	struct agentrow_reader *r;
	char err[256];
	struct agent_figures g;
	int64_t t2;
	uint32_t uid2;
	if (agentrow_open(&r, path2, err, sizeof err) || agentrow_next(r, &t2, &uid2, &g) != 1)
		abort();
	agentrow_close(r);
	if (t2 != t || uid2 != uid || g.pid != f->pid || g.start_time_ticks != f->start_time_ticks ||
	    g.oom_valid != f->oom_valid || g.oom_requested_bytes != f->oom_requested_bytes ||
	    g.nholders != f->nholders || strcmp(g.oom_at.file, f->oom_at.file) ||
	    g.oom_at.line != f->oom_at.line || strcmp(g.oom_at.func, f->oom_at.func) ||
	    (strcmp(event, AGENT_EV_END) == 0 &&
	     (g.end.valid != f->end.valid || g.end.oom != f->end.oom || g.end.how != f->end.how)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		const char *d = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
		snprintf(path, sizeof path, "%s/vramz-fuzz-%d.events.csv", d, (int)getpid());
		snprintf(path2, sizeof path2, "%s/vramz-fuzz-%d.again.csv", d, (int)getpid());
	}
	put(path, data, size);
	struct agentrow_reader *r;
	char err[256];
	if (agentrow_open(&r, path, err, sizeof err) == 0) {
		struct agent_figures f;
		int64_t t;
		uint32_t uid;
		while (agentrow_next(r, &t, &uid, &f) == 1) {
			check(&f);
			if (t >= 0 && t < 253402300800000) /* a time the writer can write */
				round_trip(t, uid, &f);
		}
		agentrow_close(r);
	}
	unlink(path);
	unlink(path2);
	return 0;
}
