/* SPDX-License-Identifier: Apache-2.0 */
/* vramz.h - the public C API of libvramz, the VRAM monitor library.
 *
 * One opaque context (vramz_ctx) owns a backend (NVML loaded at run time, or
 * a replayed log), the static facts of each GPU read once at open, and the
 * buffers of the latest sample.  A caller selects GPUs, samples, and reads
 * plain structs whose fields say in their names what unit they carry.  A
 * field a GPU did not report has its validity bit clear: it is "unknown",
 * never zero and never a sentinel.
 *
 * The library never prints and never exits.  Every call that can fail
 * returns 0 or a negative VRAMZ_E* code; vramz_strerror() names it and
 * vramz_last_error() gives the detail of the last failure on a context.
 *
 * Compatibility (docs/api.md says it in full).  Within a major version error
 * codes are append-only and so are struct layouts, and a program built
 * against an older header keeps working with a newer library:
 *  - structs the caller fills (vramz_open_opts, vramz_diag_config) start with
 *    `size`, set to sizeof by the caller; fields past an older caller's size
 *    take their defaults;
 *  - arrays the library hands out (a snapshot's GPUs, processes and MIG
 *    instances, findings) come at the record sizes the caller was compiled
 *    with: the constructors (vramz_open, vramz_log_open, vramz_diag_create)
 *    are macros that pass this header's sizes (vramz_abi), so indexing
 *    snap->gpus[i] stays right when a newer library's records have grown;
 *  - a function whose arguments change keeps its old symbol for old
 *    programs and gets a new one (NVML's _v2 pattern): vramz_open() calls
 *    vramz_open_abi().
 */
#ifndef VRAMZ_VRAMZ_H
#define VRAMZ_VRAMZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(VRAMZ_STATIC)
#define VRAMZ_EXPORT
#elif defined(__GNUC__)
#define VRAMZ_EXPORT __attribute__((visibility("default")))
#else
#define VRAMZ_EXPORT
#endif

#define VRAMZ_VERSION_MAJOR 0
#define VRAMZ_VERSION_MINOR 2
#define VRAMZ_VERSION_PATCH 0
#define VRAMZ_VERSION_STRING "0.2.0"
/* Version of the JSON documents the tool writes (docs/json.md). */
#define VRAMZ_JSON_SCHEMA_VERSION 1

/* The library's version at run time ("0.2.0"), to compare with the macros. */
VRAMZ_EXPORT const char *vramz_version(void);

/* ---- errors ------------------------------------------------------------ */

/* X(NAME, value, message): append-only; values never reused.  Messages
 * are vendor-neutral; vramz_last_error() names the vendor's library or
 * driver ("libnvidia-ml.so.1: ..."). */
#define VRAMZ_ERRORS(X)                                                       \
	X(OK, 0, "success")                                                   \
	X(NOMEM, -1, "out of memory")                                         \
	X(INVAL, -2, "invalid argument")                                      \
	X(NOLIB, -3, "GPU management library not found")                      \
	X(DRIVER, -4, "GPU driver is not loaded")                             \
	X(MISMATCH, -5, "GPU driver/library version mismatch")                \
	X(PERM, -6, "insufficient permissions")                               \
	X(NODEV, -7, "no GPU found")                                          \
	X(LOST, -8, "GPU has fallen off the bus")                             \
	X(UNSUPPORTED, -9, "not supported")                                   \
	X(BACKEND, -10, "management library error")                           \
	X(IO, -11, "input/output error")                                      \
	X(PARSE, -12, "malformed input")                                      \
	X(NOTFOUND, -13, "not found")                                         \
	X(SYMBOL, -14, "management library lacks a required function")        \
	X(RANGE, -15, "value out of range")                                   \
	X(EOF, -16, "end of input")

enum vramz_err {
#define VRAMZ_ERR_ENUM(name, value, msg) VRAMZ_E##name = (value),
	VRAMZ_ERRORS(VRAMZ_ERR_ENUM)
#undef VRAMZ_ERR_ENUM
};

/* Static string for a code; "unknown error" for a code it does not know. */
VRAMZ_EXPORT const char *vramz_strerror(int err);

/* ---- static facts of one GPU (read once, at open) ---------------------- */

#define VRAMZ_NAME_LEN 96
#define VRAMZ_UUID_LEN 96
#define VRAMZ_BUSID_LEN 32

/* Bits of vramz_gpu_info.valid */
enum {
	VRAMZ_I_CC = 1u << 0,          /* cc_major, cc_minor */
	VRAMZ_I_BUS_WIDTH = 1u << 1,   /* mem_bus_width_bits */
	VRAMZ_I_MAX_MEMCLK = 1u << 2,  /* max_mem_clock_mhz */
	VRAMZ_I_BANDWIDTH = 1u << 3,   /* bandwidth_bytes_per_s */
	VRAMZ_I_PCIE_MAX = 1u << 4,    /* pcie_max_gen, pcie_max_width */
	VRAMZ_I_NVLINK = 1u << 5,      /* nvlink_count */
	VRAMZ_I_MIG = 1u << 6,         /* mig_current, mig_pending */
	VRAMZ_I_ECC = 1u << 7,         /* ecc_current, ecc_pending */
	VRAMZ_I_PERSIST = 1u << 8,     /* persistence */
	VRAMZ_I_POWER_LIMITS = 1u << 9, /* power_default/min/max_limit_mw */
	VRAMZ_I_T_SHUTDOWN = 1u << 10, /* temp_shutdown_c */
	VRAMZ_I_T_SLOWDOWN = 1u << 11, /* temp_slowdown_c */
	VRAMZ_I_T_MEM_MAX = 1u << 12,  /* temp_mem_max_c */
	VRAMZ_I_T_GPU_MAX = 1u << 13,  /* temp_gpu_max_c */
	VRAMZ_I_MAX_SMCLK = 1u << 14,  /* max_sm_clock_mhz */
	VRAMZ_I_BAR1 = 1u << 15,       /* bar1_total_bytes */
	VRAMZ_I_MEM_TOTAL = 1u << 16,  /* mem_total_bytes */
	VRAMZ_I_ARCH = 1u << 17,       /* arch */
	VRAMZ_I_MINOR = 1u << 18,      /* minor_number (appended in 0.2) */
	VRAMZ_I_DETAILS = 1u << 30,    /* vramz_gpu_details() has run */
};

typedef struct vramz_gpu_info {
	unsigned index;                  /* global index: the GPUs of every
					    backend in probe order (NVML's first) */
	uint32_t valid;                  /* VRAMZ_I_* bits */
	char name[VRAMZ_NAME_LEN];       /* "NVIDIA H200" */
	char uuid[VRAMZ_UUID_LEN];       /* "GPU-xxxxxxxx-..." */
	char pci_bus_id[VRAMZ_BUSID_LEN]; /* "00000000:19:00.0" */
	char serial[32];                 /* "" when unknown */
	char vbios[32];                  /* "" when unknown */
	char arch[16];                   /* "Hopper"; "" when unknown */
	char mem_type[16];               /* "HBM3e" (table by model); "" unknown */
	unsigned cc_major, cc_minor;     /* CUDA compute capability */
	uint64_t mem_total_bytes;        /* framebuffer size */
	uint64_t bar1_total_bytes;
	unsigned mem_bus_width_bits;
	unsigned max_mem_clock_mhz;
	unsigned max_sm_clock_mhz;
	uint64_t bandwidth_bytes_per_s;  /* theoretical peak, see docs/memory-types.md */
	unsigned pcie_max_gen, pcie_max_width;
	unsigned nvlink_count;           /* active NVLinks */
	unsigned mig_current, mig_pending; /* 1 enabled, 0 disabled */
	unsigned ecc_current, ecc_pending;
	unsigned persistence;            /* 1 enabled */
	unsigned power_default_limit_mw, power_min_limit_mw, power_max_limit_mw;
	int temp_shutdown_c, temp_slowdown_c, temp_mem_max_c, temp_gpu_max_c;
	/* appended in 0.2 */
	char vendor[16];                 /* "nvidia", "amd"; "" unknown (a log
					    that did not record it) */
	char backend[16];                /* the backend that reads it: "nvml" */
	unsigned minor_number;           /* the device node's minor: 3 for
					    /dev/nvidia3 (VRAMZ_I_MINOR, set
					    by vramz_gpu_details) */
} vramz_gpu_info;

typedef struct vramz_system_info {
	char driver_version[80];         /* the first backend's driver:
					    "580.159.04"; "" unknown */
	struct {                         /* NVIDIA's own, when NVML found GPUs */
		char nvml_version[80];   /* "13.580.159.04"; "" unknown */
		int cuda_driver_version; /* 13000 for 13.0; 0 unknown */
	} nvidia;
	char backend[16];                /* the backends with GPUs joined by
					    '+': "nvml", "replay", "nvml+amdgpu" */
} vramz_system_info;

/* One backend that found GPUs (vramz_backend()): a mixed machine has two. */
typedef struct vramz_backend_info {
	char name[16];                   /* "nvml", "replay" */
	char vendor[16];                 /* "nvidia"; "" for a recording */
	char driver_version[80];         /* "" unknown */
	unsigned gpu_first, gpu_count;   /* its GPUs' global indices */
} vramz_backend_info;

/* ---- one sample --------------------------------------------------------- */

/* Bits of vramz_gpu_sample.valid */
enum {
	VRAMZ_F_MEM = 1u << 0,        /* mem_total/used/free_bytes */
	VRAMZ_F_MEM_RESERVED = 1u << 1, /* mem_reserved_bytes (memory v2 only) */
	VRAMZ_F_UTIL = 1u << 2,       /* util_gpu_pct, util_mem_pct */
	VRAMZ_F_TEMP = 1u << 3,       /* temp_c */
	VRAMZ_F_POWER = 1u << 4,      /* power_mw */
	VRAMZ_F_POWER_LIMIT = 1u << 5, /* power_limit_mw (enforced) */
	VRAMZ_F_CLK_SM = 1u << 6,     /* clock_sm_mhz */
	VRAMZ_F_CLK_MEM = 1u << 7,    /* clock_mem_mhz */
	VRAMZ_F_THROTTLE = 1u << 8,   /* throttle_reasons */
	VRAMZ_F_PCIE_LINK = 1u << 9,  /* pcie_gen, pcie_width (VRAMZ_SAMPLE_LINK) */
	VRAMZ_F_PCIE_TPUT = 1u << 10, /* pcie_tx/rx_bytes_per_s (slow) */
	VRAMZ_F_ENERGY = 1u << 11,    /* energy_mj (slow) */
	VRAMZ_F_FAN = 1u << 12,       /* fan_pct */
	VRAMZ_F_PROCS = 1u << 13,     /* the process list was read */
	VRAMZ_F_TEMP_MEM = 1u << 14,  /* temp_mem_c */
	VRAMZ_F_UNATTRIBUTED = 1u << 15, /* unattributed_bytes */
	/* appended in 0.2: VRAM health (VRAMZ_SAMPLE_HEALTH; docs/health.md) */
	VRAMZ_F_ECC_MODE = 1u << 16,  /* ecc_mode */
	VRAMZ_F_ECC_VOL = 1u << 17,   /* ecc_corrected/uncorrected_volatile */
	VRAMZ_F_ECC_AGG = 1u << 18,   /* ecc_corrected/uncorrected_aggregate */
	VRAMZ_F_REMAP = 1u << 19,     /* remap_* (Ampere and later) */
	VRAMZ_F_RETIRED = 1u << 20,   /* retired_sbe/dbe_pages (before Ampere) */
	VRAMZ_F_RETIRED_PENDING = 1u << 21, /* retired_pending */
	VRAMZ_F_PCIE_REPLAY = 1u << 22, /* pcie_replays */
	VRAMZ_F_XID = 1u << 23,       /* xid_* (an event watcher ran: docs/health.md) */
};

/* Throttle / clock-event reason bits, the same values as NVML's. */
enum {
	VRAMZ_THR_GPU_IDLE = 0x1ull,
	VRAMZ_THR_APP_CLOCKS = 0x2ull,
	VRAMZ_THR_SW_POWER_CAP = 0x4ull,
	VRAMZ_THR_HW_SLOWDOWN = 0x8ull,
	VRAMZ_THR_SYNC_BOOST = 0x10ull,
	VRAMZ_THR_SW_THERMAL = 0x20ull,
	VRAMZ_THR_HW_THERMAL = 0x40ull,
	VRAMZ_THR_HW_POWER_BRAKE = 0x80ull,
	VRAMZ_THR_DISPLAY_CLOCKS = 0x100ull,
};

typedef struct vramz_gpu_sample {
	unsigned index;               /* backend index, as in vramz_gpu_info */
	uint32_t valid;               /* VRAMZ_F_* bits */
	int lost;                     /* 1: fell off the bus; nothing else valid */
	uint64_t mem_total_bytes;
	uint64_t mem_reserved_bytes;  /* set aside by the driver */
	uint64_t mem_used_bytes;      /* as nvidia-smi's memory.used (excl. reserved) */
	uint64_t mem_free_bytes;
	uint64_t unattributed_bytes;  /* used minus the sum over listed processes, >= 0 */
	unsigned util_gpu_pct, util_mem_pct;
	int temp_c, temp_mem_c;
	unsigned power_mw, power_limit_mw;
	unsigned clock_sm_mhz, clock_mem_mhz;
	uint64_t throttle_reasons;    /* VRAMZ_THR_* bits */
	unsigned pcie_gen, pcie_width;
	uint64_t pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
	uint64_t energy_mj;           /* since driver load */
	unsigned fan_pct;
	unsigned proc_first, proc_count; /* slice of vramz_snapshot.procs */
	/* appended in 0.2: VRAM health, read with VRAMZ_SAMPLE_HEALTH (the
	 * xid_* fields come from an event watcher, vramz_events_wait) */
	unsigned ecc_mode;            /* 1 ECC on, 0 off */
	uint64_t ecc_corrected_volatile;   /* errors since the driver loaded */
	uint64_t ecc_uncorrected_volatile;
	uint64_t ecc_corrected_aggregate;  /* over the GPU's life */
	uint64_t ecc_uncorrected_aggregate;
	unsigned remap_correctable_rows;   /* rows remapped for corrected errors */
	unsigned remap_uncorrectable_rows; /* ... for uncorrected errors */
	unsigned remap_pending;       /* 1: a remap waits for a GPU reset */
	unsigned remap_failure;       /* 1: a remap failed (no spare row left) */
	unsigned retired_sbe_pages;   /* pages retired for multiple single-bit errors */
	unsigned retired_dbe_pages;   /* ... for a double-bit error */
	unsigned retired_pending;     /* 1: a retirement waits for a reboot */
	unsigned pcie_replays;        /* PCIe replay counter */
	unsigned xid_events;          /* Xid errors seen since the watcher started */
	unsigned xid_last;            /* the last one's code (48, 79, ...) */
	uint64_t xid_time_ms;         /* when it came (ms since 1970, UTC) */
} vramz_gpu_sample;

/* Bits of vramz_proc_sample.valid */
enum {
	VRAMZ_P_USED = 1u << 0,       /* used_bytes */
	VRAMZ_P_SM = 1u << 1,         /* sm_pct */
	VRAMZ_P_MEMUTIL = 1u << 2,    /* mem_util_pct */
	VRAMZ_P_VISIBLE = 1u << 3,    /* the pid is visible in this /proc:
					 user, command, start time, cgroup
					 fields below are from it */
	VRAMZ_P_MIG = 1u << 4,        /* gi_id, ci_id */
	VRAMZ_P_TORCH = 1u << 5,      /* a PyTorch agent publishes for this
					 process (torch_* fields, docs/python.md) */
	VRAMZ_P_OUTSIDE = 1u << 6,    /* outside_allocator_bytes */
	VRAMZ_P_OUTSIDE_PARTS = 1u << 7, /* outside_*_bytes, outside_nccl_comms:
					    its agent measures where the memory
					    outside the allocator appeared */
};

/* Bits of vramz_proc_sample.torch_valid: the agent's figures it reported */
enum {
	VRAMZ_T_ALLOCATED = 1u << 0,      /* torch_allocated_bytes */
	VRAMZ_T_RESERVED = 1u << 1,       /* torch_reserved_bytes */
	VRAMZ_T_ACTIVE = 1u << 2,         /* torch_active_bytes */
	VRAMZ_T_INACTIVE_SPLIT = 1u << 3, /* torch_inactive_split_bytes */
	VRAMZ_T_PEAK_ALLOCATED = 1u << 4, /* torch_peak_allocated_bytes */
	VRAMZ_T_RETRIES = 1u << 5,        /* torch_alloc_retries */
	VRAMZ_T_OOMS = 1u << 6,           /* torch_ooms */
	VRAMZ_T_ALLOCATIONS = 1u << 7,    /* torch_allocations */
	VRAMZ_T_HISTORY = 1u << 8,        /* the agent records allocation
					     stacks: leak sites can be asked */
};

/* Kinds of context a process holds, or'ed */
enum { VRAMZ_PT_COMPUTE = 1, VRAMZ_PT_GRAPHICS = 2, VRAMZ_PT_MPS = 4 };

#define VRAMZ_USER_LEN 33
#define VRAMZ_CMD_LEN 256
#define VRAMZ_CONTAINER_LEN 72
#define VRAMZ_POD_LEN 254       /* a DNS-1123 subdomain: 253 and the NUL */
#define VRAMZ_KUBE_NAME_LEN 64  /* a DNS-1123 label: 63 and the NUL */

typedef struct vramz_proc_sample {
	unsigned gpu_index;           /* backend index of the GPU */
	uint32_t pid;                 /* host pid, as NVML reports it */
	uint32_t valid;               /* VRAMZ_P_* bits */
	unsigned type;                /* VRAMZ_PT_* bits */
	uint64_t used_bytes;
	unsigned sm_pct, mem_util_pct;
	unsigned gi_id, ci_id;        /* MIG instance ids */
	/* from /proc, valid with VRAMZ_P_VISIBLE */
	uint32_t uid;
	uint32_t ppid, pgid;
	uint32_t ns_pid;              /* innermost-namespace pid (NSpid last) */
	uint64_t start_time_ticks;    /* /proc/PID/stat field 22 */
	char user[VRAMZ_USER_LEN];    /* name, or the numeric uid */
	char comm[16];
	char cmdline[VRAMZ_CMD_LEN];  /* args joined by spaces, truncated */
	char container[VRAMZ_CONTAINER_LEN]; /* container id (12+ hex) or "" */
	char pod_uid[40];             /* Kubernetes pod uid or "" */
	char slurm_job[24];           /* Slurm job id or "" */
	/* appended in 0.2: the PyTorch agent's figures for this process on
	 * this GPU, with VRAMZ_P_TORCH (each figure's bit in torch_valid).  An
	 * agent whose allocator never used this GPU reports 0 here. */
	uint32_t torch_valid;         /* VRAMZ_T_* bits */
	uint64_t torch_allocated_bytes;      /* live tensors */
	uint64_t torch_reserved_bytes;       /* held by the caching allocator */
	uint64_t torch_active_bytes;
	uint64_t torch_inactive_split_bytes; /* free pieces of split blocks */
	uint64_t torch_peak_allocated_bytes;
	uint64_t torch_alloc_retries;        /* cache flushes and retries */
	uint64_t torch_ooms;                 /* out-of-memory errors */
	uint64_t torch_allocations;          /* live allocations */
	int64_t torch_time_ms;               /* when the agent wrote them */
	/* used_bytes - torch_reserved_bytes, floored at 0, with
	 * VRAMZ_P_OUTSIDE: what the allocator does not hold (CUDA context,
	 * cuBLAS / cuDNN workspaces, NCCL buffers, other libraries) */
	uint64_t outside_allocator_bytes;
	/* appended in 0.2: the Kubernetes names of pod_uid and container,
	 * with VRAMZ_P_VISIBLE, from the kubelet's log directories
	 * (docs/attribution.md); "" when nothing names them, never a guess */
	char pod[VRAMZ_POD_LEN];                /* pod name */
	char pod_namespace[VRAMZ_KUBE_NAME_LEN]; /* the pod's namespace */
	char container_name[VRAMZ_KUBE_NAME_LEN]; /* the container's name in the pod */
	/* appended in 0.2 (issue 37), with VRAMZ_P_OUTSIDE_PARTS:
	 * outside_allocator_bytes in parts, as the agent saw them appear
	 * (docs/python.md); the four sum to it, other being what no
	 * measurement told */
	uint64_t outside_context_bytes;   /* the CUDA context */
	uint64_t outside_libraries_bytes; /* CUDA libraries at their first use */
	uint64_t outside_nccl_bytes;      /* NCCL's communicators */
	uint64_t outside_other_bytes;
	unsigned outside_nccl_comms;      /* communicators measured (one a group) */
} vramz_proc_sample;

/* A MIG GPU instance, listed under its parent GPU */
typedef struct vramz_mig_sample {
	unsigned parent_index;
	unsigned mig_index;           /* index under the parent */
	unsigned gi_id, ci_id;
	uint32_t valid;               /* VRAMZ_F_MEM */
	char uuid[VRAMZ_UUID_LEN];
	uint64_t mem_total_bytes, mem_used_bytes, mem_free_bytes;
} vramz_mig_sample;

typedef struct vramz_snapshot {
	int64_t time_ms;              /* wall clock, ms since the Unix epoch, UTC */
	int64_t mono_ns;              /* CLOCK_MONOTONIC at the sample */
	unsigned gpu_count;           /* selected GPUs, in selection order */
	const vramz_gpu_sample *gpus;
	unsigned proc_count;
	const vramz_proc_sample *procs;
	unsigned mig_count;
	const vramz_mig_sample *migs;
	/* appended in 0.2: the arrays' strides, the caller's record sizes
	 * (vramz_abi).  A program built against this header indexes the
	 * arrays directly; a language binding that lays the structs out
	 * itself steps by these (or calls vramz_snapshot_gpu() etc.).  A
	 * snapshot a caller builds to feed vramz_diag_feed sets them, or
	 * leaves them 0 for the record sizes its diag was created with. */
	size_t gpu_size, proc_size, mig_size;
} vramz_snapshot;

/* Element i of a snapshot's arrays by its strides; NULL out of range. */
VRAMZ_EXPORT const vramz_gpu_sample *vramz_snapshot_gpu(const vramz_snapshot *s, unsigned i);
VRAMZ_EXPORT const vramz_proc_sample *vramz_snapshot_proc(const vramz_snapshot *s, unsigned i);
VRAMZ_EXPORT const vramz_mig_sample *vramz_snapshot_mig(const vramz_snapshot *s, unsigned i);

/* The record sizes a program was compiled with, passed by the constructor
 * macros so the library hands out arrays at those strides.  A size of 0:
 * the library's own (what a binding that reads the strides wants).  A
 * size smaller than the record had in 0.1, or larger than this library's
 * (a program built against a newer header), is VRAMZ_EINVAL. */
typedef struct vramz_abi {
	size_t size;                  /* sizeof(vramz_abi) */
	size_t gpu_info, gpu_sample, proc_sample, mig_sample, snapshot;
	size_t finding;               /* vramz_finding (diagnose.h); 0 here */
} vramz_abi;

static inline const vramz_abi *vramz_abi_current(void)
{
	static const vramz_abi abi = {
		sizeof(vramz_abi), sizeof(vramz_gpu_info), sizeof(vramz_gpu_sample),
		sizeof(vramz_proc_sample), sizeof(vramz_mig_sample),
		sizeof(vramz_snapshot), 0};
	return &abi;
}

/* ---- the context -------------------------------------------------------- */

typedef struct vramz_ctx vramz_ctx;

/* What vramz_sample reads.  Flags or'ed. */
enum {
	VRAMZ_SAMPLE_PROCS = 1u << 0,   /* process lists (and /proc attribution) */
	VRAMZ_SAMPLE_PROC_UTIL = 1u << 1, /* per-process SM utilization */
	VRAMZ_SAMPLE_SLOW = 1u << 2,    /* PCIe throughput (up to 20 ms) and energy */
	VRAMZ_SAMPLE_MIG = 1u << 3,     /* MIG instances' memory */
	VRAMZ_SAMPLE_LINK = 1u << 4,    /* current PCIe link gen / width (~30 us a GPU) */
	VRAMZ_SAMPLE_NO_ATTRIB = 1u << 5, /* process lists without /proc attribution */
	/* only what VRAMZ_SAMPLE_SLOW / _LINK add, none of the per-tick
	 * fields: for a second context reading the slow fields on its own
	 * thread (NVML's utilization read alone costs 1.5 ms when it is
	 * asked only every few seconds) */
	VRAMZ_SAMPLE_SLOW_ONLY = 1u << 6,
	/* per-process utilization read now, whatever the interval and the
	 * GPU's own utilization say: every sample since the last read (what
	 * kill --idle needs to call a process idle; 1.5 ms a GPU on H200) */
	VRAMZ_SAMPLE_PROC_UTIL_NOW = 1u << 7,
	/* with VRAMZ_SAMPLE_SLOW: the PCIe throughput without the energy
	 * counter, whose read costs 3.4 ms of CPU a GPU on H200 (a sampler
	 * loop reads it on a longer cadence than the throughput) */
	VRAMZ_SAMPLE_NO_ENERGY = 1u << 8,
	/* VRAM health: ECC mode and counters, remapped rows, retired pages,
	 * PCIe replays (docs/health.md; tens of us a GPU: the slow path) */
	VRAMZ_SAMPLE_HEALTH = 1u << 9,
	VRAMZ_SAMPLE_DEFAULT = VRAMZ_SAMPLE_PROCS | VRAMZ_SAMPLE_PROC_UTIL |
			       VRAMZ_SAMPLE_MIG,
};

typedef struct vramz_open_opts {
	/* sizeof(vramz_open_opts): the caller's version of this struct.  Fields
	 * past it take their defaults; a larger size than the library knows is
	 * accepted when the bytes it does not know are zero, else
	 * VRAMZ_EINVAL.  VRAMZ_OPEN_OPTS_INIT sets it. */
	size_t size;
	/* NULL: the live backends, each that finds GPUs (NVML first).  A
	 * path: replay that log file alone (see vramz_log_*). */
	const char *replay_path;
	/* NULL: dlopen "libnvidia-ml.so.1" then "libnvidia-ml.so". */
	const char *nvml_path;
	/* VRAMZ_OPEN_* bits */
	unsigned flags;
	/* Per-process SM utilization is read at most this often per GPU
	 * (0: 5000).  Each read costs NVML 1.5 ms of CPU a GPU on H200; the
	 * figure is the peak over the interval. */
	unsigned proc_util_interval_ms;
} vramz_open_opts;

#define VRAMZ_OPEN_OPTS_INIT {sizeof(vramz_open_opts), NULL, NULL, 0, 0}

enum {
	/* The process exits right after vramz_close: skip nvmlShutdown (3-4 ms
	 * on H200) and let exit release the driver, as it does for a killed
	 * process.  For one-shot tools; memory is still freed. */
	VRAMZ_OPEN_EXITING = 1u << 0,
	/* Count and time every driver call (vramz_call_stats); off, it costs
	 * one branch a call. */
	VRAMZ_OPEN_PROFILE = 1u << 1,
};

/* Opens the backends and reads every GPU's static facts.  Without a
 * replay_path every live backend is tried in order (docs/architecture.md
 * lists them); each that finds GPUs is kept, so a machine with NVIDIA and
 * AMD GPUs is one list, by global index.  A backend finding nothing is
 * skipped quietly; it fails only when none finds a GPU, with the most
 * telling backend's error.  On failure *out is still set (unless
 * VRAMZ_ENOMEM) so vramz_last_error() can explain; the caller closes it
 * either way.  opts NULL: defaults.  abi NULL: the library's own sizes. */
VRAMZ_EXPORT int vramz_open_abi(vramz_ctx **out, const vramz_open_opts *opts,
				const vramz_abi *abi);
#define vramz_open(out, opts) vramz_open_abi((out), (opts), vramz_abi_current())
VRAMZ_EXPORT void vramz_close(vramz_ctx *ctx);

/* Detail of the last failure on ctx, e.g. "nvmlInit_v2: Driver Not Loaded". */
VRAMZ_EXPORT const char *vramz_last_error(const vramz_ctx *ctx);

VRAMZ_EXPORT const vramz_system_info *vramz_system(const vramz_ctx *ctx);

/* The backends that found GPUs, in probe order; NULL out of range. */
VRAMZ_EXPORT unsigned vramz_backend_count(const vramz_ctx *ctx);
VRAMZ_EXPORT const vramz_backend_info *vramz_backend(const vramz_ctx *ctx, unsigned i);

/* All GPUs the backends see, by global index.  vramz_gpu() holds the
 * identity (name, UUID, PCI bus id) from open; the rest of vramz_gpu_info
 * is filled by vramz_gpu_details(), which reads slow calls (max clocks,
 * bus width, NVLink state: milliseconds per GPU) once, so one-shot views
 * that do not show them never pay for them. */
VRAMZ_EXPORT unsigned vramz_gpu_count(const vramz_ctx *ctx);
VRAMZ_EXPORT const vramz_gpu_info *vramz_gpu(const vramz_ctx *ctx, unsigned index);
VRAMZ_EXPORT int vramz_gpu_details(vramz_ctx *ctx, unsigned index);

/* Selects GPUs by a spec such as "0,2-3", "GPU-8f3a" (UUID prefix),
 * "00000000:19:00.0" or "19:00.0" (PCI bus id), "MIG-..." (its parent GPU);
 * "all" or NULL selects all.
 * On a bad item returns VRAMZ_EINVAL or VRAMZ_ENOTFOUND and vramz_last_error
 * names it.  Order follows the spec, duplicates dropped. */
VRAMZ_EXPORT int vramz_select(vramz_ctx *ctx, const char *spec);
VRAMZ_EXPORT unsigned vramz_selected_count(const vramz_ctx *ctx);
VRAMZ_EXPORT unsigned vramz_selected_index(const vramz_ctx *ctx, unsigned i);

/* Samples every selected GPU.  The snapshot points into ctx and stays valid
 * until the next vramz_sample or vramz_close.  A GPU lost mid-run is marked
 * lost and the call still succeeds for the others; it fails only when no
 * selected GPU could be read. */
VRAMZ_EXPORT int vramz_sample(vramz_ctx *ctx, unsigned flags,
			      const vramz_snapshot **out);

/* One driver call's totals over every GPU of a context opened with
 * VRAMZ_OPEN_PROFILE: where a command's CPU goes, on a real driver, without
 * a profiler.  The caller allocates the array, so this layout is frozen: a
 * new figure would come with a new function. */
typedef struct vramz_call_stat {
	const char *name;   /* the driver function, "nvmlDeviceGetMemoryInfo_v2" */
	uint64_t calls;
	uint64_t wall_ns;   /* summed over the calls */
	uint64_t cpu_ns;    /* the calling thread's CPU time, summed */
} vramz_call_stat;

/* Fills up to cap entries, one per call made at least once, in a fixed
 * order; returns how many there are (0 without VRAMZ_OPEN_PROFILE, or for
 * a replayed log). */
VRAMZ_EXPORT unsigned vramz_call_stats(const vramz_ctx *ctx, vramz_call_stat *out,
				       unsigned cap);

/* ---- driver events (docs/health.md) -------------------------------------
 * Xid errors and ECC errors as the driver raises them, between samples.
 * Open a context of its own for them (its waits block) on a thread of
 * its own: vramz_events_open registers the selected GPUs for the types
 * they support, then each vramz_events_wait sleeps in the driver until an
 * event comes or timeout_ms passes (no wake-up when nothing comes). */
enum {
	VRAMZ_EV_ECC_SBE = 1u << 0,   /* a single-bit (corrected) ECC error */
	VRAMZ_EV_ECC_DBE = 1u << 1,   /* a double-bit (uncorrected) ECC error */
	VRAMZ_EV_XID = 1u << 3,       /* an Xid critical error; data: the Xid */
};
/* Filled by the library into the caller's struct: frozen, as vramz_call_stat. */
typedef struct vramz_event {
	unsigned gpu;                 /* global index */
	unsigned type;                /* one VRAMZ_EV_* */
	uint64_t data;                /* the Xid for VRAMZ_EV_XID, else 0 */
	uint64_t time_ms;             /* when it was received (ms since 1970) */
} vramz_event;
/* Registers the selected GPUs; returns how many took at least one type
 * (0: none supports events), or VRAMZ_EUNSUPPORTED when no backend has
 * events (a log, a daemon's segment, amdgpu). */
VRAMZ_EXPORT int vramz_events_open(vramz_ctx *ctx);
/* 1: *ev is an event; 0: none came in timeout_ms; < 0: an error
 * (VRAMZ_EINVAL before vramz_events_open). */
VRAMZ_EXPORT int vramz_events_wait(vramz_ctx *ctx, unsigned timeout_ms, vramz_event *ev);

/* Interconnect between two GPUs (global indices), like nvidia-smi topo -m.
 * Reads the backend on each call (slow): call it for a topology view only. */
enum vramz_link_kind {
	VRAMZ_LINK_UNKNOWN = 0,
	VRAMZ_LINK_SELF,   /* X */
	VRAMZ_LINK_NVLINK, /* NV# */
	VRAMZ_LINK_PIX,    /* at most one PCIe bridge */
	VRAMZ_LINK_PXB,    /* multiple PCIe bridges */
	VRAMZ_LINK_PHB,    /* a PCIe host bridge */
	VRAMZ_LINK_NODE,   /* host bridges within a NUMA node */
	VRAMZ_LINK_SYS,    /* across NUMA nodes (SMP interconnect) */
};
/* Filled by the library into the caller's struct: frozen, as vramz_call_stat. */
typedef struct vramz_link {
	enum vramz_link_kind kind;
	unsigned nvlinks;  /* NVLinks joining the pair (kind NVLINK) */
} vramz_link;
VRAMZ_EXPORT int vramz_topology(vramz_ctx *ctx, unsigned a, unsigned b,
				vramz_link *out);
/* "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "?" into buf. */
VRAMZ_EXPORT const char *vramz_link_str(const vramz_link *l, char *buf,
					size_t len);

#ifdef __cplusplus
}
#endif
#endif /* VRAMZ_VRAMZ_H */
