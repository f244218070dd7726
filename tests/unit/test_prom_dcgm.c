/* SPDX-License-Identifier: Apache-2.0 */
/* test_prom_dcgm.c - dcgm-exporter's series (`serve --dcgm-names`) from
 * hand-built snapshots: DCGM's units (whole MiB rounded down, exact W),
 * its labels in its order, nothing for unknown readings, lost GPUs or
 * other vendors' GPUs, and the device node read from the driver's /proc
 * file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fields.h"
#include "format/prom.h"
#include "tmpdir.h"

#define MIB (1024ull * 1024)

struct world {
	vramz_gpu_info info[3];
	vramz_gpu_sample gpus[3];
	vramz_snapshot snap;
	char device[3][PROM_DEVICE_LEN];
	struct prom_input in;
	struct prom_buf b;
};

static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof *w);
	for (unsigned i = 0; i < 3; i++) {
		vramz_gpu_info *gi = &w->info[i];
		gi->index = i;
		snprintf(gi->name, sizeof gi->name, i == 2 ? "AMD Instinct MI300X" : "NVIDIA H200");
		snprintf(gi->uuid, sizeof gi->uuid, "GPU-%u", i);
		snprintf(gi->pci_bus_id, sizeof gi->pci_bus_id, "00000000:%02X:00.0", 0x19 + i);
		snprintf(gi->vendor, sizeof gi->vendor, i == 2 ? "amd" : "nvidia");
		vramz_gpu_sample *g = &w->gpus[i];
		g->index = i;
		g->valid = VRAMZ_F_MEM | VRAMZ_F_POWER | VRAMZ_F_UTIL | VRAMZ_F_ENERGY;
		g->mem_total_bytes = 143771 * MIB;
		/* a MiB less one byte over 1000 MiB: DCGM shows 1000 */
		g->mem_used_bytes = 1000 * MIB + MIB - 1;
		g->mem_free_bytes = g->mem_total_bytes - g->mem_used_bytes;
		g->power_mw = 318123;
		g->util_gpu_pct = 45;
		g->util_mem_pct = 7;
		g->energy_mj = 123456789012ull;
	}
	snprintf(w->device[0], PROM_DEVICE_LEN, "nvidia3");
	w->snap.gpu_count = 3;
	w->snap.gpus = w->gpus;
	w->in.info = w->info;
	w->in.info_count = 3;
	w->in.snap = &w->snap;
	w->in.flags = PROM_DCGM;
	w->in.hostname = "gpu-node-7";
	w->in.device = (const char(*)[PROM_DEVICE_LEN])w->device;
	prom_buf_init(&w->b);
	return w;
}

static const char *render(struct world *w)
{
	prom_buf_reset(&w->b);
	prom_render_dcgm(&w->b, &w->in);
	assert_false(w->b.oom);
	return w->b.p;
}

static void has(const char *body, const char *line)
{
	if (!strstr(body, line))
		fail_msg("expected '%s' in:\n%s", line, body);
}

static void hasnt(const char *body, const char *text)
{
	if (strstr(body, text))
		fail_msg("unexpected '%s' in:\n%s", text, body);
}

static void test_units_and_labels(void **st)
{
	(void)st;
	struct world *w = world_new();
	const char *b = render(w);
	has(b, "# TYPE DCGM_FI_DEV_FB_USED gauge\n");
	has(b, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\","
	       "device=\"nvidia3\",modelName=\"NVIDIA H200\",Hostname=\"gpu-node-7\"} 1000\n");
	has(b, "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:1A:00.0\","
	       "modelName=\"NVIDIA H200\",Hostname=\"gpu-node-7\"} 1000\n");
	has(b, "DCGM_FI_DEV_FB_TOTAL{gpu=\"0\",");
	has(b, "} 143771\n");
	has(b, "DCGM_FI_DEV_FB_FREE{gpu=\"0\",");
	has(b, "} 142770\n"); /* 143771 MiB - 1001 MiB + 1 byte, rounded down */
	has(b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:1A:00.0\","
	       "modelName=\"NVIDIA H200\",Hostname=\"gpu-node-7\"} 318.123\n");
	has(b, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",");
	has(b, "} 45\n");
	has(b, "DCGM_FI_DEV_MEM_COPY_UTIL{gpu=\"0\",");
	has(b, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n");
	has(b, "} 123456789012\n"); /* mJ, as DCGM's */
	/* the HELP names vramz's own series */
	has(b, "# HELP DCGM_FI_DEV_FB_USED Memory in use (nvidia-smi memory.used). dcgm-exporter's "
	       "name for vramz_memory_used_bytes, in its unit.\n");
	/* unknown here: no sample, but the family is declared */
	has(b, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n");
	hasnt(b, "DCGM_FI_DEV_GPU_TEMP{");
	hasnt(b, "DCGM_FI_DEV_FB_RESERVED{");
	/* vramz's own fields have no DCGM name */
	hasnt(b, "unattributed");
	/* an AMD GPU is not dcgm-exporter's */
	hasnt(b, "gpu=\"2\"");
	hasnt(b, "MI300X");
	prom_buf_free(&w->b);
	free(w);
}

static void test_absent_inputs(void **st)
{
	(void)st;
	struct world *w = world_new();
	w->gpus[1].lost = 1;
	w->in.hostname = NULL;
	w->in.device = NULL;
	const char *b = render(w);
	has(b, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\","
	       "modelName=\"NVIDIA H200\"} 1000\n");
	hasnt(b, "gpu=\"1\"");
	hasnt(b, "Hostname");
	hasnt(b, "device=");
	/* no sample at all: the families, no series */
	w->in.snap = NULL;
	b = render(w);
	has(b, "# TYPE DCGM_FI_DEV_FB_USED gauge\n");
	hasnt(b, "{");
	/* prom_render adds them only when asked */
	w->in.snap = &w->snap;
	w->in.flags = 0;
	prom_buf_reset(&w->b);
	assert_int_equal(prom_render(&w->b, &w->in), 0);
	hasnt(w->b.p, "DCGM");
	/* the marker the recording rules skip a target by */
	has(w->b.p, "\nvramz_dcgm_names 0\n");
	w->in.flags = PROM_DCGM;
	prom_buf_reset(&w->b);
	assert_int_equal(prom_render(&w->b, &w->in), 0);
	has(w->b.p, "\nvramz_dcgm_names 1\n");
	has(w->b.p, "DCGM_FI_DEV_FB_USED{gpu=\"0\"");
	has(w->b.p, "vramz_memory_used_bytes{gpu=\"0\"");
	prom_buf_free(&w->b);
	free(w);
}

/* The driver label (each GPU's backend's), the host name's label by
 * another name, and the device node from NVML's minor number where the
 * /proc file gave none (the file's wins). */
static void test_driver_hostname_minor(void **st)
{
	(void)st;
	struct world *w = world_new();
	vramz_backend_info bk = {.gpu_first = 0, .gpu_count = 2};
	snprintf(bk.driver_version, sizeof bk.driver_version, "580.159.04");
	w->in.backends = &bk;
	w->in.backend_count = 1;
	w->in.hostname_label = "hostname";
	w->info[0].valid |= VRAMZ_I_MINOR;
	w->info[0].minor_number = 9;
	w->info[1].valid |= VRAMZ_I_MINOR;
	w->info[1].minor_number = 6;
	const char *b = render(w);
	has(b, "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:19:00.0\","
	       "device=\"nvidia3\",modelName=\"NVIDIA H200\",hostname=\"gpu-node-7\","
	       "DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 1000\n");
	has(b, "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000000:1A:00.0\","
	       "device=\"nvidia6\",modelName=\"NVIDIA H200\",hostname=\"gpu-node-7\","
	       "DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 1000\n");
	hasnt(b, "Hostname");
	hasnt(b, "nvidia9");
	prom_buf_free(&w->b);
	free(w);
}

/* Every DCGM name is dcgm-exporter's form, once, on a field that has a
 * Prometheus type. */
static void test_table(void **st)
{
	(void)st;
	unsigned n = 0;
	for (size_t i = 0; i < gpu_field_count; i++) {
		const struct field *f = &gpu_fields[i];
		if (!f->dcgm)
			continue;
		n++;
		assert_int_equal(strncmp(f->dcgm, "DCGM_FI_DEV_", 12), 0);
		assert_true(f->dcgm_scale > 0);
		for (size_t j = i + 1; j < gpu_field_count; j++)
			if (gpu_fields[j].dcgm && !strcmp(gpu_fields[j].dcgm, f->dcgm))
				fail_msg("%s twice", f->dcgm);
	}
	assert_true(n >= 9); /* dcgm-exporter's names (docs/metrics.md): FB x3, temps x2, power, util, clocks x2 */
	assert_string_equal(field_by_name("mem_used_bytes")->dcgm, "DCGM_FI_DEV_FB_USED");
	assert_string_equal(field_by_name("clock_mem_mhz")->dcgm, "DCGM_FI_DEV_MEM_CLOCK");
}

static void test_device_node(void **st)
{
	(void)st;
	char dir[TMPDIR_LEN], p[256], out[PROM_DEVICE_LEN];
	assert_int_equal(tmpdir_make(dir, "dcgm"), 0);
	snprintf(p, sizeof p, "%s/driver", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/driver/nvidia", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/driver/nvidia/gpus", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/driver/nvidia/gpus/0000:1a:00.0", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/driver/nvidia/gpus/0000:1a:00.0/information", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("Model: \t\t NVIDIA H200\nIRQ:   \t\t 17\nDevice Minor: \t 7\nGPU Excluded:\t No\n", f);
	fclose(f);
	/* NVML's form (8-digit domain, upper case) finds the kernel's */
	assert_int_equal(prom_dcgm_device(dir, "00000000:1A:00.0", out), 0);
	assert_string_equal(out, "nvidia7");
	assert_int_equal(prom_dcgm_device(dir, "00000000:1B:00.0", out), -1);
	assert_string_equal(out, "");
	assert_int_equal(prom_dcgm_device(dir, "garbage", out), -1);
	assert_int_equal(prom_dcgm_device(dir, NULL, out), -1);
	f = fopen(p, "w");
	fputs("Model: \t\t NVIDIA H200\nDevice Minor: \t x\n", f);
	fclose(f);
	assert_int_equal(prom_dcgm_device(dir, "00000000:1A:00.0", out), -1);
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_and_labels),
		cmocka_unit_test(test_absent_inputs),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_driver_hostname_minor),
		cmocka_unit_test(test_device_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
