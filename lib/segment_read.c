/* SPDX-License-Identifier: Apache-2.0 */
/* segment_read.c - the reader's side of the daemon's segment: check a file
 * before trusting a byte of it, then copy whole snapshots out.
 *
 * Whatever lies in the runtime directory - a truncated file, random bytes,
 * another program's file, a newer layout, a file another user could have
 * written - is refused with one line saying what and why, never a crash:
 * every offset and count is checked against the mapped size before use,
 * with 64-bit arithmetic that cannot wrap (tests/fuzz/fuzz_segment.c
 * drives this file with arbitrary bytes).
 */
#include "segment.h"
#include "segment_codec.h"
#include "rundir.h"

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_TRIES 2000
#define CRC_TRIES 3 /* a checksum mismatch in an unchanged slot: corrupt */
#define MIN_HEADER (SEG_H_BACKEND + 16) /* the fields of layout 1.0 */

struct seg_reader {
	char path[512];
	const unsigned char *map;
	size_t size;
	int mapped;                 /* munmap at close (else a caller's buffer) */
	struct seg_header h;
	uint64_t header_size, info_size, sample_size, proc_size, mig_size, finding_size,
		link_size;
	uint64_t info_off, links_off, slot_off[2], slot_size;
	vramz_gpu_info *info;       /* [h.gpu_count] */
	unsigned char *present;
	vramz_link *links;          /* [n*n] or NULL */
	unsigned char *copy;        /* [slot_size] */
	struct seg_snapshot out;
	unsigned gpu_cap, proc_cap, mig_cap, finding_cap;
	uint64_t retries;
};

static int seg_fail(char *err, size_t errlen, int rc, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int seg_fail(char *err, size_t errlen, int rc, const char *path, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s: %s", path, msg);
	return rc;
}

/* a + b*c fits in lim, without wrapping */
static int fits(uint64_t a, uint64_t b, uint64_t c, uint64_t lim)
{
	if (a > lim)
		return 0;
	if (b && c > (lim - a) / b)
		return 0;
	return a + b * c <= lim;
}

static int parse_header(struct seg_reader *r, char *err, size_t errlen)
{
	const unsigned char *p = r->map;
	const char *path = r->path;
	if (r->size == 0)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "empty file, not a vramz segment");
	if (r->size < 8 || memcmp(p, SEG_MAGIC, 8))
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "not a vramz segment (wrong magic)");
	if (r->size < MIN_HEADER)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "truncated (%zu bytes)", r->size);
	r->h.major = p[SEG_H_MAJOR] | p[SEG_H_MAJOR + 1] << 8;
	r->h.minor = p[SEG_H_MINOR] | p[SEG_H_MINOR + 1] << 8;
	if (r->h.major != SEG_MAJOR)
		return seg_fail(err, errlen, VRAMZ_EUNSUPPORTED, path,
			    "segment layout %u.%u; this vramz reads layout %u.x only "
			    "(run the same vramz version as the daemon)",
			    r->h.major, r->h.minor, SEG_MAJOR);
	r->header_size = seg_get32(p, SEG_H_HEADER_SIZE);
	r->info_size = seg_get32(p, SEG_H_GPU_INFO_SIZE);
	r->sample_size = seg_get32(p, SEG_H_GPU_SAMPLE_SIZE);
	r->proc_size = seg_get32(p, SEG_H_PROC_SIZE);
	r->mig_size = seg_get32(p, SEG_H_MIG_SIZE);
	r->finding_size = seg_get32(p, SEG_H_FINDING_SIZE);
	r->link_size = seg_get32(p, SEG_H_LINK_SIZE);
	const uint64_t big = 1 << 20;
	if (r->header_size < MIN_HEADER || r->header_size > r->size ||
	    r->info_size < SEG_GPU_INFO_SIZE || r->info_size > big ||
	    r->sample_size < SEG_GPU_SAMPLE_MIN_SIZE || r->sample_size > big ||
	    r->proc_size < SEG_PROC_SIZE || r->proc_size > big || r->mig_size < SEG_MIG_SIZE ||
	    r->mig_size > big || r->finding_size < SEG_FINDING_SIZE || r->finding_size > big ||
	    r->link_size < SEG_LINK_SIZE || r->link_size > big)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "record sizes out of range");
	struct seg_header *h = &r->h;
	h->state = seg_get32(p, SEG_H_STATE);
	h->flags = seg_get32(p, SEG_H_FLAGS);
	h->pid = seg_get32(p, SEG_H_PID);
	h->uid = seg_get32(p, SEG_H_UID);
	h->start_ticks = seg_get64(p, SEG_H_START_TICKS);
	h->start_ms = (int64_t)seg_get64(p, SEG_H_START_MS);
	h->interval_ms = seg_get32(p, SEG_H_INTERVAL_MS);
	h->gpu_count = seg_get32(p, SEG_H_GPU_COUNT);
	h->slow_interval_ms = seg_get32(p, SEG_H_SLOW_INTERVAL_MS);
	h->sample_flags = seg_get32(p, SEG_H_SAMPLE_FLAGS);
	h->sys.nvidia.cuda_driver_version = (int)seg_get32(p, SEG_H_CUDA_VERSION);
	seg_getstr(p, SEG_H_DRIVER, 80, h->sys.driver_version, sizeof h->sys.driver_version);
	seg_getstr(p, SEG_H_NVML, 80, h->sys.nvidia.nvml_version, sizeof h->sys.nvidia.nvml_version);
	snprintf(h->sys.backend, sizeof h->sys.backend, "daemon");
	uint64_t file_size = seg_get64(p, SEG_H_FILE_SIZE);
	r->info_off = seg_get64(p, SEG_H_INFO_OFF);
	r->links_off = seg_get64(p, SEG_H_LINKS_OFF);
	r->slot_off[0] = seg_get64(p, SEG_H_SLOT0_OFF);
	r->slot_off[1] = seg_get64(p, SEG_H_SLOT1_OFF);
	r->slot_size = seg_get64(p, SEG_H_SLOT_SIZE);
	unsigned n = h->gpu_count;
	if (file_size > r->size)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "truncated (%zu of %llu bytes)", r->size,
			    (unsigned long long)file_size);
	if (n == 0 || n > SEG_MAX_GPUS)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "%u GPUs: out of range", n);
	if (h->interval_ms == 0)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "interval 0");
	/* bounded before a byte of a slot is copied or summed: a forged size
	 * must not cost seconds or gigabytes to refuse */
	if (r->slot_size > SEG_MAX_SLOT_BYTES)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path,
			    "slot size %llu bytes: more than the %llu a segment may hold",
			    (unsigned long long)r->slot_size, (unsigned long long)SEG_MAX_SLOT_BYTES);
	if (r->info_off < r->header_size || !fits(r->info_off, n, r->info_size, file_size) ||
	    (r->links_off &&
	     (r->links_off < r->header_size || !fits(r->links_off, (uint64_t)n * n, r->link_size, file_size))) ||
	    r->slot_size < SEG_SLOT_HEAD + SEG_PAYLOAD_HEAD || r->slot_size > file_size ||
	    r->slot_off[0] < r->header_size || r->slot_off[1] < r->header_size ||
	    !fits(r->slot_off[0], 1, r->slot_size, file_size) ||
	    !fits(r->slot_off[1], 1, r->slot_size, file_size) || (r->slot_off[0] & 7) ||
	    (r->slot_off[1] & 7))
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "offsets outside the file");
	r->info = calloc(n, sizeof *r->info);
	r->present = calloc(n, 1);
	r->copy = malloc(r->slot_size);
	if (r->links_off)
		r->links = calloc((size_t)n * n, sizeof *r->links);
	if (!r->info || !r->present || !r->copy || (r->links_off && !r->links))
		return seg_fail(err, errlen, VRAMZ_ENOMEM, path, "out of memory for a %llu-byte slot",
			    (unsigned long long)r->slot_size);
	for (unsigned i = 0; i < n; i++) {
		int present;
		seg_dec_gpu_info(p + r->info_off + i * r->info_size, &r->info[i], &present);
		r->info[i].index = i;
		r->present[i] = (unsigned char)present;
	}
	for (size_t i = 0; r->links && i < (size_t)n * n; i++) {
		uint32_t kind = seg_get32(p, r->links_off + i * r->link_size);
		r->links[i].kind = kind <= VRAMZ_LINK_SYS ? (enum vramz_link_kind)kind : VRAMZ_LINK_UNKNOWN;
		r->links[i].nvlinks = seg_get32(p, r->links_off + i * r->link_size + 4);
	}
	return 0;
}

static struct seg_reader *reader_new(const char *path)
{
	struct seg_reader *r = calloc(1, sizeof *r);
	if (r)
		snprintf(r->path, sizeof r->path, "%s", path);
	return r;
}

int seg_reader_open_mem(struct seg_reader **out, const void *buf, size_t len, char *err,
			size_t errlen)
{
	struct seg_reader *r = reader_new("(buffer)");
	*out = r;
	if (!r)
		return VRAMZ_ENOMEM;
	r->map = buf;
	r->size = len;
	return parse_header(r, err, errlen);
}

int seg_reader_open(struct seg_reader **out, const char *path, char *err, size_t errlen)
{
	struct seg_reader *r = reader_new(path);
	*out = r;
	if (!r)
		return VRAMZ_ENOMEM;
	/* the directory first, by the publisher's rule: a file in a directory
	 * someone else controls, or reached through their link, is no evidence */
	char dir[512];
	const char *name;
	if (rundir_split(path, dir, sizeof dir, &name))
		return seg_fail(err, errlen, VRAMZ_EINVAL, path, "not a file name");
	struct rundir rd;
	int rc = rundir_open(dir, 0, RUNDIR_NO_UID, &rd, err, errlen);
	if (rc)
		return rc;
	int fd = openat(rd.fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	rundir_close(&rd);
	if (fd < 0) {
		int e = errno;
		return seg_fail(err, errlen, e == ENOENT ? VRAMZ_ENOTFOUND : e == EACCES ? VRAMZ_EPERM : VRAMZ_EIO,
			    path, "%s", strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return seg_fail(err, errlen, VRAMZ_EPARSE, path, "not a regular file");
	}
	/* a file someone else could have written is not evidence of anything */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		return seg_fail(err, errlen, VRAMZ_EPERM, path,
			    "ignored: owned by uid %u, neither root nor you", (unsigned)st.st_uid);
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		close(fd);
		return seg_fail(err, errlen, VRAMZ_EPERM, path, "ignored: writable by %s",
			    st.st_mode & S_IWOTH ? "everyone" : "its group");
	}
	r->size = (size_t)st.st_size;
	if (r->size) {
		void *m = mmap(NULL, r->size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			close(fd);
			return seg_fail(err, errlen, VRAMZ_EIO, path, "mmap: %s", strerror(errno));
		}
		r->map = m;
		r->mapped = 1;
	}
	close(fd);
	rc = parse_header(r, err, errlen);
	if (rc < 0)
		return rc;
	if (seg_get32(r->map, SEG_H_STATE) == SEG_STOPPED)
		return seg_fail(err, errlen, VRAMZ_EIO, path, "its daemon (pid %u) stopped", r->h.pid);
	if (r->h.state != SEG_LIVE && r->h.state != SEG_REPLACED)
		return seg_fail(err, errlen, VRAMZ_EPARSE, path,
			    "unknown state %u (1 live, 2 stopped, 3 replaced): not trusted", r->h.state);
	if (!seg_pid_alive(r->h.pid, r->h.start_ticks))
		return seg_fail(err, errlen, VRAMZ_EIO, path, "its daemon (pid %u) is gone", r->h.pid);
	return 0;
}

void seg_reader_close(struct seg_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->map, r->size);
	free(r->info);
	free(r->present);
	free(r->links);
	free(r->copy);
	free(r->out.gpus);
	free(r->out.procs);
	free(r->out.migs);
	free(r->out.findings);
	free(r);
}

const struct seg_header *seg_reader_header(const struct seg_reader *r)
{
	return &r->h;
}

const vramz_gpu_info *seg_reader_gpu(const struct seg_reader *r, unsigned i, int *present)
{
	if (i >= r->h.gpu_count)
		return NULL;
	if (present)
		*present = r->present[i];
	return &r->info[i];
}

int seg_reader_link(const struct seg_reader *r, unsigned a, unsigned b, vramz_link *out)
{
	if (!r->links || a >= r->h.gpu_count || b >= r->h.gpu_count)
		return VRAMZ_EUNSUPPORTED;
	*out = r->links[(size_t)a * r->h.gpu_count + b];
	return 0;
}

uint64_t seg_reader_retries(const struct seg_reader *r)
{
	return r->retries;
}

static int ensure(void **p, unsigned *cap, unsigned need, size_t elem)
{
	if (need <= *cap)
		return 0;
	void *np = realloc(*p, (need ? need : 1) * elem);
	if (!np)
		return VRAMZ_ENOMEM;
	*p = np;
	*cap = need;
	return 0;
}

/* Decodes the copied slot; every count checked against what it holds. */
static int decode(struct seg_reader *r, uint32_t plen, char *err, size_t errlen)
{
	const unsigned char *pl = r->copy + SEG_SLOT_HEAD;
	struct seg_snapshot *o = &r->out;
	if (plen < SEG_PAYLOAD_HEAD)
		return seg_fail(err, errlen, VRAMZ_EPARSE, r->path, "snapshot too short");
	unsigned ng = seg_get32(pl, 16), np = seg_get32(pl, 20), nm = seg_get32(pl, 24),
		 nf = seg_get32(pl, 28);
	uint64_t need = SEG_PAYLOAD_HEAD;
	if (ng > r->h.gpu_count || !fits(need, ng, r->sample_size, plen) ||
	    !fits(need += ng * r->sample_size, np, r->proc_size, plen) ||
	    !fits(need += (uint64_t)np * r->proc_size, nm, r->mig_size, plen) ||
	    !fits(need += (uint64_t)nm * r->mig_size, nf, r->finding_size, plen))
		return seg_fail(err, errlen, VRAMZ_EPARSE, r->path, "snapshot counts exceed its size");
	if (ensure((void **)&o->gpus, &r->gpu_cap, ng, sizeof *o->gpus) ||
	    ensure((void **)&o->procs, &r->proc_cap, np, sizeof *o->procs) ||
	    ensure((void **)&o->migs, &r->mig_cap, nm, sizeof *o->migs) ||
	    ensure((void **)&o->findings, &r->finding_cap, nf, sizeof *o->findings))
		return VRAMZ_ENOMEM;
	size_t off = SEG_PAYLOAD_HEAD;
	for (unsigned i = 0; i < ng; i++, off += r->sample_size) {
		vramz_gpu_sample *g = &o->gpus[i];
		seg_dec_gpu_sample(pl + off, r->sample_size, g);
		if (g->index >= r->h.gpu_count || g->proc_first > np ||
		    g->proc_count > np - g->proc_first)
			return seg_fail(err, errlen, VRAMZ_EPARSE, r->path, "GPU %u's record is inconsistent", i);
	}
	for (unsigned i = 0; i < np; i++, off += r->proc_size)
		seg_dec_proc(pl + off, &o->procs[i]);
	for (unsigned i = 0; i < nm; i++, off += r->mig_size)
		seg_dec_mig(pl + off, &o->migs[i]);
	for (unsigned i = 0; i < nf; i++, off += r->finding_size)
		seg_dec_finding(pl + off, &o->findings[i]);
	o->generation = seg_get64(r->copy, 8);
	o->sample_rc = (int32_t)seg_get32(pl, 32);
	o->snap.time_ms = (int64_t)seg_get64(pl, 0);
	o->snap.mono_ns = (int64_t)seg_get64(pl, 8);
	o->snap.gpu_count = ng;
	o->snap.gpus = o->gpus;
	o->snap.proc_count = np;
	o->snap.procs = o->procs;
	o->snap.mig_count = nm;
	o->snap.migs = o->migs;
	o->finding_count = nf;
	return 0;
}

static void pause_briefly(void)
{
	struct timespec ts = {0, 20000}; /* 20 us: the publisher's write is shorter */
	nanosleep(&ts, NULL);
}

int seg_reader_read(struct seg_reader *r, const struct seg_snapshot **out, char *err,
		    size_t errlen)
{
	const unsigned char *p = r->map;
	const uint64_t cap = r->slot_size - SEG_SLOT_HEAD; /* bounded by parse_header */
	unsigned odd = 0, crc_bad = 0;
	*out = NULL;
	for (int tries = 0; tries < READ_TRIES; tries++) {
		uint32_t state = le32toh(__atomic_load_n((const uint32_t *)(p + SEG_H_STATE), __ATOMIC_ACQUIRE));
		if (state == SEG_STOPPED)
			return seg_fail(err, errlen, VRAMZ_EIO, r->path, "its daemon (pid %u) stopped", r->h.pid);
		if (state == SEG_REPLACED) /* the caller reopens the name */
			return seg_fail(err, errlen, VRAMZ_EIO, r->path, "replaced by a newer file");
		if (state != SEG_LIVE)
			return seg_fail(err, errlen, VRAMZ_EPARSE, r->path,
				    "unknown state %u (1 live, 2 stopped, 3 replaced): not trusted", state);
		uint64_t gen = le64toh(__atomic_load_n((const uint64_t *)(p + SEG_H_GENERATION), __ATOMIC_ACQUIRE));
		if (gen == 0)
			return seg_fail(err, errlen, VRAMZ_EEOF, r->path, "no snapshot published yet");
		const unsigned char *slot = p + r->slot_off[gen & 1];
		const uint64_t *seqp = (const uint64_t *)slot;
		uint64_t s1 = le64toh(__atomic_load_n(seqp, __ATOMIC_ACQUIRE));
		if (s1 & 1) { /* being written: a newer generation is coming */
			r->retries++;
			odd++;
			if (r->mapped)
				pause_briefly();
			else
				return seg_fail(err, errlen, VRAMZ_EPARSE, r->path, "slot being written");
			continue;
		}
		/* a size past the slot is never copied: only the slot's head then */
		uint32_t plen = seg_get32(slot, 20);
		memcpy(r->copy, slot, SEG_SLOT_HEAD + (plen <= cap ? (size_t)plen : 0));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		uint64_t s2 = le64toh(__atomic_load_n(seqp, __ATOMIC_RELAXED));
		if (s1 != s2) { /* overwritten while copied */
			r->retries++;
			continue;
		}
		/* the slot did not change while copied: what it says, it says */
		uint32_t len = seg_get32(r->copy, 20);
		if (len > cap)
			return seg_fail(err, errlen, VRAMZ_EPARSE, r->path,
				    "payload size %u bytes: more than its %llu-byte slot holds", len,
				    (unsigned long long)cap);
		if (len != plen) {
			r->retries++;
			continue;
		}
		if (seg_crc32(r->copy + SEG_SLOT_HEAD, len) != seg_get32(r->copy, 16)) {
			/* with the sequence unchanged this is no write in progress; a
			 * retry or two covers a publisher without fences, no more */
			if (!r->mapped || ++crc_bad >= CRC_TRIES)
				return seg_fail(err, errlen, VRAMZ_EPARSE, r->path,
					    "snapshot checksum mismatch: generation %llu's payload does "
					    "not match its CRC although its slot did not change "
					    "(a corrupt or forged segment, not a write in progress)",
					    (unsigned long long)gen);
			r->retries++;
			continue;
		}
		int rc = decode(r, len, err, errlen);
		if (rc < 0)
			return rc;
		*out = &r->out;
		return 0;
	}
	if (odd * 2 > READ_TRIES)
		return seg_fail(err, errlen, VRAMZ_EIO, r->path,
			    "no whole snapshot after %d tries: the slot stayed half-written (is the "
			    "daemon (pid %u) dying mid-write?)", READ_TRIES, r->h.pid);
	return seg_fail(err, errlen, VRAMZ_EIO, r->path,
		    "no whole snapshot after %d tries: overwritten while copied each time", READ_TRIES);
}

/* The slot the publisher writes next: odd seq there means a write began
 * and (when the publisher is dead) never ended. */
int seg_reader_torn(const struct seg_reader *r, uint64_t *torn_generation)
{
	uint64_t gen = seg_get64(r->map, SEG_H_GENERATION);
	const unsigned char *slot = r->map + r->slot_off[(gen + 1) & 1];
	if (seg_get64(slot, 0) & 1) {
		*torn_generation = gen + 1;
		return 1;
	}
	return 0;
}
