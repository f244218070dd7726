/* SPDX-License-Identifier: Apache-2.0 */
/* proc.h - attribution of a GPU process to a user, command, container,
 * Kubernetes pod and Slurm job, from /proc.
 *
 * NVML reports host pids.  A pid that this /proc cannot see (vramz runs in
 * another PID namespace, or the process is gone) is left without
 * VRAMZ_P_VISIBLE so callers say so instead of printing a wrong name.
 * Results are cached per pid and revalidated by the process start time, so
 * a steady tick re-reads little and a reused pid is never confused with the
 * process that held it before.
 */
#ifndef VRAMZ_PROC_H
#define VRAMZ_PROC_H

#include <stddef.h>
#include <stdint.h>
#include "vramz/vramz.h"

struct proc_cache;

/* The /proc that attribution reads: $VRAMZ_PROCFS_ROOT when set (a
 * DaemonSet that mounts the host's /proc elsewhere), else "/proc". */
const char *proc_root(void);

/* root: the /proc to read ("/proc"; tests pass a fake tree).  NULL on OOM. */
struct proc_cache *proc_cache_new(const char *root);
void proc_cache_free(struct proc_cache *pc);

/* 1 when the cache's /proc numbers pids as the driver does (the initial
 * PID namespace's); 0 when vramz cannot prove it (it runs in a container
 * or `unshare --pid` without the host's /proc): every pid is then not
 * visible, never matched to a local process of the same number. */
int proc_cache_host_pids(const struct proc_cache *pc);
/* The same question of a /proc directory ("/proc" when NULL). */
int proc_root_is_host(const char *root);
/* 1 when vramz itself runs in the initial PID namespace, so kill(2) and
 * pidfd_open(2) name the pids NVML reports. */
int proc_self_is_host(void);

/* How long an attributed pid is trusted without reading its stat again
 * (0, the default: every call reads it).  A pid seen again within that
 * time, or a second time in one tick (one process on several GPUs), is
 * served from the cache: its ppid / pgid may then be up to that old, and a
 * pid reused within it keeps the old identity - which safekill's start-time
 * check at the signal refuses, never the wrong way round. */
void proc_cache_set_recheck(struct proc_cache *pc, int64_t ns);

/* Fills p's /proc fields (uid, user, comm, cmdline, start_time_ticks, ppid,
 * pgid, ns_pid, container, pod_uid, slurm_job) for p->pid and sets
 * VRAMZ_P_VISIBLE; clears it when the pid is not visible.  Returns 0 or
 * VRAMZ_ENOTFOUND. */
int proc_attribute(struct proc_cache *pc, vramz_proc_sample *p);

/* Drops cache entries not used since the previous call: call once a tick. */
void proc_cache_sweep(struct proc_cache *pc);

/* Pure parser of /proc/PID/cgroup text, exposed for tests.  Any output may be
 * left "" when absent. */
void proc_parse_cgroup(const char *text, char *container, size_t clen,
		       char *pod_uid, size_t plen, char *slurm_job, size_t slen);

/* Start time (clock ticks since boot, /proc/PID/stat field 22) of pid, or 0
 * when it cannot be read.  kill and the TUI use it to refuse a reused pid. */
unsigned long long proc_start_time(const char *root, unsigned pid);

/* The fields of /proc/PID/stat that vramz reads. */
struct proc_stat_fields {
	char comm[16];                  /* field 2; control bytes shown as '?' */
	char state;                     /* field 3: R, S, D, Z, T, I ... */
	uint32_t ppid, pgid, session;   /* fields 4, 5, 6 */
	unsigned flags;                 /* field 9: PF_* (PROC_PF_KTHREAD) */
	uint64_t utime_ticks, stime_ticks; /* fields 14, 15: CPU time, clock ticks */
	unsigned long long start_ticks; /* field 22: clock ticks since boot */
	uint64_t rss_pages;             /* field 24: resident pages, with has_rss */
	int has_rss;                    /* field 24 was there (kernels always
					   write it; a short test line may not) */
};

/* Field 9's bit for a kernel thread (the kernel's PF_KTHREAD). */
#define PROC_PF_KTHREAD 0x00200000u

/* Parses /proc/PID/stat text (comm may hold spaces and ')': the fields
 * after it are counted from the last ')').  0, or -1 on malformed text
 * (fewer than 22 fields, or a field read as a number that is not one).
 * By hand, not sscanf: the sampler parses a stat a GPU process a tick,
 * and `top` the host side of each process it shows. */
int proc_parse_stat(const char *text, struct proc_stat_fields *st);

/* Reads and parses ROOT/PID/stat.  0, or -1 when it cannot be read or
 * parsed. */
int proc_stat_read(const char *root, unsigned pid, struct proc_stat_fields *st);

#endif
