/* SPDX-License-Identifier: Apache-2.0 */
/* agent.h - the files the PyTorch agent (python/vramz/torch) publishes per
 * process in the runtime directory, read and trusted or not (format in
 * docs/python.md).
 *
 * A process row of a snapshot is joined to its agent's figures by pid AND
 * start time (the file name carries both, the file's own process record
 * must repeat them), and only a file its owner could have written about
 * itself is believed: owned by the process's uid or by root, not writable
 * by group or others, a regular file reached without following a link.
 */
#ifndef VRAMZ_AGENT_H
#define VRAMZ_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "vramz/vramz.h"

#define AGENT_MAX_DEVICES 16
#define AGENT_MAX_SITES 20
#define AGENT_MAX_DIRS 16
#define AGENT_FILE_MAX 16384
#define AGENT_MAX_HOLDERS 3

/* The per-device figures, in file key order (agent_stat_keys). */
enum agent_stat {
	AS_ALLOCATED, AS_RESERVED, AS_ACTIVE, AS_INACTIVE_SPLIT, AS_PEAK_ALLOCATED,
	AS_PEAK_RESERVED, AS_RETRIES, AS_OOMS, AS_ALLOCATIONS, AS_ALLOCATIONS_TOTAL,
	AS_COUNT
};
extern const char *const agent_stat_keys[AS_COUNT];

struct agent_device {
	int cuda;                     /* CUDA index inside the process; -1 unknown */
	char uuid[VRAMZ_UUID_LEN];    /* "GPU-..."; "" unknown */
	uint32_t valid;               /* bit 1u << enum agent_stat per figure read */
	uint64_t v[AS_COUNT];
};

/* A line of the program's Python code: file:line in func(). */
struct agent_frame {
	unsigned line;                /* 0 unknown */
	char func[64];
	char file[256];               /* "" unknown */
};

/* With history=True: one of the largest live allocation sites at the
 * last out-of-memory error (the `holder` records, largest first). */
struct agent_holder {
	int cuda;                     /* -1 unknown */
	char uuid[VRAMZ_UUID_LEN];
	uint64_t bytes;
	unsigned blocks;
	struct agent_frame at;
};

/* How the process ended (the `end` record, written as it ends). */
enum agent_end_how {
	AGENT_END_UNKNOWN, AGENT_END_EXIT, AGENT_END_EXCEPTION,
	AGENT_END_SIGNAL,             /* no end record, a SIGTERM's stacks in the
				       * .sig file (agent_read_end; never parsed) */
};

struct agent_end {
	int valid;                    /* an end record was read */
	int64_t time_ms;
	enum agent_end_how how;
	int has_status;
	int status;                   /* the exit status, with has_status */
	int oom;                      /* died of an out-of-memory error */
	char exception[96];           /* "torch.OutOfMemoryError"; "" none */
	struct agent_frame at;        /* the innermost line of its code */
};

/* Where memory outside the allocator appeared (issue 37): the parts, in
 * the order JSON's "outside_parts" and the exporter's `part` label list
 * them (agent_part_names). */
enum agent_part {
	AGENT_PART_CONTEXT, AGENT_PART_LIBRARIES, AGENT_PART_NCCL, AGENT_PART_OTHER,
	AGENT_PART_COUNT
};
extern const char *const agent_part_names[AGENT_PART_COUNT];
#define AGENT_MAX_OUTSIDE 64

/* An `outside` record: bytes that appeared on one GPU at one moment. */
struct agent_outside {
	enum agent_part part;
	uint64_t bytes;
	int how;                      /* 1 the process's own figure, 2 the device's; 0 unknown */
	int cuda;                     /* -1 unknown */
	int uuid;                     /* index in agent_figures.outside_uuid; -1 none */
	int comm;                     /* the agent's serial of the group; -1 unknown */
	unsigned comms;               /* communicators it stands for (1; more when merged) */
	char group[48];               /* "nccl:0-7"; "" unknown */
};

struct agent_figures {
	uint32_t pid;
	uint64_t start_time_ticks;
	int64_t time_ms;              /* when written; 0 unknown */
	unsigned interval_ms;         /* 0 unknown */
	int history;                  /* allocation stacks recorded */
	unsigned ndev;
	struct agent_device dev[AGENT_MAX_DEVICES];
	int oom_valid;                /* the last OOM the agent's observer saw */
	int64_t oom_time_ms;
	int oom_cuda;
	uint64_t oom_requested_bytes;
	/* the rest of the oom record (issue 27): each 0 when absent */
	uint64_t oom_limit_bytes;     /* the allocator's cap, else the GPU's total */
	uint64_t oom_free_bytes;      /* the GPU's free memory then */
	int oom_has_free;
	uint64_t oom_allocated_bytes, oom_reserved_bytes;
	uint64_t oom_count;           /* the allocator's num_ooms then */
	struct agent_frame oom_at;    /* the user's line of the failing call */
	unsigned nholders;
	struct agent_holder holder[AGENT_MAX_HOLDERS];
	struct agent_end end;
	int dir;                      /* which of the scan's directories */
	/* issue 37: the process record's outside=1 (the agent measures the
	 * parts), and its outside records with the GPUs they name */
	int outside_on;
	unsigned noutside, noutside_uuid;
	struct agent_outside outside[AGENT_MAX_OUTSIDE];
	char outside_uuid[AGENT_MAX_DEVICES][VRAMZ_UUID_LEN];
};

/* The parts of outside bytes (NVML's figure minus reserved) of f's process
 * on the GPU of uuid: each known part summed from its records (the
 * context first, then NCCL, then libraries, each cut to what is left, so
 * the parts never exceed the whole), other the rest; *comms the NCCL
 * communicators among them.  0, or -1 when the agent does not measure
 * parts (an agent before issue 37). */
int agent_outside_parts(const struct agent_figures *f, const char *uuid, uint64_t outside,
			uint64_t parts[AGENT_PART_COUNT], unsigned *comms);

struct agent_site {
	char uuid[VRAMZ_UUID_LEN];
	uint64_t bytes;
	uint64_t growth_bytes;
	int has_growth;
	unsigned line;
	char func[64];
	char file[256];
};

struct agent_sites {
	int64_t time_ms, since_ms;    /* since_ms 0: a first answer */
	uint64_t growth_bytes;        /* all sites' growth (has_growth) */
	int has_growth;
	char error[160];              /* the agent's why, "" none */
	unsigned n;
	struct agent_site site[AGENT_MAX_SITES];
};

/* Parsers of a file's text (exposed for tests).  0, or VRAMZ_EPARSE for a
 * wrong magic or major version or a malformed process record. */
int agent_parse(const char *text, size_t len, struct agent_figures *out);
int agent_parse_sites(const char *text, size_t len, struct agent_sites *out);

/* The agents present in a set of directories, listed once a tick so a
 * process without an agent costs no system call; a listing is kept while
 * the set and each directory's stat are unchanged (see agent_scan_list). */
struct agent_scan {
	unsigned ndirs;
	char dirs[AGENT_MAX_DIRS][256];
	uint32_t dir_uid[AGENT_MAX_DIRS]; /* whose directory, besides root's and
					   * ours (RUNDIR_NO_UID: none) */
	unsigned n, cap;
	struct agent_name { uint32_t pid; uint64_t start; unsigned dir; } *names;
	/* the listing's validity */
	int listed;                   /* names hold a listing of dirs */
	int changed;                  /* the set differs from the listed one */
	unsigned listed_ndirs;
	struct agent_dir_state {
		int ok;                   /* stat succeeded */
		uint64_t dev, ino;
		int64_t mtime_ns, ctime_ns;
	} state[AGENT_MAX_DIRS];
	int dfd[AGENT_MAX_DIRS];      /* each directory held (O_PATH, opened by
				       * lib/rundir_open.c's rule) + 1; 0 none */
	int64_t listed_at_ns;         /* CLOCK_REALTIME, before the stats */
	unsigned listings;            /* real listings made (for tests) */
	/* the reader's own runtime directories, resolved at the first tick:
	 * its euid and environment do not change under it, and asking again
	 * cost two system calls a tick */
	int own_known;
	int own_override;             /* VRAMZ_RUNTIME_DIR set: only that one */
	unsigned nown;
	char own[2][256];
};

/* Directories the reader looks in: the reader's runtime directories (the
 * rule of lib/rundir.c) and, for a process of another user, that user's
 * /run/user/UID/vramz (uid: UID, whose directory it may be; RUNDIR_NO_UID
 * for the reader's own).  A directory is believed as lib/rundir_open.c
 * says: not a link, owned by root, the reader or uid, writable by nobody
 * else unless sticky.  agent_scan_reset empties the set. */
void agent_scan_reset(struct agent_scan *s);
void agent_scan_add_dir(struct agent_scan *s, const char *dir, uint32_t uid);
/* Adds the reader's own runtime directories (resolved once a scan). */
void agent_scan_add_default(struct agent_scan *s);
/* Lists the directories' torch-PID-START files.  0 or VRAMZ_ENOMEM.  A
 * directory whose stat is what it was at the last listing, and was already
 * so a while before it, is not read again: one fstat a directory a tick
 * (each is held open, O_PATH, until agent_scan_free) instead of five
 * system calls. */
int agent_scan_list(struct agent_scan *s);
void agent_scan_free(struct agent_scan *s);

/* The figures of process (pid, start) owned by uid, if a trusted file
 * exists.  0, VRAMZ_ENOTFOUND (no agent), VRAMZ_EPERM (a file there but
 * not trusted: owner, mode, link, or it names another process),
 * VRAMZ_EPARSE. */
int agent_lookup(const struct agent_scan *s, uint32_t pid, uint64_t start, uint32_t uid,
		 struct agent_figures *out);

/* Reads one file with the trust rules, its directory's included (exposed
 * for tests). */
int agent_read_path(const char *path, uint32_t uid, char *buf, size_t cap, size_t *len);

/* Device of the figures on the GPU with this UUID, or NULL. */
const struct agent_device *agent_device(const struct agent_figures *f, const char *uuid);

/* The UUID of the GPU of f's last OOM, as its agent knew it; NULL unknown. */
const char *agent_oom_uuid(const struct agent_figures *f);
/* The line a record names: its last OOM's (the line that ran out), else
 * the end's innermost line; NULL when neither is known. */
const struct agent_frame *agent_oom_line(const struct agent_figures *f);
/* "model.py:88 in forward()": a line as vramz shows it (the file's base
 * name, cut to fit a finding's site), into buf. */
void agent_site_text(char *buf, size_t len, const char *file, unsigned line, const char *func);

/* The names of enum agent_end_how ("exit", "exception", "signal"; NULL
 * for AGENT_END_UNKNOWN), and a name back (AGENT_END_UNKNOWN for one not
 * known): the end record's `how` and the events file's column. */
const char *agent_end_how_name(enum agent_end_how how);
enum agent_end_how agent_end_how_of(const char *s, size_t n);

/* Leak sites: asks the agent of (pid, start) in directory dir for its live
 * allocations by Python line (it answers at its next tick), and reads the
 * answer.  0, VRAMZ_ENOTFOUND (no answer yet), VRAMZ_EPERM, VRAMZ_EPARSE,
 * VRAMZ_EIO. */
/* The directory holding the agent file of (pid, start) owned by uid:
 * 0, or VRAMZ_ENOTFOUND.  The request and the answer are made and read
 * relative to the directory opened under the rule again (uid: whose it
 * may be). */
int agent_find_dir(uint32_t pid, uint64_t start, uint32_t uid, char *dir, size_t len);
int agent_request_sites(const char *dir, uint32_t pid, uint64_t start, uint32_t uid);
int agent_read_sites(const char *dir, uint32_t pid, uint64_t start, uint32_t uid,
		     struct agent_sites *out);

/* The figures of (pid, start) owned by uid, looked up afresh in the
 * reader's runtime directories and uid's (as agent_find_dir): what the
 * diagnosis engine reads of a process that has just left the GPU's list
 * (its tombstone: the `end` record) or whose OOM count just rose.  0,
 * VRAMZ_ENOTFOUND, VRAMZ_EPERM, VRAMZ_EPARSE. */
int agent_read_figures(uint32_t pid, uint64_t start, uint32_t uid, struct agent_figures *out);

/* How (pid, start) ended, as every reader of an end decides it: its
 * figures (agent_read_figures) and, when they hold no end record but a
 * SIGTERM's stacks were written to its .sig file, an end of how
 * AGENT_END_SIGNAL (not an OOM).  kill -9, os._exit and crashes leave
 * neither: end.valid stays 0.  0 or agent_read_figures's error. */
int agent_read_end(uint32_t pid, uint64_t start, uint32_t uid, struct agent_figures *out);

/* A SIGTERM's stacks: 1 when the process's `.sig` file (faulthandler's)
 * exists and is not empty, 0 otherwise. */
int agent_sig_written(const char *dir, uint32_t pid, uint64_t start, uint32_t uid);

/* How long a tombstone stays (python/vramz/agentfile.py TOMBSTONE_KEEP_S). */
#define AGENT_TOMBSTONE_KEEP_S 300

/* Removes dead agents' files from directory dirfd by the rule of
 * python/vramz/agentfile.py's sweep, kept the same: only a regular file
 * owned by the effective user, named torch-PID-START[.sites|.req|.sig]
 * for a (PID, START) alive() says is gone (NULL: agent_alive, by /proc),
 * whose content says it is an agent's; a tombstone (a figures file with
 * an end record, or a .sig faulthandler wrote into) stays, with its .sig,
 * until keep_s after it was last written; the other files of a dead agent
 * go at once.  Nothing else is ever removed.  The count removed, or
 * VRAMZ_EIO / VRAMZ_ENOMEM.  The agents sweep their directory as they
 * start and the daemon its own every minute; a one-shot reader does not
 * (it may look from another PID namespace, where a live agent's pid
 * reads as gone). */
int agent_sweep(int dirfd, int (*alive)(uint32_t pid, uint64_t start, void *arg), void *arg,
		int64_t now_s, int64_t keep_s);
/* (pid, start) is a live process (its /proc stat's start time). */
int agent_alive(uint32_t pid, uint64_t start, void *arg);

#endif

/* ---- the join into a snapshot's process rows ---------------------------- */

/* The torch figures of a process row: JSON key under "torch", the
 * validity bit, the member, and the figure of the agent file it comes
 * from.  One table for every output. */
struct torch_field {
	const char *name;             /* "allocated_bytes" */
	uint32_t bit;                 /* VRAMZ_T_* */
	size_t offset;                /* in vramz_proc_sample, a uint64_t */
	enum agent_stat stat;
};
extern const struct torch_field torch_fields[];
extern const size_t torch_field_count;

/* Fills the torch_* fields and outside_allocator_bytes of every visible
 * process row from its agent's file, if a trusted one exists: lists the
 * directories (the reader's own and, for each user with a process there,
 * /run/user/UID/vramz) once, then reads one file per attached process.
 * info: the GPUs' static facts by index (their UUIDs join the devices).
 * 0 or VRAMZ_ENOMEM. */
int agent_join(struct agent_scan *s, vramz_proc_sample *procs, unsigned n,
	       const vramz_gpu_info *info, unsigned ninfo);

/* A process that has ended, read from the tombstone its agent left. */
struct agent_ended {
	uint32_t uid;                 /* the file's owner: the process's user */
	struct agent_figures fig;     /* pid, start time, end record, last OOM */
};

/* The tombstones (figures files with an end record) of processes that
 * are not among procs' rows, in the directories agent_join looks in:
 * at most max into out by pid and start time (python/vramz/_agentjoin.py's
 * ended() is its twin); the count, or VRAMZ_ENOMEM. */
int agent_ended_list(struct agent_scan *s, const vramz_proc_sample *procs, unsigned n,
		     struct agent_ended *out, unsigned max);
