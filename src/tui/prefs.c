/* SPDX-License-Identifier: Apache-2.0 */
/* prefs.c - top.conf, the choices `vramz top` keeps between runs
 * (prefs.h).  One line a choice, "key = value", as the thresholds' config
 * file reads; written whole at quit under a temporary name of ours and
 * renamed, through the link rule (safefile_open), so a reader never sees
 * half a file and a link planted at the name is refused, not written
 * through.  A key this top does not know is skipped: a file written by a
 * newer top still opens an older one. */
#include "tui/prefs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/fmt.h"
#include "safefile.h"

static const char *const layouts[] = {"auto", "blocks", "lines"};
static const char *const sides[SIDE_COUNT] = {"util", "temp", "power", "clock"};
static const char *const colmodes[] = {"auto", "on", "off"};

int prefs_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		fmt_snprintf(buf, len, "%s/vramz/top.conf", xdg);
	else if (home && *home)
		fmt_snprintf(buf, len, "%s/.config/vramz/top.conf", home);
	else
		return -1;
	return 0;
}

/* The index of v in names[0..n), -1 when absent */
static int pick(const char *const *names, int n, const char *v)
{
	for (int i = 0; i < n; i++)
		if (!strcasecmp(v, names[i]))
			return i;
	return -1;
}

/* One "key = value" (both trimmed); 1 when it set a choice */
static int apply(struct view *v, const char *k, const char *val)
{
	int i;
	if (!strcmp(k, "sort")) {
		for (i = 0; i < COL_COUNT; i++)
			if (!strcasecmp(val, model_col_key((enum model_col)i))) {
				v->ar.sort = (enum model_col)i;
				return 1;
			}
		return 0;
	}
	if (!strcmp(k, "reverse") || !strcmp(k, "tree") || !strcmp(k, "zoom-total")) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return 0;
		int on = val[0] == '1';
		if (k[0] == 'r')
			v->ar.reverse = on;
		else if (k[0] == 't')
			v->ar.tree = on;
		else
			v->zoom_total = on;
		return 1;
	}
	if (!strcmp(k, "layout") && (i = pick(layouts, 3, val)) >= 0)
		return v->layout = (enum layout)i, 1;
	if (!strcmp(k, "side") && (i = pick(sides, SIDE_COUNT, val)) >= 0)
		return v->side = (enum side_chart)i, 1;
	if (!strcmp(k, "side-chart") && (i = pick(colmodes, 3, val)) >= 0)
		return v->show_util = i == 0 ? -1 : i == 1, 1;
	if (!strncmp(k, "column.", 7) && (i = pick(colmodes, 3, val)) >= 0) {
		for (int c = 0; c < COL_COUNT; c++)
			if (c != COL_PID && c != COL_CMD && !strcmp(k + 7, model_col_key((enum model_col)c))) {
				v->cols[c] = (enum col_mode)i;
				return 1;
			}
	}
	return 0;
}

static char *prefs_trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

int prefs_load(struct view *v)
{
	char path[4096], line[256];
	if (prefs_path(path, sizeof path))
		return 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int set = 0;
	while (fgets(line, sizeof line, f)) {
		char *eq = strchr(line, '=');
		if (line[0] == '#' || !eq)
			continue;
		*eq = 0;
		set += apply(v, prefs_trim(line), prefs_trim(eq + 1));
	}
	fclose(f);
	return set;
}

int prefs_save(const struct view *v, char *err, size_t len)
{
	char path[4096], tmp[4160];
	if (prefs_path(path, sizeof path))
		return 0;
	/* its directory, and ~/.config above it, made when absent */
	char *slash = strrchr(path, '/');
	*slash = 0;
	char *up = strrchr(path, '/');
	if (up) {
		*up = 0;
		mkdir(path, 0700);
		*up = '/';
	}
	mkdir(path, 0700);
	*slash = '/';
	fmt_snprintf(tmp, sizeof tmp, "%.*s.top.conf.%ld", (int)(slash + 1 - path), path, (long)getpid());
	int fd = safefile_open(-1, tmp, SAFEFILE_TEMP, 0644, err, len);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		fmt_snprintf(err, len, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "# vramz top's choices, written by top at quit (docs/top.md)\n"
		   "sort = %s\nreverse = %d\ntree = %d\nlayout = %s\nzoom-total = %d\n"
		   "side = %s\nside-chart = %s\n",
		model_col_key(v->ar.sort), v->ar.reverse, v->ar.tree, layouts[v->layout % 3],
		v->zoom_total, sides[v->side % SIDE_COUNT],
		v->show_util < 0 ? "auto" : v->show_util ? "on" : "off");
	for (int c = 0; c < COL_COUNT; c++)
		if (c != COL_PID && c != COL_CMD)
			fprintf(f, "column.%s = %s\n", model_col_key((enum model_col)c), colmodes[v->cols[c] % 3]);
	int bad = ferror(f);
	if (fclose(f) || bad || rename(tmp, path)) {
		fmt_snprintf(err, len, "%s: %s", path, strerror(errno ? errno : EIO));
		unlink(tmp);
		return -1;
	}
	return 0;
}
