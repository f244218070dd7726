/* SPDX-License-Identifier: Apache-2.0 */
/* prom.c - renders a snapshot as Prometheus text format 0.0.4 (prom.h).
 *
 * The text format wants every sample of one metric family together, under
 * its HELP and TYPE lines, so rendering walks metric-major: for each
 * metric, every GPU (or process) that has a value.  Per-GPU sample metrics
 * come straight from the field table, with the table's scale to base
 * units; a field whose validity bit is clear, or a lost GPU, yields no
 * line at all.  Scaled values are written as exact decimals (45 % is
 * "0.45", 1410 MHz is "1410000000"), not through binary floating point.
 *
 * The output is rebuilt from the snapshot every time, so a process that
 * has exited simply has no series in the next body.
 */
#include "format/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "fields.h"
#include "procfields.h"

static void put_double(struct prom_buf *b, double v)
{
	if (isnan(v))
		prom_buf_puts(b, "NaN");
	else if (isinf(v))
		prom_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
	else
		prom_buf_printf(b, "%.15g", v);
}

static void help_type(struct prom_buf *b, const char *name, const char *help,
		      const char *type)
{
	/* HELP text escapes backslash and newline; ours are static strings
	 * without either, so they go out as they are. */
	prom_buf_printf(b, "# HELP vramz_%s %s\n# TYPE vramz_%s %s\n", name, help, name, type);
}

/* `vramz_NAME{gpu="0",uuid="GPU-..."` without the closing brace, so a
 * caller may add labels. */
static void gpu_series(struct prom_buf *b, const struct prom_input *in,
		       const char *name, unsigned idx)
{
	const vramz_gpu_info *gi = prom_info_of(in, idx);
	prom_buf_printf(b, "vramz_%s{gpu=\"%u\"", name, idx);
	if (gi && *gi->uuid) {
		prom_buf_puts(b, ",uuid=\"");
		prom_buf_label_value(b, gi->uuid);
		prom_buf_put(b, "\"", 1);
	}
}

static void label(struct prom_buf *b, const char *key, const char *value)
{
	if (!value || !*value)
		return; /* an empty label is the same as no label */
	prom_buf_printf(b, ",%s=\"", key);
	prom_buf_label_value(b, value);
	prom_buf_put(b, "\"", 1);
}

/* ---- GPU identity and static facts ------------------------------------- */

/* The backend indices described: the snapshot's GPUs, else the selection. */
static unsigned gpu_count(const struct prom_input *in)
{
	if (in->snap)
		return in->snap->gpu_count;
	return in->sel ? in->sel_count : in->info_count;
}

static unsigned gpu_at(const struct prom_input *in, unsigned i)
{
	if (in->snap)
		return in->snap->gpus[i].index;
	return in->sel ? in->sel[i] : i;
}

static void render_identity(struct prom_buf *b, const struct prom_input *in)
{
	unsigned n = gpu_count(in);
	help_type(b, "gpu_info", "Identity of a GPU; the value is always 1.", "gauge");
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = gpu_at(in, i);
		const vramz_gpu_info *gi = prom_info_of(in, idx);
		gpu_series(b, in, "gpu_info", idx);
		if (gi) {
			label(b, "name", gi->name);
			label(b, "pci_bus_id", gi->pci_bus_id);
			label(b, "vendor", gi->vendor); /* a mixed machine's dashboards split by it */
		}
		label(b, "driver", prom_driver_of(in, idx));
		prom_buf_puts(b, "} 1\n");
	}

	help_type(b, "nvlink_active_links", "NVLinks of a GPU that are up.", "gauge");
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = gpu_at(in, i);
		const vramz_gpu_info *gi = prom_info_of(in, idx);
		if (!gi || !(gi->valid & VRAMZ_I_NVLINK))
			continue;
		gpu_series(b, in, "nvlink_active_links", idx);
		prom_buf_printf(b, "} %u\n", gi->nvlink_count);
	}
	help_type(b, "pcie_max_link_generation",
		  "Highest PCIe generation the GPU and its slot support.", "gauge");
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = gpu_at(in, i);
		const vramz_gpu_info *gi = prom_info_of(in, idx);
		if (!gi || !(gi->valid & VRAMZ_I_PCIE_MAX))
			continue;
		gpu_series(b, in, "pcie_max_link_generation", idx);
		prom_buf_printf(b, "} %u\n", gi->pcie_max_gen);
	}
	help_type(b, "pcie_max_link_width", "Widest PCIe link (lanes) the GPU supports.", "gauge");
	for (unsigned i = 0; i < n; i++) {
		unsigned idx = gpu_at(in, i);
		const vramz_gpu_info *gi = prom_info_of(in, idx);
		if (!gi || !(gi->valid & VRAMZ_I_PCIE_MAX))
			continue;
		gpu_series(b, in, "pcie_max_link_width", idx);
		prom_buf_printf(b, "} %u\n", gi->pcie_max_width);
	}
}

/* ---- per-GPU samples --------------------------------------------------- */

static const struct {
	uint64_t bit;
	const char *reason;
} throttle_names[] = {
	{VRAMZ_THR_GPU_IDLE, "gpu_idle"},
	{VRAMZ_THR_APP_CLOCKS, "applications_clocks"},
	{VRAMZ_THR_SW_POWER_CAP, "sw_power_cap"},
	{VRAMZ_THR_HW_SLOWDOWN, "hw_slowdown"},
	{VRAMZ_THR_SYNC_BOOST, "sync_boost"},
	{VRAMZ_THR_SW_THERMAL, "sw_thermal"},
	{VRAMZ_THR_HW_THERMAL, "hw_thermal"},
	{VRAMZ_THR_HW_POWER_BRAKE, "hw_power_brake"},
	{VRAMZ_THR_DISPLAY_CLOCKS, "display_clocks"},
};

static void render_gpu_samples(struct prom_buf *b, const struct prom_input *in)
{
	const vramz_snapshot *s = in->snap;

	help_type(b, "gpu_lost", "1 when the GPU has fallen off the bus.", "gauge");
	for (unsigned i = 0; i < s->gpu_count; i++) {
		gpu_series(b, in, "gpu_lost", s->gpus[i].index);
		prom_buf_printf(b, "} %d\n", s->gpus[i].lost ? 1 : 0);
	}

	for (size_t k = 0; k < gpu_field_count; k++) {
		const struct field *f = &gpu_fields[k];
		if (!f->prom)
			continue;
		help_type(b, f->prom, f->help, f->prom_type);
		for (unsigned i = 0; i < s->gpu_count; i++) {
			const vramz_gpu_sample *g = &s->gpus[i];
			if (!field_valid(f, g))
				continue;
			gpu_series(b, in, f->prom, g->index);
			prom_buf_puts(b, "} ");
			prom_buf_scaled(b, field_get(f, g), f->prom_scale);
			prom_buf_put(b, "\n", 1);
		}
	}

	help_type(b, "clock_throttle_reason",
		  "1 while this reason holds the clocks down (NVML clock event reasons).",
		  "gauge");
	for (unsigned i = 0; i < s->gpu_count; i++) {
		const vramz_gpu_sample *g = &s->gpus[i];
		if (g->lost || !(g->valid & VRAMZ_F_THROTTLE))
			continue;
		for (size_t r = 0; r < sizeof throttle_names / sizeof throttle_names[0]; r++) {
			gpu_series(b, in, "clock_throttle_reason", g->index);
			prom_buf_printf(b, ",reason=\"%s\"} %d\n", throttle_names[r].reason,
				(g->throttle_reasons & throttle_names[r].bit) ? 1 : 0);
		}
	}

	help_type(b, "processes", "Processes holding a context on the GPU.", "gauge");
	for (unsigned i = 0; i < s->gpu_count; i++) {
		const vramz_gpu_sample *g = &s->gpus[i];
		if (g->lost || !(g->valid & VRAMZ_F_PROCS))
			continue;
		gpu_series(b, in, "processes", g->index);
		prom_buf_printf(b, "} %u\n", g->proc_count);
	}
}

/* ---- MIG instances ----------------------------------------------------- */

static void render_mig(struct prom_buf *b, const struct prom_input *in)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} m[] = {
		{"mig_memory_total_bytes", "Memory of a MIG GPU instance.",
		 offsetof(vramz_mig_sample, mem_total_bytes)},
		{"mig_memory_used_bytes", "Memory in use in a MIG GPU instance.",
		 offsetof(vramz_mig_sample, mem_used_bytes)},
		{"mig_memory_free_bytes", "Memory free in a MIG GPU instance.",
		 offsetof(vramz_mig_sample, mem_free_bytes)},
	};
	const vramz_snapshot *s = in->snap;
	if (!s->mig_count)
		return;
	for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
		help_type(b, m[k].name, m[k].help, "gauge");
		for (unsigned i = 0; i < s->mig_count; i++) {
			const vramz_mig_sample *mg = &s->migs[i];
			if (!(mg->valid & VRAMZ_F_MEM))
				continue;
			gpu_series(b, in, m[k].name, mg->parent_index);
			prom_buf_printf(b, ",gpu_instance=\"%u\",compute_instance=\"%u\"", mg->gi_id, mg->ci_id);
			label(b, "mig_uuid", mg->uuid);
			prom_buf_printf(b, "} %llu\n",
				(unsigned long long)*(const uint64_t *)((const char *)mg + m[k].off));
		}
	}
}

/* ---- processes --------------------------------------------------------- */

/* Per-process series and their labels both come from lib/procfields.c. */
static void proc_series(struct prom_buf *b, const struct prom_input *in,
			const char *name, const vramz_proc_sample *p, const char *part)
{
	gpu_series(b, in, name, p->gpu_index);
	prom_buf_printf(b, ",pid=\"%u\"", p->pid);
	if (part)
		prom_buf_printf(b, ",part=\"%s\"", part);
	for (size_t i = 0; i < proc_field_count; i++) {
		const struct proc_field *f = &proc_fields[i];
		if (f->prom_label && f->kind == PC_STR && proc_field_valid(f, p))
			label(b, proc_field_label(f), (const char *)p + f->offset);
	}
	prom_buf_puts(b, "} ");
}

static void render_procs(struct prom_buf *b, const struct prom_input *in)
{
	const vramz_snapshot *s = in->snap;
	for (size_t k = 0; k < proc_field_count; k++) {
		const struct proc_field *f = &proc_fields[k];
		if (!f->prom)
			continue;
		/* rows of one metric (its part label) are adjacent: one HELP */
		if (!f->part || k == 0 || !proc_fields[k - 1].prom ||
		    strcmp(proc_fields[k - 1].prom, f->prom))
			help_type(b, f->prom, f->help, f->prom_counter ? "counter" : "gauge");
		for (unsigned i = 0; i < s->proc_count; i++) {
			const vramz_proc_sample *p = &s->procs[i];
			if (!proc_field_valid(f, p))
				continue;
			proc_series(b, in, f->prom, p, f->part);
			prom_buf_scaled(b, (int64_t)proc_field_u64(f, p), f->prom_scale);
			prom_buf_put(b, "\n", 1);
		}
	}
}

/* ---- the exporter itself ----------------------------------------------- */

static void render_exporter(struct prom_buf *b, const struct prom_input *in)
{
	const struct prom_exporter *e = &in->exporter;
	help_type(b, "up", "1 when the last sample read at least one GPU.", "gauge");
	prom_buf_printf(b, "vramz_up %d\n", e->up ? 1 : 0);
	help_type(b, "build_info", "vramz version; the value is always 1.", "gauge");
	prom_buf_puts(b, "vramz_build_info{version=\"" VRAMZ_VERSION_STRING "\"} 1\n");
	/* the recording rules of packaging/prometheus-recording.yml skip a
	 * target that says 1 here, so no DCGM series comes twice */
	help_type(b, "dcgm_names",
		  "1 when this exporter serves dcgm-exporter's names itself (--dcgm-names).",
		  "gauge");
	prom_buf_printf(b, "vramz_dcgm_names %d\n", in->flags & PROM_DCGM ? 1 : 0);
	help_type(b, "sample_duration_seconds",
		  "Time the last background sample took (reading GPUs and rendering); "
		  "scrapes only copy its result.",
		  "gauge");
	if (e->sample_duration_s >= 0) {
		prom_buf_puts(b, "vramz_sample_duration_seconds ");
		put_double(b, e->sample_duration_s);
		prom_buf_put(b, "\n", 1);
	}
	help_type(b, "last_sample_time_seconds",
		  "Unix time of the sample this body shows.", "gauge");
	if (e->last_sample_unix_s > 0) {
		prom_buf_puts(b, "vramz_last_sample_time_seconds ");
		prom_buf_printf(b, "%.3f\n", e->last_sample_unix_s);
	}
	help_type(b, "samples_total", "Background samples taken since start.", "counter");
	prom_buf_printf(b, "vramz_samples_total %llu\n", (unsigned long long)e->samples_total);
	help_type(b, "sample_errors_total", "Background samples that read no GPU.", "counter");
	prom_buf_printf(b, "vramz_sample_errors_total %llu\n", (unsigned long long)e->sample_errors_total);
}

int prom_render(struct prom_buf *b, const struct prom_input *in)
{
	render_identity(b, in);
	if (in->snap) {
		render_gpu_samples(b, in);
		render_mig(b, in);
		if (in->flags & PROM_PROCS)
			render_procs(b, in);
	}
	if (in->flags & PROM_DCGM)
		prom_render_dcgm(b, in);
	render_exporter(b, in);
	return b->oom ? VRAMZ_ENOMEM : 0;
}

/* ---- diagnosis figures ------------------------------------------------- */

static void finding_series(struct prom_buf *b, const struct prom_input *in,
			   const struct kind_series *ks, const vramz_finding *f)
{
	gpu_series(b, in, ks->metric, (unsigned)f->gpu);
	if (f->pid)
		prom_buf_printf(b, ",pid=\"%u\"", f->pid);
	if (ks->site_label && (f->figures & VRAMZ_FG_SITE))
		label(b, "site", f->site);
	prom_buf_puts(b, "} ");
}

int prom_render_findings(struct prom_buf *b, const struct prom_input *in,
			 const vramz_finding *f, unsigned n)
{
	for (unsigned k = VRAMZ_FK_LEAK; k < VRAMZ_FK_COUNT; k++)
		for (unsigned s = 0; s < KIND_SERIES_MAX; s++) {
			const struct kind_series *ks = &finding_kinds[k].series[s];
			if (!ks->metric)
				continue;
			help_type(b, ks->metric, ks->help, "gauge");
			for (unsigned i = 0; i < n; i++) {
				double num;
				uint64_t count;
				int has = f[i].kind == finding_kinds[k].kind && f[i].gpu >= 0 ?
					  kind_figure(&f[i], ks->figure, &num, &count) : 0;
				if (!has)
					continue;
				finding_series(b, in, ks, &f[i]);
				if (has == 1) {
					put_double(b, num);
					prom_buf_put(b, "\n", 1);
				} else {
					prom_buf_printf(b, "%llu\n", (unsigned long long)count);
				}
			}
		}
	return b->oom ? VRAMZ_ENOMEM : 0;
}
