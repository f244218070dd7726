/* SPDX-License-Identifier: Apache-2.0 */
/* fake.h - internals shared by the files of the fake libnvidia-ml.so.1.
 *
 * The fake is a test double for NVIDIA's management library: the real vramz
 * backend dlopens it through LD_LIBRARY_PATH and cannot tell it from a
 * driver.  A scenario file (tests/scenarios/README.md) describes a "world"
 * of GPUs, processes and injected faults; scenario.c parses it into a
 * struct fake_world, state.c owns the one live world behind a mutex and
 * turns it into readings as time passes, and api_*.c are the NVML entry
 * points, each a thin fake_enter / body / fake_leave sandwich.
 *
 * Every NVML symbol is declared here from NVML_FUNCS in nvml_abi.h, the
 * list the backend itself loads, so a signature that drifts from the
 * backend's fails to compile.  Only those symbols are exported.
 */
#ifndef FAKE_NVML_FAKE_H
#define FAKE_NVML_FAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/nvml_abi.h"

#define FAKE_API __attribute__((visibility("default")))

#define FAKE_DECLARE(req, name, params) FAKE_API nvmlReturn_t name params;
NVML_FUNCS(FAKE_DECLARE)
#undef FAKE_DECLARE
FAKE_API const char *nvmlErrorString(nvmlReturn_t r);

/* Build variants (tests/fake-nvml/CMakeLists.txt): FAKE_NVML_LEGACY drops
 * the calls an older driver lacks, FAKE_NVML_BROKEN drops the required
 * nvmlDeviceGetCount_v2 so the backend's "library unusable" path runs. */
#ifdef FAKE_NVML_LEGACY
#define FAKE_NEW_API 0
#else
#define FAKE_NEW_API 1
#endif

#define FAKE_MAX_GPUS 64
#define FAKE_MAX_MIG_PER_GPU 8
#define FAKE_MAX_RULES 64
#define FAKE_MAX_AT 256
#define FAKE_NO_INSTANCE 0xFFFFFFFFu

/* One id per NVML function, so rules and latencies are array lookups. */
enum fake_fn {
#define FAKE_FN_ENUM(req, name, params) FN_##name,
	NVML_FUNCS(FAKE_FN_ENUM)
#undef FAKE_FN_ENUM
	FN_COUNT
};
extern const char *const fake_fn_names[FN_COUNT];
/* FN_COUNT when name is no NVML function the fake knows. */
enum fake_fn fake_fn_lookup(const char *name);

/* Numeric gpu-line fields: X(key, ID).  Units are NVML's: MHz, mW, mJ,
 * Celsius, percent, KB/s, bytes for sizes (parsed with units). */
#define FAKE_GPU_FIELDS(X)                                                     \
	X(mem_total, MEM_TOTAL) X(mem_reserved, MEM_RESERVED)                  \
	X(mem_used, MEM_USED) X(mem_orphan, MEM_ORPHAN)                        \
	X(mem_free, MEM_FREE)                                                  \
	X(bar1_total, BAR1_TOTAL) X(bar1_used, BAR1_USED)                      \
	X(arch, ARCH) X(util, UTIL) X(mem_util, MEM_UTIL)                      \
	X(temp, TEMP) X(temp_mem, TEMP_MEM)                                    \
	X(power, POWER) X(power_limit, POWER_LIMIT)                            \
	X(power_default, POWER_DEFAULT) X(power_min, POWER_MIN)                \
	X(power_max, POWER_MAX)                                                \
	X(sm_clock, SM_CLOCK) X(mem_clock, MEM_CLOCK) X(gr_clock, GR_CLOCK)    \
	X(video_clock, VIDEO_CLOCK) X(max_sm_clock, MAX_SM_CLOCK)              \
	X(max_mem_clock, MAX_MEM_CLOCK) X(max_gr_clock, MAX_GR_CLOCK)          \
	X(max_video_clock, MAX_VIDEO_CLOCK) X(bus_width, BUS_WIDTH)            \
	X(pcie_gen, PCIE_GEN) X(pcie_width, PCIE_WIDTH)                        \
	X(pcie_max_gen, PCIE_MAX_GEN) X(pcie_gpu_max_gen, PCIE_GPU_MAX_GEN)    \
	X(pcie_max_width, PCIE_MAX_WIDTH) X(pcie_tx, PCIE_TX)                  \
	X(pcie_rx, PCIE_RX) X(pcie_counters, PCIE_COUNTERS)                    \
	X(nvlinks, NVLINKS) X(ecc, ECC)                                        \
	X(persistence, PERSISTENCE) X(mig, MIG) X(mig_max, MIG_MAX)            \
	X(throttle, THROTTLE) X(fan, FAN) X(energy, ENERGY)                    \
	X(t_shutdown, T_SHUTDOWN) X(t_slowdown, T_SLOWDOWN)                    \
	X(t_mem_max, T_MEM_MAX) X(t_gpu_max, T_GPU_MAX)                        \
	X(pci_id, PCI_ID) X(pci_subsys, PCI_SUBSYS) X(mem_raw, MEM_RAW)        \
	X(ecc_sbe_vol, ECC_SBE_VOL) X(ecc_dbe_vol, ECC_DBE_VOL)                \
	X(ecc_sbe_agg, ECC_SBE_AGG) X(ecc_dbe_agg, ECC_DBE_AGG)                \
	X(remap_corr, REMAP_CORR) X(remap_unc, REMAP_UNC)                      \
	X(remap_pending, REMAP_PENDING) X(remap_failure, REMAP_FAILURE)        \
	X(retired_sbe, RETIRED_SBE) X(retired_dbe, RETIRED_DBE)                \
	X(retired_pending, RETIRED_PENDING) X(pcie_replay, PCIE_REPLAY)        \
	X(events, EVENTS) X(minor, MINOR)

enum fake_gf {
#define FAKE_GF_ENUM(key, id) GF_##id,
	FAKE_GPU_FIELDS(FAKE_GF_ENUM)
#undef FAKE_GF_ENUM
	GF_COUNT
};

enum { FAKE_PT_COMPUTE = 1, FAKE_PT_GRAPHICS = 2, FAKE_PT_MPS = 4 };

struct fake_gpu {
	bool defined;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];   /* "" = not reported */
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE];
	char vbios[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE];
	bool has_pci, has_cc;
	unsigned pci_domain, pci_bus, pci_dev, pci_fn;
	int cc_major, cc_minor;
	bool has[GF_COUNT];
	unsigned long long v[GF_COUNT];
	bool mem_used_auto;      /* used = sum of processes + mem_orphan */
	bool temp_mem_signed;    /* temp_mem=-N: answered as a signed int */
	double mem_rate;         /* bytes/s: grows mem_used, or mem_orphan */
	int link_peer[NVML_NVLINK_MAX_LINKS]; /* gpu index, -1: link idle */
	bool link_remote_none[NVML_NVLINK_MAX_LINKS];
	unsigned links_used;
	unsigned nmig;
	unsigned mig_first;      /* index of its first entry in world->migs */
	long lost_after;         /* memory calls before GPU_IS_LOST; -1 never */
};

struct fake_proc {
	unsigned gpu;
	unsigned pid;
	unsigned types;          /* FAKE_PT_* */
	bool used_na;            /* usedGpuMemory = NVML_VALUE_NOT_AVAILABLE */
	bool follow;             /* listed only while the real pid exists */
	bool has_sm;
	unsigned long long used; /* bytes at nvmlInit time */
	double rate;             /* bytes/s */
	unsigned long long step; /* the growth in whole steps of this (0: smooth) */
	unsigned sm, mem, enc, dec;  /* percent */
	unsigned gi, ci;         /* FAKE_NO_INSTANCE without MIG */
};

struct fake_mig {
	unsigned parent;
	unsigned gi, ci;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	unsigned long long mem_total, mem_reserved, mem_used; /* bytes */
	bool mem_used_auto;
};

struct fake_error_rule {
	enum fake_fn fn;
	int gpu;                 /* -1: every GPU and system calls */
	nvmlReturn_t code;
	unsigned long after;     /* calls let through first */
	unsigned long hits[FAKE_MAX_GPUS + 1]; /* [0]: system, [i+1]: gpu i */
};

/* A line of the timeline: `at 5s gpu=2 xid=48` (scenarios/README.md). */
enum fake_at_kind {
	AT_XID,     /* an Xid critical-error event, v = the Xid */
	AT_SBE,     /* v single-bit ECC errors: the SBE counters grow, an event */
	AT_DBE,     /* v double-bit ECC errors: the DBE counters grow, an event */
	AT_SET,     /* gpu field f becomes v */
	AT_ADD,     /* gpu field f grows by v */
	AT_LOST,    /* the GPU falls off the bus: GPU_IS_LOST from then on */
};
struct fake_at {
	double t_s;              /* seconds after the first nvmlInit */
	unsigned gpu;
	enum fake_at_kind kind;
	enum fake_gf f;          /* AT_SET, AT_ADD */
	unsigned long long v;
	unsigned times;          /* events: delivered this many times (1) */
	double every_s;          /* events: apart by this (every=D) */
};

struct fake_world {
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	char nvml[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	bool has_cuda;
	int cuda;
	nvmlReturn_t init_error;
	unsigned ngpus;
	struct fake_gpu gpus[FAKE_MAX_GPUS];
	struct fake_proc *procs;
	unsigned nprocs, cap_procs;
	struct fake_mig migs[FAKE_MAX_GPUS * FAKE_MAX_MIG_PER_GPU];
	unsigned nmigs;
	struct fake_error_rule rules[FAKE_MAX_RULES];
	unsigned nrules;
	unsigned latency_us[FN_COUNT];
	/* procutil samples=N quiet: samples per process a utilization read
	 * returns, and whether INSUFFICIENT_SIZE leaves the count unraised
	 * (as an H200 did for a 64-sample buffer) */
	unsigned util_samples;
	int util_quiet;
	struct fake_at at[FAKE_MAX_AT]; /* in file order */
	unsigned nat;
	nvmlGpuTopologyLevel_t topo_default;
	unsigned char topo_set[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
	nvmlGpuTopologyLevel_t topo[FAKE_MAX_GPUS][FAKE_MAX_GPUS];
};

/* scenario.c: parses path into a new world; NULL and a "file:line: why"
 * message in err on failure, *unreadable telling "cannot open" apart. */
struct fake_world *fake_world_load(const char *path, bool *unreadable,
				   char *err, size_t errlen);
void fake_world_free(struct fake_world *w);

/* lex.c: value syntax.  Each returns false (or -1) on malformed input. */
/* NVML_ERROR_* name ("NOT_SUPPORTED", "NVML_ERROR_GPU_IS_LOST" or a
 * number) to its code; -1 when unknown. */
int fake_code_lookup(const char *name);
bool fake_parse_uint(const char *s, unsigned long long max,
		     unsigned long long *out);          /* decimal or 0x hex */
bool fake_parse_size(const char *s, unsigned long long *out); /* bytes */
bool fake_parse_rate(const char *s, double *bytes_per_s);
bool fake_parse_duration(const char *s, unsigned *out_us);
bool fake_parse_arch(const char *s, unsigned long long *out);
bool fake_parse_level(const char *s, nvmlGpuTopologyLevel_t *out);
/* Splits line in place into at most max tokens; -1 on a bad quote. */
int fake_tokenize(char *line, char **tok, int max);
bool fake_split_kv(char *tok, char **key, char **val);

/* state.c: one call's view of the live world, valid until fake_leave. */
enum {
	CALL_RELOAD = 1,   /* re-read the scenario first if it changed */
	CALL_MEMORY = 2,   /* a memory reading: counts towards `lost` */
	CALL_MIG_OK = 4,   /* accepts MIG device handles */
};
struct fake_call {
	enum fake_fn fn;
	unsigned flags;
	int index;                 /* GPU index, -1 for system calls */
	struct fake_world *w;
	struct fake_gpu *gpu;      /* the GPU, or a MIG device's parent */
	struct fake_mig *mig;      /* set for a MIG device handle */
	bool locked;
};

/* Each takes the lock; fake_leave releases it and returns r.  A non-zero
 * return from an enter is the call's result (still pass it to fake_leave). */
nvmlReturn_t fake_enter(struct fake_call *c, enum fake_fn fn, unsigned flags);
nvmlReturn_t fake_enter_dev(struct fake_call *c, enum fake_fn fn,
			    nvmlDevice_t d, unsigned flags);
nvmlReturn_t fake_enter_index(struct fake_call *c, enum fake_fn fn,
			      unsigned index, unsigned flags);
nvmlReturn_t fake_leave(struct fake_call *c, nvmlReturn_t r);
/* Lock held: the GPU index of another handle argument, -1 if invalid. */
int fake_resolve(nvmlDevice_t d);

nvmlReturn_t fake_init(void);
nvmlReturn_t fake_shutdown(void);

nvmlDevice_t fake_gpu_handle(unsigned index);
nvmlDevice_t fake_mig_handle(unsigned mig_index);

/* Readings that move with time since nvmlInit; lock held. */
double fake_elapsed_s(void);
bool fake_proc_alive(const struct fake_proc *p);
unsigned long long fake_proc_used(const struct fake_proc *p);
void fake_gpu_memory(const struct fake_world *w, unsigned index,
		     nvmlMemory_v2_t *m);
void fake_mig_memory(const struct fake_world *w, const struct fake_mig *mig,
		     nvmlMemory_v2_t *m);

/* A health field's value now (lock held): the gpu line's, with the
 * timeline's changes up to now applied; false when not reported. */
bool fake_gpu_value(const struct fake_world *w, unsigned index, enum fake_gf f,
		    unsigned long long *out);
/* Releases the lock for us microseconds (an event wait), then takes it
 * again; false when the library was shut down meanwhile. */
bool fake_pause(struct fake_call *c, unsigned us);

/* api_device.c helpers shared with api_procs.c. */
nvmlReturn_t fake_copy_str(char *buf, unsigned len, const char *s);
void fake_fill_pci(const struct fake_gpu *g, nvmlPciInfo_t *p);

#endif /* FAKE_NVML_FAKE_H */
