/* SPDX-License-Identifier: Apache-2.0 */
/* prom_dcgm.c - `vramz serve --dcgm-names`: the readings that NVIDIA's
 * dcgm-exporter also serves, under its names, units and labels, so the
 * Grafana dashboards and alerts written for it work on vramz without the
 * recording rules of packaging/prometheus-recording.yml.
 *
 * Which field has which DCGM name, and the factor to DCGM's unit, is a
 * column of the field table (lib/fields.c); this file only writes them.
 * Labels as dcgm-exporter's: gpu, UUID, pci_bus_id, device ("nvidia0",
 * the /dev node: the driver's /proc file, else NVML's minor number),
 * modelName, Hostname (its name set by --dcgm-hostname-label, as
 * dcgm-exporter renamed it "hostname") and DCGM_FI_DRIVER_VERSION, the
 * one label of its default counters.  dcgm-exporter adds pod,
 * namespace and container from the kubelet; these series are per GPU and
 * a GPU may be shared by several pods, so they carry none (the --procs
 * series carry them per process).  Only NVIDIA GPUs get DCGM series, as
 * only they have them.
 */
#include "format/prom.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"

static void dcgm_label(struct prom_buf *b, const char *key, const char *value, int first)
{
	if (!value || !*value)
		return;
	if (!first)
		prom_buf_put(b, ",", 1);
	prom_buf_puts(b, key);
	prom_buf_put(b, "=\"", 2);
	prom_buf_label_value(b, value);
	prom_buf_put(b, "\"", 1);
}

static void series(struct prom_buf *b, const struct prom_input *in, const char *name,
		   unsigned idx)
{
	const vramz_gpu_info *gi = prom_info_of(in, idx);
	char num[16];
	snprintf(num, sizeof num, "%u", idx);
	prom_buf_puts(b, name);
	prom_buf_put(b, "{", 1);
	dcgm_label(b, "gpu", num, 1);
	if (gi) {
		dcgm_label(b, "UUID", gi->uuid, 0);
		dcgm_label(b, "pci_bus_id", gi->pci_bus_id, 0);
	}
	char node[PROM_DEVICE_LEN] = "";
	if (in->device && idx < in->info_count && in->device[idx][0])
		snprintf(node, sizeof node, "%s", in->device[idx]);
	else if (gi && (gi->valid & VRAMZ_I_MINOR))
		snprintf(node, sizeof node, "nvidia%u", gi->minor_number);
	dcgm_label(b, "device", node, 0);
	if (gi)
		dcgm_label(b, "modelName", gi->name, 0);
	dcgm_label(b, in->hostname_label ? in->hostname_label : "Hostname", in->hostname, 0);
	dcgm_label(b, "DCGM_FI_DRIVER_VERSION", prom_driver_of(in, idx), 0);
	prom_buf_put(b, "} ", 2);
}

/* v in the field's unit, times scale, in DCGM's: an exact decimal for a
 * power of ten, else whole units rounded down (MiB). */
static void put_value(struct prom_buf *b, int64_t v, double scale)
{
	double e = log10(scale);
	if (fabs(e - round(e)) < 1e-9) {
		prom_buf_scaled(b, v, scale);
		return;
	}
	char num[32];
	double inv = 1 / scale;
	if (v >= 0 && fabs(inv - round(inv)) < 1e-9)
		snprintf(num, sizeof num, "%llu",
			 (unsigned long long)((uint64_t)v / (uint64_t)llround(inv)));
	else
		snprintf(num, sizeof num, "%.0f", floor((double)v * scale));
	prom_buf_puts(b, num);
}

void prom_render_dcgm(struct prom_buf *b, const struct prom_input *in)
{
	const vramz_snapshot *s = in->snap;
	char line[512];
	for (size_t k = 0; k < gpu_field_count; k++) {
		const struct field *f = &gpu_fields[k];
		if (!f->dcgm)
			continue;
		snprintf(line, sizeof line, "# HELP %s %s dcgm-exporter's name%s%s, in its unit.\n"
			 "# TYPE %s %s\n", f->dcgm, f->help, f->prom ? " for vramz_" : "",
			 f->prom ? f->prom : "", f->dcgm, f->prom_type);
		prom_buf_puts(b, line);
		for (unsigned i = 0; s && i < s->gpu_count; i++) {
			const vramz_gpu_sample *g = &s->gpus[i];
			const vramz_gpu_info *gi = prom_info_of(in, g->index);
			if (!field_valid(f, g) || (gi && *gi->vendor && strcmp(gi->vendor, "nvidia")))
				continue;
			series(b, in, f->dcgm, g->index);
			put_value(b, field_get(f, g), f->dcgm_scale);
			prom_buf_put(b, "\n", 1);
		}
	}
}

/* "00000000:19:00.0" (NVML) -> "0000:19:00.0" (the kernel's, lower case) */
static int kernel_bus_id(const char *nvml, char *out, size_t len)
{
	const char *colon = strchr(nvml, ':');
	if (!colon || colon - nvml < 4 || strlen(colon) + 4 >= len)
		return -1;
	size_t n = 0;
	for (const char *p = colon - 4; *p; p++)
		out[n++] = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
	out[n] = 0;
	return 0;
}

int prom_dcgm_device(const char *procfs, const char *pci_bus_id, char out[PROM_DEVICE_LEN])
{
	char bus[40], path[512], line[256];
	out[0] = 0;
	if (!pci_bus_id || kernel_bus_id(pci_bus_id, bus, sizeof bus))
		return -1;
	snprintf(path, sizeof path, "%s/driver/nvidia/gpus/%s/information", procfs, bus);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned minor;
		char end;
		if (sscanf(line, "Device Minor: %u%c", &minor, &end) == 2 && end == '\n' &&
		    minor < 1000000) {
			snprintf(out, PROM_DEVICE_LEN, "nvidia%u", minor);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
