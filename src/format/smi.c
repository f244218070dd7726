/* SPDX-License-Identifier: Apache-2.0 */
/* smi.c - nvidia-smi's query interface, byte for byte: `vramz status
 * --query-gpu=index,memory.used --format=csv` prints what `nvidia-smi
 * --query-gpu=index,memory.used --format=csv` prints (driver 580; its
 * output is kept in tests/smi/ and t1050-smi-query.sh compares).
 *
 * Scripts people already have parse nvidia-smi's exact text: fields
 * joined by ", ", units in the header ("memory.used [MiB]") and, without
 * nounits, in each value ("14513 MiB", "174.59 W", "14 %"); nounits
 * drops them from the values only, as nvidia-smi does; "[N/A]" for a
 * value the GPU lacks; the header printed once, also with -l.
 *
 * One table, smi_fields[]: each nvidia-smi name with its aliases, the
 * unit its header names, how its value is written and where vramz reads
 * it (a row of lib/fields.c's gpu_fields by name, a vramz_gpu_info
 * member, or the context).  A row without a source is a name nvidia-smi
 * knows and vramz does not read: asking for it is refused naming it, so
 * a script fails plainly rather than getting a column of [N/A].  The
 * names come from `nvidia-smi --help-query-gpu` (tests/smi/); the test
 * checks every one of them is here, supported or not.
 */
#include "format/smi.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fields.h"

/* Where a value comes from. */
enum smi_src {
	SRC_NONE,     /* nvidia-smi has it; vramz does not read it */
	SRC_SAMPLE,   /* gpu_fields row .field of the GPU's sample */
	SRC_INFO,     /* unsigned member .off of vramz_gpu_info, known with .bit */
	SRC_INFO_STR, /* char array .off of vramz_gpu_info, known when not "" */
	SRC_CC,       /* compute capability, "9.0" */
	SRC_TIME, SRC_DRIVER, SRC_COUNT, SRC_INDEX,
	SRC_PID, SRC_PNAME, SRC_PUSED, /* a process's (--query-compute-apps) */
};

/* How it is written. */
enum smi_show {
	SHOW_INT,     /* 40; with a unit "14 %", "1980 MHz" */
	SHOW_MIB,     /* bytes as whole MiB, rounded up: "81559 MiB" */
	SHOW_W,       /* mW as W with 2 decimals: "174.59 W" */
	SHOW_ENABLED, /* Enabled / Disabled */
	SHOW_YESNO,   /* Yes / No */
	SHOW_ACTIVE,  /* .mask's bit: Active / Not Active */
	SHOW_HEX,     /* 0x0000000000000001 */
	SHOW_STR,
	SHOW_BUSID,   /* 00000000:00:06.0, the domain 8 hex digits */
	SHOW_PCI_DOMAIN, SHOW_PCI_BUS, SHOW_PCI_DEVICE, /* 0x0000, 0x00, 0x06 */
};

struct smi_field {
	enum smi_rows rows;
	const char *name;    /* nvidia-smi's, as its header prints it */
	const char *aliases; /* the other names it takes, space-separated, or NULL */
	const char *unit;    /* the header's "[MiB]" and the values' " MiB", or NULL */
	enum smi_show show;
	enum smi_src src;
	const char *field;   /* SRC_SAMPLE: the gpu_fields row */
	size_t off;          /* SRC_INFO, SRC_INFO_STR: in vramz_gpu_info */
	uint32_t bit;        /* SRC_INFO: VRAMZ_I_* */
	uint64_t mask;       /* SHOW_ACTIVE: the throttle reason bit */
	unsigned needs;      /* VRAMZ_SAMPLE_* to read it; NEEDS_DETAILS */
};

#define NEEDS_DETAILS (1u << 31) /* vramz_gpu_details() (slow, once) */
#define H VRAMZ_SAMPLE_HEALTH

#define INFO_U(m) (offsetof(vramz_gpu_info, m) + 0 * sizeof(_Generic(((vramz_gpu_info *)0)->m, unsigned: 1)))
#define INFO_S(m) (offsetof(vramz_gpu_info, m) + 0 * sizeof(_Generic(((vramz_gpu_info *)0)->m, char *: 1)))

/* a GPU row: from the sample's field FLD */
#define S(nm, al, unit, show, fld, needs) {SMI_GPUS, nm, al, unit, show, SRC_SAMPLE, fld, 0, 0, 0, needs}
/* from vramz_gpu_info's unsigned member M, known with BIT */
#define I(nm, al, unit, show, m, bit, needs) {SMI_GPUS, nm, al, unit, show, SRC_INFO, NULL, INFO_U(m), bit, 0, needs}
#define IS(nm, al, show, m, needs) {SMI_GPUS, nm, al, NULL, show, SRC_INFO_STR, NULL, INFO_S(m), 0, 0, needs}
#define X(nm, al, unit, show, src) {SMI_GPUS, nm, al, unit, show, src, NULL, 0, 0, 0, 0}
/* a throttle (clock event) reason bit */
#define R(nm, mask) {SMI_GPUS, "clocks_event_reasons." nm, "clocks_throttle_reasons." nm, NULL, \
	SHOW_ACTIVE, SRC_SAMPLE, "throttle_reasons", 0, 0, mask, 0}
/* nvidia-smi's, not read by vramz */
#define NO(nm, al) {SMI_GPUS, nm, al, NULL, SHOW_STR, SRC_NONE, NULL, 0, 0, 0, 0}
/* a --query-compute-apps row */
#define A(nm, al, unit, show, src, m, needs) {SMI_APPS, nm, al, unit, show, src, NULL, m, 0, 0, needs}

static const struct smi_field smi_fields[] = {
	/* --query-gpu, in --help-query-gpu's order */
	X("timestamp", NULL, NULL, SHOW_STR, SRC_TIME),
	X("driver_version", NULL, NULL, SHOW_STR, SRC_DRIVER),
	NO("vgpu_driver_capability.heterogenous_multivGPU", NULL),
	X("count", NULL, NULL, SHOW_INT, SRC_COUNT),
	IS("name", "gpu_name", SHOW_STR, name, 0),
	IS("serial", "gpu_serial", SHOW_STR, serial, NEEDS_DETAILS),
	IS("uuid", "gpu_uuid", SHOW_STR, uuid, 0),
	IS("pci.bus_id", "gpu_bus_id", SHOW_BUSID, pci_bus_id, 0),
	IS("pci.domain", NULL, SHOW_PCI_DOMAIN, pci_bus_id, 0),
	IS("pci.bus", NULL, SHOW_PCI_BUS, pci_bus_id, 0),
	IS("pci.device", NULL, SHOW_PCI_DEVICE, pci_bus_id, 0),
	NO("pci.baseClass", NULL),
	NO("pci.subClass", NULL),
	NO("pci.device_id", NULL),
	NO("pci.sub_device_id", NULL),
	NO("vgpu_device_capability.fractional_multiVgpu", NULL),
	NO("vgpu_device_capability.heterogeneous_timeSlice_profile", NULL),
	NO("vgpu_device_capability.heterogeneous_timeSlice_sizes", NULL),
	NO("vgpu_device_capability.homogeneous_placements", NULL),
	NO("vgpu_device_capability.mig_timeSlicing", NULL),
	NO("vgpu_device_capability.mig_timeSlicing_mode", NULL),
	S("pcie.link.gen.current", NULL, NULL, SHOW_INT, "pcie_gen", VRAMZ_SAMPLE_LINK),
	NO("pcie.link.gen.gpucurrent", NULL),
	I("pcie.link.gen.max", NULL, NULL, SHOW_INT, pcie_max_gen, VRAMZ_I_PCIE_MAX, NEEDS_DETAILS),
	NO("pcie.link.gen.gpumax", NULL),
	NO("pcie.link.gen.hostmax", NULL),
	S("pcie.link.width.current", NULL, NULL, SHOW_INT, "pcie_width", VRAMZ_SAMPLE_LINK),
	I("pcie.link.width.max", NULL, NULL, SHOW_INT, pcie_max_width, VRAMZ_I_PCIE_MAX, NEEDS_DETAILS),
	X("index", NULL, NULL, SHOW_INT, SRC_INDEX),
	NO("display_mode", NULL),
	NO("display_attached", NULL),
	NO("display_active", NULL),
	I("persistence_mode", NULL, NULL, SHOW_ENABLED, persistence, VRAMZ_I_PERSIST, NEEDS_DETAILS),
	NO("addressing_mode", NULL),
	NO("accounting.mode", NULL),
	NO("accounting.buffer_size", NULL),
	NO("driver_model.current", NULL),
	NO("driver_model.pending", NULL),
	IS("vbios_version", NULL, SHOW_STR, vbios, NEEDS_DETAILS),
	NO("inforom.img", "inforom.image"),
	NO("inforom.oem", NULL),
	NO("inforom.ecc", NULL),
	NO("inforom.pwr", "inforom.power"),
	NO("inforom.checksum_validation", NULL),
	NO("gpu_recovery_action", NULL),
	NO("gom.current", "gpu_operation_mode.current"),
	NO("gom.pending", "gpu_operation_mode.pending"),
	S("fan.speed", NULL, "%", SHOW_INT, "fan_pct", 0),
	NO("pstate", NULL),
	NO("clocks_event_reasons.supported", "clocks_throttle_reasons.supported"),
	S("clocks_event_reasons.active", "clocks_throttle_reasons.active", NULL, SHOW_HEX, "throttle_reasons", 0),
	R("gpu_idle", VRAMZ_THR_GPU_IDLE),
	R("applications_clocks_setting", VRAMZ_THR_APP_CLOCKS),
	R("sw_power_cap", VRAMZ_THR_SW_POWER_CAP),
	R("hw_slowdown", VRAMZ_THR_HW_SLOWDOWN),
	R("hw_thermal_slowdown", VRAMZ_THR_HW_THERMAL),
	R("hw_power_brake_slowdown", VRAMZ_THR_HW_POWER_BRAKE),
	R("sw_thermal_slowdown", VRAMZ_THR_SW_THERMAL),
	R("sync_boost", VRAMZ_THR_SYNC_BOOST),
	NO("clocks_event_reasons_counters.sw_power_cap", NULL),
	NO("clocks_event_reasons_counters.sync_boost", NULL),
	NO("clocks_event_reasons_counters.sw_thermal_slowdown", NULL),
	NO("clocks_event_reasons_counters.hw_thermal_slowdown", NULL),
	NO("clocks_event_reasons_counters.hw_power_brake_slowdown", NULL),
	S("memory.total", NULL, "MiB", SHOW_MIB, "mem_total_bytes", 0),
	S("memory.reserved", NULL, "MiB", SHOW_MIB, "mem_reserved_bytes", 0),
	S("memory.used", NULL, "MiB", SHOW_MIB, "mem_used_bytes", 0),
	S("memory.free", NULL, "MiB", SHOW_MIB, "mem_free_bytes", 0),
	NO("compute_mode", NULL),
	{SMI_GPUS, "compute_cap", NULL, NULL, SHOW_STR, SRC_CC, NULL, 0, 0, 0, NEEDS_DETAILS},
	S("utilization.gpu", NULL, "%", SHOW_INT, "util_gpu_pct", 0),
	S("utilization.memory", NULL, "%", SHOW_INT, "util_mem_pct", 0),
	NO("utilization.encoder", NULL),
	NO("utilization.decoder", NULL),
	NO("utilization.jpeg", NULL),
	NO("utilization.ofa", NULL),
	NO("encoder.stats.sessionCount", NULL),
	NO("encoder.stats.averageFps", NULL),
	NO("encoder.stats.averageLatency", NULL),
	NO("dramEncryption.mode.current", NULL),
	NO("dramEncryption.mode.pending", NULL),
	I("ecc.mode.current", NULL, NULL, SHOW_ENABLED, ecc_current, VRAMZ_I_ECC, NEEDS_DETAILS),
	I("ecc.mode.pending", NULL, NULL, SHOW_ENABLED, ecc_pending, VRAMZ_I_ECC, NEEDS_DETAILS),
	NO("ecc.errors.corrected.volatile.device_memory", NULL),
	NO("ecc.errors.corrected.volatile.dram", NULL),
	NO("ecc.errors.corrected.volatile.register_file", NULL),
	NO("ecc.errors.corrected.volatile.l1_cache", NULL),
	NO("ecc.errors.corrected.volatile.l2_cache", NULL),
	NO("ecc.errors.corrected.volatile.texture_memory", NULL),
	NO("ecc.errors.corrected.volatile.cbu", NULL),
	NO("ecc.errors.corrected.volatile.sram", NULL),
	S("ecc.errors.corrected.volatile.total", NULL, NULL, SHOW_INT, "ecc_corrected_volatile", H),
	NO("ecc.errors.corrected.aggregate.device_memory", NULL),
	NO("ecc.errors.corrected.aggregate.dram", NULL),
	NO("ecc.errors.corrected.aggregate.register_file", NULL),
	NO("ecc.errors.corrected.aggregate.l1_cache", NULL),
	NO("ecc.errors.corrected.aggregate.l2_cache", NULL),
	NO("ecc.errors.corrected.aggregate.texture_memory", NULL),
	NO("ecc.errors.corrected.aggregate.cbu", NULL),
	NO("ecc.errors.corrected.aggregate.sram", NULL),
	S("ecc.errors.corrected.aggregate.total", NULL, NULL, SHOW_INT, "ecc_corrected_aggregate", H),
	NO("ecc.errors.uncorrected.volatile.device_memory", NULL),
	NO("ecc.errors.uncorrected.volatile.dram", NULL),
	NO("ecc.errors.uncorrected.volatile.register_file", NULL),
	NO("ecc.errors.uncorrected.volatile.l1_cache", NULL),
	NO("ecc.errors.uncorrected.volatile.l2_cache", NULL),
	NO("ecc.errors.uncorrected.volatile.texture_memory", NULL),
	NO("ecc.errors.uncorrected.volatile.cbu", NULL),
	NO("ecc.errors.uncorrected.volatile.sram", NULL),
	S("ecc.errors.uncorrected.volatile.total", NULL, NULL, SHOW_INT, "ecc_uncorrected_volatile", H),
	NO("ecc.errors.uncorrected.aggregate.device_memory", NULL),
	NO("ecc.errors.uncorrected.aggregate.dram", NULL),
	NO("ecc.errors.uncorrected.aggregate.register_file", NULL),
	NO("ecc.errors.uncorrected.aggregate.l1_cache", NULL),
	NO("ecc.errors.uncorrected.aggregate.l2_cache", NULL),
	NO("ecc.errors.uncorrected.aggregate.texture_memory", NULL),
	NO("ecc.errors.uncorrected.aggregate.cbu", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram", NULL),
	S("ecc.errors.uncorrected.aggregate.total", NULL, NULL, SHOW_INT, "ecc_uncorrected_aggregate", H),
	NO("ecc.errors.uncorrected.volatile.sram.parity", NULL),
	NO("ecc.errors.uncorrected.volatile.sram.secded", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.parity", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.secded", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.l2", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.sm", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.mcu", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.pcie", NULL),
	NO("ecc.errors.uncorrected.aggregate.sram.other", NULL),
	S("retired_pages.single_bit_ecc.count", "retired_pages.sbe", NULL, SHOW_INT, "retired_sbe_pages", H),
	S("retired_pages.double_bit.count", "retired_pages.dbe", NULL, SHOW_INT, "retired_dbe_pages", H),
	S("retired_pages.pending", NULL, NULL, SHOW_YESNO, "retired_pending", H),
	S("remapped_rows.correctable", "remapped_rows.sbe", NULL, SHOW_INT, "remap_correctable_rows", H),
	NO("remapped_rows.correctable_inactive", NULL),
	S("remapped_rows.uncorrectable", "remapped_rows.dbe", NULL, SHOW_INT, "remap_uncorrectable_rows", H),
	NO("remapped_rows.uncorrectable_inactive", NULL),
	S("remapped_rows.pending", NULL, NULL, SHOW_YESNO, "remap_pending", H),
	S("remapped_rows.failure", NULL, NULL, SHOW_YESNO, "remap_failure", H),
	NO("remapped_rows.histogram.max", NULL),
	NO("remapped_rows.histogram.high", NULL),
	NO("remapped_rows.histogram.partial", NULL),
	NO("remapped_rows.histogram.low", NULL),
	NO("remapped_rows.histogram.none", NULL),
	S("temperature.gpu", NULL, NULL, SHOW_INT, "temp_c", 0),
	NO("temperature.gpu.tlimit", NULL),
	S("temperature.memory", NULL, NULL, SHOW_INT, "temp_mem_c", 0),
	NO("power.management", NULL),
	S("power.draw", NULL, "W", SHOW_W, "power_mw", 0),
	NO("power.draw.average", "gpu.power.draw.average"),
	NO("power.draw.instant", "gpu.power.draw.instant"),
	S("power.limit", "gpu.power.requested_limit", "W", SHOW_W, "power_limit_mw", 0),
	S("enforced.power.limit", "gpu.power.current_limit", "W", SHOW_W, "power_limit_mw", 0),
	I("power.default_limit", "gpu.power.default_limit", "W", SHOW_W, power_default_limit_mw, VRAMZ_I_POWER_LIMITS, NEEDS_DETAILS),
	I("power.min_limit", "gpu.power.min_limit", "W", SHOW_W, power_min_limit_mw, VRAMZ_I_POWER_LIMITS, NEEDS_DETAILS),
	I("power.max_limit", "gpu.power.max_limit", "W", SHOW_W, power_max_limit_mw, VRAMZ_I_POWER_LIMITS, NEEDS_DETAILS),
	NO("module.power.draw.average", NULL),
	NO("module.power.draw.instant", NULL),
	NO("module.power.limit", "module.power.requested_limit"),
	NO("module.enforced.power.limit", "module.power.current_limit"),
	NO("module.power.default_limit", NULL),
	NO("module.power.min_limit", NULL),
	NO("module.power.max_limit", NULL),
	NO("power_smoothing.delayed_power_smoothing_supported", NULL),
	NO("power_smoothing.primary_power_floor", NULL),
	NO("power_smoothing.secondary_power_floor", NULL),
	NO("power_smoothing.min_primary_floor_activation_offset", NULL),
	NO("power_smoothing.min_primary_floor_activation_point", NULL),
	NO("power_smoothing.window_multiplier", NULL),
	NO("power_smoothing.curr_profile.secondary_power_floor", NULL),
	NO("power_smoothing.curr_profile.primary_floor_act_window_multiplier", NULL),
	NO("power_smoothing.curr_profile.primary_floor_tar_window_multiplier", NULL),
	NO("power_smoothing.curr_profile.primary_floor_act_offset", NULL),
	NO("power_smoothing.admin_override.secondary_power_floor", NULL),
	NO("power_smoothing.admin_override.primary_floor_act_window_multiplier", NULL),
	NO("power_smoothing.admin_override.primary_floor_tar_window_multiplier", NULL),
	NO("power_smoothing.admin_override.primary_floor_act_offset", NULL),
	NO("clocks.current.graphics", "clocks.gr"),
	S("clocks.current.sm", "clocks.sm", "MHz", SHOW_INT, "clock_sm_mhz", 0),
	S("clocks.current.memory", "clocks.mem", "MHz", SHOW_INT, "clock_mem_mhz", 0),
	NO("clocks.current.video", "clocks.video"),
	NO("clocks.applications.graphics", "clocks.applications.gr"),
	NO("clocks.applications.memory", "clocks.applications.mem"),
	NO("clocks.default_applications.graphics", "clocks.default_applications.gr"),
	NO("clocks.default_applications.memory", "clocks.default_applications.mem"),
	NO("clocks.max.graphics", "clocks.max.gr"),
	I("clocks.max.sm", NULL, "MHz", SHOW_INT, max_sm_clock_mhz, VRAMZ_I_MAX_SMCLK, NEEDS_DETAILS),
	I("clocks.max.memory", "clocks.max.mem", "MHz", SHOW_INT, max_mem_clock_mhz, VRAMZ_I_MAX_MEMCLK, NEEDS_DETAILS),
	I("mig.mode.current", NULL, NULL, SHOW_ENABLED, mig_current, VRAMZ_I_MIG, 0),
	I("mig.mode.pending", NULL, NULL, SHOW_ENABLED, mig_pending, VRAMZ_I_MIG, 0),
	NO("gsp.mode.current", NULL),
	NO("gsp.mode.default", NULL),
	NO("c2c.mode", NULL),
	NO("protected_memory.total", NULL),
	NO("protected_memory.used", NULL),
	NO("protected_memory.free", NULL),
	NO("fabric.state", NULL),
	NO("fabric.status", NULL),
	NO("fabric.cliqueId", NULL),
	NO("fabric.clusterUuid", NULL),
	NO("fabric.health.summary", NULL),
	NO("fabric.health.bandwidth", NULL),
	NO("fabric.health.route_recovery_in_progress", NULL),
	NO("fabric.health.route_unhealthy", NULL),
	NO("fabric.health.access_timeout_recovery", NULL),
	NO("fabric.health.incorrect_configuration", NULL),
	NO("fabric.health.partition_assigned", NULL),
	NO("platform.chassis_serial_number", NULL),
	NO("platform.slot_number", NULL),
	NO("platform.tray_index", NULL),
	NO("platform.host_id", NULL),
	NO("platform.peer_type", NULL),
	NO("platform.module_id", NULL),
	NO("platform.gpu_fabric_guid", NULL),
	NO("hostname", NULL),
	/* --query-compute-apps, in --help-query-compute-apps's order */
	A("timestamp", NULL, NULL, SHOW_STR, SRC_TIME, 0, 0),
	A("gpu_name", NULL, NULL, SHOW_STR, SRC_INFO_STR, INFO_S(name), 0),
	A("gpu_bus_id", NULL, NULL, SHOW_BUSID, SRC_INFO_STR, INFO_S(pci_bus_id), 0),
	A("gpu_serial", NULL, NULL, SHOW_STR, SRC_INFO_STR, INFO_S(serial), NEEDS_DETAILS),
	A("gpu_uuid", NULL, NULL, SHOW_STR, SRC_INFO_STR, INFO_S(uuid), 0),
	A("pid", NULL, NULL, SHOW_INT, SRC_PID, 0, 0),
	A("process_name", "name", NULL, SHOW_STR, SRC_PNAME, 0, 0),
	A("used_gpu_memory", "used_memory", "MiB", SHOW_MIB, SRC_PUSED, 0, 0),
};
#define NFIELDS (sizeof smi_fields / sizeof smi_fields[0])

/* Whether name[0..len) is word w of the space-separated list. */
static int in_list(const char *list, const char *name, size_t len)
{
	for (const char *p = list; p && *p;) {
		size_t n = strcspn(p, " ");
		if (n == len && !strncmp(p, name, len))
			return 1;
		p += n + (p[n] == ' ');
	}
	return 0;
}

static const struct smi_field *lookup(enum smi_rows rows, const char *name, size_t len)
{
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct smi_field *f = &smi_fields[i];
		if (f->rows == rows && ((strlen(f->name) == len && !strncmp(f->name, name, len)) ||
					in_list(f->aliases, name, len)))
			return f;
	}
	return NULL;
}

static const char *const query_opt[] = {[SMI_GPUS] = "--query-gpu", [SMI_APPS] = "--query-compute-apps"};
static const char *const help_opt[] = {[SMI_GPUS] = "--help-query-gpu",
				       [SMI_APPS] = "--help-query-compute-apps"};

/* nvidia-smi's --format=csv[,noheader][,nounits] (NULL: csv) */
static int parse_format(const char *cmd, const char *fmt, struct smi_query *q)
{
	const char *p = fmt ? fmt : "csv";
	int csv = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == 3 && !strncmp(p, "csv", 3))
			csv = 1;
		else if (len == 8 && !strncmp(p, "noheader", 8))
			q->no_header = 1;
		else if (len == 7 && !strncmp(p, "nounits", 7))
			q->no_units = 1;
		else
			csv = -1;
		if (csv < 0)
			break;
		p += len + (p[len] == ',');
	}
	if (csv <= 0) {
		cli_err("%s: bad --format '%s': csv, then noheader or nounits (--format=csv,noheader)",
			cmd, fmt);
		return EXIT_USAGE;
	}
	return 0;
}

int smi_parse(const char *cmd, enum smi_rows rows, const char *names, const char *format,
	      struct smi_query *q)
{
	*q = (struct smi_query){.rows = rows};
	if (parse_format(cmd, format, q))
		return EXIT_USAGE;
	for (const char *p = names; ; ) {
		size_t len = strcspn(p, ",");
		const struct smi_field *f = lookup(rows, p, len);
		int shown = (int)(len < 128 ? len : 128);
		if (!f) {
			/* as nvidia-smi: " memory.used" (a space) is no name either */
			cli_err("%s: %s: '%.*s' is not a valid field to query (vramz %s %s lists them)",
				cmd, query_opt[rows], shown, p, cmd, help_opt[rows]);
			return EXIT_USAGE;
		}
		if (f->src == SRC_NONE) {
			cli_err("%s: %s: '%.*s' is nvidia-smi's but vramz does not read it (vramz %s %s lists those it does)",
				cmd, query_opt[rows], shown, p, cmd, help_opt[rows]);
			return EXIT_USAGE;
		}
		if (q->n == SMI_MAX_COLS) {
			cli_err("%s: %s: more than %d fields", cmd, query_opt[rows], SMI_MAX_COLS);
			return EXIT_USAGE;
		}
		q->col[q->n++] = f;
		q->sample_flags |= f->needs & ~NEEDS_DETAILS;
		q->details |= (f->needs & NEEDS_DETAILS) != 0;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (rows == SMI_APPS)
		q->sample_flags |= VRAMZ_SAMPLE_PROCS;
	return 0;
}

void smi_prepare(vramz_ctx *ctx, const vramz_snapshot *snap, const struct smi_query *q)
{
	if (!q->details)
		return;
	/* once a GPU: a refused read leaves its field [N/A] */
	for (unsigned i = 0; i < snap->gpu_count; i++)
		(void)vramz_gpu_details(ctx, snap->gpus[i].index);
}

void smi_header(FILE *f, const struct smi_query *q)
{
	for (unsigned i = 0; i < q->n; i++) {
		const struct smi_field *c = q->col[i];
		/* nounits keeps the header's unit: nvidia-smi's does */
		fprintf(f, c->unit ? "%s%s [%s]" : "%s%s", i ? ", " : "", c->name, c->unit ? c->unit : "");
	}
	fputc('\n', f);
}

/* A value: a number, or text; known or [N/A]. */
struct val {
	int known;
	int64_t n;
	const char *s;
};

/* nvidia-smi's local time with milliseconds: 2026/12/06 10:55:38.123 */
static void fmt_smi_time(char *buf, size_t len, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y/%m/%d %H:%M:%S", &tm)) {
		snprintf(buf, len, "[N/A]");
		return;
	}
	size_t n = strlen(buf);
	snprintf(buf + n, len - n, ".%03d", (int)(ms % 1000));
}

/* What a row needs around it: the context, the snapshot, and the GPU's
 * sample or a process. */
struct where {
	vramz_ctx *ctx;
	const vramz_snapshot *snap;
	const vramz_gpu_sample *g;   /* NULL for an app row's */
	const vramz_proc_sample *p;  /* NULL for a GPU row */
	unsigned gpu;                /* the row's GPU, global index */
	char buf[64];
};

static struct val get(const struct smi_field *c, struct where *w)
{
	struct val v = {0};
	const vramz_gpu_info *gi = vramz_gpu(w->ctx, w->gpu);
	switch (c->src) {
	case SRC_NONE:
		break;
	case SRC_SAMPLE: {
		const struct field *fd = field_by_name(c->field);
		if (w->g && fd && field_valid(fd, w->g))
			v = (struct val){1, field_get(fd, w->g), NULL};
		break;
	}
	case SRC_INFO:
		if (gi && (gi->valid & c->bit) == c->bit)
			v = (struct val){1, *(const unsigned *)((const char *)gi + c->off), NULL};
		break;
	case SRC_INFO_STR:
		if (gi && *((const char *)gi + c->off))
			v = (struct val){1, 0, (const char *)gi + c->off};
		break;
	case SRC_CC:
		if (gi && (gi->valid & VRAMZ_I_CC)) {
			snprintf(w->buf, sizeof w->buf, "%u.%u", gi->cc_major, gi->cc_minor);
			v = (struct val){1, 0, w->buf};
		}
		break;
	case SRC_TIME:
		fmt_smi_time(w->buf, sizeof w->buf, w->snap->time_ms);
		v = (struct val){1, 0, w->buf};
		break;
	case SRC_DRIVER: {
		const char *d = vramz_system(w->ctx)->driver_version;
		v = (struct val){*d != 0, 0, d};
		break;
	}
	case SRC_COUNT:
		v = (struct val){1, vramz_gpu_count(w->ctx), NULL};
		break;
	case SRC_INDEX:
		v = (struct val){1, w->gpu, NULL};
		break;
	case SRC_PID:
		v = (struct val){w->p != NULL, w->p ? w->p->pid : 0, NULL};
		break;
	case SRC_PNAME:
		/* NVML's process name is the command's argv[0], as run */
		if (w->p && (w->p->valid & VRAMZ_P_VISIBLE) && w->p->cmdline[0]) {
			snprintf(w->buf, sizeof w->buf, "%.*s", (int)strcspn(w->p->cmdline, " "),
				 w->p->cmdline);
			v = (struct val){1, 0, w->buf};
		} else if (w->p && w->p->comm[0]) {
			v = (struct val){1, 0, w->p->comm};
		}
		break;
	case SRC_PUSED:
		if (w->p && (w->p->valid & VRAMZ_P_USED))
			v = (struct val){1, (int64_t)w->p->used_bytes, NULL};
		break;
	}
	return v;
}

/* A PCI bus id in nvidia-smi's form: the domain as 8 hex digits (amdgpu's
 * and older logs' 4-digit "0000:03:00.0" widened). */
static int bus_parts(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
	return sscanf(s, "%x:%x:%x.%x", dom, bus, dev, fn) == 4;
}

static void smi_put(FILE *f, const struct smi_field *c, const struct smi_query *q, struct val v)
{
	const char *unit = q->no_units ? NULL : c->unit;
	unsigned dom, bus, dev, fn;
	if (!v.known) {
		fputs("[N/A]", f);
		return;
	}
	switch (c->show) {
	case SHOW_INT: fprintf(f, "%lld", (long long)v.n); break;
	case SHOW_MIB: /* rounded up, as nvidia-smi: an H100's 1550.5 MiB used and
			* 79528.5 MiB free print as 1551 and 79529 (docs/validation.md) */
		fprintf(f, "%llu", (unsigned long long)(((uint64_t)v.n + (1u << 20) - 1) >> 20));
		break;
	case SHOW_W: fprintf(f, "%.2f", (double)v.n / 1000.0); break;
	case SHOW_ENABLED: fputs(v.n ? "Enabled" : "Disabled", f); break;
	case SHOW_YESNO: fputs(v.n ? "Yes" : "No", f); break;
	case SHOW_ACTIVE: fputs((uint64_t)v.n & c->mask ? "Active" : "Not Active", f); break;
	case SHOW_HEX: fprintf(f, "0x%016llX", (unsigned long long)v.n); break;
	case SHOW_STR: fputs(v.s, f); break;
	case SHOW_BUSID:
		if (bus_parts(v.s, &dom, &bus, &dev, &fn))
			fprintf(f, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
		else
			fputs(v.s, f);
		break;
	case SHOW_PCI_DOMAIN:
	case SHOW_PCI_BUS:
	case SHOW_PCI_DEVICE:
		if (!bus_parts(v.s, &dom, &bus, &dev, &fn))
			fputs("[N/A]", f);
		else if (c->show == SHOW_PCI_DOMAIN)
			fprintf(f, "0x%04X", dom);
		else
			fprintf(f, "0x%02X", c->show == SHOW_PCI_BUS ? bus : dev);
		return;
	}
	if (unit)
		fprintf(f, " %s", unit);
}

static void row(FILE *f, const struct smi_query *q, struct where *w)
{
	for (unsigned i = 0; i < q->n; i++) {
		if (i)
			fputs(", ", f);
		smi_put(f, q->col[i], q, get(q->col[i], w));
	}
	fputc('\n', f);
}

void smi_gpu_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const struct smi_query *q)
{
	for (unsigned g = 0; g < snap->gpu_count; g++) {
		struct where w = {ctx, snap, &snap->gpus[g], NULL, snap->gpus[g].index, ""};
		row(f, q, &w);
	}
}

void smi_app_rows(FILE *f, vramz_ctx *ctx, const vramz_snapshot *snap, const unsigned *idx,
		  unsigned n, const struct smi_query *q)
{
	for (unsigned k = 0; k < n; k++) {
		const vramz_proc_sample *p = &snap->procs[idx[k]];
		struct where w = {ctx, snap, NULL, p, p->gpu_index, ""};
		row(f, q, &w);
	}
}

void smi_help(FILE *f, enum smi_rows rows)
{
	fprintf(f, "%s names (nvidia-smi's, with --format=csv[,noheader][,nounits]):\n"
		"answered by vramz:\n", query_opt[rows]);
	for (int pass = 0; pass < 2; pass++) {
		int said = !pass;
		for (size_t i = 0; i < NFIELDS; i++) {
			const struct smi_field *c = &smi_fields[i];
			if (c->rows != rows || (c->src == SRC_NONE) != pass)
				continue;
			if (!said++)
				fprintf(f, "nvidia-smi's, not read by vramz (refused):\n");
			fprintf(f, "  %s", c->name);
			if (c->unit)
				fprintf(f, " [%s]", c->unit);
			if (c->aliases)
				fprintf(f, " (or %s)", c->aliases);
			fputc('\n', f);
		}
	}
}
