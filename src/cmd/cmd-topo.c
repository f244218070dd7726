/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-topo.c - `vramz topo`: the GPU-to-GPU interconnect matrix, in the
 * notation of `nvidia-smi topo -m` (X, NV#, PIX, PXB, PHB, NODE, SYS) so
 * people who know that view read this one at once. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "format/fmt.h"
#include "format/jsondoc.h"
#include "source.h"

const struct opt topo_opts[] = {OPT_GPUS, OPT_JSON, OPT_LIVE, OPT_NOCOLOR, OPT_END};
const char topo_synopsis[] = "[-g LIST] [--json]";
const char topo_about[] = "GPU-to-GPU interconnect matrix: NVLink count or PCIe path.";

int cmd_topo(const struct cmd_args *args)
{
	(void)args;
	vramz_ctx *ctx;
	int ex = source_open(&ctx, 0, 0);
	if (ex)
		return ex;
	unsigned n = vramz_selected_count(ctx);
	char buf[16];
	if (g_opts.json) {
		struct jsonw w;
		jw_init(&w, stdout, 1);
		json_begin(&w, "topo", ctx, NULL);
		jw_arr(&w, "gpus");
		for (unsigned i = 0; i < n; i++) {
			const vramz_gpu_info *gi = vramz_gpu(ctx, vramz_selected_index(ctx, i));
			jw_obj(&w, NULL);
			jw_u64(&w, "index", gi->index);
			jw_str(&w, "uuid", gi->uuid);
			jw_str(&w, "pci_bus_id", gi->pci_bus_id);
			jw_end_obj(&w);
		}
		jw_end_arr(&w);
		jw_arr(&w, "links");
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++) {
				unsigned a = vramz_selected_index(ctx, i), b = vramz_selected_index(ctx, j);
				vramz_link l;
				if (a == b)
					continue;
				int lrc = vramz_topology(ctx, a, b, &l);
				jw_obj(&w, NULL);
				jw_u64(&w, "a", a);
				jw_u64(&w, "b", b);
				jw_str(&w, "link", lrc < 0 ? NULL : vramz_link_str(&l, buf, sizeof buf));
				jw_u64_if(&w, "nvlinks", lrc == 0 && l.kind == VRAMZ_LINK_NVLINK, l.nvlinks);
				jw_end_obj(&w);
			}
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_finish(&w);
		cli_close(ctx);
		return EXIT_OK;
	}
	const struct colors *c = colors_for(stdout);
	printf("%s%-6s", c->bold, "");
	for (unsigned j = 0; j < n; j++)
		printf(" GPU%-3u", vramz_selected_index(ctx, j));
	printf("%s\n", c->reset);
	for (unsigned i = 0; i < n; i++) {
		unsigned a = vramz_selected_index(ctx, i);
		printf("%sGPU%-3u%s", c->bold, a, c->reset);
		for (unsigned j = 0; j < n; j++) {
			vramz_link l;
			unsigned b = vramz_selected_index(ctx, j);
			if (vramz_topology(ctx, a, b, &l) < 0)
				l.kind = VRAMZ_LINK_UNKNOWN;
			vramz_link_str(&l, buf, sizeof buf);
			printf(" %s%-6s%s", l.kind == VRAMZ_LINK_NVLINK ? c->green : "", buf,
			       l.kind == VRAMZ_LINK_NVLINK ? c->reset : "");
		}
		const vramz_gpu_info *gi = vramz_gpu(ctx, a);
		printf("  %s%s%s\n", c->dim, gi->pci_bus_id, c->reset);
	}
	printf("\nLegend:\n"
	       "  X    = self\n"
	       "  NV#  = joined by # NVLinks\n"
	       "  PIX  = at most one PCIe bridge\n"
	       "  PXB  = several PCIe bridges, no host bridge\n"
	       "  PHB  = a PCIe host bridge (CPU)\n"
	       "  NODE = host bridges within one NUMA node\n"
	       "  SYS  = across NUMA nodes (the SMP interconnect)\n"
	       "  ?    = not reported\n");
	cli_close(ctx);
	return EXIT_OK;
}
