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
 * (named by log_rotated_path) and renames both files of a pair together.
 * Rotation and the append check apply to regular files only: /dev/stdout,
 * a pipe or /dev/full just get the header and the rows.
 */
#include "log/logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct log_file {
	char *path;
	int fd;
	int regular;      /* a regular file: append check, rotation, fsync */
	int own;          /* opened here (not stdout) */
	uint64_t size;    /* bytes in the file */
	struct logbuf hdr;
};

struct log_writer {
	struct log_writer_opts o;
	struct log_file g, p;  /* GPU file, process sibling (p.fd < 0: none) */
	unsigned rotations;
};

static int fail(char *err, size_t errlen, int rc, const char *path, const char *what, int e)
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
	if (!strcmp(f->path, "-")) {
		f->fd = STDOUT_FILENO;
		f->own = 0;
		/* `vramz log >> x.csv`: no second header in the middle */
		if (!fstat(f->fd, &st) && S_ISREG(st.st_mode) && lseek(f->fd, 0, SEEK_CUR) > 0)
			return 0;
	} else {
		f->fd = open(f->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (f->fd < 0)
			return fail(err, errlen, VRAMZ_EIO, f->path, "cannot open", errno);
		f->own = 1;
		if (fstat(f->fd, &st))
			return fail(err, errlen, VRAMZ_EIO, f->path, "cannot stat", errno);
		f->regular = S_ISREG(st.st_mode);
		if (f->regular && st.st_size > 0) {
			char *head = malloc(f->hdr.len);
			if (!head)
				return VRAMZ_ENOMEM;
			ssize_t r = pread(f->fd, head, f->hdr.len, 0);
			int same = r == (ssize_t)f->hdr.len && !memcmp(head, f->hdr.p, f->hdr.len);
			free(head);
			if (!same)
				return fail(err, errlen, VRAMZ_EPARSE, f->path,
					    "exists with other columns (not a log of this vramz "
					    "version); refusing to append or overwrite: pick another "
					    "file or move it away", 0);
			int e = cut_torn_tail(f, (uint64_t)st.st_size);
			if (e)
				return fail(err, errlen, VRAMZ_EIO, f->path, "cannot read back", e);
			return 0;
		}
	}
	int e = write_all(f->fd, f->hdr.p, f->hdr.len);
	if (e)
		return fail(err, errlen, VRAMZ_EIO, f->path, "write failed", e);
	f->size = f->hdr.len;
	return 0;
}

static void file_close(struct log_file *f)
{
	if (f->own && f->fd >= 0)
		close(f->fd);
	f->fd = -1;
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
	size_t plen = strlen(o->path) + 32;
	w->g.path = strdup(o->path);
	w->p.path = malloc(plen);
	if (!w->g.path || !w->p.path || log_gpu_header(&w->g.hdr) || log_proc_header(&w->p.hdr))
		return VRAMZ_ENOMEM;
	if (o->procs) {
		if (!strcmp(o->path, "-"))
			return fail(err, errlen, VRAMZ_EINVAL, "-",
				    "process rows go to a sibling file: --procs needs -o FILE", 0);
		log_sibling_path(o->path, w->p.path, plen);
	}
	/* check both headers before writing to either */
	int rc = file_open(&w->g, err, errlen);
	if (rc == 0 && o->procs)
		rc = file_open(&w->p, err, errlen);
	return rc;
}

static int shift(const char *base, unsigned keep, int sibling)
{
	size_t len = strlen(base) + 48;
	char *a = malloc(len), *b = malloc(len), *t = malloc(len);
	int rc = 0;
	if (!a || !b || !t) {
		rc = ENOMEM;
		goto out;
	}
#define NAME(dst, n)                                                      \
	do {                                                              \
		if ((n) == 0)                                             \
			snprintf(t, len, "%s", base);                     \
		else                                                      \
			log_rotated_path(base, (n), t, len);              \
		if (sibling)                                              \
			log_sibling_path(t, dst, len);                    \
		else                                                      \
			snprintf(dst, len, "%s", t);                      \
	} while (0)
	if (keep == 0) {
		NAME(a, 0);
		if (unlink(a) && errno != ENOENT)
			rc = errno;
		goto out;
	}
	NAME(a, keep);
	if (unlink(a) && errno != ENOENT)
		rc = errno;
	for (unsigned n = keep; n-- > 0 && !rc;) {
		NAME(a, n);
		NAME(b, n + 1);
		if (rename(a, b) && errno != ENOENT)
			rc = errno;
	}
#undef NAME
out:
	free(a);
	free(b);
	free(t);
	return rc;
}

static int rotate(struct log_writer *w, char *err, size_t errlen)
{
	int procs = w->p.fd >= 0;
	int rc = log_writer_sync(w, err, errlen);
	if (rc)
		return rc;
	file_close(&w->g);
	file_close(&w->p);
	int e = shift(w->o.path, w->o.keep, 0);
	if (!e && procs)
		e = shift(w->o.path, w->o.keep, 1);
	if (e)
		return fail(err, errlen, VRAMZ_EIO, w->o.path, "rotation failed", e);
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
			return fail(err, errlen, VRAMZ_EIO, w->p.path, "write failed", e);
		w->p.size += plen;
	}
	int e = write_all(w->g.fd, gpu->p, gpu->len);
	if (e)
		return fail(err, errlen, VRAMZ_EIO, w->g.path, "write failed", e);
	w->g.size += gpu->len;
	return 0;
}

static int file_sync(struct log_file *f, char *err, size_t errlen)
{
	if (f->fd < 0 || !f->regular)
		return 0;
	if (fdatasync(f->fd))
		return fail(err, errlen, VRAMZ_EIO, f->path, "fsync failed", errno);
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
			rc = fail(err, errlen, VRAMZ_EIO, f->path, "close failed", errno);
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

unsigned log_writer_rotations(const struct log_writer *w)
{
	return w->rotations;
}
