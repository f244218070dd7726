/* SPDX-License-Identifier: Apache-2.0 */
/* cmd-info.c - `vramz info`: GPU-Z's "Graphics Card" page for each GPU:
 * identity, architecture, memory size / type / bus width / bandwidth,
 * PCIe link now against its maximum, NVLink, MIG / ECC / persistence
 * modes, power limits, temperature thresholds and the software versions.
 *
 * A PCIe link below its maximum is flagged, with the caveat that links
 * train down when idle to save power, so only a busy link below max is a
 * problem (the diagnosis engine checks that over time). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "fields.h"
#include "format/fmt.h"
#include "format/jsondoc.h"
#include "source.h"

static const char *onoff(char *b, size_t n, int valid, unsigned cur, unsigned pend)
{
	if (!valid)
		snprintf(b, n, "-");
	else if (cur != pend)
		snprintf(b, n, "%s (%s after reset)", cur ? "enabled" : "disabled",
			 pend ? "enabled" : "disabled");
	else
		snprintf(b, n, "%s", cur ? "enabled" : "disabled");
	return b;
}

static int link_below_max(const vramz_gpu_info *gi, const vramz_gpu_sample *g)
{
	return (gi->valid & VRAMZ_I_PCIE_MAX) && (g->valid & VRAMZ_F_PCIE_LINK) &&
	       (g->pcie_gen < gi->pcie_max_gen || g->pcie_width < gi->pcie_max_width);
}

/* "3 / 1" of two counters sharing a bit, or "-" */
static const char *pair(char *buf, size_t len, const vramz_gpu_sample *g, uint32_t bit,
			uint64_t a, uint64_t b)
{
	if (g->valid & bit)
		snprintf(buf, len, "%llu corrected, %llu uncorrected", (unsigned long long)a,
			 (unsigned long long)b);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* VRAM health, as nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT says it
 * (docs/health.md); "-" where the GPU does not report it. */
static void print_health(const vramz_gpu_sample *g)
{
	const struct colors *c = colors_for(stdout);
	char a[96];
	if (!g)
		return;
	printf("  %-22s %s\n", "ECC errors (volatile)",
	       pair(a, sizeof a, g, VRAMZ_F_ECC_VOL, g->ecc_corrected_volatile, g->ecc_uncorrected_volatile));
	printf("  %-22s %s\n", "ECC errors (aggregate)",
	       pair(a, sizeof a, g, VRAMZ_F_ECC_AGG, g->ecc_corrected_aggregate,
		    g->ecc_uncorrected_aggregate));
	if (g->valid & VRAMZ_F_REMAP)
		printf("  %-22s %u correctable, %u uncorrectable, pending %s, failure %s%s%s\n",
		       "Remapped rows", g->remap_correctable_rows, g->remap_uncorrectable_rows,
		       g->remap_pending ? "yes" : "no",
		       g->remap_failure ? c->red : "", g->remap_failure ? "yes" : "no", c->reset);
	else
		printf("  %-22s -\n", "Remapped rows");
	if (g->valid & VRAMZ_F_RETIRED)
		printf("  %-22s %u multiple single-bit, %u double-bit", "Retired pages",
		       g->retired_sbe_pages, g->retired_dbe_pages);
	else
		printf("  %-22s -", "Retired pages");
	if (g->valid & VRAMZ_F_RETIRED_PENDING)
		printf(", pending %s", g->retired_pending ? "yes" : "no");
	putchar('\n');
	printf("  %-22s %s\n", "PCIe replays",
	       fmt_uint_if(a, sizeof a, g->valid & VRAMZ_F_PCIE_REPLAY, g->pcie_replays, ""));
}

static void print_gpu(const vramz_gpu_info *gi, const vramz_gpu_sample *g)
{
	const struct colors *c = colors_for(stdout);
	char a[64], b[64];
	unsigned v = gi->valid;
#define ROW(k, ...)                            \
	do {                                   \
		printf("  %-22s ", k);         \
		printf(__VA_ARGS__);           \
		putchar('\n');                 \
	} while (0)
	printf("%sGPU %u: %s%s\n", c->bold, gi->index, *gi->name ? gi->name : "?", c->reset);
	if (g && g->lost) {
		printf("  %slost: fell off the bus%s\n", c->red, c->reset);
		return;
	}
	ROW("UUID", "%s", *gi->uuid ? gi->uuid : "-");
	ROW("PCI bus id", "%s", *gi->pci_bus_id ? gi->pci_bus_id : "-");
	ROW("Serial", "%s", *gi->serial ? gi->serial : "-");
	ROW("VBIOS", "%s", *gi->vbios ? gi->vbios : "-");
	ROW("Architecture", "%s", (v & VRAMZ_I_ARCH) ? gi->arch : "-");
	if (v & VRAMZ_I_CC)
		ROW("Compute capability", "%u.%u", gi->cc_major, gi->cc_minor);
	else
		ROW("Compute capability", "-");
	ROW("Memory size", "%s", fmt_bytes_if(a, sizeof a, v & VRAMZ_I_MEM_TOTAL, gi->mem_total_bytes));
	ROW("Memory type", "%s", *gi->mem_type ? gi->mem_type : "- (model not in docs/memory-types.md)");
	ROW("Memory bus width", "%s", fmt_uint_if(a, sizeof a, v & VRAMZ_I_BUS_WIDTH, gi->mem_bus_width_bits, " bit"));
	ROW("Max memory clock", "%s", fmt_uint_if(a, sizeof a, v & VRAMZ_I_MAX_MEMCLK, gi->max_mem_clock_mhz, " MHz"));
	if (v & VRAMZ_I_BANDWIDTH)
		ROW("Bandwidth", "%.1f GB/s (theoretical)", (double)gi->bandwidth_bytes_per_s / 1e9);
	else
		ROW("Bandwidth", "-");
	ROW("Max SM clock", "%s", fmt_uint_if(a, sizeof a, v & VRAMZ_I_MAX_SMCLK, gi->max_sm_clock_mhz, " MHz"));
	ROW("BAR1", "%s", fmt_bytes_if(a, sizeof a, v & VRAMZ_I_BAR1, gi->bar1_total_bytes));
	if (g && (g->valid & VRAMZ_F_PCIE_LINK))
		snprintf(a, sizeof a, "Gen%u x%u", g->pcie_gen, g->pcie_width);
	else
		snprintf(a, sizeof a, "-");
	if (v & VRAMZ_I_PCIE_MAX)
		snprintf(b, sizeof b, "Gen%u x%u", gi->pcie_max_gen, gi->pcie_max_width);
	else
		snprintf(b, sizeof b, "-");
	if (g && link_below_max(gi, g))
		ROW("PCIe link", "%s (max %s) %sbelow max%s: normal when idle, a problem under load",
		    a, b, c->yellow, c->reset);
	else
		ROW("PCIe link", "%s (max %s)", a, b);
	ROW("NVLinks active", "%s", fmt_uint_if(a, sizeof a, v & VRAMZ_I_NVLINK, gi->nvlink_count, ""));
	ROW("MIG mode", "%s", onoff(a, sizeof a, v & VRAMZ_I_MIG, gi->mig_current, gi->mig_pending));
	ROW("ECC mode", "%s", onoff(a, sizeof a, v & VRAMZ_I_ECC, gi->ecc_current, gi->ecc_pending));
	ROW("Persistence mode", "%s", onoff(a, sizeof a, v & VRAMZ_I_PERSIST, gi->persistence, gi->persistence));
	if (g && (g->valid & VRAMZ_F_POWER_LIMIT))
		snprintf(a, sizeof a, "%u W", g->power_limit_mw / 1000);
	else
		snprintf(a, sizeof a, "-");
	if (v & VRAMZ_I_POWER_LIMITS)
		ROW("Power limit", "%s (default %u W, range %u-%u W)", a,
		    gi->power_default_limit_mw / 1000, gi->power_min_limit_mw / 1000,
		    gi->power_max_limit_mw / 1000);
	else
		ROW("Power limit", "%s", a);
	int n = 0;
	a[0] = 0;
	if (v & VRAMZ_I_T_SLOWDOWN)
		n += snprintf(a + n, sizeof a - (size_t)n, "slowdown %dC ", gi->temp_slowdown_c);
	if (v & VRAMZ_I_T_SHUTDOWN)
		n += snprintf(a + n, sizeof a - (size_t)n, "shutdown %dC ", gi->temp_shutdown_c);
	if (v & VRAMZ_I_T_GPU_MAX)
		n += snprintf(a + n, sizeof a - (size_t)n, "gpu max %dC ", gi->temp_gpu_max_c);
	if (v & VRAMZ_I_T_MEM_MAX)
		snprintf(a + n, sizeof a - (size_t)n, "memory max %dC", gi->temp_mem_max_c);
	ROW("Temperature limits", "%s", *a ? a : "-");
	print_health(g);
#undef ROW
}

static void json_info(struct jsonw *w, const vramz_gpu_info *gi, const vramz_gpu_sample *g)
{
	unsigned v = gi->valid;
	jw_obj(w, NULL);
	jw_u64(w, "index", gi->index);
	jw_str(w, "name", *gi->name ? gi->name : NULL);
	jw_str(w, "uuid", *gi->uuid ? gi->uuid : NULL);
	jw_str(w, "pci_bus_id", *gi->pci_bus_id ? gi->pci_bus_id : NULL);
	jw_bool(w, "lost", g && g->lost);
	jw_str(w, "serial", *gi->serial ? gi->serial : NULL);
	jw_str(w, "vbios", *gi->vbios ? gi->vbios : NULL);
	jw_str(w, "architecture", (v & VRAMZ_I_ARCH) ? gi->arch : NULL);
	if (v & VRAMZ_I_CC) {
		char cc[16];
		snprintf(cc, sizeof cc, "%u.%u", gi->cc_major, gi->cc_minor);
		jw_str(w, "compute_capability", cc);
	} else {
		jw_null(w, "compute_capability");
	}
	jw_u64_if(w, "mem_total_bytes", v & VRAMZ_I_MEM_TOTAL, gi->mem_total_bytes);
	jw_str(w, "mem_type", *gi->mem_type ? gi->mem_type : NULL);
	jw_u64_if(w, "mem_bus_width_bits", v & VRAMZ_I_BUS_WIDTH, gi->mem_bus_width_bits);
	jw_u64_if(w, "max_mem_clock_mhz", v & VRAMZ_I_MAX_MEMCLK, gi->max_mem_clock_mhz);
	jw_u64_if(w, "bandwidth_bytes_per_s", v & VRAMZ_I_BANDWIDTH, gi->bandwidth_bytes_per_s);
	jw_u64_if(w, "max_sm_clock_mhz", v & VRAMZ_I_MAX_SMCLK, gi->max_sm_clock_mhz);
	jw_u64_if(w, "bar1_total_bytes", v & VRAMZ_I_BAR1, gi->bar1_total_bytes);
	int cur = g && !g->lost && (g->valid & VRAMZ_F_PCIE_LINK);
	jw_u64_if(w, "pcie_gen", cur, cur ? g->pcie_gen : 0);
	jw_u64_if(w, "pcie_width", cur, cur ? g->pcie_width : 0);
	jw_u64_if(w, "pcie_max_gen", v & VRAMZ_I_PCIE_MAX, gi->pcie_max_gen);
	jw_u64_if(w, "pcie_max_width", v & VRAMZ_I_PCIE_MAX, gi->pcie_max_width);
	if (cur && (v & VRAMZ_I_PCIE_MAX))
		jw_bool(w, "pcie_below_max", link_below_max(gi, g));
	else
		jw_null(w, "pcie_below_max");
	jw_u64_if(w, "nvlink_count", v & VRAMZ_I_NVLINK, gi->nvlink_count);
	if (v & VRAMZ_I_MIG) {
		jw_bool(w, "mig_enabled", gi->mig_current);
		jw_bool(w, "mig_pending", gi->mig_pending);
	} else {
		jw_null(w, "mig_enabled");
		jw_null(w, "mig_pending");
	}
	if (v & VRAMZ_I_ECC) {
		jw_bool(w, "ecc_enabled", gi->ecc_current);
		jw_bool(w, "ecc_pending", gi->ecc_pending);
	} else {
		jw_null(w, "ecc_enabled");
		jw_null(w, "ecc_pending");
	}
	if (v & VRAMZ_I_PERSIST)
		jw_bool(w, "persistence_mode", gi->persistence);
	else
		jw_null(w, "persistence_mode");
	int pl = g && !g->lost && (g->valid & VRAMZ_F_POWER_LIMIT);
	jw_u64_if(w, "power_limit_mw", pl, pl ? g->power_limit_mw : 0);
	jw_u64_if(w, "power_default_limit_mw", v & VRAMZ_I_POWER_LIMITS, gi->power_default_limit_mw);
	jw_u64_if(w, "power_min_limit_mw", v & VRAMZ_I_POWER_LIMITS, gi->power_min_limit_mw);
	jw_u64_if(w, "power_max_limit_mw", v & VRAMZ_I_POWER_LIMITS, gi->power_max_limit_mw);
	jw_i64_if(w, "temp_slowdown_c", v & VRAMZ_I_T_SLOWDOWN, gi->temp_slowdown_c);
	jw_i64_if(w, "temp_shutdown_c", v & VRAMZ_I_T_SHUTDOWN, gi->temp_shutdown_c);
	jw_i64_if(w, "temp_gpu_max_c", v & VRAMZ_I_T_GPU_MAX, gi->temp_gpu_max_c);
	jw_i64_if(w, "temp_mem_max_c", v & VRAMZ_I_T_MEM_MAX, gi->temp_mem_max_c);
	/* VRAM health: the field table's health rows, null where unsupported */
	jw_obj(w, "health");
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if (f->valid_bit & (FIELD_HEALTH_BITS | VRAMZ_F_XID))
			jw_u64_if(w, f->name, g && field_valid(f, g), g ? (uint64_t)field_get(f, g) : 0);
	}
	jw_end_obj(w);
	jw_end_obj(w);
}

const struct opt info_opts[] = {OPT_GPUS, OPT_JSON, OPT_LIVE, OPT_NOCOLOR, OPT_END};
const char info_synopsis[] = "[-g LIST] [--json]";
const char info_about[] =
	"Hardware facts per GPU: memory type, bus width and bandwidth, PCIe link\n"
	"now and at most, NVLink, MIG / ECC / persistence, limits, versions.";

int cmd_info(const struct cmd_args *args)
{
	(void)args;
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	int ex = source_open_sample(&ctx, VRAMZ_SAMPLE_LINK | VRAMZ_SAMPLE_HEALTH, &snap);
	if (ex)
		return ex;
	const vramz_system_info *s = vramz_system(ctx);
	struct jsonw w;
	if (g_opts.json) {
		jw_init(&w, stdout, 1);
		json_begin(&w, "info", ctx, snap);
		jw_arr(&w, "gpus");
	} else {
		source_line(stdout, ctx);
		/* a line per backend: a mixed machine has NVIDIA's and AMD's */
		for (unsigned k = 0; k < vramz_backend_count(ctx); k++) {
			const vramz_backend_info *bi = vramz_backend(ctx, k);
			const char *drv = *bi->driver_version ? bi->driver_version : "-";
			if (strcmp(bi->name, "nvml") && strcmp(bi->name, "daemon")) {
				printf("%s driver %s\n", bi->name, drv);
				continue;
			}
			char cuda[16] = "-";
			if (s->nvidia.cuda_driver_version)
				snprintf(cuda, sizeof cuda, "%d.%d", s->nvidia.cuda_driver_version / 1000,
					 s->nvidia.cuda_driver_version % 1000 / 10);
			printf("Driver %s   NVML %s   CUDA (driver API) %s\n", drv,
			       *s->nvidia.nvml_version ? s->nvidia.nvml_version : "-", cuda);
		}
		putchar('\n');
	}
	for (unsigned i = 0; i < snap->gpu_count; i++) {
		const vramz_gpu_sample *g = &snap->gpus[i];
		vramz_gpu_details(ctx, g->index);
		const vramz_gpu_info *gi = vramz_gpu(ctx, g->index);
		if (g_opts.json) {
			json_info(&w, gi, g);
		} else {
			print_gpu(gi, g);
			if (i + 1 < snap->gpu_count)
				putchar('\n');
		}
	}
	if (g_opts.json) {
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_finish(&w);
	}
	cli_close(ctx);
	return EXIT_OK;
}
