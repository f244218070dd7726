/* SPDX-License-Identifier: Apache-2.0 */
/* diagconf.h - what `vramz analyze` and `vramz watch` share: the table of
 * diagnosis thresholds (one table gives both the command-line options and
 * the config file keys), the config file reader, and how a finding is
 * printed as text or JSON. */
#ifndef VRAMZ_DIAGCONF_H
#define VRAMZ_DIAGCONF_H

#include <stdio.h>

#include "cli.h"
#include "format/jsonw.h"
#include "vramz/diagnose.h"

/* Settings a command takes besides the engine's thresholds. */
struct diag_cmd_conf {
	const char *fail_on;     /* analyze: "info" | "warning" | "critical" */
	const char *min_severity; /* watch: findings shown and exec'd */
	const char *theme;       /* top: "dark" | "light"; NULL unset */
};

/* Number of threshold options (for sizing an opt array). */
unsigned diagconf_opt_count(void);
/* Writes the threshold options pointing into cfg to out[0..count-1]. */
void diagconf_opts(vramz_diag_config *cfg, struct opt *out);

/* Bounds of the config file: a larger file, or a longer line (without
 * its newline), is an error, never read in pieces. */
#define DIAGCONF_MAX_BYTES 65536
#define DIAGCONF_MAX_LINE 1023

/* Reads $XDG_CONFIG_HOME/vramz/config (else ~/.config/vramz/config) into
 * cfg and cc; a missing file is fine.  Anything but a regular file of at
 * most DIAGCONF_MAX_BYTES, or a bad line, prints one error naming the file
 * (FILE:LINE for a line) and returns EXIT_USAGE; 0 otherwise. */
int diagconf_load(vramz_diag_config *cfg, struct diag_cmd_conf *cc);
/* Parses config text of len bytes (path only names it in errors): the
 * loader's second half, apart for the tests and the fuzz target. */
int diagconf_parse(const char *path, const char *text, size_t len, vramz_diag_config *cfg,
		   struct diag_cmd_conf *cc);

/* One finding as a JSON object (key NULL inside an array). */
void diagconf_json(struct jsonw *w, const char *key, const vramz_finding *f);
/* "critical", "warning", "info" in colour when on a terminal */
const char *diagconf_sev_label(FILE *f, enum vramz_severity s, char *buf, size_t len);

#endif
