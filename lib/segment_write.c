/* SPDX-License-Identifier: Apache-2.0 */
/* segment_write.c - the daemon's segment file: the publisher creates, fills and
 * retires it; readers map it, check it and copy whole snapshots out.
 *
 * Concurrency (docs/daemon.md, "Reading a snapshot"): two slots, each with
 * a sequence counter.  The publisher writes the slot not holding the
 * latest snapshot: seq odd, payload, CRC, seq even, then the header's
 * generation.  A reader loads the generation, the slot's seq (even), copies
 * the payload, loads seq again: equal means the copy is whole, and the
 * CRC proves it again (for readers in languages with no fences).  The
 * publisher never waits for a reader; a reader slower than two whole ticks
 * just tries again.
 *
 * Lifecycle: the file is created under a temporary name, filled and
 * renamed into place, so a reader never sees a half-made header.  When it
 * must grow, a new file replaces it the same way and the old one is marked
 * REPLACED; at exit it is marked STOPPED, then unlinked.  Readers keep
 * their mapping valid through all of these (unlink and rename do not
 * touch a mapped inode).
 */
#include "segment.h"
#include "segment_codec.h"
#include "proc.h"
#include "rundir.h"
#include "safefile.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"

#define READ_TRIES 1000

/* ---- CRC-32 (IEEE 802.3, zlib's crc32: Python's zlib.crc32 agrees) ----
 * Every tick the publisher sums the payload and every reader checks it.
 * Where the CPU multiplies carry-less (PCLMULQDQ), the payload is folded
 * 64 bytes a step with no table (Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ"), and only the last 16 to 31 bytes
 * go through the byte table: a reader asleep a second between ticks paid
 * for the 8 KiB of slicing-by-8 tables cold, a few us of its frame.
 * Elsewhere (and with VRAMZ_CRC_NO_CLMUL set, which the tests use to check
 * this path on any machine): slicing by 8, eight bytes a step. */

static uint32_t crc_table[8][256];
static int crc_clmul;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xFF];
#if defined(__x86_64__) && defined(__GNUC__)
	crc_clmul = getenv("VRAMZ_CRC_NO_CLMUL") == NULL && __builtin_cpu_supports("pclmul") &&
		    __builtin_cpu_supports("sse2");
#endif
}

static uint32_t crc_bytes(uint32_t c, const unsigned char *b, size_t n)
{
	while (n--)
		c = crc_table[0][(c ^ *b++) & 0xFF] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The register after n bytes (n >= 64, a multiple of 16) from register c.
 * Four 128-bit lanes are folded forward 512 bits a step (x^(512+-32) mod
 * P, bit-reflected), then into one lane 128 bits a step (x^(128+-32) mod
 * P); that lane, as 16 bytes of message, leaves the same remainder. */
__attribute__((target("pclmul,sse2"))) static uint32_t crc_fold(uint32_t c, const unsigned char *b,
								  size_t n)
{
#define LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define FOLD(x, k, next)                                                                       \
	_mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), \
		      next)
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
	__m128i x1 = _mm_xor_si128(LOAD(b), _mm_cvtsi32_si128((int)c));
	__m128i x2 = LOAD(b + 16), x3 = LOAD(b + 32), x4 = LOAD(b + 48);
	for (b += 64, n -= 64; n >= 64; b += 64, n -= 64) {
		x1 = FOLD(x1, k512, LOAD(b));
		x2 = FOLD(x2, k512, LOAD(b + 16));
		x3 = FOLD(x3, k512, LOAD(b + 32));
		x4 = FOLD(x4, k512, LOAD(b + 48));
	}
	x1 = FOLD(x1, k128, x2);
	x1 = FOLD(x1, k128, x3);
	x1 = FOLD(x1, k128, x4);
	for (; n >= 16; b += 16, n -= 16)
		x1 = FOLD(x1, k128, LOAD(b));
	unsigned char t[16];
	_mm_storeu_si128((__m128i *)(void *)t, x1);
	return crc_bytes(0, t, sizeof t);
#undef LOAD
#undef FOLD
}
#endif

uint32_t seg_crc32(const void *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, crc_init);
	const unsigned char *b = p;
	uint32_t c = 0xFFFFFFFFu;
#if defined(__x86_64__) && defined(__GNUC__)
	if (crc_clmul && n >= 64) {
		size_t m = n & ~(size_t)15;
		c = crc_fold(c, b, m);
		return crc_bytes(c, b + m, n - m) ^ 0xFFFFFFFFu;
	}
#endif
	for (; n >= 8; n -= 8, b += 8) {
		/* little-endian assembly of the bytes: the same on any host */
		uint32_t lo = c ^ ((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
		uint32_t hi = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
		c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^
		    crc_table[5][(lo >> 16) & 0xFF] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
		    crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
	}
	return crc_bytes(c, b, n) ^ 0xFFFFFFFFu;
}

/* ---- processes: alive by pid and start time ---- */

uint64_t seg_self_start_ticks(void)
{
	return proc_start_time("/proc", (unsigned)getpid());
}

int seg_pid_alive(uint32_t pid, uint64_t start_ticks)
{
	if (pid == 0 || (pid_t)pid < 0)
		return 0;
	uint64_t t = proc_start_time("/proc", pid);
	if (t)
		return t == start_ticks;
	/* hidepid hides another user's /proc/PID: existence is all we learn */
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* ---- publisher ---- */

struct seg_writer {
	int dirfd;                     /* the runtime directory, the caller's */
	char dir[512], name[64];
	unsigned mode;
	unsigned char *map;
	size_t size;
	struct seg_static st;
	vramz_gpu_info *info;          /* copies: a regrow re-encodes them */
	unsigned char *present;
	vramz_link *links;
	unsigned proc_cap, finding_cap, mig_cap;
	uint64_t generation;
	uint64_t slot_off[2], slot_size;
	int redact;
	/* a file made, not yet renamed into place: the next publish fills a
	 * slot of it first, so no reader ever opens a file with no snapshot */
	unsigned char *pending;
	size_t pending_size;
	char tmp[96];                  /* its name in dirfd */
	dev_t dev, pending_dev;        /* the files' identities: the name */
	ino_t ino, pending_ino;        /* still ours? (seg_writer_check) */
};

static size_t slot_bytes(unsigned ngpus, unsigned procs, unsigned migs, unsigned findings)
{
	return SEG_SLOT_HEAD + SEG_PAYLOAD_HEAD + (size_t)ngpus * SEG_GPU_SAMPLE_SIZE +
	       (size_t)procs * SEG_PROC_SIZE + (size_t)migs * SEG_MIG_SIZE +
	       (size_t)findings * SEG_FINDING_SIZE;
}

static void put_header(struct seg_writer *w, unsigned char *p, size_t file_size,
		       size_t info_off, size_t links_off)
{
	const struct seg_static *st = &w->st;
	memset(p, 0, SEG_HEADER_SIZE);
	memcpy(p + SEG_H_MAGIC, SEG_MAGIC, 8);
	p[SEG_H_MAJOR] = SEG_MAJOR; /* u16 each, the high bytes zero */
	p[SEG_H_MINOR] = SEG_MINOR;
	seg_put32(p, SEG_H_HEADER_SIZE, SEG_HEADER_SIZE);
	seg_put32(p, SEG_H_GPU_INFO_SIZE, SEG_GPU_INFO_SIZE);
	seg_put32(p, SEG_H_GPU_SAMPLE_SIZE, SEG_GPU_SAMPLE_SIZE);
	seg_put32(p, SEG_H_PROC_SIZE, SEG_PROC_SIZE);
	seg_put32(p, SEG_H_MIG_SIZE, SEG_MIG_SIZE);
	seg_put32(p, SEG_H_FINDING_SIZE, SEG_FINDING_SIZE);
	seg_put32(p, SEG_H_LINK_SIZE, SEG_LINK_SIZE);
	seg_put32(p, SEG_H_STATE, SEG_LIVE);
	seg_put32(p, SEG_H_FLAGS, st->flags);
	seg_put32(p, SEG_H_PID, (uint32_t)getpid());
	seg_put32(p, SEG_H_UID, (uint32_t)geteuid());
	seg_put64(p, SEG_H_START_TICKS, seg_self_start_ticks());
	seg_put64(p, SEG_H_START_MS, (uint64_t)clock_real_ms());
	seg_put32(p, SEG_H_INTERVAL_MS, st->interval_ms);
	seg_put32(p, SEG_H_GPU_COUNT, st->gpu_count);
	seg_put32(p, SEG_H_SLOW_INTERVAL_MS, st->slow_interval_ms);
	seg_put32(p, SEG_H_SAMPLE_FLAGS, st->sample_flags);
	seg_put64(p, SEG_H_FILE_SIZE, file_size);
	seg_put64(p, SEG_H_INFO_OFF, info_off);
	seg_put64(p, SEG_H_LINKS_OFF, w->links ? links_off : 0);
	seg_put64(p, SEG_H_SLOT0_OFF, w->slot_off[0]);
	seg_put64(p, SEG_H_SLOT1_OFF, w->slot_off[1]);
	seg_put64(p, SEG_H_SLOT_SIZE, w->slot_size);
	seg_put64(p, SEG_H_GENERATION, 0);
	seg_put32(p, SEG_H_PROC_CAP, w->proc_cap);
	seg_put32(p, SEG_H_FINDING_CAP, w->finding_cap);
	seg_put32(p, SEG_H_MIG_CAP, w->mig_cap);
	seg_put32(p, SEG_H_CUDA_VERSION, (uint32_t)st->sys.nvidia.cuda_driver_version);
	seg_putstr(p, SEG_H_DRIVER, 80, st->sys.driver_version);
	seg_putstr(p, SEG_H_NVML, 80, st->sys.nvidia.nvml_version);
	seg_putstr(p, SEG_H_BACKEND, 16, st->sys.backend);
}

/* Makes a file of the writer's capacities under a temporary name (the
 * writer's pending file); publish renames it into place. */
static int build_file(struct seg_writer *w, char *err, size_t errlen)
{
	unsigned n = w->st.gpu_count;
	size_t info_off = SEG_HEADER_SIZE;
	size_t links_off = info_off + (size_t)n * SEG_GPU_INFO_SIZE;
	size_t links_len = w->links ? (size_t)n * n * SEG_LINK_SIZE : 0;
	w->slot_size = (slot_bytes(n, w->proc_cap, w->mig_cap, w->finding_cap) + 63) & ~(size_t)63;
	w->slot_off[0] = (links_off + links_len + 63) & ~(size_t)63;
	w->slot_off[1] = w->slot_off[0] + w->slot_size;
	size_t size = w->slot_off[1] + w->slot_size;

	char tmp[640];
	snprintf(w->tmp, sizeof w->tmp, ".%s.%ld", w->name, (long)getpid());
	snprintf(tmp, sizeof tmp, "%s/%s", w->dir, w->tmp);
	int fd = safefile_open(w->dirfd, tmp, SAFEFILE_TEMP, 0600, err, errlen);
	if (fd < 0)
		return fd == VRAMZ_EPERM ? VRAMZ_EPERM : VRAMZ_EIO;
	/* allocate every page now: a full tmpfs fails here, not with SIGBUS
	 * on a write into the map later */
	int e = posix_fallocate(fd, 0, (off_t)size);
	if (e == EOPNOTSUPP || e == EINVAL)
		e = ftruncate(fd, (off_t)size) ? errno : 0;
	if (e || fchmod(fd, w->mode)) {
		if (!e)
			e = errno;
		snprintf(err, errlen, "%s: %s%s", tmp, strerror(e),
			 e == ENOSPC ? " (the disk or tmpfs is full)" : "");
		close(fd);
		unlinkat(w->dirfd, w->tmp, 0);
		return VRAMZ_EIO;
	}
	struct stat fst;
	if (!fstat(fd, &fst)) {
		w->pending_dev = fst.st_dev;
		w->pending_ino = fst.st_ino;
	}
	unsigned char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "%s: mmap: %s", tmp, strerror(errno));
		unlinkat(w->dirfd, w->tmp, 0);
		return VRAMZ_EIO;
	}
	put_header(w, map, size, info_off, links_off);
	for (unsigned i = 0; i < n; i++)
		seg_enc_gpu_info(map + info_off + (size_t)i * SEG_GPU_INFO_SIZE, &w->info[i],
				 w->present[i]);
	for (size_t i = 0; w->links && i < (size_t)n * n; i++) {
		seg_put32(map, links_off + i * SEG_LINK_SIZE, (uint32_t)w->links[i].kind);
		seg_put32(map, links_off + i * SEG_LINK_SIZE + 4, w->links[i].nvlinks);
	}
	w->pending = map;
	w->pending_size = size;
	return 0;
}

/* Renames the pending file into place; readers of the old one see it
 * replaced and reopen the name. */
static int commit_file(struct seg_writer *w, char *err, size_t errlen)
{
	char path[640];
	snprintf(path, sizeof path, "%s/%s", w->dir, w->name);
	/* the name replaced must be ours too: in a sticky shared directory
	 * root's rename would take another user's name */
	int rc = safefile_open(w->dirfd, path, SAFEFILE_CHECK, 0, err, errlen);
	if (rc)
		return rc;
	if (renameat(w->dirfd, w->tmp, w->dirfd, w->name)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return VRAMZ_EIO;
	}
	if (w->map) {
		__atomic_store_n((uint32_t *)(w->map + SEG_H_STATE), htole32(SEG_REPLACED),
				 __ATOMIC_RELEASE);
		munmap(w->map, w->size);
	}
	w->map = w->pending;
	w->size = w->pending_size;
	w->dev = w->pending_dev;
	w->ino = w->pending_ino;
	w->pending = NULL;
	return 0;
}

static void drop_pending(struct seg_writer *w)
{
	if (!w->pending)
		return;
	munmap(w->pending, w->pending_size);
	unlinkat(w->dirfd, w->tmp, 0);
	w->pending = NULL;
}

int seg_writer_create(struct seg_writer **out, int dirfd, const char *dir, const char *name,
		      unsigned mode, const struct seg_static *st, unsigned proc_cap,
		      unsigned finding_cap, char *err, size_t errlen)
{
	struct seg_writer *w = calloc(1, sizeof *w);
	*out = w;
	if (!w)
		return VRAMZ_ENOMEM;
	if (st->gpu_count == 0 || st->gpu_count > SEG_MAX_GPUS) {
		snprintf(err, errlen, "%u GPUs: a segment holds 1 to %u", st->gpu_count,
			 SEG_MAX_GPUS);
		return VRAMZ_EINVAL;
	}
	w->dirfd = dirfd;
	snprintf(w->dir, sizeof w->dir, "%s", dir);
	snprintf(w->name, sizeof w->name, "%s", name);
	w->mode = mode;
	w->st = *st;
	w->redact = (st->flags & SEG_FL_REDACTED) != 0;
	unsigned n = st->gpu_count;
	w->info = calloc(n, sizeof *w->info);
	w->present = calloc(n, 1);
	if (st->links)
		w->links = calloc((size_t)n * n, sizeof *w->links);
	if (!w->info || !w->present || (st->links && !w->links))
		return VRAMZ_ENOMEM;
	memcpy(w->info, st->info, n * sizeof *w->info);
	memcpy(w->present, st->present, n);
	if (st->links)
		memcpy(w->links, st->links, (size_t)n * n * sizeof *w->links);
	w->st.info = w->info;
	w->st.present = w->present;
	w->st.links = w->links;
	w->proc_cap = proc_cap ? proc_cap : 64;
	w->finding_cap = finding_cap ? finding_cap : 32;
	w->mig_cap = 8;
	return build_file(w, err, errlen);
}

unsigned char *seg_writer_map(struct seg_writer *w)
{
	return w->map ? w->map : w->pending;
}

static unsigned round_up_cap(unsigned need, unsigned cap)
{
	while (cap < need && cap < (1u << 20))
		cap *= 2;
	return cap < need ? need : cap;
}

int seg_writer_publish(struct seg_writer *w, const vramz_snapshot *snap, int sample_rc,
		       const vramz_finding *f, unsigned nf, char *err, size_t errlen)
{
	if (snap->gpu_count > w->st.gpu_count)
		return VRAMZ_EINVAL;
	/* the current layout, kept to go back to when a bigger file fails */
	unsigned caps[3] = {w->proc_cap, w->finding_cap, w->mig_cap};
	uint64_t offs[3] = {w->slot_off[0], w->slot_off[1], w->slot_size};
	if (snap->proc_count > w->proc_cap || nf > w->finding_cap || snap->mig_count > w->mig_cap) {
		w->proc_cap = round_up_cap(snap->proc_count, w->proc_cap);
		w->finding_cap = round_up_cap(nf, w->finding_cap);
		w->mig_cap = round_up_cap(snap->mig_count, w->mig_cap);
		unsigned n = w->st.gpu_count;
		if (slot_bytes(n, w->proc_cap, w->mig_cap, w->finding_cap) + 63 > SEG_MAX_SLOT_BYTES) {
			/* no room to double: exactly what this tick needs, if that fits */
			w->proc_cap = snap->proc_count > caps[0] ? snap->proc_count : caps[0];
			w->finding_cap = nf > caps[1] ? nf : caps[1];
			w->mig_cap = snap->mig_count > caps[2] ? snap->mig_count : caps[2];
		}
		if (slot_bytes(n, w->proc_cap, w->mig_cap, w->finding_cap) + 63 > SEG_MAX_SLOT_BYTES) {
			snprintf(err, errlen,
				 "%u processes and %u findings: more than a segment's slot holds "
				 "(%llu bytes at most)", snap->proc_count, nf,
				 (unsigned long long)SEG_MAX_SLOT_BYTES);
			goto restore; /* the file kept as it was */
		}
		drop_pending(w);
		int rc = build_file(w, err, errlen);
		if (rc < 0)
			goto restore; /* the old file keeps its last snapshot */
	}
	if (!w->pending && !w->map) {
		/* the first file was dropped for a bigger one that failed: again */
		int rc = build_file(w, err, errlen);
		if (rc < 0)
			return rc;
	}
	unsigned char *map = w->pending ? w->pending : w->map;
	uint64_t gen = w->generation + 1;
	unsigned char *slot = map + w->slot_off[gen & 1];
	uint64_t *seqp = (uint64_t *)slot;
	uint64_t seq = le64toh(__atomic_load_n(seqp, __ATOMIC_RELAXED));
	__atomic_store_n(seqp, htole64(seq | 1), __ATOMIC_RELAXED); /* odd: being written */
	__atomic_thread_fence(__ATOMIC_RELEASE);

	unsigned char *pl = slot + SEG_SLOT_HEAD;
	seg_put64(pl, 0, (uint64_t)snap->time_ms);
	seg_put64(pl, 8, (uint64_t)snap->mono_ns);
	seg_put32(pl, 16, snap->gpu_count);
	seg_put32(pl, 20, snap->proc_count);
	seg_put32(pl, 24, snap->mig_count);
	seg_put32(pl, 28, nf);
	seg_put32(pl, 32, (uint32_t)sample_rc);
	seg_put32(pl, 36, 0);
	size_t off = SEG_PAYLOAD_HEAD;
	for (unsigned i = 0; i < snap->gpu_count; i++, off += SEG_GPU_SAMPLE_SIZE)
		seg_enc_gpu_sample(pl + off, &snap->gpus[i]);
	for (unsigned i = 0; i < snap->proc_count; i++, off += SEG_PROC_SIZE)
		seg_enc_proc(pl + off, &snap->procs[i], w->redact);
	for (unsigned i = 0; i < snap->mig_count; i++, off += SEG_MIG_SIZE)
		seg_enc_mig(pl + off, &snap->migs[i]);
	for (unsigned i = 0; i < nf; i++, off += SEG_FINDING_SIZE)
		seg_enc_finding(pl + off, &f[i], w->redact);
	seg_put64(slot, 8, gen);
	seg_put32(slot, 16, seg_crc32(pl, off));
	seg_put32(slot, 20, (uint32_t)off);

	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(seqp, htole64((seq | 1) + 1), __ATOMIC_RELEASE); /* even: whole */
	__atomic_store_n((uint64_t *)(map + SEG_H_GENERATION), htole64(gen), __ATOMIC_RELEASE);
	if (w->pending && commit_file(w, err, errlen) < 0) {
		drop_pending(w);
		if (!w->map)
			return VRAMZ_EIO; /* nothing published yet: try again next time */
		goto restore;
	}
	w->generation = gen;
	return 0;
restore:
	w->proc_cap = caps[0];
	w->finding_cap = caps[1];
	w->mig_cap = caps[2];
	w->slot_off[0] = offs[0];
	w->slot_off[1] = offs[1];
	w->slot_size = offs[2];
	return VRAMZ_EIO;
}

static void writer_free(struct seg_writer *w)
{
	if (w->map)
		munmap(w->map, w->size);
	free(w->info);
	free(w->present);
	free(w->links);
	free(w);
}

void seg_writer_close(struct seg_writer *w)
{
	if (!w)
		return;
	drop_pending(w);
	if (w->map) {
		__atomic_store_n((uint32_t *)(w->map + SEG_H_STATE), htole32(SEG_STOPPED),
				 __ATOMIC_RELEASE);
		/* only our own file: a successor may already have taken the name */
		struct stat a, b;
		int fd = openat(w->dirfd, w->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0) {
			if (!fstat(fd, &a) && a.st_size == (off_t)w->size) {
				unsigned char head[SEG_HEADER_SIZE];
				if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
				    seg_get32(head, SEG_H_PID) == (uint32_t)getpid() &&
				    rundir_own_file(w->dirfd, w->name, &b) && a.st_ino == b.st_ino)
					unlinkat(w->dirfd, w->name, 0);
			}
			close(fd);
		}
	}
	writer_free(w);
}

int seg_writer_check(const struct seg_writer *w)
{
	struct stat st;
	if (!w || !w->map)
		return 0;
	if (fstatat(w->dirfd, w->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 1 : 0; /* unknown: not a reason to act */
	return st.st_dev == w->dev && st.st_ino == w->ino ? 0 : 2;
}

void seg_writer_abandon(struct seg_writer *w)
{
	if (!w)
		return;
	drop_pending(w);
	/* readers holding it reopen the name, where the next file goes */
	if (w->map)
		__atomic_store_n((uint32_t *)(w->map + SEG_H_STATE), htole32(SEG_REPLACED),
				 __ATOMIC_RELEASE);
	writer_free(w);
}

