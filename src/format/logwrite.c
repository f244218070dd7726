/* SPDX-License-Identifier: Apache-2.0 */
/* logwrite.c - putting formatted ticks into log files safely: the append
 * check, whole-line writes, rotation and fsync.
 *
 * The promises (docs/logging.md): an existing file is appended to only
 * when its header is exactly ours, never truncated or overwritten; each
 * tick reaches each file as one write(2) of whole lines, so a killed
 * logger leaves no torn row (only a power loss mid-write can, and a torn
 * tail found when appending is cut back to the last whole line); process
 * rows are written before the GPU rows of their tick, so a reader that sees
 * a GPU tick also sees its processes; rotation keeps FILE.1 .. FILE.keep
 * (named by log_rotated_path) and renames both files of a pair together,
 * level by level, so that a kill at any point leaves at most one sibling
 * one level behind its GPU file, which the next open puts back
 * (log_rotation_repair).  A header cut short (a full disk) is rewritten:
 * a file that holds only a prefix of our header holds no data.
 * Rotation and the append check apply to regular files only: /dev/stdout,
 * a pipe or /dev/full just get the header and the rows.
 * Every file is opened, and every name a rotation renames or removes is
 * judged, by the link rule (lib/internal/safefile.h): never through a
 * link, never another user's file in a directory others can write; only
 * the file the user named may be a FIFO or a device (/dev/stdout is
 * standard output itself, as "-", not the link it is).
 */
#include "format/logwrite.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct log_file {
	char *path;
	int fd;
	int regular;      /* a regular file: append check, rotation, fsync */
	int named;        /* the file the user named (not a sibling): may be a
			     FIFO or a device */
	int own;          /* opened here (not stdout) */
	uint64_t size;    /* bytes in the file */
	struct logbuf hdr;
};

struct log_writer {
	struct log_writer_opts o;
	struct log_file g, p;  /* GPU file, process sibling (p.fd < 0: none) */
	unsigned rotations;
	char note[2048];       /* files put back or set aside, one a line */
};

static int log_fail(char *err, size_t errlen, int rc, const char *path, const char *what, int e)
{
	snprintf(err, errlen, "%s: %s%s%s", path, what, e ? ": " : "", e ? strerror(e) : "");
	return rc;
}

/* Writes all of p, looping over partial writes and EINTR; 0 or errno. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Cuts a tail without a newline (a power loss mid-write) so the rows we
 * append start on a line of their own. */
static int cut_torn_tail(struct log_file *f, uint64_t size)
{
	char buf[4096];
	uint64_t end = size;
	while (end > f->hdr.len) {
		size_t n = end - f->hdr.len < sizeof buf ? (size_t)(end - f->hdr.len) : sizeof buf;
		ssize_t r = pread(f->fd, buf, n, (off_t)(end - n));
		if (r != (ssize_t)n)
			return r < 0 ? errno : EIO;
		for (size_t i = n; i-- > 0;) {
			if (buf[i] == '\n') {
				uint64_t keep = end - n + i + 1;
				if (keep != size && ftruncate(f->fd, (off_t)keep))
					return errno;
				f->size = keep;
				return 0;
			}
		}
		end -= n;
	}
	if (ftruncate(f->fd, (off_t)f->hdr.len))
		return errno;
	f->size = f->hdr.len;
	return 0;
}

static int file_open(struct log_file *f, char *err, size_t errlen)
{
	struct stat st;
	if (!strcmp(f->path, "-") || !strcmp(f->path, "/dev/stdout")) {
		f->fd = STDOUT_FILENO;
		f->own = 0;
		/* `vramz log >> x.csv`: no second header in the middle */
		if (!fstat(f->fd, &st) && S_ISREG(st.st_mode) && lseek(f->fd, 0, SEEK_CUR) > 0)
			return 0;
	} else {
		f->fd = safefile_open(-1, f->path,
				      SAFEFILE_APPEND | (f->named ? SAFEFILE_ANY_KIND : 0), 0644,
				      err, errlen);
		if (f->fd < 0) {
			int rc = f->fd;
			f->fd = -1;
			return rc;
		}
		f->own = 1;
		if (fstat(f->fd, &st))
			return log_fail(err, errlen, VRAMZ_EIO, f->path, "cannot stat", errno);
		f->regular = S_ISREG(st.st_mode);
		/* one writer a log: two would interleave their ticks, each cut
		 * the other's "torn" tail and rotate it under it.  Taken before
		 * the header is read or written, and again on the new file after
		 * each rotation; held until the descriptor is closed.  A file
		 * system without locks (ENOLCK) is written unlocked, as before */
		if (f->regular && f->named && flock(f->fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK)
			return log_fail(err, errlen, VRAMZ_EPERM, f->path,
				    "another vramz is writing this log (it holds its lock); "
				    "refusing to write it too", 0);
		if (f->regular && st.st_size > 0) {
			char *head = malloc(f->hdr.len);
			if (!head)
				return VRAMZ_ENOMEM;
			ssize_t r = pread(f->fd, head, f->hdr.len, 0);
			int same = r == (ssize_t)f->hdr.len && !memcmp(head, f->hdr.p, f->hdr.len);
			/* shorter than our header and a prefix of it: the header's
			 * write was cut short (a full disk), and no row follows */
			int torn = r >= 0 && (uint64_t)st.st_size < f->hdr.len &&
				   (size_t)r == (size_t)st.st_size && !memcmp(head, f->hdr.p, (size_t)r);
			int newline = r > 0 && memchr(head, '\n', (size_t)r) != NULL;
			free(head);
			if (torn) {
				if (ftruncate(f->fd, 0))
					return log_fail(err, errlen, VRAMZ_EIO, f->path,
						    "cannot rewrite its cut-short header", errno);
				goto header;
			}
			if (!same && !newline)
				return log_fail(err, errlen, VRAMZ_EPARSE, f->path,
					    "its first line is cut short and is not a vramz log "
					    "header; refusing to append or overwrite: pick another "
					    "file or move it away", 0);
			if (!same)
				return log_fail(err, errlen, VRAMZ_EPARSE, f->path,
					    "exists with other columns (not a log of this vramz "
					    "version); refusing to append or overwrite: pick another "
					    "file or move it away", 0);
			int e = cut_torn_tail(f, (uint64_t)st.st_size);
			if (e)
				return log_fail(err, errlen, VRAMZ_EIO, f->path, "cannot read back", e);
			return 0;
		}
	}
header:;
	int e = write_all(f->fd, f->hdr.p, f->hdr.len);
	if (e)
		return log_fail(err, errlen, VRAMZ_EIO, f->path, "write failed", e);
	f->size = f->hdr.len;
	return 0;
}

static void file_close(struct log_file *f)
{
	if (f->own && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

int log_sibling_place(const char *path, char *err, size_t errlen)
{
	struct stat st;
	char target[16];
	if (!strcmp(path, "-"))
		return log_fail(err, errlen, VRAMZ_EINVAL, "-",
			    "process rows go to a sibling file: --procs needs -o FILE", 0);
	/* /dev/stdout is a link to /proc/self/fd/1: even when that is a
	 * regular file, /dev/stdout.procs would land in /dev */
	ssize_t n = readlink(path, target, sizeof target);
	if ((!stat(path, &st) && !S_ISREG(st.st_mode)) ||
	    (n >= 6 && !memcmp(target, "/proc/", 6)))
		return log_fail(err, errlen, VRAMZ_EINVAL, path,
			    "not a regular file, so no place for a .procs sibling beside it: "
			    "--procs needs -o FILE with FILE a regular file", 0);
	return 0;
}

/* A line appended to note (len bytes; NULL: none kept). */
static void note_add(char *note, size_t len, const char *fmt, ...)
{
	if (!note || !len)
		return;
	size_t have = strnlen(note, len - 1);
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(note + have, len - have, fmt, ap);
	va_end(ap);
	have = n < 0 ? have : have + (size_t)n < len - 1 ? have + (size_t)n : len - 2;
	note[have] = '\n';
	note[have + 1] = '\0';
}

int log_writer_check(const struct log_writer_opts *o, int events, char *err, size_t errlen)
{
	char p[PATH_MAX + 64];
	if (!strcmp(o->path, "-") || !strcmp(o->path, "/dev/stdout"))
		return 0;
	/* only refusals: a missing directory is the open's to say */
	int rc = safefile_open(-1, o->path, SAFEFILE_CHECK | SAFEFILE_ANY_KIND, 0, err, errlen);
	if (rc != VRAMZ_EPERM && o->procs && log_sibling_path(o->path, p, sizeof p) == 0)
		rc = safefile_open(-1, p, SAFEFILE_CHECK, 0, err, errlen);
	if (rc != VRAMZ_EPERM && events && log_events_path(o->path, p, sizeof p) == 0)
		rc = safefile_open(-1, p, SAFEFILE_CHECK, 0, err, errlen);
	return rc == VRAMZ_EPERM ? rc : 0;
}

int log_writer_open(struct log_writer **out, const struct log_writer_opts *o,
		    char *err, size_t errlen)
{
	struct log_writer *w = calloc(1, sizeof *w);
	*out = w;
	if (!w)
		return VRAMZ_ENOMEM;
	w->o = *o;
	w->g.fd = w->p.fd = -1;
	w->g.named = 1;
	size_t plen = strlen(o->path) + 32;
	w->g.path = strdup(o->path);
	w->p.path = malloc(plen);
	if (!w->g.path || !w->p.path || log_gpu_header(&w->g.hdr) || log_proc_header(&w->p.hdr))
		return VRAMZ_ENOMEM;
	if (o->keep > (unsigned)LOG_KEEP_MAX) {
		snprintf(err, errlen, "--keep %u: at most %u rotated files", o->keep,
			 (unsigned)LOG_KEEP_MAX);
		return VRAMZ_EINVAL;
	}
	if (o->procs) {
		int rc = log_sibling_place(o->path, err, errlen);
		if (rc)
			return rc;
		log_sibling_path(o->path, w->p.path, plen);
		int fixed = log_rotation_repair(o->path, o->keep > 0 ? o->keep : 1, w->note,
						sizeof w->note);
		if (fixed < 0)
			return log_fail(err, errlen, VRAMZ_EIO, o->path,
				    "cannot repair an interrupted rotation", -fixed);
	}
	/* check both headers before writing to either */
	int rc = file_open(&w->g, err, errlen);
	if (rc == 0 && o->procs)
		rc = file_open(&w->p, err, errlen);
	return rc;
}

/* The name of level n of the set: FILE (n = 0) or FILE.n, or its process
 * sibling. */
static void level_name(const char *base, unsigned n, int sibling, char *out, size_t len)
{
	char t[PATH_MAX + 48];
	if (n == 0)
		snprintf(t, sizeof t, "%s", base);
	else
		log_rotated_path(base, n, t, sizeof t);
	if (sibling)
		log_sibling_path(t, out, len);
	else
		snprintf(out, len, "%s", t);
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* 0 when the link rule lets path be renamed, replaced or removed (absent,
 * or a file of ours where others can add names); else -EPERM with the
 * reason as a line of note, or -errno. */
static int may_touch(const char *path, char *note, size_t notelen)
{
	char why[PATH_MAX + 200];
	int rc = safefile_open(-1, path, SAFEFILE_CHECK, 0, why, sizeof why);
	if (rc == 0 || rc == VRAMZ_ENOTFOUND)
		return 0;
	note_add(note, notelen, "%s", why);
	return rc == VRAMZ_EPERM ? -EPERM : -EIO;
}

/* rename(a, b) when the rule allows both names */
static int move(const char *a, const char *b, char *note, size_t notelen)
{
	int rc = may_touch(a, note, notelen);
	if (!rc)
		rc = may_touch(b, note, notelen);
	return rc ? rc : rename(a, b) ? -errno : 0;
}

unsigned log_rotation_top(const char *base, unsigned keep)
{
	char g[PATH_MAX + 64];
	for (unsigned n = 1; n <= keep; n++) {
		level_name(base, n, 0, g, sizeof g);
		if (!exists(g))
			return n;
	}
	return keep + 1;
}

static int set_aside(const char *p, const char *why, char *note, size_t notelen);

int log_rotation_step(const char *base, unsigned keep, unsigned top, int procs, unsigned step,
		      char *note, size_t notelen)
{
	/* the steps: with every level there (top > keep), delete level keep
	 * (GPU file, then sibling); then for each level n from top - 1 down
	 * to 0, move the GPU file, then its sibling, up one.  A hole (a kill
	 * mid-rotation left one) is filled instead of a level deleted.  A kill
	 * between two steps leaves at most one level whose GPU file moved
	 * without its sibling: log_rotation_repair's case. */
	unsigned per = procs ? 2 : 1;
	unsigned del = top > keep;
	if (top > keep)
		top = keep;
	unsigned op = step / per, sibling = step % per;
	if (op >= del + top)
		return 1;
	char a[PATH_MAX + 64], b[PATH_MAX + 64];
	if (del && op == 0) {
		level_name(base, keep, (int)sibling, a, sizeof a);
		int rc = may_touch(a, note, notelen);
		return rc ? rc : unlink(a) && errno != ENOENT ? -errno : 0;
	}
	unsigned n = top - 1 - (op - del);
	level_name(base, n, (int)sibling, a, sizeof a);
	level_name(base, n + 1, (int)sibling, b, sizeof b);
	/* a process file already there has lost its GPU file (that moved up
	 * or was deleted before it): set aside, never overwritten */
	if (sibling && exists(a) && exists(b)) {
		int rc = set_aside(b, "was in the way of a rotation", note, notelen);
		if (rc < 0)
			return rc;
	}
	int rc = move(a, b, note, notelen);
	return rc == -ENOENT ? 0 : rc;
}

/* The time cells of a file's first and last rows; "" for a file with
 * none (its header alone); -1 when it cannot be read. */
static int file_span(const char *path, char first[32], char last[32])
{
	char buf[8192];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	first[0] = last[0] = '\0';
	if (fd < 0)
		return -1;
	ssize_t n = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 : pread(fd, buf, sizeof buf - 1, 0);
	const char *row = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;
	if (row && row + 1 < buf + n) { /* the first row, after the header */
		size_t k = strcspn(row + 1, ",\n");
		buf[n] = '\0';
		snprintf(first, 32, "%.*s", (int)(k < 31 ? k : 31), row + 1);
	}
	off_t from = st.st_size > (off_t)sizeof buf - 1 ? st.st_size - (off_t)sizeof buf + 1 : 0;
	ssize_t m = first[0] ? pread(fd, buf, (size_t)(st.st_size - from), from) : 0;
	close(fd);
	if (n < 0 || m < 0)
		return -1;
	/* the last whole line: a torn tail (no newline) does not count */
	while (m > 0 && buf[m - 1] != '\n')
		m--;
	if (m > 0) {
		buf[--m] = '\0';
		char *l = memrchr(buf, '\n', (size_t)m);
		if (l || from == 0) {
			l = l ? l + 1 : buf;
			snprintf(last, 32, "%.*s", (int)strcspn(l, ","), l);
		}
	}
	if (!last[0])
		snprintf(last, 32, "%s", first);
	return 0;
}

/* Whether process file p can be GPU file g's sibling: its rows start
 * within g's (a process row comes before its tick's GPU rows, so a kill
 * between the two writes leaves one tick in p alone), or it has none.
 * An older run's process file starts before g.  ISO 8601 times of one
 * width order as text.  Unreadable: assumed to be (nothing is moved). */
static int belongs(const char *p, const char *g)
{
	char pf[32], pl[32], gf[32], gl[32];
	if (file_span(p, pf, pl) < 0 || file_span(g, gf, gl) < 0 || !pf[0])
		return 1;
	if (!gf[0])
		return !strcmp(pf, pl);
	return strcmp(pf, gf) >= 0 && (strcmp(pf, gl) <= 0 || !strcmp(pf, pl));
}

/* Moves p out of the set, never over another file: P.unpaired (.2 ...). */
static int set_aside(const char *p, const char *why, char *note, size_t notelen)
{
	char to[PATH_MAX + 96];
	for (unsigned k = 1; k < 100; k++) {
		if (k == 1)
			snprintf(to, sizeof to, "%s.unpaired", p);
		else
			snprintf(to, sizeof to, "%s.unpaired.%u", p, k);
		if (exists(to))
			continue;
		int rc = move(p, to, note, notelen);
		if (rc)
			return rc;
		note_add(note, notelen, "%s %s: set aside as %s", p, why, to);
		return 1;
	}
	return -EEXIST;
}

int log_rotation_repair(const char *base, unsigned keep, char *note, size_t notelen)
{
	char g0[PATH_MAX + 64], p0[PATH_MAX + 64], g1[PATH_MAX + 64], p1[PATH_MAX + 64];
	int fixed = 0, rc;
	for (unsigned n = 0; n < keep; n++) {
		level_name(base, n, 1, p0, sizeof p0);
		if (!exists(p0))
			continue;
		level_name(base, n, 0, g0, sizeof g0);
		level_name(base, n + 1, 0, g1, sizeof g1);
		level_name(base, n + 1, 1, p1, sizeof p1);
		/* a sibling left behind by its GPU file, which moved up a level */
		if (exists(g0) || !exists(g1))
			continue;
		/* and where it belongs, another (a second kill, in the delete
		 * of the level above, left an older one): the one whose rows
		 * are g1's times stays */
		if (exists(p1)) {
			if (!belongs(p0, g1) || belongs(p1, g1))
				continue; /* p0 is set aside below */
			if ((rc = set_aside(p1, "is older than its GPU file", note, notelen)) < 0)
				return rc;
		}
		if ((rc = move(p0, p1, note, notelen)))
			return rc;
		note_add(note, notelen, "%s: put back as %s, beside its GPU file (an interrupted rotation)",
			 p0, p1);
		fixed++;
	}
	/* what is left unpaired never takes another file's place, nor gets
	 * rows appended beside a GPU file of other times */
	for (unsigned n = 0; n <= keep; n++) {
		level_name(base, n, 1, p0, sizeof p0);
		level_name(base, n, 0, g0, sizeof g0);
		if (!exists(p0))
			continue;
		if (!exists(g0))
			rc = set_aside(p0, "has no GPU file", note, notelen);
		else if (!belongs(p0, g0))
			rc = set_aside(p0, "holds other times than its GPU file", note, notelen);
		else
			continue;
		if (rc < 0)
			return rc;
		fixed++;
	}
	return fixed;
}

/* The events files (FILE.events.csv, evfile.h) move with their levels,
 * after the pairs, the same steps (delete level keep when every level is
 * there, then each level n below top up one); their writers follow the
 * name (evfile_follow).  A kill among these moves leaves an events file a
 * level off: its rows keep their times, and analyze reads every level's. */
static int rotate_events(const char *base, unsigned keep, unsigned top)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64], ea[PATH_MAX + 80], eb[PATH_MAX + 80];
	if (top > keep) {
		level_name(base, keep, 0, a, sizeof a);
		if (!log_events_path(a, ea, sizeof ea) && unlink(ea) && errno != ENOENT)
			return -errno;
		top = keep;
	}
	for (unsigned n = top; n-- > 0;) {
		level_name(base, n, 0, a, sizeof a);
		level_name(base, n + 1, 0, b, sizeof b);
		if (log_events_path(a, ea, sizeof ea) || log_events_path(b, eb, sizeof eb))
			continue;
		if (rename(ea, eb) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

static int rotate(struct log_writer *w, char *err, size_t errlen)
{
	int procs = w->p.fd >= 0;
	int rc = log_writer_sync(w, err, errlen);
	if (rc)
		return rc;
	file_close(&w->g);
	file_close(&w->p);
	unsigned top = log_rotation_top(w->o.path, w->o.keep);
	/* every name the steps rename or remove, judged before the first */
	for (unsigned n = 0; n <= top && n <= w->o.keep; n++)
		for (int sib = 0; sib <= procs; sib++) {
			char name[PATH_MAX + 64];
			level_name(w->o.path, n, sib, name, sizeof name);
			rc = safefile_open(-1, name, SAFEFILE_CHECK, 0, err, errlen);
			if (rc && rc != VRAMZ_ENOTFOUND)
				return rc;
			/* the events file moves with the log (rotate_events) */
			char ev[PATH_MAX + 80];
			if (!sib && !log_events_path(name, ev, sizeof ev) &&
			    (rc = safefile_open(-1, ev, SAFEFILE_CHECK, 0, err, errlen)) &&
			    rc != VRAMZ_ENOTFOUND)
				return rc;
		}
	for (unsigned step = 0;; step++) {
		int e = log_rotation_step(w->o.path, w->o.keep, top, procs, step, w->note,
					  sizeof w->note);
		if (e > 0)
			break;
		if (e < 0)
			return log_fail(err, errlen, VRAMZ_EIO, w->o.path, "rotation failed", -e);
	}
	int e = rotate_events(w->o.path, w->o.keep, top);
	if (e < 0)
		return log_fail(err, errlen, VRAMZ_EIO, w->o.path, "rotation of the events file failed", -e);
	w->rotations++;
	rc = file_open(&w->g, err, errlen);
	if (rc == 0 && procs)
		rc = file_open(&w->p, err, errlen);
	return rc;
}

static int would_pass(const struct log_file *f, size_t add, uint64_t limit)
{
	return f->fd >= 0 && f->regular && add && f->size > f->hdr.len && f->size + add > limit;
}

int log_writer_tick(struct log_writer *w, const struct logbuf *gpu,
		    const struct logbuf *procs, char *err, size_t errlen)
{
	size_t plen = procs && w->p.fd >= 0 ? procs->len : 0;
	if (w->o.rotate_bytes && (would_pass(&w->g, gpu->len, w->o.rotate_bytes) ||
				  would_pass(&w->p, plen, w->o.rotate_bytes))) {
		int rc = rotate(w, err, errlen);
		if (rc)
			return rc;
	}
	if (plen) {
		int e = write_all(w->p.fd, procs->p, plen);
		if (e)
			return log_fail(err, errlen, VRAMZ_EIO, w->p.path, "write failed", e);
		w->p.size += plen;
	}
	int e = write_all(w->g.fd, gpu->p, gpu->len);
	if (e)
		return log_fail(err, errlen, VRAMZ_EIO, w->g.path, "write failed", e);
	w->g.size += gpu->len;
	return 0;
}

static int file_sync(struct log_file *f, char *err, size_t errlen)
{
	if (f->fd < 0 || !f->regular)
		return 0;
	if (fdatasync(f->fd))
		return log_fail(err, errlen, VRAMZ_EIO, f->path, "fsync failed", errno);
	return 0;
}

int log_writer_sync(struct log_writer *w, char *err, size_t errlen)
{
	int rc = file_sync(&w->p, err, errlen);
	return rc ? rc : file_sync(&w->g, err, errlen);
}

int log_writer_close(struct log_writer *w, char *err, size_t errlen)
{
	if (!w)
		return 0;
	int rc = log_writer_sync(w, err, errlen);
	for (struct log_file *f = &w->g; f; f = f == &w->g ? &w->p : NULL) {
		if (f->own && f->fd >= 0 && close(f->fd) && !rc)
			rc = log_fail(err, errlen, VRAMZ_EIO, f->path, "close failed", errno);
		f->fd = -1;
		free(f->path);
		logbuf_free(&f->hdr);
	}
	free(w);
	return rc;
}

uint64_t log_writer_size(const struct log_writer *w)
{
	return w->g.size;
}

int log_writer_take_note(struct log_writer *w, char *buf, size_t len)
{
	if (!w || !w->note[0])
		return 0;
	snprintf(buf, len, "%s", w->note);
	w->note[0] = '\0';
	return 1;
}

unsigned log_writer_rotations(const struct log_writer *w)
{
	return w->rotations;
}
