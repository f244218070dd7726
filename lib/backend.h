/* SPDX-License-Identifier: Apache-2.0 */
/* backend.h - what a source of GPU readings provides to the context layer.
 *
 * A backend knows how to enumerate GPUs, read their static facts once, and
 * fill one GPU's sample and process list on demand.  The context (ctx.c)
 * owns selection, buffers, /proc attribution and derived figures, so a
 * backend stays a thin translation of one vendor API.  The table of
 * backends is explicit (backends[] in backends.c, in probe order), not
 * registered by constructors, so one list of C shows which exist.
 *
 * A backend speaks its own indices 0..count-1; the context maps them to
 * global ones (a second backend's GPUs follow the first's), including the
 * gpu_index of the processes and the parent_index of the MIG instances
 * it appends.
 *
 * Adding a backend (docs/architecture.md): lib/backend/NAME.c defining
 * `const struct backend_ops backend_NAME`, its extern line below, its row
 * in backends[] (backends.c) and its source in lib/CMakeLists.txt.
 *
 * Who calls whom: ctx.c walks backends[] (backends.c), which names each
 * backend; a backend calls only down, into vec.c and the helpers of
 * lib/internal/, never back into ctx.c (lint.callgraph checks).
 */
#ifndef VRAMZ_BACKEND_H
#define VRAMZ_BACKEND_H

#include "vramz/vramz.h"
#include "vec.h"

struct backend;

struct backend_ops {
	const char *name;           /* "nvml": vramz_backend_info.name */
	const char *vendor;         /* "nvidia": each GPU's vendor; "" for a
				       recorded source (its GPUs say theirs) */
	/* A recorded source (a log, a daemon's segment) is opened alone, when
	 * wanted(opts) says the options ask for it.  Live backends (NULL
	 * here) are all probed; each that finds GPUs is kept.  A live
	 * backend's open returns VRAMZ_ENOLIB or VRAMZ_ENODEV when its
	 * vendor is simply absent, so that it can be skipped quietly. */
	int (*wanted)(const vramz_open_opts *opts);
	/* A recorded source of now, not the past (a daemon's segment): what
	 * only the processes know (their PyTorch agents) is read at each
	 * sample, as a live backend's would be. */
	int records_now;
	/* sample() may run for different GPUs on different threads at once */
	int parallel_safe;
	/* err: a one-line detail for vramz_last_error on failure. */
	int (*open)(struct backend **out, const vramz_open_opts *opts,
		    char *err, size_t errlen);
	void (*close)(struct backend *b);
	/* Its driver's version into bi->driver_version, and its vendor's
	 * group of sys (sys->nvidia); nothing else. */
	int (*system)(struct backend *b, vramz_system_info *sys, vramz_backend_info *bi);
	unsigned (*count)(struct backend *b);
	/* Identity only (name, uuid, pci_bus_id, cheap facts): at open. */
	int (*gpu_info)(struct backend *b, unsigned idx, vramz_gpu_info *out);
	/* The slow static facts, into the same struct, on demand. */
	int (*gpu_details)(struct backend *b, unsigned idx, vramz_gpu_info *out);
	/* Fills everything but the process slice; VRAMZ_ELOST marks the GPU
	 * lost (the context sets .lost).  flags: VRAMZ_SAMPLE_* */
	int (*sample)(struct backend *b, unsigned idx, unsigned flags,
		      vramz_gpu_sample *out);
	/* Appends the GPU's processes, merged and de-duplicated by pid, with
	 * used_bytes / type / MIG ids and (VRAMZ_SAMPLE_PROC_UTIL) sm_pct. */
	int (*procs)(struct backend *b, unsigned idx, unsigned flags,
		     struct proc_vec *out);
	/* Appends the GPU's MIG instances; nothing when MIG is off. */
	int (*migs)(struct backend *b, unsigned idx, struct mig_vec *out);
	int (*topology)(struct backend *b, unsigned a, unsigned c,
			vramz_link *out);
	/* vramz_call_stats; NULL when the backend keeps none */
	unsigned (*call_stats)(const struct backend *b, vramz_call_stat *out, unsigned cap);
	/* Driver events (NULL: none).  events_open registers the GPUs whose
	 * local index has sel[i] set for what each supports, returning how
	 * many took any; events_wait blocks up to timeout_ms: 1 with *idx
	 * (local), *type (VRAMZ_EV_*) and *data, 0 on a timeout. */
	int (*events_open)(struct backend *b, const unsigned char *sel);
	int (*events_wait)(struct backend *b, unsigned timeout_ms, unsigned *idx,
			   unsigned *type, uint64_t *data);
	/* Recorded sources only (NULL for live ones): moves to the next tick
	 * and gives its time; VRAMZ_EEOF after the last.  Such a backend's
	 * processes arrive already attributed, so /proc is not consulted.
	 * gpu_info returning VRAMZ_ENOTFOUND leaves an index out of the
	 * default selection (a log recorded with -g 1,3 has no GPU 0). */
	int (*tick)(struct backend *b, int64_t *time_ms, int64_t *mono_ns,
		    char *err, size_t errlen);
};

/* vramz_open_opts.flags bits only the library sets (vramz_open clears
 * them from a caller's options): which recorded source is wanted. */
#define BACKEND_OPEN_SEGMENT (1u << 31) /* replay_path is a daemon's segment */
#define BACKEND_OPEN_LIBRARY BACKEND_OPEN_SEGMENT

/* a live daemon's segment (lib/backend/segment.c), wanted with
 * BACKEND_OPEN_SEGMENT: vramz_open_daemon sets it, with the file as
 * opts->replay_path */
extern const struct backend_ops backend_segment;
/* a CSV log (lib/log/replay.c), wanted with opts->replay_path */
extern const struct backend_ops backend_replay;
extern const struct backend_ops backend_nvml;
extern const struct backend_ops backend_amdgpu;

/* Every backend above, in probe order (backends.c) */
extern const struct backend_ops *const backends[];
extern const unsigned backends_count;

#endif
