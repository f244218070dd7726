/* SPDX-License-Identifier: Apache-2.0 */
/* embed.c - the smallest useful program on libvramz: print each GPU's
 * memory and its processes once.  Build against an installed vramz:
 *   cc embed.c $(pkg-config --cflags --libs vramz) -o embed
 */
#include <stdio.h>
#include <vramz/vramz.h>

int main(void)
{
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	int rc = vramz_open(&ctx, NULL);
	if (rc < 0) {
		fprintf(stderr, "vramz: %s (%s)\n", vramz_strerror(rc), vramz_last_error(ctx));
		vramz_close(ctx);
		return 1;
	}
	rc = vramz_sample(ctx, VRAMZ_SAMPLE_PROCS, &snap);
	if (rc < 0) {
		fprintf(stderr, "vramz: %s\n", vramz_strerror(rc));
		vramz_close(ctx);
		return 1;
	}
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		if (g->lost) {
			printf("GPU %u %s: lost\n", g->index, gi->name);
			continue;
		}
		if (g->valid & VRAMZ_F_MEM)
			printf("GPU %u %s: %llu of %llu MiB used\n", g->index, gi->name,
			       (unsigned long long)(g->mem_used_bytes >> 20),
			       (unsigned long long)(g->mem_total_bytes >> 20));
		for (unsigned k = 0; k < g->proc_count; k++) {
			const vramz_proc_sample *p = &snap->procs[g->proc_first + k];
			printf("  pid %u %s: ", p->pid,
			       (p->valid & VRAMZ_P_VISIBLE) ? p->cmdline : "(not visible here)");
			if (p->valid & VRAMZ_P_USED)
				printf("%llu MiB\n", (unsigned long long)(p->used_bytes >> 20));
			else
				printf("unknown\n");
		}
	}
	vramz_close(ctx);
	return 0;
}
