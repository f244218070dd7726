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

/* A command's thresholds, as a row of the command table holds them
 * (analyze, watch, report; src/commands.h): the preamble reads the
 * config file into them before parsing, and their options follow the
 * command's own in its table. */
struct cmd_thresholds {
	vramz_diag_config cfg;   /* the engine's defaults, .preset, the config
				  * file, then the command line */
	struct diag_cmd_conf cc; /* the command's defaults, then the file */
	void (*preset)(vramz_diag_config *cfg); /* the command's own defaults
						 * (before the file), or NULL */
};
/* Fills t->cfg: the engine's defaults, t->preset, then diagconf_load.
 * Returns as diagconf_load. */
int diagconf_thresholds_load(struct cmd_thresholds *t);

/* How a recorded log is judged (analyze, and report, whose page shows
 * analyze's findings): processes that ended stay, evaluation once a
 * minute of data time, a finding reported once it holds. */
void diagconf_preset_log(vramz_diag_config *cfg);
/* Live sampling every interval_ms (watch, daemon, top): a window holds at
 * least two samples to take a maximum of, and evaluation runs at least
 * every tick. */
void diagconf_live_interval(vramz_diag_config *cfg, int64_t interval_ms);

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
