/* SPDX-License-Identifier: Apache-2.0 */
/* evfile.c - the events file's opening and appending (evfile.h). */
#include "evfile.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int evfile_open(const char *path, char *err, size_t errlen)
{
	static const char head[] = LOG_EVENT_COLUMNS "\n";
	/* the link rule: never through a link, never another user's file
	 * where others can write, never a FIFO (safefile.h) */
	int fd = safefile_open(-1, path, SAFEFILE_APPEND, 0644, err, errlen);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "cannot open the events file %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	char first[sizeof head];
	ssize_t n = st.st_size ? pread(fd, first, sizeof first - 1, 0) : 0;
	if (n > 0) {
		first[n] = '\0';
		if (strcmp(first, head)) {
			snprintf(err, errlen, "the events file %s has other columns than this vramz writes",
				 path);
			close(fd);
			return -1;
		}
	} else if (write(fd, head, sizeof head - 1) != (ssize_t)(sizeof head - 1)) {
		snprintf(err, errlen, "cannot write the events file %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int evfile_follow(int *fd, const char *path, char *err, size_t errlen)
{
	struct stat now, open_one;
	if (*fd >= 0 && fstat(*fd, &open_one) == 0 && stat(path, &now) == 0 &&
	    now.st_dev == open_one.st_dev && now.st_ino == open_one.st_ino)
		return 0;
	int nfd = evfile_open(path, err, errlen);
	if (nfd < 0)
		return -1;
	if (*fd >= 0)
		close(*fd);
	*fd = nfd;
	return 0;
}

int evfile_append(int fd, const struct logbuf *b)
{
	for (;;) {
		ssize_t w = write(fd, b->p, b->len);
		if (w == (ssize_t)b->len)
			return 0;
		if (w < 0 && errno == EINTR)
			continue;
		return -1;
	}
}
