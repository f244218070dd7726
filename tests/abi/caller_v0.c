/* SPDX-License-Identifier: Apache-2.0 */
/* caller_v0.c - a program built against vramz 0.1's headers (tests/abi/v0,
 * copied unchanged from the 0.1 release) and run against this library:
 * the proof that the ABI promise in vramz.h holds.  It uses 0.1's
 * caller-filled structs (vramz_open_opts, vramz_diag_config without a
 * size), indexes the snapshot and finding arrays directly at 0.1's record
 * sizes, and checks values a user would see: the fake NVML's two H200s
 * and their processes, a replayed log, and two leaks found by the engine.
 *
 * usage: abi_caller_v0 LOG.csv   (with the fake NVML's 2gpu-h200 scenario)
 */
#include "vramz/vramz.h"
#include "vramz/diagnose.h"
#include "vramz/log.h"

#if VRAMZ_VERSION_MINOR != 1
#error "this program must be built against the 0.1 headers in tests/abi/v0"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                          \
	do {                                                      \
		if (cond) {                                       \
			printf("ok - " __VA_ARGS__);              \
		} else {                                          \
			printf("FAIL - " __VA_ARGS__);            \
			failures++;                               \
		}                                                 \
		putchar('\n');                                    \
	} while (0)

#define MiB (1024ull * 1024)
#define GiB (1024 * MiB)

static void live(void)
{
	/* a 0.1 caller's options: no size field */
	vramz_open_opts o = {.flags = VRAMZ_OPEN_EXITING};
	vramz_ctx *ctx;
	int rc = vramz_open(&ctx, &o);
	CHECK(rc == 0, "vramz_open with 0.1's options: %s", rc ? vramz_last_error(ctx) : "0");
	if (rc) {
		vramz_close(ctx);
		return;
	}
	const vramz_system_info *s = vramz_system(ctx);
	CHECK(!strcmp(s->driver_version, "580.159.04"), "driver_version %s", s->driver_version);
	CHECK(!strcmp(s->nvml_version, "13.580.159.04"), "nvml_version %s", s->nvml_version);
	CHECK(s->cuda_driver_version == 13000, "cuda_driver_version %d", s->cuda_driver_version);
	CHECK(!strcmp(s->backend, "nvml"), "backend %s", s->backend);
	CHECK(vramz_gpu_count(ctx) == 2, "2 GPUs");
	CHECK(vramz_gpu_details(ctx, 1) == 0, "vramz_gpu_details");
	const vramz_gpu_info *g1 = vramz_gpu(ctx, 1);
	CHECK(g1 && g1->index == 1 && !strcmp(g1->uuid, "GPU-2d94b7e0-1c35-4f8a-b6d2-7e90a15c3f48") &&
		      g1->temp_gpu_max_c == 90,
	      "GPU 1's info: %s", g1 ? g1->uuid : "(null)");

	const vramz_snapshot *snap;
	rc = vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &snap);
	CHECK(rc == 0 && snap->gpu_count == 2, "a sample of 2 GPUs");
	if (rc)
		goto out;
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		CHECK(g->index == i && g->mem_total_bytes == 143771 * MiB &&
			      g->mem_reserved_bytes == 616 * MiB && g->power_limit_mw == 700000,
		      "GPU %u's sample: index %u, total %llu MiB", i, g->index,
		      (unsigned long long)(g->mem_total_bytes / MiB));
	}
	CHECK(snap->gpus[1].temp_c == 47 && snap->gpus[1].temp_mem_c == 52,
	      "GPU 1 at 47 C, memory 52 C: %d %d", snap->gpus[1].temp_c, snap->gpus[1].temp_mem_c);
	/* the scenario's processes, found through GPU 1's slice */
	const vramz_gpu_sample *g = &snap->gpus[1];
	unsigned hits = 0;
	for (unsigned k = g->proc_first; k < g->proc_first + g->proc_count; k++) {
		const vramz_proc_sample *p = &snap->procs[k];
		if (p->gpu_index != 1)
			continue;
		hits += p->pid == 4200201 && p->used_bytes == 22 * GiB && p->sm_pct == 40;
		hits += p->pid == 4200301 && p->used_bytes == 63 * GiB && p->sm_pct == 58;
	}
	CHECK(snap->proc_count == 4 && g->proc_count == 2 && hits == 2,
	      "GPU 1's two processes with their memory and SM share (%u of 4)", hits);
out:
	vramz_close(ctx);
}

static void replay(const char *path)
{
	vramz_open_opts o = {.replay_path = path};
	vramz_ctx *ctx;
	int rc = vramz_open(&ctx, &o);
	CHECK(rc == 0, "vramz_open replaying %s: %s", path, rc ? vramz_last_error(ctx) : "0");
	const vramz_snapshot *snap;
	if (rc == 0 && vramz_sample(ctx, VRAMZ_SAMPLE_DEFAULT, &snap) == 0) {
		const vramz_gpu_sample *last = &snap->gpus[snap->gpu_count - 1];
		CHECK(snap->gpu_count >= 2 && last->index == snap->gpu_count - 1 &&
			      last->mem_total_bytes > 0,
		      "replayed tick: %u GPUs, the last index %u", snap->gpu_count, last->index);
	}
	vramz_close(ctx);

	vramz_log_reader *r;
	rc = vramz_log_open(&r, path);
	unsigned ticks = 0, good = 0;
	while (rc == 0 && vramz_log_next(r, &snap) == 1) {
		ticks++;
		unsigned ok = 1;
		for (unsigned i = 0; i < snap->gpu_count; i++) {
			const vramz_gpu_sample *gs = &snap->gpus[i];
			ok &= gs->index < 64 && gs->proc_first + gs->proc_count <= snap->proc_count;
			for (unsigned k = gs->proc_first; k < gs->proc_first + gs->proc_count; k++)
				ok &= snap->procs[k].gpu_index == gs->index && snap->procs[k].pid > 0;
		}
		good += ok;
	}
	CHECK(ticks > 0 && good == ticks, "vramz_log_next: %u of %u ticks consistent", good, ticks);
	vramz_log_close(r);
}

static void diagnose(void)
{
	struct {
		vramz_diag_config cfg;
		unsigned char canary[64];
	} w;
	memset(w.canary, 0xa5, sizeof w.canary);
	vramz_diag_config_defaults(&w.cfg);
	int intact = 1;
	for (size_t i = 0; i < sizeof w.canary; i++)
		intact &= w.canary[i] == 0xa5;
	CHECK(intact && w.cfg.ring_windows == 512 && w.cfg.leak_p == 0.001 &&
		      w.cfg.report_after_ms == 5000 && w.cfg.proc_root == NULL,
	      "vramz_diag_config_defaults fills 0.1's struct and nothing past it");
	w.cfg.ring_windows = 8;
	CHECK(vramz_diag_new(&w.cfg) == NULL, "a bad 0.1 config is refused");
	vramz_diag_config_defaults(&w.cfg);
	w.cfg.leak_warmup_ms = 5000;
	vramz_diag *d = vramz_diag_new(&w.cfg);
	CHECK(d != NULL, "vramz_diag_new with 0.1's config");
	if (!d)
		return;
	vramz_gpu_info info[2];
	memset(info, 0, sizeof info);
	for (unsigned i = 0; i < 2; i++) {
		info[i].index = i;
		info[i].mem_total_bytes = 80 * GiB;
		info[i].valid = VRAMZ_I_MEM_TOTAL;
	}
	CHECK(vramz_diag_set_gpu_info(d, info, 2) == 0, "vramz_diag_set_gpu_info, 0.1's stride");
	/* two processes leak, one on each GPU, at different rates */
	vramz_gpu_sample gs[2];
	vramz_proc_sample ps[2];
	int feed_rc = 0;
	for (int t = 0; t <= 300 && !feed_rc; t++) {
		memset(gs, 0, sizeof gs);
		memset(ps, 0, sizeof ps);
		for (unsigned i = 0; i < 2; i++) {
			ps[i].gpu_index = i;
			ps[i].pid = 7000 + i;
			ps[i].valid = VRAMZ_P_USED;
			ps[i].type = VRAMZ_PT_COMPUTE;
			ps[i].start_time_ticks = 100 + i;
			ps[i].used_bytes = 4 * GiB + (uint64_t)t * (i ? 8 : 16) * MiB;
			gs[i].index = i;
			gs[i].valid = VRAMZ_F_MEM | VRAMZ_F_PROCS;
			gs[i].mem_total_bytes = 80 * GiB;
			gs[i].mem_used_bytes = ps[i].used_bytes + GiB;
			gs[i].mem_free_bytes = gs[i].mem_total_bytes - gs[i].mem_used_bytes;
			gs[i].proc_first = i;
			gs[i].proc_count = 1;
		}
		vramz_snapshot s = {.time_ms = 1700000000000 + t * 1000,
				    .mono_ns = (int64_t)t * 1000000000,
				    .gpu_count = 2, .gpus = gs, .proc_count = 2, .procs = ps};
		feed_rc = vramz_diag_feed(d, &s);
	}
	CHECK(feed_rc == 0, "vramz_diag_feed of 0.1 snapshots");
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f), leaks = 0;
	for (unsigned i = 0; i < n; i++)
		if (f[i].kind == VRAMZ_FK_LEAK && f[i].pid == 7000u + (unsigned)f[i].gpu &&
		    f[i].rate_bytes_per_s > 0)
			leaks |= 1u << f[i].gpu;
	CHECK(leaks == 3, "both leaks found, each on its GPU (%u findings)", n);
	vramz_diag_free(d);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: abi_caller_v0 LOG.csv\n");
		return 2;
	}
	CHECK(!strncmp(vramz_version(), "0.", 2) && strcmp(vramz_version(), "0.1.0"),
	      "header 0.1.0, library %s", vramz_version());
	live();
	replay(argv[1]);
	diagnose();
	printf("%d failed\n", failures);
	return failures != 0;
}
