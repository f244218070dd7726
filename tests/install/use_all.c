/* SPDX-License-Identifier: Apache-2.0 */
/* use_all.c - a program that includes every installed public header and
 * calls into each, built by t0900-install.sh against an installed tree
 * only (pkg-config, or find_package(vramz) through cmake/).  It reads a
 * log back with the diagnosis engine and prints what it found, then the
 * live GPUs with their vendor.
 *
 * usage: use_all LOG.csv
 */
#include <vramz/daemon.h>
#include <vramz/diagnose.h>
#include <vramz/log.h>
#include <vramz/vramz.h>

#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* log.h + diagnose.h: a recorded log through the engine */
	vramz_diag_config cfg;
	vramz_diag_config_defaults(&cfg);
	cfg.keep_ended = 1;
	cfg.report_after_ms = 0;
	vramz_diag *d;
	int rc = vramz_diag_create(&d, &cfg);
	if (rc < 0) {
		fprintf(stderr, "diag: %s\n", vramz_diag_error(d));
		return 1;
	}
	vramz_log_reader *r;
	const vramz_snapshot *snap;
	unsigned ticks = 0;
	rc = vramz_log_open(&r, argv[1]);
	while (rc == 0 && (rc = vramz_log_next(r, &snap)) == 1) {
		ticks++;
		rc = vramz_diag_feed(d, snap);
	}
	if (rc < 0) {
		fprintf(stderr, "log: %s\n", vramz_log_error(r));
		return 1;
	}
	const vramz_finding *f;
	unsigned n = vramz_diag_findings(d, &f);
	printf("log: %u ticks, %u findings\n", ticks, n);
	for (unsigned i = 0; i < n; i++) {
		char buf[512];
		printf("finding: %s %s\n", vramz_finding_kind_str(f[i].kind),
		       vramz_finding_summary(&f[i], buf, sizeof buf));
	}
	vramz_log_close(r);
	vramz_diag_free(d);

	/* daemon.h: its declarations compile and link */
	(void)&vramz_runtime_dir;

	/* vramz.h: the live GPUs, each with its vendor and backend */
	vramz_ctx *ctx;
	rc = vramz_open(&ctx, NULL);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", vramz_strerror(rc), vramz_last_error(ctx));
		vramz_close(ctx);
		return 1;
	}
	for (unsigned b = 0; b < vramz_backend_count(ctx); b++) {
		const vramz_backend_info *bi = vramz_backend(ctx, b);
		printf("backend %s vendor %s driver %s gpus %u-%u\n", bi->name, bi->vendor,
		       bi->driver_version, bi->gpu_first, bi->gpu_first + bi->gpu_count - 1);
	}
	for (unsigned i = 0; i < vramz_gpu_count(ctx); i++) {
		const vramz_gpu_info *gi = vramz_gpu(ctx, i);
		printf("gpu %u %s vendor=%s backend=%s\n", gi->index, gi->name, gi->vendor,
		       gi->backend);
	}
	/* 0.2: VRAM health and the driver's events */
	if (vramz_sample(ctx, VRAMZ_SAMPLE_HEALTH, &snap) >= 0)
		for (unsigned i = 0; i < snap->gpu_count; i++) {
			const vramz_gpu_sample *g = vramz_snapshot_gpu(snap, i);
			printf("health gpu %u ecc_mode=%s\n", g->index,
			       g->valid & VRAMZ_F_ECC_MODE ? (g->ecc_mode ? "on" : "off") : "unknown");
		}
	printf("events: %d GPUs\n", vramz_events_open(ctx));
	vramz_close(ctx);
	return 0;
}
