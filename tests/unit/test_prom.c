/* SPDX-License-Identifier: Apache-2.0 */
/* test_prom.c - the Prometheus rendering from hand-built snapshots: what a
 * scraper would see (names, labels, base-unit values, missing samples for
 * unknown values, escaping), and, when promtool is installed, that the body
 * passes `promtool check metrics`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/prom.h"

#define MIB (1024ull * 1024)

struct world {
	vramz_system_info sys;
	vramz_gpu_info info[8];
	vramz_gpu_sample gpus[8];
	vramz_proc_sample procs[256];
	vramz_mig_sample migs[4];
	vramz_snapshot snap;
	struct prom_input in;
	struct prom_buf b;
};

static void gpu_full(struct world *w, unsigned i)
{
	vramz_gpu_info *gi = &w->info[i];
	gi->index = i;
	snprintf(gi->name, sizeof gi->name, "NVIDIA H200");
	snprintf(gi->uuid, sizeof gi->uuid, "GPU-0000000%u-aaaa-bbbb-cccc-dddddddddddd", i);
	snprintf(gi->pci_bus_id, sizeof gi->pci_bus_id, "00000000:%02X:00.0", 0x19 + i);
	snprintf(gi->vendor, sizeof gi->vendor, "nvidia");
	gi->valid |= VRAMZ_I_NVLINK | VRAMZ_I_PCIE_MAX;
	gi->nvlink_count = 18;
	gi->pcie_max_gen = 5;
	gi->pcie_max_width = 16;

	vramz_gpu_sample *g = &w->gpus[i];
	g->index = i;
	g->valid = VRAMZ_F_MEM | VRAMZ_F_MEM_RESERVED | VRAMZ_F_UTIL | VRAMZ_F_TEMP |
		   VRAMZ_F_POWER | VRAMZ_F_CLK_SM | VRAMZ_F_CLK_MEM | VRAMZ_F_THROTTLE |
		   VRAMZ_F_PCIE_LINK | VRAMZ_F_ENERGY | VRAMZ_F_PROCS;
	g->mem_total_bytes = 143771 * MIB;
	g->mem_reserved_bytes = 616 * MIB;
	g->mem_used_bytes = 1000 * MIB;
	g->mem_free_bytes = g->mem_total_bytes - g->mem_reserved_bytes - g->mem_used_bytes;
	g->util_gpu_pct = 45;
	g->util_mem_pct = 7;
	g->temp_c = 41;
	g->power_mw = 123456;
	g->clock_sm_mhz = 1980;
	g->clock_mem_mhz = 3201;
	g->throttle_reasons = VRAMZ_THR_SW_POWER_CAP | VRAMZ_THR_GPU_IDLE;
	g->pcie_gen = 5;
	g->pcie_width = 16;
	g->energy_mj = 123456789012ull;
}

static struct world *world_new(unsigned ngpus)
{
	struct world *w = calloc(1, sizeof *w);
	snprintf(w->sys.driver_version, sizeof w->sys.driver_version, "580.159.04");
	for (unsigned i = 0; i < ngpus; i++)
		gpu_full(w, i);
	w->snap.gpu_count = ngpus;
	w->snap.gpus = w->gpus;
	w->snap.procs = w->procs;
	w->snap.migs = w->migs;
	w->in.sys = &w->sys;
	w->in.info = w->info;
	w->in.info_count = ngpus;
	w->in.snap = &w->snap;
	w->in.exporter.up = 1;
	w->in.exporter.sample_duration_s = 0.000066;
	w->in.exporter.last_sample_unix_s = 1800000000.5;
	w->in.exporter.samples_total = 3;
	prom_buf_init(&w->b);
	return w;
}

static void world_free(struct world *w)
{
	prom_buf_free(&w->b);
	free(w);
}

static vramz_proc_sample *add_proc(struct world *w, unsigned gpu, uint32_t pid,
				   uint64_t used, const char *user, const char *comm)
{
	vramz_proc_sample *p = &w->procs[w->snap.proc_count++];
	memset(p, 0, sizeof *p);
	p->gpu_index = gpu;
	p->pid = pid;
	p->valid = VRAMZ_P_USED;
	p->used_bytes = used;
	if (user) {
		p->valid |= VRAMZ_P_VISIBLE;
		snprintf(p->user, sizeof p->user, "%s", user);
		snprintf(p->comm, sizeof p->comm, "%s", comm);
	}
	w->gpus[gpu].proc_count++;
	return p;
}

static const char *render(struct world *w)
{
	prom_buf_reset(&w->b);
	assert_int_equal(prom_render(&w->b, &w->in), 0);
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

/* Runs promtool check metrics on body when promtool is installed. */
static void promtool_ok(const char *body)
{
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return;
	char path[] = "/tmp/vramz-prom-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(body, f);
	fclose(f);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "promtool check metrics < %s", path);
	int rc = system(cmd);
	unlink(path);
	if (rc != 0)
		fail_msg("promtool check metrics failed on:\n%s", body);
}

static void test_gpu_values_in_base_units(void **state)
{
	struct world *w = world_new(2);
	const char *b = render(w);
	has(b, "# TYPE vramz_memory_used_bytes gauge\n");
	has(b, "vramz_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 1048576000\n");
	has(b, "vramz_memory_total_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 150754820096\n");
	has(b, "vramz_utilization_gpu_ratio{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 0.45\n");
	has(b, "vramz_utilization_memory_ratio{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 0.07\n");
	has(b, "vramz_power_watts{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 123.456\n");
	has(b, "vramz_clock_sm_hertz{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 1980000000\n");
	has(b, "vramz_energy_joules_total{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 123456789.012\n");
	has(b, "# TYPE vramz_energy_joules_total counter\n");
	has(b, "vramz_temperature_celsius{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 41\n");
	has(b, "vramz_gpu_info{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",name=\"NVIDIA H200\","
	       "pci_bus_id=\"00000000:19:00.0\",vendor=\"nvidia\",driver=\"580.159.04\"} 1\n");
	has(b, "vramz_nvlink_active_links{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 18\n");
	has(b, "vramz_clock_throttle_reason{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",reason=\"sw_power_cap\"} 1\n");
	has(b, "vramz_clock_throttle_reason{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",reason=\"hw_thermal\"} 0\n");
	has(b, "vramz_gpu_lost{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 0\n");
	has(b, "vramz_up 1\n");
	has(b, "vramz_sample_duration_seconds 6.6e-05\n");
	has(b, "vramz_samples_total 3\n");
	has(b, "# TYPE vramz_samples_total counter\n");
	/* no per-process series unless asked, no timestamps after values */
	hasnt(b, "vramz_process_memory_used_bytes");
	hasnt(b, "hostname");
	promtool_ok(b);
	world_free(w);
}

static void test_unknown_values_have_no_sample(void **state)
{
	struct world *w = world_new(2);
	w->gpus[1].valid &= ~(uint32_t)(VRAMZ_F_TEMP | VRAMZ_F_POWER | VRAMZ_F_THROTTLE);
	w->info[1].valid &= ~(uint32_t)VRAMZ_I_NVLINK;
	const char *b = render(w);
	has(b, "vramz_temperature_celsius{gpu=\"0\"");
	hasnt(b, "vramz_temperature_celsius{gpu=\"1\"");
	hasnt(b, "vramz_power_watts{gpu=\"1\"");
	hasnt(b, "vramz_clock_throttle_reason{gpu=\"1\"");
	hasnt(b, "vramz_nvlink_active_links{gpu=\"1\"");
	/* PCIe throughput was never read: the family is declared, no sample */
	has(b, "# TYPE vramz_pcie_tx_bytes_per_second gauge\n");
	hasnt(b, "vramz_pcie_tx_bytes_per_second{");
	promtool_ok(b);
	world_free(w);
}

static void test_lost_gpu(void **state)
{
	struct world *w = world_new(2);
	vramz_gpu_sample *g = &w->gpus[1];
	memset(g, 0, sizeof *g);
	g->index = 1;
	g->lost = 1;
	const char *b = render(w);
	has(b, "vramz_gpu_lost{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 1\n");
	has(b, "vramz_gpu_lost{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 0\n");
	has(b, "vramz_gpu_info{gpu=\"1\"");
	hasnt(b, "vramz_memory_used_bytes{gpu=\"1\"");
	/* a lost GPU with stale valid bits still shows nothing */
	g->valid = VRAMZ_F_MEM;
	g->mem_used_bytes = 9223372036854775794ull;
	b = render(w);
	hasnt(b, "9223372036854775794");
	promtool_ok(b);
	world_free(w);
}

static void test_no_snapshot_is_down(void **state)
{
	struct world *w = world_new(2);
	w->in.snap = NULL;
	w->in.exporter.up = 0;
	w->in.exporter.sample_errors_total = 3;
	w->in.exporter.sample_duration_s = -1;
	w->in.exporter.last_sample_unix_s = 0;
	const char *b = render(w);
	has(b, "vramz_up 0\n");
	has(b, "vramz_sample_errors_total 3\n");
	has(b, "vramz_gpu_info{gpu=\"1\"");
	hasnt(b, "vramz_memory_used_bytes{");
	hasnt(b, "vramz_gpu_lost{");
	hasnt(b, "\nvramz_sample_duration_seconds ");
	hasnt(b, "\nvramz_last_sample_time_seconds ");
	/* a selection limits the GPUs described */
	unsigned sel[] = {1};
	w->in.sel = sel;
	w->in.sel_count = 1;
	b = render(w);
	hasnt(b, "vramz_gpu_info{gpu=\"0\"");
	has(b, "vramz_gpu_info{gpu=\"1\"");
	promtool_ok(b);
	world_free(w);
}

static void test_processes_behind_flag_and_vanish(void **state)
{
	struct world *w = world_new(2);
	w->gpus[0].proc_first = 0;
	vramz_proc_sample *p = add_proc(w, 0, 4242, 512 * MIB, "alice", "python");
	p->valid |= VRAMZ_P_SM;
	p->sm_pct = 93;
	snprintf(p->container, sizeof p->container, "0123456789ab");
	snprintf(p->slurm_job, sizeof p->slurm_job, "77");
	add_proc(w, 0, 5151, 64 * MIB, NULL, NULL); /* another namespace */
	w->gpus[1].proc_first = 2;
	add_proc(w, 1, 4242, 256 * MIB, "alice", "python");
	w->in.flags = PROM_PROCS;
	const char *b = render(w);
	has(b, "vramz_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\","
	       "pid=\"4242\",user=\"alice\",container_id=\"0123456789ab\",slurm_job=\"77\",comm=\"python\"} 536870912\n");
	has(b, "vramz_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"5151\"} 67108864\n");
	has(b, "vramz_process_memory_used_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\","
	       "pid=\"4242\",user=\"alice\",comm=\"python\"} 268435456\n");
	has(b, "vramz_process_sm_utilization_ratio{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\","
	       "pid=\"4242\",user=\"alice\",container_id=\"0123456789ab\",slurm_job=\"77\",comm=\"python\"} 0.93\n");
	has(b, "vramz_processes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 2\n");
	hasnt(b, "pid=\"5151\",user");
	promtool_ok(b);

	/* the next sample no longer lists 5151: its series is gone */
	w->procs[1] = w->procs[2];
	w->snap.proc_count = 2;
	w->gpus[0].proc_count = 1;
	w->gpus[1].proc_first = 1;
	b = render(w);
	hasnt(b, "pid=\"5151\"");
	has(b, "vramz_processes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 1\n");
	promtool_ok(b);
	world_free(w);
}

/* A pod's process carries dcgm-exporter's pod, namespace and container
 * labels (the container's name; its id is container_id); a pod the
 * kubelet's logs do not name has its pod_uid alone. */
static void test_kube_labels(void **state)
{
	struct world *w = world_new(1);
	w->gpus[0].proc_first = 0;
	vramz_proc_sample *p = add_proc(w, 0, 4242, 512 * MIB, "root", "python");
	snprintf(p->container, sizeof p->container, "3f4e8a9b2c1d");
	snprintf(p->pod_uid, sizeof p->pod_uid, "8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2d");
	snprintf(p->pod, sizeof p->pod, "trainer-7f9c");
	snprintf(p->pod_namespace, sizeof p->pod_namespace, "ml-team");
	snprintf(p->container_name, sizeof p->container_name, "pytorch");
	p = add_proc(w, 0, 4343, 256 * MIB, "root", "python");
	snprintf(p->pod_uid, sizeof p->pod_uid, "99999999-8888-7777-6666-555555555555");
	w->in.flags = PROM_PROCS;
	const char *b = render(w);
	has(b, "vramz_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\","
	       "pid=\"4242\",user=\"root\",container_id=\"3f4e8a9b2c1d\","
	       "pod_uid=\"8d3c2b1a-5e4f-4a3b-9c8d-7e6f5a4b3c2d\",comm=\"python\",pod=\"trainer-7f9c\","
	       "namespace=\"ml-team\",container=\"pytorch\"} 536870912\n");
	has(b, "pid=\"4343\",user=\"root\",pod_uid=\"99999999-8888-7777-6666-555555555555\","
	       "comm=\"python\"} 268435456\n");
	promtool_ok(b);
	world_free(w);
}

static void test_label_escaping(void **state)
{
	struct world *w = world_new(1);
	snprintf(w->info[0].name, sizeof w->info[0].name, "We\"ird\\GPU\nname");
	w->gpus[0].proc_first = 0;
	/* a comm with an invalid UTF-8 byte (comm comes from /proc, any bytes) */
	add_proc(w, 0, 7, MIB, "bob", "a\xff" "b\xc3\xa9");
	w->in.flags = PROM_PROCS;
	const char *b = render(w);
	has(b, "name=\"We\\\"ird\\\\GPU\\nname\"");
	has(b, "comm=\"a\xef\xbf\xbd" "b\xc3\xa9\"");
	promtool_ok(b);
	world_free(w);
}

static void test_big_fleet_body_is_valid(void **state)
{
	struct world *w = world_new(8);
	for (unsigned g = 0; g < 8; g++) {
		w->gpus[g].proc_first = w->snap.proc_count;
		for (unsigned k = 0; k < 25; k++) {
			vramz_proc_sample *p = add_proc(w, g, 1000 + g * 100 + k, (k + 1) * MIB,
							"user", "train");
			p->valid |= VRAMZ_P_SM | VRAMZ_P_MEMUTIL;
			p->sm_pct = k;
			p->mem_util_pct = 100 - k;
		}
	}
	w->migs[0] = (vramz_mig_sample){.parent_index = 3, .gi_id = 1, .ci_id = 0,
					.valid = VRAMZ_F_MEM, .uuid = "MIG-1234",
					.mem_total_bytes = 10 * MIB, .mem_used_bytes = 4 * MIB,
					.mem_free_bytes = 6 * MIB};
	w->snap.mig_count = 1;
	w->in.flags = PROM_PROCS;
	const char *b = render(w);
	has(b, "vramz_mig_memory_used_bytes{gpu=\"3\",uuid=\"GPU-00000003-aaaa-bbbb-cccc-dddddddddddd\","
	       "gpu_instance=\"1\",compute_instance=\"0\",mig_uuid=\"MIG-1234\"} 4194304\n");
	has(b, "pid=\"1724\"");
	promtool_ok(b);
	world_free(w);
}

static void test_findings(void **state)
{
	struct world *w = world_new(2);
	/* the series of each kind come from its row (lib/diagnose/kinds.c) */
	vramz_finding f[9];
	memset(f, 0, sizeof f);
	f[0] = (vramz_finding){.kind = VRAMZ_FK_LEAK, .gpu = 0, .pid = 4242,
			       .figures = VRAMZ_FG_RATE | VRAMZ_FG_TTO,
			       .rate_bytes_per_s = 1048576, .time_to_oom_s = 3000};
	f[1] = (vramz_finding){.kind = VRAMZ_FK_IDLE_HOLDER, .gpu = 1, .pid = 99,
			       .figures = VRAMZ_FG_BYTES, .bytes = 4096};
	f[2] = (vramz_finding){.kind = VRAMZ_FK_ORPHANED, .gpu = 1, .figures = VRAMZ_FG_BYTES,
			       .bytes = 8192};
	f[3] = (vramz_finding){.kind = VRAMZ_FK_OOM, .gpu = 0, .pid = 77, .figures = VRAMZ_FG_BYTES,
			       .bytes = 16384, .ended = 1};
	/* a PyTorch process that died of an OOM (its line a label), and a
	 * live one that caught one: no "ended" bytes for that one */
	f[7] = (vramz_finding){.kind = VRAMZ_FK_OOM, .gpu = 0, .pid = 78, .ended = 1,
			       .figures = VRAMZ_FG_BYTES | VRAMZ_FG_SITE | VRAMZ_FG_OOM,
			       .bytes = 32768, .requested_bytes = 21474836480ull,
			       .site = "model.py:88 in \"forward\"()"};
	f[8] = (vramz_finding){.kind = VRAMZ_FK_OOM, .gpu = 1, .pid = 79,
			       .figures = VRAMZ_FG_BYTES | VRAMZ_FG_OOM, .bytes = 65536,
			       .requested_bytes = 1024};
	/* no series: a kind without one, a leak of no GPU, a time to OOM unknown */
	f[4] = (vramz_finding){.kind = VRAMZ_FK_THROTTLE, .gpu = 1, .figures = VRAMZ_FG_SHARE,
			       .share = 0.123456};
	f[5] = (vramz_finding){.kind = VRAMZ_FK_LEAK, .gpu = -1, .figures = VRAMZ_FG_RATE,
			       .rate_bytes_per_s = 987654321};
	f[6] = (vramz_finding){.kind = VRAMZ_FK_LEAK, .gpu = 1, .pid = 5,
			       .figures = VRAMZ_FG_RATE | VRAMZ_FG_TTO, .rate_bytes_per_s = 7,
			       .time_to_oom_s = -1};
	prom_buf_reset(&w->b);
	assert_int_equal(prom_render(&w->b, &w->in), 0);
	assert_int_equal(prom_render_findings(&w->b, &w->in, f, 9), 0);
	const char *b = w->b.p;
	has(b, "vramz_leak_rate_bytes_per_second{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"4242\"} 1048576\n");
	has(b, "vramz_time_to_oom_seconds{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"4242\"} 3000\n");
	has(b, "vramz_idle_holder_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\",pid=\"99\"} 4096\n");
	has(b, "vramz_orphan_memory_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\"} 8192\n");
	has(b, "vramz_oom_ended_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"77\"} 16384\n");
	has(b, "vramz_oom_ended_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"78\"} 32768\n");
	hasnt(b, "vramz_oom_ended_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\",pid=\"79\"}");
	has(b, "vramz_oom_requested_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\",pid=\"78\","
	       "site=\"model.py:88 in \\\"forward\\\"()\"} 21474836480\n");
	has(b, "vramz_oom_requested_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\",pid=\"79\"} 1024\n");
	has(b, "vramz_leak_rate_bytes_per_second{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\",pid=\"5\"} 7\n");
	hasnt(b, "vramz_time_to_oom_seconds{gpu=\"1\"");
	hasnt(b, "} 987654321\n");
	hasnt(b, "0.123456");
	promtool_ok(b);
	/* every family is declared even with no finding */
	prom_buf_reset(&w->b);
	assert_int_equal(prom_render_findings(&w->b, &w->in, f, 0), 0);
	assert_string_equal(w->b.p,
			    "# HELP vramz_leak_rate_bytes_per_second Steady growth of used memory the "
			    "diagnosis engine attributes to a leak.\n"
			    "# TYPE vramz_leak_rate_bytes_per_second gauge\n"
			    "# HELP vramz_time_to_oom_seconds At the current leak rate, time until the "
			    "GPU's free memory is gone.\n"
			    "# TYPE vramz_time_to_oom_seconds gauge\n"
			    "# HELP vramz_idle_holder_bytes Memory held by a process that has not used "
			    "the GPU for a while.\n"
			    "# TYPE vramz_idle_holder_bytes gauge\n"
			    "# HELP vramz_orphan_memory_bytes Used memory no live process holds (a dead "
			    "context, or another namespace).\n"
			    "# TYPE vramz_orphan_memory_bytes gauge\n"
			    "# HELP vramz_oom_ended_bytes Memory a process held when it ended, or "
			    "probably ended, out of memory (while the oom finding is current).\n"
			    "# TYPE vramz_oom_ended_bytes gauge\n"
			    "# HELP vramz_oom_requested_bytes What the last out-of-memory error of a "
			    "PyTorch process asked for, labelled with the line that ran out (while "
			    "the oom finding is current).\n"
			    "# TYPE vramz_oom_requested_bytes gauge\n"
			    "# HELP vramz_communication_memory_bytes Memory NCCL's communicators hold "
			    "in a PyTorch process on the GPU (while the communication_memory finding "
			    "is current).\n"
			    "# TYPE vramz_communication_memory_bytes gauge\n");
	world_free(w);
}

/* A mixed machine: each GPU's driver label is its own backend's, not the
 * first backend's (an AMD GPU labelled with the NVIDIA driver misleads a
 * dashboard that splits by driver). */
static void test_driver_label_per_backend(void **state)
{
	struct world *w = world_new(3);
	snprintf(w->info[2].vendor, sizeof w->info[2].vendor, "amd");
	vramz_backend_info bk[2] = {
		{.name = "nvml", .vendor = "nvidia", .driver_version = "580.159.04",
		 .gpu_first = 0, .gpu_count = 2},
		{.name = "amdgpu", .vendor = "amd", .driver_version = "6.8.0-45-generic",
		 .gpu_first = 2, .gpu_count = 1},
	};
	w->in.backends = bk;
	w->in.backend_count = 2;
	const char *b = render(w);
	has(b, "vramz_gpu_info{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\",name=\"NVIDIA H200\","
	       "pci_bus_id=\"00000000:1A:00.0\",vendor=\"nvidia\",driver=\"580.159.04\"} 1\n");
	has(b, "pci_bus_id=\"00000000:1B:00.0\",vendor=\"amd\",driver=\"6.8.0-45-generic\"} 1\n");
	/* a backend whose driver is unknown: no driver label, not another's */
	bk[1].driver_version[0] = 0;
	b = render(w);
	has(b, "pci_bus_id=\"00000000:1B:00.0\",vendor=\"amd\"} 1\n");
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_values_in_base_units),
		cmocka_unit_test(test_unknown_values_have_no_sample),
		cmocka_unit_test(test_lost_gpu),
		cmocka_unit_test(test_no_snapshot_is_down),
		cmocka_unit_test(test_processes_behind_flag_and_vanish),
		cmocka_unit_test(test_kube_labels),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_big_fleet_body_is_valid),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_driver_label_per_backend),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
