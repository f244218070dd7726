/* SPDX-License-Identifier: Apache-2.0 */
/* bench_report_gen.c - writes a synthetic `vramz log --procs` recording for
 * bench/bench_report.sh: HOURS of GPUS GPUs at HZ, through the library's
 * own row formatter and file writer (lib/log), so the file is exactly what
 * the logger writes.  Each GPU has two steady processes with a sawtooth
 * and a third that comes and goes; GPU 3's second process leaks 4 MiB/min;
 * GPU 5 is power-capped for an hour; the logger stops for 20 minutes in
 * the middle (a gap); the last GPU falls off the bus 10 minutes before the
 * end.
 *
 *   bench_report_gen OUT.csv [HOURS=24] [GPUS=8] [HZ=10]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/logwrite.h"

#define MAXG 64
#define PPG 3

static vramz_gpu_info info[MAXG];

static const vramz_gpu_info *info_of(void *arg, unsigned idx)
{
	(void)arg;
	return idx < MAXG ? &info[idx] : NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_report_gen OUT.csv [HOURS] [GPUS] [HZ]\n");
		return 2;
	}
	double hours = argc > 2 ? atof(argv[2]) : 24;
	unsigned ng = argc > 3 ? (unsigned)atoi(argv[3]) : 8;
	double hz = argc > 4 ? atof(argv[4]) : 10;
	if (ng < 1 || ng > MAXG || hz <= 0 || hours <= 0) {
		fprintf(stderr, "bench_report_gen: bad arguments\n");
		return 2;
	}
	struct log_writer_opts o = {.path = argv[1], .procs = 1};
	struct log_writer *w;
	char err[512];
	if (log_writer_open(&w, &o, err, sizeof err)) {
		fprintf(stderr, "bench_report_gen: %s\n", err);
		return 1;
	}
	const double MiB = 1048576.0, GiB = 1073741824.0;
	vramz_gpu_sample g[MAXG];
	static vramz_proc_sample tmpl[MAXG * PPG], p[MAXG * PPG];
	memset(g, 0, sizeof g);
	for (unsigned j = 0; j < ng; j++) {
		snprintf(info[j].name, sizeof info[j].name, "NVIDIA H200");
		snprintf(info[j].uuid, sizeof info[j].uuid, "GPU-%08x-0000-4000-8000-%012x", 0xb0000000u + j, j);
		snprintf(info[j].pci_bus_id, sizeof info[j].pci_bus_id, "00000000:%02X:00.0", 0x18 + j * 0x10);
		info[j].index = j;
	}
	for (unsigned i = 0; i < ng * PPG; i++) {
		vramz_proc_sample *q = &tmpl[i];
		q->gpu_index = i / PPG;
		q->pid = 4000 + i;
		q->ppid = 3000 + (i / PPG);
		q->pgid = q->ppid;
		q->ns_pid = q->pid;
		q->start_time_ticks = 100000 + i;
		q->valid = VRAMZ_P_USED | VRAMZ_P_SM | VRAMZ_P_VISIBLE;
		q->type = VRAMZ_PT_COMPUTE;
		snprintf(q->user, sizeof q->user, "alice");
		snprintf(q->comm, sizeof q->comm, "python3");
		snprintf(q->cmdline, sizeof q->cmdline, "python3 train.py --rank %u --part %u", i / PPG, i % PPG);
	}
	int64_t ticks = (int64_t)(hours * 3600 * hz);
	int64_t gap_from = ticks / 2, gap_to = ticks / 2 + (int64_t)(1200 * hz);
	int64_t lost_at = ticks - (int64_t)(600 * hz);
	struct logbuf gb = {0}, pb = {0};
	uint64_t rng = 1;
	for (int64_t k = 0; k < ticks; k++) {
		if (k >= gap_from && k < gap_to)
			continue;
		double ts = (double)k / hz;
		unsigned np = 0;
		for (unsigned j = 0; j < ng; j++) {
			vramz_gpu_sample *x = &g[j];
			memset(x, 0, sizeof *x);
			x->index = j;
			x->proc_first = np;
			if (j == ng - 1 && ng > 1 && k >= lost_at) {
				x->lost = 1;
				continue;
			}
			uint64_t used = 0;
			for (unsigned i = j * PPG; i < (j + 1) * PPG; i++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				double noise = (double)(rng >> 40) / 16777216.0 * 64 * MiB;
				double v;
				if (i % PPG == 2) { /* comes for 40 minutes of every 2 hours */
					if (fmod(ts, 7200) > 2400)
						continue;
					v = 6 * GiB + noise;
				} else {
					v = (i % PPG ? 20 : 40) * GiB + 4 * GiB * fmod(ts / 90 + i * 0.1, 1.0) + noise;
				}
				if (j == 3 % ng && i % PPG == 1)
					v += ts * 4 * MiB / 60;
				vramz_proc_sample *q = &p[np++];
				*q = tmpl[i];
				q->used_bytes = (uint64_t)v;
				q->sm_pct = 30 + (unsigned)(rng >> 60);
				used += q->used_bytes;
			}
			x->proc_count = np - x->proc_first;
			x->valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_TEMP |
				   VRAMZ_F_TEMP_MEM | VRAMZ_F_POWER | VRAMZ_F_POWER_LIMIT | VRAMZ_F_CLK_SM |
				   VRAMZ_F_CLK_MEM | VRAMZ_F_THROTTLE | VRAMZ_F_PROCS | VRAMZ_F_UNATTRIBUTED;
			x->mem_total_bytes = (uint64_t)(140 * GiB);
			x->mem_reserved_bytes = 616 * (uint64_t)MiB;
			x->mem_used_bytes = used + 512 * (uint64_t)MiB;
			x->unattributed_bytes = 512 * (uint64_t)MiB;
			x->mem_free_bytes = x->mem_total_bytes - x->mem_used_bytes - x->mem_reserved_bytes;
			x->util_gpu_pct = 60 + (unsigned)(rng >> 59);
			x->util_mem_pct = 30;
			x->temp_c = 55 + (int)(10 * sin(ts / 3600 + j));
			x->temp_mem_c = x->temp_c + 8;
			x->power_limit_mw = 700000;
			int capped = j == 5 % ng && ts > 3600 * 2 && ts < 3600 * 3;
			x->power_mw = capped ? 700000 : 450000 + (unsigned)(rng >> 47);
			x->throttle_reasons = capped ? VRAMZ_THR_SW_POWER_CAP : 0;
			x->clock_sm_mhz = capped ? 1500 : 1980;
			x->clock_mem_mhz = 3201;
		}
		vramz_snapshot s = {.time_ms = 1796000000000LL + (int64_t)(ts * 1000), .gpu_count = ng,
				    .gpus = g, .proc_count = np, .procs = p};
		gb.len = pb.len = 0;
		if (log_format_tick(&gb, &pb, &s, info_of, NULL) ||
		    log_writer_tick(w, &gb, &pb, err, sizeof err)) {
			fprintf(stderr, "bench_report_gen: %s\n", err);
			return 1;
		}
	}
	logbuf_free(&gb);
	logbuf_free(&pb);
	if (log_writer_close(w, err, sizeof err)) {
		fprintf(stderr, "bench_report_gen: %s\n", err);
		return 1;
	}
	return 0;
}
