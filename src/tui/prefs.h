/* SPDX-License-Identifier: Apache-2.0 */
/* prefs.h - the choices `vramz top` keeps from one run to the next
 * (issue 40: nvitop keeps them, top forgot each at quit): the sort column
 * and direction, tree, layout, the memory plots' zoom, the chart beside
 * memory, and each column's shown / hidden / where it fits.  Kept in
 * $XDG_CONFIG_HOME/vramz/top.conf (~/.config/vramz/top.conf), a file top
 * writes itself at quit, apart from the hand-written config file of the
 * thresholds (vramz/config, which it only reads).  The command line wins
 * over the file. */
#ifndef VRAMZ_TUI_PREFS_H
#define VRAMZ_TUI_PREFS_H

#include <stddef.h>

#include "tui/app.h"

/* The file's path into buf; 0, or -1 when neither XDG_CONFIG_HOME nor
 * HOME is set (nothing is read or kept then). */
int prefs_path(char *buf, size_t len);
/* Reads the file into v (an absent file changes nothing; an unknown key or
 * a bad value is skipped, so an older top reads a newer file).  Returns
 * how many choices it set. */
int prefs_load(struct view *v);
/* Writes v's choices (a temporary file renamed over the old one, under
 * the link rule); 0, or -1 with why in err. */
int prefs_save(const struct view *v, char *err, size_t len);

#endif
