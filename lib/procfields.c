/* SPDX-License-Identifier: Apache-2.0 */
/* procfields.c - the table of per-process fields (see procfields.h).
 * Order is the CSV column order of a log's process file and the JSON key
 * order: append new fields at the end so old logs keep reading.
 *
 * The PyTorch agent's figures (docs/python.md) come last: in JSON they are
 * the "torch" object and "outside_allocator_bytes" (src/format/jsondoc.c, from
 * lib/agent.c's torch_fields; both are made from lib/torchfigs.h), so their JSON key here is "" (not a key of
 * the process object); in the log and the exporter they are columns and
 * series of their own, known only with VRAMZ_P_TORCH and the figure's
 * VRAMZ_T_* bit: a process without an agent has empty cells and no
 * samples, never 0. */
#include "procfields.h"
#include "text.h"
#include "torchfigs.h"

#define PO(m) offsetof(vramz_proc_sample, m), sizeof(((vramz_proc_sample *)0)->m)
/* an agent figure: known with VRAMZ_P_TORCH and its bit, not a JSON key */
#define TORCH(name, m, bit, prom, counter, help) \
	{name, PC_U64, PO(m), VRAMZ_P_TORCH, "", prom, 1, 0, help, 0, bit, counter}
/* the rows of lib/torchfigs.h's list marked LOG, in its order */
#define TORCH_ROW(log, key, bit, stat, metric, counter, help) TORCH_ROW_##log(key, bit, metric, counter, help)
#define TORCH_ROW_LOG(key, bit, metric, counter, help) \
	TORCH("torch_" #key, torch_##key, bit, metric, counter, help),
#define TORCH_ROW_NOLOG(key, bit, metric, counter, help)

/* a part of the memory outside the allocator: column outside_PART_bytes,
 * series vramz_process_outside_bytes{part="PART"} */
#define OUTSIDE_PART(part, help)                                                           \
	{"outside_" #part "_bytes", PC_U64, PO(outside_##part##_bytes), VRAMZ_P_OUTSIDE_PARTS, "", \
	 "process_outside_bytes", 1, 0, help, 0, 0, 0, #part}

const struct proc_field proc_fields[] = {
	{"time", PC_TIME, 0, 0, 0, "", NULL, 0, 0, "time of the sample, ISO 8601 UTC"},
	{"gpu", PC_GPU, 0, 0, 0, NULL, NULL, 0, 0, "GPU index"},
	{"uuid", PC_UUID, 0, 0, 0, "gpu_uuid", NULL, 0, 0, "GPU UUID"},
	{"pid", PC_PID, 0, 0, 0, NULL, NULL, 0, 0, "process id, as the driver reports it"},
	{"type", PC_TYPE, 0, 0, 0, NULL, NULL, 0, 0, "compute, graphics, mps"},
	{"user", PC_STR, PO(user), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1, "user name"},
	{"uid", PC_U32, PO(uid), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0, "user id"},
	{"container", PC_STR, PO(container), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1,
	 "container id (Docker, containerd, CRI-O, Podman)", .label = "container_id"},
	{"pod_uid", PC_STR, PO(pod_uid), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1, "Kubernetes pod UID"},
	{"slurm_job", PC_STR, PO(slurm_job), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1, "Slurm job id"},
	{"used_bytes", PC_U64, PO(used_bytes), VRAMZ_P_USED, NULL, "process_memory_used_bytes", 1, 0,
	 "GPU memory a process holds on the GPU."},
	{"sm_pct", PC_UINT, PO(sm_pct), VRAMZ_P_SM, NULL, "process_sm_utilization_ratio", 0.01, 0,
	 "Share of time the process's kernels ran on the GPU's SMs."},
	{"mem_util_pct", PC_UINT, PO(mem_util_pct), VRAMZ_P_MEMUTIL, NULL,
	 "process_memory_utilization_ratio", 0.01, 0,
	 "Share of time the process read or wrote device memory."},
	{"gi_id", PC_UINT, PO(gi_id), VRAMZ_P_MIG, "gpu_instance_id", NULL, 0, 0, "MIG GPU instance", 1},
	{"ci_id", PC_UINT, PO(ci_id), VRAMZ_P_MIG, "compute_instance_id", NULL, 0, 0,
	 "MIG compute instance", 1},
	{"start_time_ticks", PC_U64, PO(start_time_ticks), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0,
	 "process start, clock ticks since boot (tells a reused pid apart)"},
	{"ppid", PC_U32, PO(ppid), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0, "parent pid"},
	{"pgid", PC_U32, PO(pgid), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0, "process group"},
	{"ns_pid", PC_U32, PO(ns_pid), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0,
	 "pid in the process's own namespace"},
	{"comm", PC_STR, PO(comm), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1, "executable name"},
	{"command", PC_STR, PO(cmdline), VRAMZ_P_VISIBLE, NULL, NULL, 0, 0, "command line"},
	/* appended in 0.2: the PyTorch agent's figures */
	VRAMZ_TORCH_FIGURES(TORCH_ROW)
	{"outside_allocator_bytes", PC_U64, PO(outside_allocator_bytes), VRAMZ_P_OUTSIDE, "",
	 "process_outside_allocator_bytes", 1, 0,
	 "Memory the process holds on the GPU outside its PyTorch allocator (CUDA context, "
	 "workspaces, communication buffers): NVML's figure minus torch reserved.", 0, 0, 0},
	/* appended in 0.2: Kubernetes names (lib/kube.c); the labels are
	 * dcgm-exporter's, so its users' queries carry over */
	{"pod", PC_STR, PO(pod), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1,
	 "Kubernetes pod name (from the kubelet's log directories)"},
	{"namespace", PC_STR, PO(pod_namespace), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1,
	 "Kubernetes namespace of the pod"},
	{"container_name", PC_STR, PO(container_name), VRAMZ_P_VISIBLE, NULL, NULL, 0, 1,
	 "Kubernetes container name, as in the pod's spec", .label = "container"},
	/* appended (issue 37): outside_allocator_bytes in parts, as the
	 * agent saw them appear; the metric's part label, JSON's
	 * "outside_parts" */
	OUTSIDE_PART(context,
		     "Memory the process holds on the GPU outside its PyTorch allocator, by the "
		     "part its vramz agent measured: CUDA context, CUDA libraries, NCCL "
		     "communicators, other (the rest); the parts sum to "
		     "process_outside_allocator_bytes."),
	OUTSIDE_PART(libraries, NULL),
	OUTSIDE_PART(nccl, NULL),
	OUTSIDE_PART(other, NULL),
	{"outside_nccl_comms", PC_UINT, PO(outside_nccl_comms), VRAMZ_P_OUTSIDE_PARTS, "",
	 "process_nccl_communicators", 1, 0,
	 "NCCL communicators (one a process group and GPU) whose memory the process's vramz "
	 "agent measured.", 0, 0, 0, NULL},
};
const size_t proc_field_count = sizeof proc_fields / sizeof proc_fields[0];

size_t proc_field_sanitize_text(vramz_proc_sample *p)
{
	size_t bad = 0;
	for (size_t i = 0; i < proc_field_count; i++)
		if (proc_fields[i].kind == PC_STR) {
			char *s = (char *)p + proc_fields[i].offset;
			s[proc_fields[i].size - 1] = '\0';
			bad += text_sanitize(s);
		}
	return bad;
}

uint64_t proc_field_u64(const struct proc_field *f, const vramz_proc_sample *p)
{
	const char *v = (const char *)p + f->offset;
	switch (f->kind) {
	case PC_U32: return *(const uint32_t *)v;
	case PC_UINT: return *(const unsigned *)v;
	case PC_U64: return *(const uint64_t *)v;
	default: return 0;
	}
}
