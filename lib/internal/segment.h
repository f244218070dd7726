/* SPDX-License-Identifier: Apache-2.0 */
/* segment.h - the daemon's shared-memory segment: its byte layout (the
 * authority is docs/daemon.md; the offsets below must match it), the
 * publisher's side and the reader's side.
 *
 * A segment is a file in the runtime directory, mapped by the publisher
 * (read-write) and by any number of readers (read-only).  Every field is
 * fixed-width little-endian at a fixed offset, so a reader needs no C
 * struct of ours: Python's struct + mmap reads it.  Two snapshot slots are
 * written alternately, each under its own sequence counter with a CRC-32 of
 * its payload, so a reader never blocks the publisher and never takes a
 * torn snapshot for a whole one.
 */
#ifndef VRAMZ_SEGMENT_H
#define VRAMZ_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/diagnose.h"
#include "vramz/vramz.h"

#define SEG_MAGIC "VRAMZSEG"
#define SEG_MAJOR 1
#define SEG_MINOR 2 /* 1.1: the GPU's vendor in its static record; 1.2: VRAM
		       * health in the GPU sample, which grew to 256 bytes */

/* record sizes of layout 1.0; a newer minor may make them larger (fields
 * appended), never smaller: readers step by the sizes in the header */
#define SEG_HEADER_SIZE 512
#define SEG_GPU_INFO_SIZE 512
#define SEG_GPU_SAMPLE_SIZE 256      /* written since 1.2 */
#define SEG_GPU_SAMPLE_MIN_SIZE 192  /* 1.0 and 1.1: no health fields */
#define SEG_GPU_SAMPLE_10_END 136    /* 1.0's members end here (136-191:
					reserved zeros, then 1.2's health) */
#define SEG_PROC_SIZE 512
#define SEG_MIG_SIZE 160
#define SEG_FINDING_SIZE 512
#define SEG_LINK_SIZE 8
#define SEG_SLOT_HEAD 24   /* seq, generation, crc, payload size */
#define SEG_PAYLOAD_HEAD 40
#define SEG_MAX_GPUS 1024
/* The most bytes a slot may hold (docs/daemon.md, "Bounds"): readers
 * refuse a larger slot_size before they copy or sum a byte of it, and the
 * publisher never makes one (about 500,000 processes of 512 bytes). */
#define SEG_MAX_SLOT_BYTES ((uint64_t)256 << 20)

/* header.state */
enum { SEG_LIVE = 1, SEG_STOPPED = 2, SEG_REPLACED = 3 };
/* A snapshot stamped later than now by more than this is refused. */
#define SEG_FUTURE_SLACK_MS 1000
/* header.flags */
enum {
	SEG_FL_PROCS = 1u << 0,     /* process lists are published */
	SEG_FL_REDACTED = 1u << 1,  /* other users' /proc fields left out */
	SEG_FL_FINDINGS = 1u << 2,  /* the diagnosis engine runs */
};

/* header field offsets (docs/daemon.md, "Header") */
enum {
	SEG_H_MAGIC = 0, SEG_H_MAJOR = 8, SEG_H_MINOR = 10, SEG_H_HEADER_SIZE = 12,
	SEG_H_GPU_INFO_SIZE = 16, SEG_H_GPU_SAMPLE_SIZE = 20, SEG_H_PROC_SIZE = 24,
	SEG_H_MIG_SIZE = 28, SEG_H_FINDING_SIZE = 32, SEG_H_LINK_SIZE = 36,
	SEG_H_STATE = 40, SEG_H_FLAGS = 44, SEG_H_PID = 48, SEG_H_UID = 52,
	SEG_H_START_TICKS = 56, SEG_H_START_MS = 64, SEG_H_INTERVAL_MS = 72,
	SEG_H_GPU_COUNT = 76, SEG_H_SLOW_INTERVAL_MS = 80, SEG_H_SAMPLE_FLAGS = 84,
	SEG_H_FILE_SIZE = 88, SEG_H_INFO_OFF = 96, SEG_H_LINKS_OFF = 104,
	SEG_H_SLOT0_OFF = 112, SEG_H_SLOT1_OFF = 120, SEG_H_SLOT_SIZE = 128,
	SEG_H_GENERATION = 136, SEG_H_PROC_CAP = 144, SEG_H_FINDING_CAP = 148,
	SEG_H_MIG_CAP = 152, SEG_H_CUDA_VERSION = 156, SEG_H_DRIVER = 160,
	SEG_H_NVML = 240, SEG_H_BACKEND = 320,
};

/* What a publisher publishes once (at create). */
struct seg_static {
	uint32_t flags;               /* SEG_FL_* */
	unsigned interval_ms, slow_interval_ms, sample_flags;
	vramz_system_info sys;
	unsigned gpu_count;           /* the backend's GPUs, selected or not */
	const vramz_gpu_info *info;   /* [gpu_count] */
	const unsigned char *present; /* [gpu_count] 1: published every tick */
	const vramz_link *links;      /* [gpu_count * gpu_count] or NULL */
};

/* ---- publisher ---- */
struct seg_writer;

/* Creates DIR/NAME (mode: 0644 or 0600) through a temporary file and an
 * atomic rename, sized for proc_cap processes and finding_cap findings.
 * dirfd: DIR opened by rundir_open (lib/internal/rundir.h), held by the caller
 * while the writer lives; every file is made, renamed and removed
 * relative to it (DIR names it in messages).  err: one line on failure
 * (ENOSPC says the disk or tmpfs is full; VRAMZ_EPERM: something not
 * ours sits at the temporary name). */
int seg_writer_create(struct seg_writer **out, int dirfd, const char *dir, const char *name,
		      unsigned mode, const struct seg_static *st, unsigned proc_cap,
		      unsigned finding_cap, char *err, size_t errlen);
/* Publishes one snapshot and the current findings.  A snapshot larger than
 * the file holds moves to a new, larger file under the same name (readers
 * of the old one see it marked replaced).  VRAMZ_EIO with err on a failure
 * to grow (disk full): the previous snapshot stays published. */
int seg_writer_publish(struct seg_writer *w, const vramz_snapshot *snap, int sample_rc,
		       const vramz_finding *f, unsigned nf, char *err, size_t errlen);
/* Marks the segment stopped (readers stop trusting it at once), unlinks
 * its name and unmaps it.  Readers that hold it mapped keep a valid map. */
void seg_writer_close(struct seg_writer *w);
/* Whether the writer's file is still at its name: 0 yes (or nothing
 * published yet, or it cannot tell), 1 the name is gone (unlinked, or its
 * directory removed), 2 another file holds it (replaced). */
int seg_writer_check(const struct seg_writer *w);
/* Lets go of a writer whose file was removed or replaced under it: its
 * map marked replaced (readers holding it reopen the name), nothing
 * unlinked (the name is not its own any more). */
void seg_writer_abandon(struct seg_writer *w);
/* For the stress test: the writer's mapping, to tear a slot on purpose. */
unsigned char *seg_writer_map(struct seg_writer *w);

/* ---- reader ---- */

/* A decoded snapshot, owned by the reader (valid until the next read). */
struct seg_snapshot {
	uint64_t generation;
	int sample_rc;
	vramz_snapshot snap;
	vramz_gpu_sample *gpus;
	vramz_proc_sample *procs;
	vramz_mig_sample *migs;
	vramz_finding *findings;
	unsigned finding_count;
};

struct seg_reader;

/* Opens and checks DIR's segment: trusted owner and mode, magic, a known
 * major version, sizes that fit the file, a publisher alive (pid and start
 * time) that has not stopped.  Fresh or not is seg_reader_read's answer.
 * err: one clear line (what was wrong with which file) on failure:
 * VRAMZ_ENOTFOUND none there, VRAMZ_EPERM untrusted, VRAMZ_EPARSE bad
 * file, VRAMZ_EUNSUPPORTED unknown major, VRAMZ_EIO publisher gone. */
int seg_reader_open(struct seg_reader **out, const char *path, char *err, size_t errlen);
void seg_reader_close(struct seg_reader *r);
/* Opens a buffer (a whole file's bytes) without any of the file checks:
 * the fuzz target and the unit tests. */
int seg_reader_open_mem(struct seg_reader **out, const void *buf, size_t len, char *err,
			size_t errlen);

/* The header's static part, decoded. */
struct seg_header {
	unsigned major, minor;
	unsigned state, flags;
	uint32_t pid, uid;
	uint64_t start_ticks;
	int64_t start_ms;
	unsigned interval_ms, slow_interval_ms, sample_flags;
	unsigned gpu_count;
	uint64_t generation;
	vramz_system_info sys;
};
const struct seg_header *seg_reader_header(const struct seg_reader *r);
/* Static facts of backend index i (NULL past gpu_count); *present 1 when
 * the daemon publishes that GPU every tick. */
const vramz_gpu_info *seg_reader_gpu(const struct seg_reader *r, unsigned i, int *present);
/* Link between GPUs a and b; VRAMZ_EUNSUPPORTED when none was published. */
int seg_reader_link(const struct seg_reader *r, unsigned a, unsigned b, vramz_link *out);

/* Copies the latest whole snapshot (retrying while the publisher writes
 * the slot), checks its CRC and decodes it.  VRAMZ_EIO when the publisher
 * stopped or died (torn: died mid-write), VRAMZ_EEOF before a first
 * snapshot, VRAMZ_EPARSE on a bad slot. */
int seg_reader_read(struct seg_reader *r, const struct seg_snapshot **out, char *err,
		    size_t errlen);
/* 1 when the slot the publisher writes next was left half-written (odd
 * sequence): with a dead publisher, it died mid-write. */
int seg_reader_torn(const struct seg_reader *r, uint64_t *torn_generation);
/* Torn reads seen and retried so far (the stress test's counter). */
uint64_t seg_reader_retries(const struct seg_reader *r);

/* 1 when the process pid with start time start_ticks (field 22 of
 * /proc/PID/stat) runs; a pid we may not inspect (hidepid) counts alive
 * when kill(pid, 0) says it exists. */
int seg_pid_alive(uint32_t pid, uint64_t start_ticks);
/* The start time (field 22 of /proc/self/stat) of this process. */
uint64_t seg_self_start_ticks(void);
uint32_t seg_crc32(const void *p, size_t n);

#endif
