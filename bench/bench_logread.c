/* SPDX-License-Identifier: Apache-2.0 */
/* bench_logread.c - how fast the log reader streams a large log, and that
 * its memory does not grow with the file (issue 3's target: at least
 * 300 MB/s on one core).
 *
 *   bench_logread [MB] [PATH]   (default 1024 MB at /tmp/vramz-bench.csv)
 *
 * Writes a log of 8 GPUs with every field known and values that change
 * each tick (so the time and number paths are exercised, not cached),
 * then reads it back twice with the library, timing the second pass (the
 * file is in the page cache: this measures the parser, not the disk).
 * Prints MB/s, rows/s and peak RSS; removes the file afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "fields.h"
#include "logfile.h"
#include "vramz/log.h"

#define NGPU 8

static vramz_gpu_info info[NGPU];

static const vramz_gpu_info *info_of(void *arg, unsigned idx)
{
	(void)arg;
	return &info[idx];
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int read_all(const char *path, unsigned long *ticks, unsigned long *rows)
{
	vramz_log_reader *r;
	const vramz_snapshot *s;
	int rc = vramz_log_open(&r, path);
	*ticks = *rows = 0;
	if (rc == 0)
		while ((rc = vramz_log_next(r, &s)) == 1) {
			(*ticks)++;
			*rows += s->gpu_count;
		}
	if (rc < 0)
		fprintf(stderr, "bench_logread: %s\n", vramz_log_error(r));
	vramz_log_close(r);
	return rc;
}

int main(int argc, char **argv)
{
	double mb = argc > 1 ? atof(argv[1]) : 1024;
	const char *path = argc > 2 ? argv[2] : "/tmp/vramz-bench.csv";
	uint64_t target = (uint64_t)(mb * 1048576);
	FILE *f = fopen(path, "w");
	if (!f || mb <= 0) {
		fprintf(stderr, "usage: bench_logread [MB] [PATH]\n");
		return 2;
	}
	for (unsigned i = 0; i < NGPU; i++) {
		snprintf(info[i].uuid, sizeof info[i].uuid, "GPU-%08x-5be4-4d0e-9a71-2c6f0e4b7d19", i);
		snprintf(info[i].name, sizeof info[i].name, "NVIDIA H200");
		snprintf(info[i].pci_bus_id, sizeof info[i].pci_bus_id, "00000000:%02X:00.0", 0x19 + i);
	}
	struct logbuf b = {0};
	log_gpu_header(&b);
	uint64_t written = 0;
	vramz_gpu_sample g[NGPU];
	double t0 = now_s();
	for (int64_t tick = 0; written < target; tick++) {
		for (unsigned i = 0; i < NGPU; i++) {
			memset(&g[i], 0, sizeof g[i]);
			g[i].index = i;
			for (size_t k = 0; k < gpu_field_count; k++)
				field_set(&gpu_fields[k], &g[i], (int64_t)((uint64_t)(tick * 7919 + i * 104729 + k * 31) % 100000));
			g[i].mem_total_bytes = 150754820096ull;
			g[i].mem_used_bytes = 1000000000ull + (uint64_t)tick * 4096 + i;
		}
		vramz_snapshot s = {.time_ms = 1796000000000 + tick * 100, .gpu_count = NGPU, .gpus = g};
		log_format_tick(&b, NULL, &s, info_of, NULL);
		if (b.len > (1 << 20)) {
			fwrite(b.p, 1, b.len, f);
			written += b.len;
			b.len = 0;
		}
	}
	fwrite(b.p, 1, b.len, f);
	written += b.len;
	fclose(f);
	logbuf_free(&b);
	double gen = now_s() - t0;
	printf("generated %.0f MB (%s) in %.1f s: formatting runs at %.0f MB/s\n",
	       (double)written / 1048576, path, gen, (double)written / 1048576 / gen);

	unsigned long ticks, rows;
	long rss0 = rss_kib();
	read_all(path, &ticks, &rows); /* warm the page cache */
	t0 = now_s();
	int rc = read_all(path, &ticks, &rows);
	double t = now_s() - t0;
	unlink(path);
	if (rc < 0)
		return 1;
	printf("read %lu ticks, %lu rows in %.2f s: %.0f MB/s, %.2f M rows/s\n", ticks, rows, t,
	       (double)written / 1048576 / t, (double)rows / t / 1e6);
	printf("peak RSS %ld KiB (before reading %ld KiB)\n", rss_kib(), rss0);
	return 0;
}
